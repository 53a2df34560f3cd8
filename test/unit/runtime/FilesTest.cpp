//===- FilesTest.cpp - reading the files a user names ---------------------===//
//
// coconet/files.h: a regular file is read whole; a directory, a device that
// never ends (/dev/zero), a FIFO with no writer and a missing file are
// refused, each saying which, before any byte is read (a FIFO without
// waiting); a file past its limit is refused from its size (a sparse file,
// so that nothing large is written). The readers built on it (the .npy
// reader and the segment table reader) refuse the same files, and the
// .npy reader reads no further than its header says.
//
//===----------------------------------------------------------------------===//

#include "coconet/files.h"
#include "coconet/npy.h"
#include "coconet/segments.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>

#include <sys/stat.h>
#include <unistd.h>

using namespace coconet::rt;

namespace {

/// A temporary directory, removed at the end of the scope.
struct TempDir {
  llvm::SmallString<128> path;
  TempDir() {
    REQUIRE_FALSE(llvm::sys::fs::createUniqueDirectory("files", path));
  }
  ~TempDir() { llvm::sys::fs::remove_directories(path); }
  std::string file(const std::string &name) const {
    llvm::SmallString<128> p(path);
    llvm::sys::path::append(p, name);
    return std::string(p);
  }
  std::string write(const std::string &name, const std::string &bytes) const {
    std::ofstream(file(name), std::ios::binary) << bytes;
    return file(name);
  }
};

bool startsWith(const std::string &text, const std::string &prefix) {
  return text.rfind(prefix, 0) == 0;
}

} // namespace

TEST_CASE("a regular file is read whole, up to its limit", "[files]") {
  TempDir dir;
  const std::string path = dir.write("t.txt", std::string("a\0b\n", 4));
  std::string bytes;
  FileProblem problem = FileProblem::Unreadable;
  REQUIRE(readRegularFile(path, "the table", 4, &bytes, &problem).ok());
  CHECK(bytes == std::string("a\0b\n", 4));
  CHECK(problem == FileProblem::None);
  // One byte past the limit.
  Status st = readRegularFile(path, "the table", 3, &bytes, &problem);
  CHECK(problem == FileProblem::TooLarge);
  CHECK(st.code() == StatusCode::InvalidArgument);
  CHECK(st.message() == "cannot read the table '" + path +
                            "': it has 4 bytes; at most 3 bytes are read");
  // An empty file is a file.
  REQUIRE(readRegularFile(dir.write("e", ""), "", 0, &bytes).ok());
  CHECK(bytes.empty());
}

