//===- ReplayMain.cpp - a fuzz target's inputs run once, without libFuzzer ===//
//
// The main() of the replay builds of the libFuzzer targets (tools/
// CMakeLists.txt: coconet-fuzz-replay-TARGET, part of every build): each
// file named, and every file of each directory named (sorted by name), is
// given once to the target's LLVMFuzzerTestOneInput, as libFuzzer gives a
// corpus. The targets' own checks (a differential result that disagrees
// aborts) run as in the fuzzing build; the sanitizers and new inputs are
// the fuzzing build's (tools/build.sh with COCONET_FUZZ_BUILD=1, the
// extended tier). CTest's fuzz-replay-TARGET runs the seed corpus and the
// kept regressions of each target this way in every run.
//
//   coconet-fuzz-replay-TARGET DIR_OR_FILE...
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int *argc,
                                                          char ***argv);

namespace fs = std::filesystem;

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DIR_OR_FILE...\n", argv[0]);
    return 2;
  }
  if (LLVMFuzzerInitialize)
    LLVMFuzzerInitialize(&argc, &argv);
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    std::error_code ec;
    fs::path p(argv[i]);
    if (fs::is_directory(p, ec)) {
      for (const fs::directory_entry &e : fs::directory_iterator(p, ec))
        if (e.is_regular_file())
          files.push_back(e.path());
    } else if (fs::is_regular_file(p, ec)) {
      files.push_back(p);
    } else {
      std::fprintf(stderr, "%s: '%s' is not a file or a directory\n", argv[0],
                   argv[i]);
      return 2;
    }
  }
  std::sort(files.begin(), files.end());
  for (const fs::path &f : files) {
    std::ifstream in(f, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                            std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) {
      std::fprintf(stderr, "%s: cannot read '%s'\n", argv[0], f.c_str());
      return 2;
    }
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>(bytes.data()),
                           bytes.size());
  }
  std::printf("%zu inputs replayed\n", files.size());
  return 0;
}
