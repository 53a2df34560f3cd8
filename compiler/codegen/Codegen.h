//===- Codegen.h - printing a plan as code for a target ---------*- C++ -*-===//
//
// The targets print the same plan (lower/Plan.h):
//   cuda  a .cu and a .h: kernels, NCCL collectives, cuBLAS matmuls, one
//         program object per (program, schedule) that enqueues a step on a
//         stream without synchronising the host;
//   cpu   a .cpp and a .h with the same API shape: OpenMP loops and the
//         runtime's MPI collectives, bit for bit the simulator's results.
// Either can also print a driver (a `main` that fills the inputs as the
// simulator does, runs one step and writes the results as .npy).
// Generated text is deterministic: the same plan prints the same bytes.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_CODEGEN_CODEGEN_H
#define COCONET_CODEGEN_CODEGEN_H

#include "lower/Plan.h"

#include <string>
#include <vector>

namespace coconet::codegen {

/// Which target to print for (codegen/Target.h has what each spells).
enum class TargetKind { Cuda, Cpu };

struct EmitOptions {
  TargetKind target = TargetKind::Cuda;
  /// The source file, for the banner ("samples/adam.coco").
  std::string sourceName;
  /// Also print a driver.
  bool driver = false;
  /// Also print the Python entry points, module and stub (docs/python.md).
  bool python = false;
};

/// A generated file: its name (no directory) and its text.
struct File {
  std::string name;
  std::string text;
};

/// The header, the source, (with options.driver) the driver of `plan` and
/// (with options.python) its Python files: `NAME.h`, `NAME.cu` / `NAME.cpp`,
/// `NAME_main.cu` / `NAME_main.cpp`, `NAME_python.cu` / `NAME_python.cpp`,
/// `NAME.py`, `NAME.pyi`.
std::vector<File> emitProgram(const lower::Plan &plan,
                              const EmitOptions &options);

} // namespace coconet::codegen

#endif // COCONET_CODEGEN_CODEGEN_H
