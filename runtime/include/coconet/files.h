//===- files.h - reading the files a user names ------------------*- C++
//-*-===//
//
// Every file coconetc and a generated driver read because a user named it
// (a .coco source, a .npy input, a segment table, a machine file) is read
// by these functions, so that each is refused the same way:
//
//  - only a regular file: a directory is "a directory, not a file"; a
//    device (/dev/zero), a FIFO or a socket is refused before any byte is
//    read (a FIFO is opened without waiting for a writer);
//  - never more than its format allows: the caller states the most bytes
//    the file may have, and a larger file is refused from its size, before
//    anything is allocated for it (and again if it grows while it is read).
//
// The messages name the file as the user gave it (the printer escapes and
// cuts it: coconetc's safeMessage, a driver's safeText):
//
//   cannot read the segment table 'd': it is a directory, not a file
//   cannot read the machine file '/dev/zero': it is a character device, not
//   a regular file
//   cannot read 'x.coco': it has 70000000 bytes; at most 64 MiB are read
//
// Host-only; POSIX; plain C++17.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_FILES_H
#define COCONET_RUNTIME_FILES_H

#include "coconet/status.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace coconet::rt {

/// The most bytes of each kind of file (docs/cli.md, "Files").
constexpr uint64_t kMaxSourceFileBytes = uint64_t(64) << 20;      // .coco
constexpr uint64_t kMaxMachineFileBytes = uint64_t(1) << 20;      // machine
constexpr uint64_t kMaxTopologyFileBytes = uint64_t(1) << 20;     // synth
constexpr uint64_t kMaxAlgorithmFileBytes = uint64_t(64) << 20;   // synth
constexpr uint64_t kMaxSegmentTableFileBytes = uint64_t(1) << 30; // table
constexpr uint64_t kMaxNpyHeaderBytes = uint64_t(1) << 20;        // .npy

/// Why a file was refused (FileProblem::None: it was read).
enum class FileProblem {
  None,
  Missing,    ///< no such file (or a directory on its path is missing)
  Directory,  ///< a directory
  NotRegular, ///< a device, a FIFO or a socket
  TooLarge,   ///< more bytes than the caller allows
  Unreadable, ///< any other error of open or read (permissions, a loop)
};

/// A regular file open for reading. Move-only; closed by its destructor.
class InputFile {
public:
  InputFile() = default;
  InputFile(InputFile &&other) noexcept;
  InputFile &operator=(InputFile &&other) noexcept;
  InputFile(const InputFile &) = delete;
  InputFile &operator=(const InputFile &) = delete;
  ~InputFile();

  /// Opens `path` when it is a regular file of at most `maxBytes` bytes.
  /// `what` names the kind of file in messages ("the segment table"; empty:
  /// the path alone). IoError otherwise (InvalidArgument when too large),
  /// with `*problem` (if given) saying why.
  static Status open(const std::string &path, const std::string &what,
                     uint64_t maxBytes, InputFile *out,
                     FileProblem *problem = nullptr);

  /// Its size when it was opened.
  uint64_t size() const { return size_; }
  /// Reads exactly `bytes` bytes at the current position into `data`;
  /// IoError when the file ends first (it shrank) or a read fails.
  Status read(void *data, size_t bytes);
  /// IoError unless the file ends at the current position (it grew).
  Status expectEnd();

private:
  Status error(const std::string &why) const;

  int fd_ = -1;
  uint64_t size_ = 0;
  std::string path_, what_;
};

/// The whole of `path` (InputFile::open's checks, then every byte) into
/// `*out`.
Status readRegularFile(const std::string &path, const std::string &what,
                       uint64_t maxBytes, std::string *out,
                       FileProblem *problem = nullptr);

/// "1 MiB", "64 MiB", "1 GiB", or a number of bytes: a limit as messages
/// print it.
std::string byteLimitText(uint64_t bytes);

} // namespace coconet::rt

#endif // COCONET_RUNTIME_FILES_H
