//===- Target.cpp - what every target prints the same way from its info ---===//
//
// The parts of Target that are not hooks: TargetInfo's lines, the MPI guard
// and the group idioms (combine, share, leader, barrier), written once from
// the target's fixed text.
//
//===----------------------------------------------------------------------===//

#include "codegen/CodegenImpl.h"

namespace coconet::codegen {

void emitLines(CodeWriter &w, llvm::StringRef text) {
  if (text.empty())
    return;
  llvm::SmallVector<llvm::StringRef, 8> lines;
  text.split(lines, '\n');
  for (llvm::StringRef l : lines)
    w.line(l);
}

void Target::emitMpiOrElse(CodeWriter &w, llvm::ArrayRef<std::string> mpi,
                           llvm::ArrayRef<std::string> otherwise) const {
  if (info.alwaysMpi) {
    for (const std::string &l : mpi)
      w.line(l);
    return;
  }
  emitLines(w, info.ifMpi);
  for (const std::string &l : mpi)
    w.line(l);
  if (!otherwise.empty()) {
    emitLines(w, info.orElse);
    for (const std::string &l : otherwise)
      w.line(l);
  }
  emitLines(w, info.endIfMpi);
}

void Target::emitGroupCombine(CodeWriter &w, llvm::StringRef var,
                              llvm::StringRef combine) const {
  if (info.groupThreads)
    w.line(var + " = " + groupCombine(var, combine) + ";");
}

void Target::shareFromLeader(CodeWriter &w, llvm::StringRef type,
                             llvm::StringRef shared, llvm::StringRef value,
                             llvm::StringRef lhs) const {
  if (!info.groupThreads) {
    if (lhs != value)
      w.line(lhs + " = " + value + ";");
    return;
  }
  w.line(info.groupShared + " " + type + " " + shared + ";");
  w.line(info.groupLeader);
  w.line("  " + shared + " = " + value + ";");
  w.line(info.groupBarrier);
  w.line(lhs + " = " + shared + ";");
}

bool Target::openLeader(CodeWriter &w) const {
  if (!info.groupThreads)
    return false;
  w.open(info.groupLeader);
  return true;
}

void Target::endGroup(CodeWriter &w) const {
  // The next group reuses the group's shared values.
  if (info.groupThreads)
    w.line(info.groupBarrier);
}

} // namespace coconet::codegen
