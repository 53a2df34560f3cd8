//===- ProgramGenerator.h - random programs and schedules -------*- C++ -*-===//
//
// A seeded generator of valid random CoCoNet programs, as source text, and
// of random schedules for each of them: mostly plausible ones (split an
// allreduce, reorder its allgather past a prefix-closed set of consumers,
// shard the parameters whose uses became sliced, fuse connected elementwise
// groups, overlap a matmul with its collective) and some deliberately
// illegal ones, each with the diagnostic kind it should be refused with.
//
// The generator keeps a small model of the program (stages, element types,
// shapes, layouts per mesh axis) that follows the language's rules and the
// rules of docs/schedules.md, so every program it writes must be accepted
// by sema, and its predictions of what a schedule does are checked by the
// driver (RandomPrograms.cpp). It depends on nothing of the compiler.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_TEST_RANDOM_PROGRAMGENERATOR_H
#define COCONET_TEST_RANDOM_PROGRAMGENERATOR_H

#include <cstdint>
#include <string>
#include <vector>

namespace coconet::randomtest {

/// One schedule for a generated program.
struct GeneratedSchedule {
  std::string name;
  /// `schedule NAME for PROGRAM { ... }`.
  std::string text;
  /// The generator's prediction: every directive applies.
  bool legal = true;
  /// For an illegal schedule: the diagnostic kind expected (e.g.
  /// "split-not-all-reduce"); for a legal one, empty.
  std::string expectedKind;
  /// What the schedule tries, in a few words (for the report).
  std::string intent;
};

/// One generated program.
struct GeneratedProgram {
  std::string name;
  /// `program NAME(...) { ... }`.
  std::string text;
  /// Mesh axis size names in mesh order (`P` for the implicit world axis).
  std::vector<std::string> meshSizes;
  /// The other size names the program uses.
  std::vector<std::string> sizeNames;
  /// Every other size must be a multiple of (ranks * sizeFactor): the
  /// chunk count of an overlap, else 1.
  int64_t sizeFactor = 1;
  std::vector<GeneratedSchedule> schedules;
};

/// One generated source file: one to three programs.
struct GeneratedFile {
  uint64_t seed = 0;
  std::vector<GeneratedProgram> programs;
  /// The programs' text, without schedules.
  std::string source() const;
};

struct GeneratorOptions {
  /// At most this many programs per file (1 to 3).
  unsigned maxPrograms = 3;
};

/// Generates a file from `seed`; the same seed and options give the same
/// file.
GeneratedFile generateFile(uint64_t seed, const GeneratorOptions &options);

} // namespace coconet::randomtest

#endif // COCONET_TEST_RANDOM_PROGRAMGENERATOR_H
