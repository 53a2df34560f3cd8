//===- Files.cpp - reading the files a user names
//--------------------------===//

#include "support/Files.h"

#include "coconet/files.h"

namespace coconet::support {

uint64_t maxFileBytes(FileKind kind) {
  return kind == FileKind::Source ? rt::kMaxSourceFileBytes
                                  : rt::kMaxMachineFileBytes;
}

ReadFile readUserFile(llvm::StringRef path, FileKind kind) {
  ReadFile out;
  std::string bytes;
  rt::FileProblem problem = rt::FileProblem::None;
  const std::string what =
      kind == FileKind::Machine ? "the machine file" : std::string();
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
