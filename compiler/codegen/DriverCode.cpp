//===- DriverCode.cpp - the generated driver (--emit=driver) --------------===//
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

using names::driverSize;

/// `{ {cc_rt::driver::AxisState::Sliced, 0}, ... }`
std::string layoutInit(const ir::Layout &layout) {
  std::string out = "{";
  for (unsigned a = 0; a < layout.size(); ++a) {
    const char *state = layout[a].state == ir::AxisState::Sliced ? "Sliced"
                        : layout[a].state == ir::AxisState::Local
                            ? "Local"
                            : "Replicated";
    const int dim =
        layout[a].state == ir::AxisState::Sliced ? layout[a].dim : 0;
    out += (a ? ", " : "") + std::string("{cc_rt::driver::AxisState::") +
           state + ", " + std::to_string(dim) + "}";
  }
  return out + "}";
}

std::string shapeInit(const ir::Shape &shape, const ir::Mesh &mesh) {
  std::string out = "{";
  for (size_t d = 0; d < shape.size(); ++d)
    out += (d ? ", " : "") + printExtent({shape[d], {}}, mesh, driverSize);
  return out + "}";
}

} // namespace

std::string tensorInfoInit(const std::string &name, unsigned paramIndex,
                           const ir::TensorType &type, const ir::Mesh &mesh) {
  return "cc_rt::driver::TensorInfo{\"" + name + "\", " +
         std::to_string(paramIndex) + ", " + runtimeDType(type.dtype) + ", " +
         shapeInit(type.shape, mesh) + ", " + layoutInit(type.layout) + "}";
}

