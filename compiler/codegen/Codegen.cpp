//===- Codegen.cpp - the files of one program -----------------------------===//

#include "codegen/CodegenImpl.h"

namespace coconet::codegen {

const Target &Target::get(TargetKind kind) {
  switch (kind) {
  case TargetKind::Cuda:
    return cudaTarget();
  case TargetKind::Cpu:
    return cpuTarget();
  }
  return cpuTarget();
}

std::vector<File> emitProgram(const lower::Plan &plan,
                              const EmitOptions &options) {
  const std::string ext =
      Target::get(options.target).info.sourceExtension.str();
  std::vector<File> files;
  files.push_back({plan.name + ".h", emitHeader(plan, options)});
  files.push_back({plan.name + ext, emitSource(plan, options)});
  if (options.driver)
    files.push_back({plan.name + "_main" + ext, emitDriver(plan, options)});
  if (options.python)
    for (File &f : emitPython(plan, options))
      files.push_back(std::move(f));
  return files;
}

} // namespace coconet::codegen
