//===- files.cpp - reading the files a user names -------------------------===//

#include "coconet/files.h"

#include <cerrno>
#include <cstring>
#include <new>
#include <stdexcept>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace coconet::rt {

namespace {

std::string cannotRead(const std::string &path, const std::string &what,
                       const std::string &why) {
  return "cannot read " + (what.empty() ? std::string() : what + " ") + "'" +
         path + "': " + why;
}

/// What a file that is not regular is, as `ls -l` would say.
const char *kindOf(mode_t mode) {
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISSOCK(mode))
    return "a socket";
  return "not a regular file";
}

} // namespace

std::string byteLimitText(uint64_t bytes) {
  const char *units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  uint64_t v = bytes;
  while (u < 4 && v >= 1024 && v % 1024 == 0) {
    v /= 1024;
    ++u;
  }
  return std::to_string(v) + " " + units[u];
}

InputFile::InputFile(InputFile &&other) noexcept
    : fd_(other.fd_), size_(other.size_), path_(std::move(other.path_)),
      what_(std::move(other.what_)) {
  other.fd_ = -1;
}

InputFile &InputFile::operator=(InputFile &&other) noexcept {
  if (this != &other) {
    if (fd_ >= 0)
      ::close(fd_);
    fd_ = other.fd_;
    size_ = other.size_;
    path_ = std::move(other.path_);
    what_ = std::move(other.what_);
    other.fd_ = -1;
  }
  return *this;
}

InputFile::~InputFile() {
  if (fd_ >= 0)
    ::close(fd_);
}

Status InputFile::error(const std::string &why) const {
  return Status::error(StatusCode::IoError, cannotRead(path_, what_, why));
}

Status InputFile::open(const std::string &path, const std::string &what,
                       uint64_t maxBytes, InputFile *out,
                       FileProblem *problem) {
  auto fail = [&](FileProblem p, StatusCode code, const std::string &why) {
    if (problem)
      *problem = p;
    return Status::error(code, cannotRead(path, what, why));
  };
  if (problem)
    *problem = FileProblem::None;
  // O_NONBLOCK: opening a FIFO does not wait for a writer (it is refused
  // below); it changes nothing for a regular file.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    return fail(err == ENOENT || err == ENOTDIR ? FileProblem::Missing
                                                : FileProblem::Unreadable,
                StatusCode::IoError, std::strerror(err));
  }
  InputFile file;
  file.fd_ = fd;
  file.path_ = path;
  file.what_ = what;
  struct stat st;
  if (::fstat(fd, &st) != 0)
    return fail(FileProblem::Unreadable, StatusCode::IoError,
                std::strerror(errno));
  if (S_ISDIR(st.st_mode))
    return fail(FileProblem::Directory, StatusCode::IoError,
                "it is a directory, not a file");
  if (!S_ISREG(st.st_mode))
    return fail(FileProblem::NotRegular, StatusCode::IoError,
                std::string("it is ") + kindOf(st.st_mode) +
                    ", not a regular file");
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size > maxBytes)
    return fail(FileProblem::TooLarge, StatusCode::InvalidArgument,
                "it has " + std::to_string(size) + " bytes; at most " +
                    byteLimitText(maxBytes) + " are read");
  // Reads block again (a regular file's never wait).
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0)
    (void)::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  file.size_ = size;
  *out = std::move(file);
  return Status::success();
}

Status InputFile::read(void *data, size_t bytes) {
  auto *p = static_cast<char *>(data);
  while (bytes > 0) {
    const size_t chunk = bytes < (size_t(1) << 30) ? bytes : size_t(1) << 30;
    const ssize_t n = ::read(fd_, p, chunk);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return error(std::strerror(errno));
    }
    if (n == 0)
      return error("it ended early (it changed while it was read)");
    p += n;
    bytes -= static_cast<size_t>(n);
  }
  return Status::success();
}

Status InputFile::expectEnd() {
  char extra;
  ssize_t n;
  do
    n = ::read(fd_, &extra, 1);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return error(std::strerror(errno));
  if (n > 0)
    return error("it grew while it was read");
  return Status::success();
}

Status readRegularFile(const std::string &path, const std::string &what,
                       uint64_t maxBytes, std::string *out,
                       FileProblem *problem) {
  InputFile file;
  COCONET_RETURN_IF_ERROR(
      InputFile::open(path, what, maxBytes, &file, problem));
  std::string bytes;
  try {
    bytes.resize(static_cast<size_t>(file.size()));
  } catch (const std::bad_alloc &) {
    return Status::error(StatusCode::IoError,
                         cannotRead(path, what,
                                    "its " + std::to_string(file.size()) +
                                        " bytes do not fit in memory"));
  } catch (const std::length_error &) {
    return Status::error(StatusCode::IoError,
                         cannotRead(path, what,
                                    "its " + std::to_string(file.size()) +
                                        " bytes do not fit in memory"));
  }
  Status st = file.read(bytes.data(), bytes.size());
  if (st.ok())
    st = file.expectEnd();
  if (!st.ok()) {
    if (problem)
      *problem = FileProblem::Unreadable;
    return st;
  }
  *out = std::move(bytes);
  return Status::success();
}

} // namespace coconet::rt
