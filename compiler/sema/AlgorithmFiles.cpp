//===- AlgorithmFiles.cpp - the algorithm files schedules name ------------===//
//
// `algorithm(s, "ndv2.alg")`: reads the file (a relative name from the
// directory of the source that names it), parses it as an algorithm file
// (synth/AlgorithmFile.h: every error located in the file) and checks that
// the algorithm does what its collective promises (synth::verifyDataFlow:
// every chunk where it must be, every reduction whole, nothing counted
// twice; any rank may send to any other, since the schedule runs it on a
// communicator, not on the topology it was synthesised for). Each file is
// read once per compilation.
//
//===----------------------------------------------------------------------===//

#include "sema/Sema.h"

#include "ir/AlgorithmTable.h"
#include "support/Files.h"
#include "synth/AlgorithmFile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

namespace coconet::sema {

namespace {

ir::AlgorithmCollective collectiveOf(synth::Collective c) {
  switch (c) {
  case synth::Collective::AllGather:
    return ir::AlgorithmCollective::AllGather;
  case synth::Collective::AllToAll:
    return ir::AlgorithmCollective::AllToAll;
  case synth::Collective::ReduceScatter:
    return ir::AlgorithmCollective::ReduceScatter;
  case synth::Collective::AllReduce:
    return ir::AlgorithmCollective::AllReduce;
  }
  return ir::AlgorithmCollective::AllGather;
}

} // namespace

namespace {

/// Reads, parses and checks `path` (shown as `shown`, reported at `at`).
std::shared_ptr<const ir::AlgorithmTable> readTable(llvm::StringRef shown,
                                                    const std::string &path,
                                                    llvm::SMRange at,
                                                    DiagnosticEngine &diags) {
  if (shown.empty()) {
    diags.report(at, DiagId::AlgorithmFileUnreadable,
                 "an empty string names no algorithm file");
    return nullptr;
  }
  support::ReadFile read =
      support::readUserFile(path, support::FileKind::Algorithm);
  if (!read.buffer) {
    diags.report(at, DiagId::AlgorithmFileUnreadable, read.message);
    return nullptr;
  }
  std::optional<synth::Algorithm> alg = synth::parseAlgorithmFile(
      std::move(read.buffer), diags.getSourceMgr(), diags);
  if (!alg) {
    if (at.isValid())
      diags.report(at, DiagId::AlgorithmFileNamedHere, shown);
    return nullptr;
  }
  // (A collective over one rank moves nothing, and its output may be its
  // input: the runtimes' runs take distinct buffers.)
  if (alg->ranks < 2) {
    diags.report(at, DiagId::AlgorithmFileRefused, shown,
                 "it is for one rank, which moves nothing; run the "
                 "collective without an algorithm");
    return nullptr;
  }
  if (std::optional<std::string> why = synth::verifyDataFlow(*alg)) {
    diags.report(at, DiagId::AlgorithmFileRefused, shown, *why);
    return nullptr;
  }
  auto table = std::make_shared<ir::AlgorithmTable>();
  table->file = shown.str();
  table->name = alg->name.empty()
                    ? synth::collectiveName(alg->collective).str() + "-" +
                          llvm::sys::path::stem(shown).str()
                    : alg->name;
  table->collective = collectiveOf(alg->collective);
  table->ranks = alg->ranks;
  table->chunksPerRank = alg->chunksPerRank;
  for (const synth::Step &step : alg->steps) {
    auto &out = table->steps.emplace_back();
    for (const synth::Transfer &t : step.transfers)
      out.push_back({t.chunk, t.src, t.dst, t.reduce});
  }
  return table;
}

} // namespace

std::shared_ptr<const ir::AlgorithmTable>
AlgorithmFiles::load(const ast::Ident &file, DiagnosticEngine &diags) {
  llvm::SourceMgr &sourceMgr = diags.getSourceMgr();
  std::string path = file.name;
  if (!path.empty() && !llvm::sys::path::is_absolute(path)) {
    const unsigned buffer = sourceMgr.FindBufferContainingLoc(file.range.Start);
    if (buffer) {
      llvm::SmallString<256> full = llvm::sys::path::parent_path(
          sourceMgr.getMemoryBuffer(buffer)->getBufferIdentifier());
      llvm::sys::path::append(full, path);
      path = std::string(full);
    }
  }
  auto it = loaded.find(path);
  if (it != loaded.end())
    return it->second;
  return loaded[path] = readTable(file.name, path, file.range, diags);
}

std::shared_ptr<const ir::AlgorithmTable>
AlgorithmFiles::loadPath(llvm::StringRef path, DiagnosticEngine &diags) {
  auto it = loaded.find(path);
  if (it != loaded.end())
    return it->second;
  return loaded[path] = readTable(path, path.str(), llvm::SMRange(), diags);
}

} // namespace coconet::sema