TEST_CASE("directories, devices, FIFOs and missing files are refused",
          "[files]") {
  TempDir dir;
  std::string bytes = "unchanged";
  FileProblem problem = FileProblem::None;
  Status st = readRegularFile(dir.path.str().str(), "the segment table", 100,
                              &bytes, &problem);
  CHECK(problem == FileProblem::Directory);
  CHECK(st.code() == StatusCode::IoError);
  CHECK(st.message() == "cannot read the segment table '" +
                            dir.path.str().str() +
                            "': it is a directory, not a file");

  st = readRegularFile("/dev/zero", "", uint64_t(1) << 40, &bytes, &problem);
  CHECK(problem == FileProblem::NotRegular);
  CHECK(st.message() == "cannot read '/dev/zero': it is a character device, "
                        "not a regular file");

  // A FIFO with no writer: opening it for reading would wait for one.
  const std::string fifo = dir.file("fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const auto start = std::chrono::steady_clock::now();
  st = readRegularFile(fifo, "the machine file", 100, &bytes, &problem);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  CHECK(problem == FileProblem::NotRegular);
  CHECK(st.message() == "cannot read the machine file '" + fifo +
                            "': it is a FIFO, not a regular file");

  st = readRegularFile(dir.file("missing"), "", 100, &bytes, &problem);
  CHECK(problem == FileProblem::Missing);
  CHECK(st.message() ==
        "cannot read '" + dir.file("missing") + "': No such file or directory");
  CHECK(bytes == "unchanged");
}

TEST_CASE("a file past its limit is refused from its size, not read",
          "[files]") {
  TempDir dir;
  // A sparse file of 2^40 + 1 bytes: reading it would take a terabyte.
  const std::string path = dir.file("sparse");
  {
    std::ofstream(path, std::ios::binary);
  }
  REQUIRE(::truncate(path.c_str(), (off_t(1) << 40) + 1) == 0);
  std::string bytes;
  FileProblem problem = FileProblem::None;
  Status st = readRegularFile(path, "the segment table",
                              kMaxSegmentTableFileBytes, &bytes, &problem);
  CHECK(problem == FileProblem::TooLarge);
  CHECK(st.message() == "cannot read the segment table '" + path +
                            "': it has 1099511627777 bytes; at most 1 GiB "
                            "are read");
  // The limits as messages print them.
  CHECK(byteLimitText(kMaxSourceFileBytes) == "64 MiB");
  CHECK(byteLimitText(kMaxMachineFileBytes) == "1 MiB");
  CHECK(byteLimitText(1000) == "1000 bytes");
}

TEST_CASE("the .npy and segment table readers refuse what is not a file",
          "[files][npy][segments]") {
  TempDir dir;
  NpyArray array;
  Status st = readNpyFile("/dev/zero", &array);
  CHECK(st.code() == StatusCode::IoError);
  CHECK(st.message() == "cannot read '/dev/zero': it is a character device, "
                        "not a regular file");
  st = readNpyFile(dir.path.str().str(), &array);
  CHECK(st.message() == "cannot read '" + dir.path.str().str() +
                            "': it is a directory, not a file");
  SegmentTable table;
  st = readSegmentTable(dir.path.str().str(), &table);
  CHECK(st.message() == "cannot read the segment table '" +
                            dir.path.str().str() +
                            "': it is a directory, not a file");
  st = readSegmentTable("/dev/zero", &table);
  CHECK(st.message() == "cannot read the segment table '/dev/zero': it is a "
                        "character device, not a regular file");
}

TEST_CASE("the .npy reader reads the header, then only the data it says",
          "[files][npy]") {
  TempDir dir;
  const float values[3] = {1.5f, -2.0f, 0.25f};
  const std::string whole =
      serializeNpy(NpyType::F32, {3}, values, sizeof values);
  NpyArray array;
  REQUIRE(readNpyFile(dir.write("ok.npy", whole), &array).ok());
  CHECK(array.shape == std::vector<int64_t>{3});
  CHECK(array.getAsDouble(2) == 0.25);
  CHECK(array.data.size() == sizeof values);

  // The header promises 3 elements: a file that holds more or fewer is
  // refused from its size, with the parser's own message.
  Status st = readNpyFile(dir.write("long.npy", whole + "abcd"), &array);
  CHECK(st.message() == dir.file("long.npy") +
                            ": the header says 3 elements but the file "
                            "holds 4");
  st = readNpyFile(dir.write("short.npy", whole.substr(0, whole.size() - 1)),
                   &array);
  CHECK(st.message() == dir.file("short.npy") +
                            ": the header says 3 elements but the file "
                            "holds 2 and 3 stray bytes");

  // A header length of 2^32 - 1 (version 2.0): refused before it is read.
  std::string huge = "\x93NUMPY\x02";
  huge += '\0';
  huge += std::string("\xff\xff\xff\xff", 4);
  st = readNpyFile(dir.write("huge-header.npy", huge), &array);
  CHECK(st.message() == dir.file("huge-header.npy") +
                            ": the .npy header is 4294967295 bytes long; at "
                            "most 1 MiB are read");

  // Files shorter than their prefix, and a header cut short: the messages
  // parseNpy gives for the same bytes.
  for (const std::string &bytes :
       {std::string("\x93NUMP"), std::string("\x93NUMPY\x01"),
        std::string("\x93NUMPY\x01\x00\x40", 9), whole.substr(0, 40),
        std::string("not npy at all")}) {
    NpyArray a, b;
    Status fromFile = readNpyFile(dir.write("cut.npy", bytes), &a);
    Status fromBytes = parseNpy(bytes, &b);
    CHECK_FALSE(fromFile.ok());
    CHECK(fromFile.message() ==
          dir.file("cut.npy") + ": " + fromBytes.message());
  }

  // A header that ends inside the first 12 bytes read leaves the data's
  // first bytes there: they are kept (a header of 0 bytes is malformed,
  // so only the path is checked, not a crash or a read past the end).
  std::string tiny = "\x93NUMPY\x01";
  tiny += '\0';
  tiny += std::string("\x00\x00", 2);
  tiny += "xy";
  CHECK_FALSE(readNpyFile(dir.write("tiny.npy", tiny), &array).ok());
  CHECK(startsWith(readNpyFile(dir.write("tiny.npy", tiny), &array).message(),
                   dir.file("tiny.npy") + ": "));
}
