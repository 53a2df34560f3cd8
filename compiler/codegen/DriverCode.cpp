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

namespace {

/// The tables of a driver's ProgramDescription, each array printed once
/// (equal extents and layouts share one) in the order first needed.
class DescriptionTables {
public:
  DescriptionTables(const Plan &plan, CodeWriter &w)
      : w_(w), sizes_(plan.allSizeNames()) {}

  /// The index of size `name` in the description's sizeNames.
  unsigned size(llvm::StringRef name) const {
    for (unsigned i = 0; i < sizes_.size(); ++i)
      if (sizes_[i] == name)
        return i;
    llvm_unreachable("a size the plan does not list");
  }
  const std::vector<std::string> &sizes() const { return sizes_; }

  /// `{4, 1, cc_e0}`: an ExtentDescription of `dim`.
  std::string extent(const ir::Dim &dim) {
    std::string list;
    for (const std::string &s : dim.symbols())
      list += (list.empty() ? "" : ", ") + std::to_string(size(s));
    std::string array =
        list.empty() ? "nullptr"
                     : shared("const uint32_t", "cc_e", "{" + list + "}");
    return "{" + std::to_string(dim.coefficient()) + ", " +
           std::to_string(dim.symbols().size()) + ", " + array + "}";
  }

  /// `{"w", 1, cc_rt::DType::F32, 1, cc_s0, cc_l0}`: a TensorDescription.
  std::string tensor(const std::string &name, unsigned paramIndex,
                     const ir::TensorType &type) {
    std::string shape = "nullptr";
    if (!type.shape.empty()) {
      std::string dims;
      for (const ir::Dim &d : type.shape)
        dims += (dims.empty() ? "" : ", ") + extent(d);
      shape = shared("const cc_rt::driver::ExtentDescription", "cc_s",
                     "{" + dims + "}");
    }
    const std::string layout = type.layout.size() > 0
                                   ? shared("const cc_rt::driver::AxisLayout",
                                            "cc_l", layoutInit(type.layout))
                                   : "nullptr";
    return "{\"" + name + "\", " + std::to_string(paramIndex) + ", " +
           runtimeDType(type.dtype) + ", " + std::to_string(type.shape.size()) +
           ", " + shape + ", " + layout + "}";
  }

private:
  /// The name of a `type NAME[] = INIT;` array, printed the first time.
  std::string shared(const std::string &type, const std::string &prefix,
                     const std::string &init) {
    std::string &name = arrays_[type + init];
    if (name.empty()) {
      name = prefix + std::to_string(counts_[prefix]++);
      w_.line(type + " " + name + "[] = " + init + ";");
    }
    return name;
  }

  CodeWriter &w_;
  std::vector<std::string> sizes_;
  std::map<std::string, std::string> arrays_;
  std::map<std::string, unsigned> counts_;
};

} // namespace

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
  const ir::Mesh &mesh = plan.mesh;
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
  w.comment("The program as data (coconet/driver.h, ProgramDescription): its "
            "sizes, mesh\naxes, parameters and outputs (the blocks a step "
            "takes, in order), results\nand segment tables.");
  DescriptionTables tables(plan, w);
  std::string sizeNames;
  for (const std::string &s : tables.sizes())
    sizeNames += (sizeNames.empty() ? "\"" : ", \"") + s + "\"";
  w.line("const char *const cc_sizeNames[] = {" + sizeNames + "};");
  std::string axisSizes;
  for (const auto &a : mesh.axes)
    axisSizes +=
        (axisSizes.empty() ? "" : ", ") + std::to_string(tables.size(a.size));
  w.line("const uint32_t cc_axisSizes[] = {" + axisSizes + "};");

  // The blocks: the parameters, then the outputs; a buffer's block.
  std::map<unsigned, unsigned> blockOf;
  std::vector<std::string> blocks;
  for (const Plan::Param &p : plan.params) {
    const Buffer &b = plan.buffers[p.buffer];
    blockOf[p.buffer] = blocks.size();
    blocks.push_back("{" + tables.tensor(p.name, p.index, p.type) + ", " +
                     (b.kind == Buffer::Kind::ScalarParam ? "true" : "false") +
                     ", " + (b.team ? "true" : "false") + "}");
  }
  for (unsigned o : plan.outputs()) {
    const Buffer &b = plan.buffers[o];
    const Plan::Result &r = plan.results[b.result];
    blockOf[o] = blocks.size();
    blocks.push_back("{" + tables.tensor(r.name, 0, r.type) + ", false, " +
                     (b.team ? "true" : "false") + "}");
  }
  std::vector<std::string> results;
  for (const Plan::Result &r : plan.results)
    results.push_back("{" + tables.tensor(r.name, 0, r.type) + ", " +
                      std::to_string(blockOf.at(r.buffer)) + "}");
  std::vector<std::string> segmentTables;
  for (const Plan::Table &tb : plan.tables)
    segmentTables.push_back(
        "{\"" + tb.name + "\", " + std::to_string(tables.size(tb.count)) +
        ", \"" + tb.length.str() + "\", " + tables.extent(tb.length) + "}");
  auto array = [&](const std::string &type, const std::string &name,
                   const std::vector<std::string> &items) {
    if (items.empty())
      return;
    w.line("const " + type + " " + name + "[] = {");
    for (const std::string &item : items)
      w.line("    " + item + ",");
    w.line("};");
  };
  array("cc_rt::driver::BlockDescription", "cc_blocks", blocks);
  array("cc_rt::driver::ResultDescription", "cc_results", results);
  array("cc_rt::driver::TableDescription", "cc_tables", segmentTables);
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
  for (const auto &[buffer, block] : blockOf)
    if (plan.buffers[buffer].team)
      shared.push_back({block, plan.buffers[buffer].name});
  llvm::sort(shared);
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
  const bool world = mesh.isImplicit;
  w.line("const cc_rt::driver::ProgramDescription cc_description = {");
  w.line("    cc_rt::driver::kDescriptionVersion,");
  w.line("    \"" + plan.name + "\",");
  w.line("    " + std::to_string(tables.sizes().size()) + ", cc_sizeNames, " +
         (world ? std::to_string(tables.size(mesh.axes[0].size))
                : std::string("-1")) +
         ",");
  w.line("    " + std::to_string(mesh.axes.size()) + ", cc_axisSizes,");
  w.line("    " + std::to_string(blocks.size()) + ", " +
         std::to_string(plan.params.size()) + ", " +
         (blocks.empty() ? "nullptr" : "cc_blocks") + ",");
  w.line("    " + std::to_string(results.size()) + ", " +
         (results.empty() ? "nullptr" : "cc_results") + ",");
  w.line("    " + std::to_string(segmentTables.size()) + ", " +
         (segmentTables.empty() ? "nullptr" : "cc_tables") + ",");
  w.line(std::string("    ") + (path ? "true" : "false") + ",");
  w.line(std::string("    cc_create, cc_destroy, cc_step, ") +
         (path ? "cc_path" : "nullptr") + ", " +
         (shared.empty() ? "nullptr" : "cc_symmetric") + ",");
  w.line("};");
  w.line();
  w.line("} // namespace");
  w.line();
  w.open("int main(int cc_argc, char **cc_argv)");
  w.line("return cc_target::main(cc_description, cc_argc, cc_argv);");
  w.close();
  return text;
}

} // namespace coconet::codegen
