//===- DriverCode.cpp - the generated driver (--emit=driver) ---------------===//
//
// A `main` that runs one step of one program on every rank, exactly as the
// simulator would for the same sizes and seed, and writes the results as
// .npy in the simulator's assembled form (runtime/include/coconet/
// driver.h); then, with --iterations, times further steps. The CPU driver
// always runs under MPI; the CUDA driver does when it is built with
// COCONET_WITH_MPI (one GPU per rank), and runs one rank otherwise.
//
//===----------------------------------------------------------------------===//

#include "codegen/CodegenImpl.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

namespace coconet::codegen {

using namespace lower;

namespace {

std::string sizeVar(llvm::StringRef name) { return "sizes." + name.str(); }

/// `{ {AxisState::Sliced, 0}, ... }`
std::string layoutInit(const ir::Layout &layout) {
  std::string out = "{";
  for (unsigned a = 0; a < layout.size(); ++a) {
    const char *state = layout[a].state == ir::AxisState::Sliced ? "Sliced"
                        : layout[a].state == ir::AxisState::Local
                            ? "Local"
                            : "Replicated";
    out += (a ? ", " : "") + std::string("{driver::AxisState::") + state +
           ", " + std::to_string(layout[a].state == ir::AxisState::Sliced
                                     ? layout[a].dim
                                     : 0) +
           "}";
  }
  return out + "}";
}

std::string shapeInit(const ir::Shape &shape, const ir::Mesh &mesh) {
  std::string out = "{";
  for (size_t d = 0; d < shape.size(); ++d)
    out += (d ? ", " : "") + printExtent({shape[d], {}}, mesh, sizeVar);
  return out + "}";
}

/// `driver::TensorInfo{"g", 0, DType::F16, {sizes.N}, {...}}`
std::string infoInit(const std::string &name, unsigned paramIndex,
                     const ir::TensorType &type, const ir::Mesh &mesh) {
  return "driver::TensorInfo{\"" + name + "\", " + std::to_string(paramIndex) +
         ", " + runtimeDType(type.dtype) + ", " + shapeInit(type.shape, mesh) +
         ", " + layoutInit(type.layout) + "}";
}

} // namespace

std::string emitDriver(const Plan &plan, const EmitOptions &options) {
  const bool cuda = options.target == Target::Cuda;
  const Target target = options.target;
  const ir::Program &program = *plan.program;
  const ir::Mesh &mesh = program.mesh;
  std::string text;
  llvm::raw_string_ostream os(text);
  CodeWriter w(os);
  os << banner(plan, options, "The driver");
  w.comment("\nRuns one step as the simulator does for the same sizes and "
            "seed, writes the\nresults (--output-dir) and times more steps "
            "(--iterations). --help lists\nthe options.");
  w.line();
  if (!cuda) {
    w.comment("The CPU target always runs under MPI.");
    w.line("#ifndef COCONET_WITH_MPI").line("#define COCONET_WITH_MPI 1").line(
        "#endif");
  }
  w.line("#include \"" + plan.name + ".h\"").line();
  w.line("#include \"coconet/driver.h\"").line();
  if (cuda) {
    w.line("#if defined(COCONET_WITH_MPI)").line("#include <mpi.h>").line(
        "#endif");
  } else {
    w.line("#include <mpi.h>");
  }
  w.line().line("#include <chrono>").line("#include <cstdio>").line(
      "#include <cstring>");
  w.line("#include <memory>").line("#include <string>").line(
      "#include <vector>");
  w.line();
  w.line("using namespace coconet::rt;");
  w.line("using coconet::generated::" + plan.name + ";");
  w.line();
  w.open("namespace");
  w.dedent();
  w.line();
  w.line("const char *const kProgram = \"" + plan.name + "\";");
  w.line();
  w.open("int fail(const Status &status)");
  w.line("std::fprintf(stderr, \"%s: %s\\n\", kProgram, "
         "status.toString().c_str());");
  w.line("return 1;");
  w.close();
  w.line();
  w.comment("The value of a size name: --size, else `fallback` (0: "
            "required).");
  w.line("Status sizeOf(const driver::Options &options, const char *name, "
         "int64_t fallback,");
  w.open("              int64_t *out)");
  w.line("auto it = options.sizes.find(name);");
  w.open("if (it != options.sizes.end())");
  w.line("*out = it->second;");
  w.line("return Status();");
  w.close();
  w.open("if (fallback > 0)");
  w.line("*out = fallback;");
  w.line("return Status();");
  w.close();
  w.line("return Status::error(StatusCode::InvalidArgument,");
  w.line("                     std::string(\"give the size \") + name + \" "
         "with --size \" + name + \"=...\");");
  w.close();
  w.line();
  w.line("/// This rank's block of one tensor on the host" +
         std::string(cuda ? " and on the device." : "."));
  w.open("struct Block");
  w.line("driver::TensorInfo info;");
  w.line("driver::Placement placement;");
  w.line("std::vector<uint8_t> host;");
  if (cuda)
    w.line("void *device = nullptr;");
  w.close(";");
  w.line();
  w.line("Status makeBlock(driver::TensorInfo info, const "
         "std::vector<int64_t> &axisSizes,");
  w.open("                 const std::vector<int64_t> &coords, Block *out)");
  w.line("out->info = std::move(info);");
  w.line("COCONET_RETURN_IF_ERROR(driver::place(out->info, axisSizes, coords, "
         "&out->placement));");
  w.line("out->host.assign(static_cast<size_t>(out->placement.elements()) * "
         "dtypeSize(out->info.dtype), 0);");
  if (cuda)
    w.line("COCONET_CUDA_CHECK(cudaMalloc(&out->device, out->host.size()));");
  w.line("return Status();");
  w.close();
  w.line();
  w.line("} // namespace");
  w.line();

  w.open("int main(int argc, char **argv)");
  if (cuda) {
    w.line("#if defined(COCONET_WITH_MPI)");
    w.line("MPI_Init(&argc, &argv);");
    w.line("driver::MpiTransport transport(MPI_COMM_WORLD);");
    w.line("#else");
    w.line("driver::Transport &transport = driver::singleProcess();");
    w.line("#endif");
  } else {
    w.line("MPI_Init(&argc, &argv);");
    w.line("driver::MpiTransport transport(MPI_COMM_WORLD);");
  }
  w.line("const int status = [&]() -> int {");
  w.indent();
  w.line("driver::Options options;");
  w.line("bool help = false;");
  w.line("Status st = driver::parseArgs(argc, argv, kProgram, &options, "
         "&help);");
  w.open("if (help)");
  w.line("if (transport.rank() == 0)");
  w.line("  std::printf(\"%s\", driver::usage(kProgram).c_str());");
  w.line("return 0;");
  w.close();
  w.open("if (!st.ok())");
  w.line("std::fprintf(stderr, \"%s: %s\\n\", kProgram, "
         "st.message().c_str());");
  w.line("return 2;");
  w.close();
  // Sizes.
  w.line(plan.name + "::Sizes sizes;");
  std::vector<std::string> names;
  for (const auto &a : mesh.axes)
    if (!llvm::is_contained(names, a.size))
      names.push_back(a.size);
  for (const std::string &s : program.sizeNames)
    if (!llvm::is_contained(names, s))
      names.push_back(s);
  for (const std::string &s : names) {
    bool world = mesh.isImplicit && s == mesh.axes[0].size;
    w.line("st = sizeOf(options, \"" + s + "\", " +
           (world ? "transport.size()" : std::string("0")) + ", &sizes." + s +
           ");");
    w.line("if (!st.ok())");
    w.line("  return fail(st);");
  }
  std::string axisSizes;
  for (const auto &a : mesh.axes)
    axisSizes += (axisSizes.empty() ? "" : ", ") + sizeVar(a.size);
  w.line("const std::vector<int64_t> axisSizes = {" + axisSizes + "};");
  w.comment("This rank's coordinates: ranks are row-major over the axes.");
  w.line("std::vector<int64_t> coords(axisSizes.size());");
  w.open("for (size_t a = axisSizes.size(), r = transport.rank(); a-- > 0;)");
  w.line("coords[a] = static_cast<int64_t>(r) % axisSizes[a];");
  w.line("r /= static_cast<size_t>(axisSizes[a]);");
  w.close();
  // Communicator and program object.
  if (cuda) {
    w.line("#if defined(COCONET_WITH_MPI)");
    w.line("int cc_devices = 0;");
    w.line("if (cudaGetDeviceCount(&cc_devices) == cudaSuccess && cc_devices "
           "> 0)");
    w.line("  cudaSetDevice(transport.rank() % cc_devices);");
    w.line("std::unique_ptr<cuda::Communicator> world;");
    w.line("st = cuda::Communicator::fromMpi(MPI_COMM_WORLD, &world);");
    w.line("#else");
    w.line("std::unique_ptr<cuda::Communicator> world;");
    w.line("st = cuda::Communicator::single(&world);");
    w.line("#endif");
    w.line("if (!st.ok())");
    w.line("  return fail(st);");
    w.line("cudaStream_t stream = nullptr;");
    w.line("st = [&]() -> Status {");
    w.line("  COCONET_CUDA_CHECK(cudaStreamCreate(&stream));");
    w.line("  return Status();");
    w.line("}();");
    w.line("if (!st.ok())");
    w.line("  return fail(st);");
    w.line("std::unique_ptr<" + plan.name + "> program;");
    w.line("st = " + plan.name + "::create(*world, sizes, stream, &program);");
  } else {
    w.line("cpu::Communicator world(MPI_COMM_WORLD);");
    w.line("std::unique_ptr<" + plan.name + "> program;");
    w.line("st = " + plan.name + "::create(world, sizes, &program);");
  }
  w.line("if (!st.ok())");
  w.line("  return fail(st);");
  // Parameters.
  w.comment("The parameters, filled as the simulator fills them.");
  for (const Plan::Param &p : plan.params) {
    const Buffer &b = plan.buffers[p.buffer];
    w.line("Block " + b.name + ";");
    w.line("st = makeBlock(" +
           infoInit(p.stage->name, p.stage->paramIndex, p.stage->type, mesh) +
           ", axisSizes, coords, &" + b.name + ");");
    w.line("if (st.ok())");
    w.line("  st = driver::fillInput(" + b.name + ".info, options, axisSizes, "
           "coords, " + b.name + ".placement, " + b.name + ".host.data());");
    if (cuda)
      w.line("if (st.ok())");
    if (cuda)
      w.line("  st = [&]() -> Status { COCONET_CUDA_CHECK(cudaMemcpy(" +
             b.name + ".device, " + b.name + ".host.data(), " + b.name +
             ".host.size(), cudaMemcpyHostToDevice)); return Status(); }();");
    w.line("if (!st.ok())");
    w.line("  return fail(st);");
  }
  // Outputs.
  for (unsigned o : plan.outputs()) {
    const Buffer &b = plan.buffers[o];
    const Plan::Result &r = plan.results[b.result];
    w.line("Block " + b.name + ";");
    w.line("st = makeBlock(" + infoInit(r.name, 0, r.stage->type, mesh) +
           ", axisSizes, coords, &" + b.name + ");");
    w.line("if (!st.ok())");
    w.line("  return fail(st);");
  }
  // The call.
  std::string args;
  for (const Plan::Param &p : plan.params) {
    const Buffer &b = plan.buffers[p.buffer];
    std::string arg;
    if (b.kind == Buffer::Kind::ScalarParam) {
      std::string type = storageType(b.dtype, Target::Cpu);
      std::string raw = "*reinterpret_cast<const " + type + " *>(" + b.name +
                        ".host.data())";
      arg = loadValue(b.dtype, Target::Cpu, raw);
    } else {
      std::string type = storageType(b.dtype, target);
      arg = "static_cast<" + std::string(b.written ? "" : "const ") + type +
            " *>(" +
            (cuda ? b.name + ".device"
                  : "static_cast<void *>(" + b.name + ".host.data())") +
            ")";
    }
    args += (args.empty() ? "" : ",\n        ") + arg;
  }
  for (unsigned o : plan.outputs()) {
    const Buffer &b = plan.buffers[o];
    args += (args.empty() ? "" : ",\n        ") +
            std::string("static_cast<") + storageType(b.dtype, target) +
            " *>(" +
            (cuda ? b.name + ".device"
                  : "static_cast<void *>(" + b.name + ".host.data())") +
            ")";
  }
  w.line("auto runStep = [&]() -> Status {");
  w.line("  return (*program)(" + args + ");");
  w.line("};");
  w.comment("One step, then its results.");
  w.line("st = runStep();");
  if (cuda) {
    w.line("if (st.ok())");
    w.line("  st = [&]() -> Status { COCONET_CUDA_CHECK(cudaStreamSynchronize("
           "stream)); return Status(); }();");
  }
  w.line("if (!st.ok())");
  w.line("  return fail(st);");
  for (const Plan::Result &r : plan.results) {
    const Buffer &b = plan.buffers[r.buffer];
    // An update written in place lives in the parameter's block.
    w.line("{");
    w.indent();
    w.line("Block &cc_result = " + b.name + ";");
    if (cuda)
      w.line("st = [&]() -> Status { COCONET_CUDA_CHECK(cudaMemcpy("
             "cc_result.host.data(), cc_result.device, cc_result.host.size(), "
             "cudaMemcpyDeviceToHost)); return Status(); }();");
    w.line("driver::TensorInfo cc_info = " +
           infoInit(r.name, 0, r.stage->type, mesh) + ";");
    w.line("if (st.ok() && !options.quiet)");
    w.line("  driver::printSummary(cc_info, transport, cc_result.placement, "
           "cc_result.host.data());");
    w.line("if (st.ok() && !options.outputDir.empty())");
    w.line("  st = driver::writeResult(cc_info, options, axisSizes, transport, "
           "cc_result.host.data());");
    w.line("if (!st.ok())");
    w.line("  return fail(st);");
    w.close();
  }
  // Timing.
  w.comment("More steps, timed (their results are not written).");
  w.open("if (options.iterations > 1 || options.warmup > 0)");
  w.open("for (int i = 0; i < options.warmup; ++i)");
  w.line("if (!(st = runStep()).ok())");
  w.line("  return fail(st);");
  w.close();
  if (cuda) {
    w.line("st = [&]() -> Status { COCONET_CUDA_CHECK(cudaStreamSynchronize("
           "stream)); return Status(); }();");
    w.line("if (!st.ok())");
    w.line("  return fail(st);");
  }
  if (cuda)
    w.line("#if defined(COCONET_WITH_MPI)");
  w.line("MPI_Barrier(MPI_COMM_WORLD);");
  if (cuda)
    w.line("#endif");
  w.line("const auto cc_start = std::chrono::steady_clock::now();");
  w.open("for (int i = 0; i < options.iterations; ++i)");
  w.line("if (!(st = runStep()).ok())");
  w.line("  return fail(st);");
  w.close();
  if (cuda) {
    w.line("st = [&]() -> Status { COCONET_CUDA_CHECK(cudaStreamSynchronize("
           "stream)); return Status(); }();");
    w.line("if (!st.ok())");
    w.line("  return fail(st);");
  }
  w.line("double cc_seconds = std::chrono::duration<double>("
         "std::chrono::steady_clock::now() - cc_start).count();");
  if (cuda)
    w.line("#if defined(COCONET_WITH_MPI)");
  w.line("MPI_Allreduce(MPI_IN_PLACE, &cc_seconds, 1, MPI_DOUBLE, MPI_MAX, "
         "MPI_COMM_WORLD);");
  if (cuda)
    w.line("#endif");
  w.line("if (transport.rank() == 0)");
  w.line("  std::printf(\"%s: %d steps on %d ranks, %.6f ms per step\\n\", "
         "kProgram, options.iterations, transport.size(), 1e3 * cc_seconds / "
         "options.iterations);");
  w.close();
  w.line("return 0;");
  w.dedent();
  w.line("}();");
  if (cuda)
    w.line("#if defined(COCONET_WITH_MPI)");
  w.line("MPI_Finalize();");
  if (cuda)
    w.line("#endif");
  w.line("return status;");
  w.close();
  return text;
}

} // namespace coconet::codegen