std::string emitDriver(const Plan &plan, const EmitOptions &options) {
  const Target &t = Target::get(options.target);
  // The driver's own host data is the runtime's host types.
  const Target &host = Target::get(TargetKind::Cpu);
  const ir::Mesh &mesh = plan.mesh;
  std::string text;
  llvm::raw_string_ostream os(text);
  CodeWriter w(os);
  os << banner(plan, options, "The driver");
  w.comment("\nRuns one step as the simulator does for the same sizes and "
            "seed, writes the\nresults (--output-dir) and times more steps "
            "(--iterations). --help lists\nthe options.");
  w.line();
  emitLines(w, t.info.driverPreamble);
  w.line("#include \"" + plan.name + ".h\"").line();
  w.line("#include \"" + t.info.driverHeader.str() + "\"").line();
  t.emitMpiOrElse(w, {"#include <mpi.h>"}, {});
  w.line().line("#include <chrono>").line("#include <cstdio>");
  w.line("#include <memory>")
      .line("#include <string>")
      .line("#include <vector>");
  w.line();
  w.comment("The driver's own names start with cc_, as no user name does; "
            "the\nprogram's class is cc_Program; cc_target has the target's "
            "Block and Session.");
  w.line("namespace cc_rt = coconet::rt;");
  w.line("namespace cc_target = " + t.info.runtimeNamespace.str() +
         "::driver;");
  w.line("using cc_Program = coconet::generated::" + plan.name + ";");
  w.line();
  w.open("namespace");
  w.dedent();
  w.line();
  w.line("const char *const cc_kProgram = \"" + plan.name + "\";");
  w.line();
  w.line("} // namespace");
  w.line();

  w.open("int main(int cc_argc, char **cc_argv)");
  t.emitMpiOrElse(w,
                  {"// Overlaps call MPI from a progress thread too (never at "
                   "the same time).",
                   "int cc_provided = 0;",
                   "MPI_Init_thread(&cc_argc, &cc_argv, MPI_THREAD_SERIALIZED, "
                   "&cc_provided);",
                   "cc_rt::driver::MpiTransport cc_transport(MPI_COMM_WORLD);"},
                  {"cc_rt::driver::Transport &cc_transport = "
                   "cc_rt::driver::singleProcess();"});
  w.line("const int cc_exit = [&]() -> int {");
  w.indent();
  w.line("cc_rt::driver::Options cc_options;");
  w.line("bool cc_help = false;");
  w.line("cc_rt::Status cc_st = cc_rt::driver::parseArgs(cc_argc, cc_argv, "
         "cc_kProgram,");
  w.line("                                               &cc_options, "
         "&cc_help);");
  w.open("if (cc_help)");
  w.line("if (cc_transport.rank() == 0)");
  w.line("  std::printf(\"%s\", cc_rt::driver::usage(cc_kProgram).c_str());");
  w.line("return 0;");
  w.close();
  w.comment("After each phase every rank learns whether some rank failed "
            "(and all\nexit with the same status); rank 0 prints each "
            "distinct error once.");
  w.line("auto cc_agree = [&](int cc_code) {");
  w.line("  return cc_rt::driver::agree(cc_transport, cc_st, cc_code, "
         "cc_kProgram);");
  w.line("};");
  // The names the command line may bind, and the sizes.
  std::string sizeNames, paramNames;
  for (const std::string &s : plan.allSizeNames())
    sizeNames += (sizeNames.empty() ? "\"" : ", \"") + s + "\"";
  for (const Plan::Param &p : plan.params)
    paramNames += (paramNames.empty() ? "{\"" : ", {\"") + p.name + "\", " +
                  runtimeDType(p.type.dtype) + "}";
  w.line("if (cc_st.ok())");
  w.line("  cc_st = cc_rt::driver::checkNames(cc_options, {" + sizeNames +
         "},");
  w.line("                                    {" + paramNames + "});");
  if (!plan.tables.empty()) {
    std::string tableNames;
    for (const Plan::Table &tb : plan.tables)
      tableNames += (tableNames.empty() ? "\"" : ", \"") + tb.name + "\"";
    w.line("if (cc_st.ok())");
    w.line("  cc_st = cc_rt::driver::checkTableNames(cc_options, {" +
           tableNames + "});");
  }
  w.line("cc_Program::Sizes cc_sizes;");
  for (const std::string &s : plan.allSizeNames()) {
    // A table's count is bound with its table.
    if (llvm::any_of(plan.tables,
                     [&](const Plan::Table &tb) { return tb.count == s; }))
      continue;
    bool world = mesh.isImplicit && s == mesh.axes[0].size;
    w.line("if (cc_st.ok())");
    w.line("  cc_st = cc_rt::driver::sizeOf(cc_options, \"" + s + "\", " +
           (world ? "cc_transport.size()" : std::string("0")) + ", &cc_sizes." +
           s + ");");
  }
  // Segment tables: read or generated as the simulator does; their
  // lengths are create()'s.
  if (!plan.tables.empty())
    w.line("cc_Program::Tables cc_tables;");
  for (unsigned i = 0; i < plan.tables.size(); ++i) {
    const Plan::Table &tb = plan.tables[i];
    const std::string table = "cc_table_" + tb.name;
    w.line("cc_rt::SegmentTable " + table + ";");
    w.line("if (cc_st.ok())");
    w.line("  cc_st = cc_rt::driver::segmentTable(cc_options, \"" + tb.name +
           "\", " + std::to_string(i) + ", \"" + tb.count + "\", \"" +
           tb.length.str() + "\",");
    w.line("      " + printExtent({tb.length, {}}, mesh, driverSize) +
           ", &cc_sizes." + tb.count + ", &" + table + ");");
    w.line("const std::vector<int64_t> " + table + "_lengths = " + table +
           ".lengths();");
    w.line("cc_tables." + tb.name + " = " + table + "_lengths.data();");
  }
  w.comment("A usage error: exit status 2.");
  w.line("if (int cc_code = cc_agree(2))");
  w.line("  return cc_code;");
  std::string axisSizes;
  for (const auto &a : mesh.axes)
    axisSizes += (axisSizes.empty() ? "" : ", ") + driverSize(a.size);
  w.line("const std::vector<int64_t> cc_axisSizes = {" + axisSizes + "};");
  w.line("const std::vector<int64_t> cc_coords =");
  w.line(
      "    cc_rt::driver::coordinatesOf(cc_axisSizes, cc_transport.rank());");
  // Communicator and program object.
  w.line("cc_target::Session cc_session;");
  w.line("cc_st = cc_session.open(cc_transport);");
  w.line("if (int cc_code = cc_agree(1))");
  w.line("  return cc_code;");
  w.line("std::unique_ptr<cc_Program> cc_program;");
  w.line(plan.tables.empty()
             ? "cc_st = cc_session.create(cc_sizes, &cc_program);"
             : "cc_st = cc_session.create(cc_sizes, cc_tables, &cc_program);");
  w.line("if (int cc_code = cc_agree(1))");
  w.line("  return cc_code;");
  if (hasPath(plan)) {
    w.line("if (cc_transport.rank() == 0 && !cc_options.quiet)");
    w.line("  std::printf(\"%s: %s\\n\", cc_kProgram, cc_program->path());");
  }
  // The tensors a fused kernel shares live in the program's symmetric
  // memory, unless --staging.
  auto bound = [&](const Buffer &b) -> std::string {
    if (!b.team)
      return "nullptr";
    return "cc_options.staging ? nullptr : static_cast<void *>(cc_program->"
           "symmetric()." +
           b.name + ")";
  };
  // Parameters.
  w.comment("The parameters, filled as the simulator fills them.");
  for (const Plan::Param &p : plan.params) {
    const Buffer &b = plan.buffers[p.buffer];
    w.line("cc_target::Block " + b.name + ";");
    w.line("if (cc_st.ok())");
    w.line("  cc_st = " + b.name + ".make(" +
           tensorInfoInit(p.name, p.index, p.type, mesh) + ",");
    w.line("      cc_axisSizes, cc_coords, " + bound(b) + ");");
    w.line("if (cc_st.ok())");
    w.line("  cc_st = cc_rt::driver::fillInput(" + b.name +
           ".info, cc_options, cc_axisSizes, cc_coords, " + b.name +
           ".placement, " + b.name + ".host.data());");
    w.line("if (cc_st.ok())");
    w.line("  cc_st = " + b.name + ".upload();");
  }
  // Outputs.
  for (unsigned o : plan.outputs()) {
    const Buffer &b = plan.buffers[o];
    const Plan::Result &r = plan.results[b.result];
    w.line("cc_target::Block " + b.name + ";");
    w.line("if (cc_st.ok())");
    w.line("  cc_st = " + b.name + ".make(" +
           tensorInfoInit(r.name, 0, r.type, mesh) + ",");
    w.line("      cc_axisSizes, cc_coords, " + bound(b) + ");");
  }
  w.line("if (int cc_code = cc_agree(1))");
  w.line("  return cc_code;");
  // The call.
  std::string args;
  for (const Plan::Param &p : plan.params) {
    const Buffer &b = plan.buffers[p.buffer];
    std::string arg;
    if (b.kind == Buffer::Kind::ScalarParam) {
      std::string raw = "*reinterpret_cast<const " + host.storageType(b.dtype) +
                        " *>(" + b.name + ".host.data())";
      arg = host.load(b.dtype, raw);
    } else {
      arg = "static_cast<" + std::string(b.written ? "" : "const ") +
            t.storageType(b.dtype) + " *>(" + b.name + ".pointer())";
    }
    args += (args.empty() ? "" : ",\n        ") + arg;
  }
  for (unsigned o : plan.outputs()) {
    const Buffer &b = plan.buffers[o];
    args += (args.empty() ? "" : ",\n        ") + std::string("static_cast<") +
            t.storageType(b.dtype) + " *>(" + b.name + ".pointer())";
  }
  w.line("auto cc_runStep = [&]() -> cc_rt::Status {");
  w.line("  return (*cc_program)(" + args + ");");
  w.line("};");
  w.comment("One step, then its results.");
  w.line("cc_st = cc_runStep();");
  w.line("if (cc_st.ok())");
  w.line("  cc_st = cc_session.synchronize();");
  w.line("if (int cc_code = cc_agree(1))");
  w.line("  return cc_code;");
  for (const Plan::Result &r : plan.results) {
    const Buffer &b = plan.buffers[r.buffer];
    // An update written in place lives in the parameter's block.
    w.line("{");
    w.indent();
    w.line("cc_target::Block &cc_result = " + b.name + ";");
    w.line("if (cc_st.ok())");
    w.line("  cc_st = cc_result.download();");
    w.line("cc_rt::driver::TensorInfo cc_info = " +
           tensorInfoInit(r.name, 0, r.type, mesh) + ";");
    w.line("if (cc_st.ok() && !cc_options.quiet)");
    w.line("  cc_rt::driver::printSummary(cc_info, cc_transport, "
           "cc_result.placement, cc_result.host.data());");
    w.line("if (cc_st.ok() && !cc_options.outputDir.empty())");
    w.line("  cc_st = cc_rt::driver::writeResult(cc_info, cc_options, "
           "cc_axisSizes, cc_transport, cc_result.host.data());");
    w.comment("A result that cannot be written: exit status 2.");
    w.line("if (int cc_code = cc_agree(cc_st.code() == "
           "cc_rt::StatusCode::IoError ? 2 : 1))");
    w.line("  return cc_code;");
    w.close();
  }
  // Timing.
  w.comment("More steps, timed (their results are not written).");
  w.open("if (cc_options.iterations > 1 || cc_options.warmup > 0)");
  w.line("for (int cc_i = 0; cc_i < cc_options.warmup && cc_st.ok(); ++cc_i)");
  w.line("  cc_st = cc_runStep();");
  w.line("if (cc_st.ok())");
  w.line("  cc_st = cc_session.synchronize();");
  w.line("if (int cc_code = cc_agree(1))");
  w.line("  return cc_code;");
  w.comment("--step-times: when each step ended, waiting for it.");
  w.line("std::vector<double> cc_steps(cc_options.stepTimes ? "
         "cc_options.iterations : 0);");
  t.emitMpiOrElse(w, {"MPI_Barrier(MPI_COMM_WORLD);"}, {});
  w.line("const auto cc_start = std::chrono::steady_clock::now();");
  w.open("for (int cc_i = 0; cc_i < cc_options.iterations && cc_st.ok(); "
         "++cc_i)");
  w.line("cc_st = cc_runStep();");
  w.open("if (cc_options.stepTimes && cc_st.ok())");
  w.line("cc_st = cc_session.synchronize();");
  w.line("cc_steps[cc_i] = std::chrono::duration<double>("
         "std::chrono::steady_clock::now() - cc_start).count();");
  w.close();
  w.close();
  w.line("if (cc_st.ok())");
  w.line("  cc_st = cc_session.synchronize();");
  w.line("double cc_seconds = std::chrono::duration<double>("
         "std::chrono::steady_clock::now() - cc_start).count();");
  w.line("if (int cc_code = cc_agree(1))");
  w.line("  return cc_code;");
  w.comment("The slowest rank's time, and when each step ended on the last "
            "rank to end it: each step's time is then the time between two "
            "such ends, and they add up to the slowest rank's (the fastest "
            "step is at most the mean).");
  t.emitMpiOrElse(w,
                  {"MPI_Allreduce(MPI_IN_PLACE, &cc_seconds, 1, MPI_DOUBLE, "
                   "MPI_MAX, MPI_COMM_WORLD);",
                   "MPI_Allreduce(MPI_IN_PLACE, cc_steps.data(), "
                   "static_cast<int>(cc_steps.size()), MPI_DOUBLE, MPI_MAX, "
                   "MPI_COMM_WORLD);"},
                  {});
  w.line("cc_rt::driver::stepDurations(cc_steps);");
  w.line("if (cc_transport.rank() == 0)");
  w.line("  std::printf(\"%s\\n\", cc_rt::driver::timingLine(cc_kProgram, "
         "cc_options.iterations, cc_transport.size(), cc_seconds, "
         "cc_steps).c_str());");
  w.close();
  w.line("return 0;");
  w.dedent();
  w.line("}();");
  t.emitMpiOrElse(w, {"MPI_Finalize();"}, {});
  w.line("return cc_exit;");
  w.close();
  return text;
}

} // namespace coconet::codegen
