//===- Codegen.cpp - the files of one program -----------------------------===//

#include "codegen/CodegenImpl.h"

namespace coconet::codegen {

std::vector<File> emitProgram(const lower::Plan &plan,
                              const EmitOptions &options) {
  const bool cuda = options.target == Target::Cuda;
  const std::string ext = cuda ? ".cu" : ".cpp";
  std::vector<File> files;
  files.push_back({plan.name + ".h", emitHeader(plan, options)});
  files.push_back({plan.name + ext, emitSource(plan, options)});
  if (options.driver)
    files.push_back({plan.name + "_main" + ext, emitDriver(plan, options)});
  return files;
}

} // namespace coconet::codegen
