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
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

namespace coconet::codegen {

using namespace lower;

void emitSizesFrom(CodeWriter &w, const Plan &plan) {
  const std::vector<std::string> sizes = plan.allSizeNames();
  w.line("cc_Program::Sizes cc_sizes;");
  for (unsigned i = 0; i < sizes.size(); ++i)
    w.line("cc_sizes." + sizes[i] + " = cc_s[" + std::to_string(i) + "];");
}

void emitTablesFrom(CodeWriter &w, const Plan &plan) {
  if (plan.tables.empty())
    return;
  w.line("cc_Program::Tables cc_tables;");
  for (unsigned i = 0; i < plan.tables.size(); ++i)
    w.line("cc_tables." + plan.tables[i].name + " = cc_t[" + std::to_string(i) +
           "];");
}

std::string emitDriver(const Plan &plan, const EmitOptions &options) {
  const Target &t = Target::get(options.target);
  // The driver's own host data is the runtime's host types.
  const Target &host = Target::get(TargetKind::Cpu);
  std::string text;
  llvm::raw_string_ostream os(text);
  CodeWriter w(os);
  os << banner(plan, options, "The driver");
  w.comment("\nRuns one step as the simulator does for the same sizes and "
            "seed, writes the\nresults (--output-dir) and times more steps "
            "(--iterations). --help lists\nthe options. The driver is the "
            "runtime's (" +
            t.info.runtimeNamespace.str() +
            "::driver::run):\nthis file describes the program to it.");
  w.line();
  emitLines(w, t.info.driverPreamble);
  w.line("#include \"" + plan.name + ".h\"").line();
  w.line("#include \"" + t.info.driverHeader.str() + "\"").line();
  w.line("#include <cstdint>").line("#include <memory>");
  w.line();
  w.comment("The driver's own names start with cc_, as no user name does; "
            "the\nprogram's class is cc_Program; cc_target has the target's "
            "Session and main.");
  w.line("namespace cc_rt = coconet::rt;");
  w.line("namespace cc_target = " + t.info.runtimeNamespace.str() +
         "::driver;");
  w.line("using cc_Program = coconet::generated::" + plan.name + ";");
  w.line();
  w.open("namespace");
  w.dedent();
  w.line();
  emitDescription(w, plan);
  w.line();

  // The entry points into the program's class.
  w.comment("Program::create on the target's session.");
  w.line("cc_rt::Status cc_create(void *cc_session, const int64_t *cc_s,");
  w.line("                        const int64_t *const *cc_t, void **cc_out) "
         "{");
  w.indent();
  if (plan.tables.empty())
    w.line("(void)cc_t;");
  emitSizesFrom(w, plan);
  emitTablesFrom(w, plan);
  w.line("std::unique_ptr<cc_Program> cc_program;");
  w.line("const cc_rt::Status cc_st =");
  w.line("    static_cast<cc_target::Session *>(cc_session)->create(" +
         std::string(plan.tables.empty() ? "cc_sizes" : "cc_sizes, cc_tables") +
         ", &cc_program);");
  w.line("*cc_out = cc_program.release();");
  w.line("return cc_st;");
  w.dedent();
  w.line("}");
  w.line();
  w.line("void cc_destroy(void *cc_p) { delete static_cast<cc_Program "
         "*>(cc_p); }");
  w.line();
  w.comment("One step: each block's data where the program reads it, a "
            "scalar's host value.");
  std::string args;
  unsigned index = 0;
  auto argument = [&](const Buffer &b, bool output) {
    const std::string a = "cc_a[" + std::to_string(index++) + "]";
    std::string arg;
    if (b.kind == Buffer::Kind::ScalarParam)
      arg =
          host.load(b.dtype, "*static_cast<const " + host.storageType(b.dtype) +
                                 " *>(" + a + ")");
    else
      arg = "static_cast<" + std::string(b.written || output ? "" : "const ") +
            t.storageType(b.dtype) + " *>(" + a + ")";
    args += (args.empty() ? "" : ",\n      ") + arg;
  };
  for (const Plan::Param &p : plan.params)
    argument(plan.buffers[p.buffer], false);
  for (unsigned o : plan.outputs())
    argument(plan.buffers[o], true);
  w.line("cc_rt::Status cc_step(void *cc_p, void *const *cc_a) {");
  if (args.empty())
    w.line("  (void)cc_a;");
  w.line("  return (*static_cast<cc_Program *>(cc_p))(" + args + ");");
  w.line("}");
  const bool path = hasPath(plan);
  if (path) {
    w.line();
    w.line("const char *cc_path(void *cc_p) {");
    w.line("  return static_cast<cc_Program *>(cc_p)->path();");
    w.line("}");
  }
  // The blocks a fused kernel shares live in the program's symmetric
  // memory, unless --staging.
  std::vector<std::pair<unsigned, std::string>> shared;
  std::vector<unsigned> blockBuffers;
  for (const Plan::Param &p : plan.params)
    blockBuffers.push_back(p.buffer);
  for (unsigned o : plan.outputs())
    blockBuffers.push_back(o);
  for (unsigned block = 0; block < blockBuffers.size(); ++block)
    if (plan.buffers[blockBuffers[block]].team)
      shared.push_back({block, plan.buffers[blockBuffers[block]].name});
  if (!shared.empty()) {
    w.line();
    w.comment("Where a block a fused kernel shares lives in the program's "
              "symmetric memory.");
    w.line("void *cc_symmetric(void *cc_p, uint32_t cc_block) {");
    w.indent();
    w.line("const auto &cc_m = static_cast<cc_Program *>(cc_p)->symmetric();");
    w.line("switch (cc_block) {");
    for (const auto &[block, name] : shared)
      w.line("case " + std::to_string(block) +
             ": return static_cast<void *>(cc_m." + name + ");");
    w.line("}");
    w.line("return nullptr;");
    w.dedent();
    w.line("}");
  }
  w.line();
  w.line("const cc_rt::driver::ProgramDescription cc_driven = {");
  w.line(std::string("    &cc_program, cc_create, cc_destroy, cc_step, ") +
         (path ? "cc_path" : "nullptr") + ", " +
         (shared.empty() ? "nullptr" : "cc_symmetric") + ",");
  w.line("};");
  w.line();
  w.line("} // namespace");
  w.line();
  w.open("int main(int cc_argc, char **cc_argv)");
  w.line("return cc_target::main(cc_driven, cc_argc, cc_argv);");
  w.close();
  return text;
}

} // namespace coconet::codegen
