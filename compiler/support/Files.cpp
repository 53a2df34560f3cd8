//===- Files.cpp - reading the files a user names
//--------------------------===//

#include "support/Files.h"

#include "coconet/files.h"

namespace coconet::support {

uint64_t maxFileBytes(FileKind kind) {
  switch (kind) {
  case FileKind::Source:
    return rt::kMaxSourceFileBytes;
  case FileKind::Machine:
    return rt::kMaxMachineFileBytes;
  case FileKind::Topology:
  case FileKind::Sketch:
    return rt::kMaxTopologyFileBytes;
  case FileKind::Algorithm:
    return rt::kMaxAlgorithmFileBytes;
  }
  return 0;
}

/// "the machine file", "the topology file", ...; empty for a source.
static std::string kindText(FileKind kind) {
  switch (kind) {
  case FileKind::Source:
    return "";
  case FileKind::Machine:
    return "the machine file";
  case FileKind::Topology:
    return "the topology file";
  case FileKind::Sketch:
    return "the sketch file";
  case FileKind::Algorithm:
    return "the algorithm file";
  }
  return "";
}

ReadFile readUserFile(llvm::StringRef path, FileKind kind) {
  ReadFile out;
  std::string bytes;
  rt::FileProblem problem = rt::FileProblem::None;
  const std::string what = kindText(kind);
  rt::Status st = rt::readRegularFile(path.str(), what, maxFileBytes(kind),
                                      &bytes, &problem);
  if (!st.ok()) {
    switch (problem) {
    case rt::FileProblem::None:
    case rt::FileProblem::Unreadable:
      out.problem = FileProblem::Unreadable;
      break;
    case rt::FileProblem::Missing:
      out.problem = FileProblem::Missing;
      break;
    case rt::FileProblem::Directory:
      out.problem = FileProblem::Directory;
      break;
    case rt::FileProblem::NotRegular:
      out.problem = FileProblem::NotRegular;
      break;
    case rt::FileProblem::TooLarge:
      out.problem = FileProblem::TooLarge;
      break;
    }
    out.message = st.message();
    // "cannot read ... 'PATH': REASON": the reason follows the path.
    const std::string head = "cannot read " + (what.empty() ? "" : what + " ") +
                             "'" + path.str() + "': ";
    out.reason = out.message.rfind(head, 0) == 0
                     ? out.message.substr(head.size())
                     : out.message;
    return out;
  }
  out.buffer = llvm::MemoryBuffer::getMemBufferCopy(bytes, path);
  return out;
}

} // namespace coconet::support
