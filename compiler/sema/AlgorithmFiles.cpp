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

#include "sema/ProgramChecker.h"

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

  std::shared_ptr<const ir::AlgorithmTable> &slot = loaded[path];
  if (file.name.empty()) {
    diags.report(file.range, DiagId::AlgorithmFileUnreadable,
                 "an empty string names no algorithm file");
    return nullptr;
  }
  support::ReadFile read =
      support::readUserFile(path, support::FileKind::Algorithm);
  if (!read.buffer) {
    diags.report(file.range, DiagId::AlgorithmFileUnreadable, read.message);
    return nullptr;
  }
  std::optional<synth::Algorithm> alg =
      synth::parseAlgorithmFile(std::move(read.buffer), sourceMgr, diags);
  if (!alg) {
    diags.report(file.range, DiagId::AlgorithmFileNamedHere, file.name);
    return nullptr;
  }
  if (std::optional<std::string> why = synth::verifyDataFlow(*alg)) {
    diags.report(file.range, DiagId::AlgorithmFileRefused, file.name, *why);
    return nullptr;
  }
  auto table = std::make_shared<ir::AlgorithmTable>();
  table->file = file.name;
  table->path = path;
  table->name = alg->name.empty()
                    ? synth::collectiveName(alg->collective).str() + "-" +
                          llvm::sys::path::stem(file.name).str()
                    : alg->name;
  table->collective = collectiveOf(alg->collective);
  table->ranks = alg->ranks;
  table->chunksPerRank = alg->chunksPerRank;
  for (const synth::Step &step : alg->steps) {
    auto &out = table->steps.emplace_back();
    for (const synth::Transfer &t : step.transfers)
      out.push_back({t.chunk, t.src, t.dst, t.reduce});
  }
  slot = std::move(table);
  return slot;
}

} // namespace coconet::sema
