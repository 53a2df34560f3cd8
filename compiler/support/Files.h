//===- Files.h - reading the files a user names -----------------*- C++ -*-===//
//
// The compiler reads a .coco source and a machine file by the runtime's
// rules (runtime/include/coconet/files.h), which a generated driver applies
// to its inputs and segment tables: a regular file only (a directory, a
// device such as /dev/zero, a FIFO or a socket is refused before any byte
// is read) and no more bytes than the kind of file may have (64 MiB for a
// source, 1 MiB for a machine, topology or sketch file), refused from its
// size before anything is allocated.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_SUPPORT_FILES_H
#define COCONET_SUPPORT_FILES_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <memory>
#include <string>

namespace coconet::support {

/// Why a file was refused (the runtime's FileProblem).
enum class FileProblem {
  None,
  Missing,    ///< no such file
  Directory,  ///< a directory
  NotRegular, ///< a device, a FIFO or a socket
  TooLarge,   ///< more bytes than its kind may have
  Unreadable, ///< any other error of open or read
};

/// The kinds of file the compiler reads, and the most bytes of each:
/// topology and sketch files (`coconetc synth`) 1 MiB as a machine file,
/// algorithm files 64 MiB (a million transfers).
enum class FileKind { Source, Machine, Topology, Sketch, Algorithm };
uint64_t maxFileBytes(FileKind kind);

/// A file read, or why not: `problem` and a message naming the file
/// ("cannot read the machine file 'x': it is a directory, not a file";
/// "cannot read 'x.coco': ..." for a source), unescaped (the diagnostics
/// engine escapes and cuts what it prints).
struct ReadFile {
  std::unique_ptr<llvm::MemoryBuffer> buffer; ///< null when refused
  FileProblem problem = FileProblem::None;
  std::string message;
  /// For a refusal: the reason alone ("it is a directory, not a file").
  std::string reason;
};

/// Reads `path`, a file of `kind`; the buffer is named `path`.
ReadFile readUserFile(llvm::StringRef path, FileKind kind);

} // namespace coconet::support

#endif // COCONET_SUPPORT_FILES_H
