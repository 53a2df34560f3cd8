//===- DescriptionCode.cpp - a program's cc_description ------------------===//
//
// The program as data (runtime/include/coconet/description.h), printed
// from its plan once for every host: the driver (--emit=driver) and the
// Python entry points (--emit=python) print the same text, and each adds
// its own entry points beside it.
//
//===----------------------------------------------------------------------===//

#include "codegen/CodegenImpl.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/ErrorHandling.h"

#include <map>

namespace coconet::codegen {

using namespace lower;

namespace {

/// `{{CC_AXIS_SLICED, 0}, ...}`
std::string layoutInit(const ir::Layout &layout) {
  std::string out = "{";
  for (unsigned a = 0; a < layout.size(); ++a) {
    const char *state =
        layout[a].state == ir::AxisState::Sliced  ? "CC_AXIS_SLICED"
        : layout[a].state == ir::AxisState::Local ? "CC_AXIS_LOCAL"
                                                  : "CC_AXIS_REPLICATED";
    const int dim =
        layout[a].state == ir::AxisState::Sliced ? layout[a].dim : 0;
    out += (a ? ", {" : "{") + std::string(state) + ", " + std::to_string(dim) +
           "}";
  }
  return out + "}";
}

/// A dtype as the description's int32_t.
std::string dtypeIndex(ir::DType dtype) {
  return "static_cast<int32_t>(" + runtimeDType(dtype) + ")";
}

/// The arrays of a description, each printed once (equal extents and
/// layouts share one) in the order first needed.
class Arrays {
public:
  Arrays(const Plan &plan, CodeWriter &w)
      : w_(w), sizes_(plan.allSizeNames()) {}

  /// The index of size `name` in the description's size_names.
  unsigned size(llvm::StringRef name) const {
    for (unsigned i = 0; i < sizes_.size(); ++i)
      if (sizes_[i] == name)
        return i;
    llvm_unreachable("a size the plan does not list");
  }
  const std::vector<std::string> &sizes() const { return sizes_; }

  /// `{4, 1, cc_e0}`: the cc_extent of `dim`.
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

  /// The shape array of `type` (null for a scalar).
  std::string shape(const ir::TensorType &type) {
    if (type.shape.empty())
      return "nullptr";
    std::string dims;
    for (const ir::Dim &d : type.shape)
      dims += (dims.empty() ? "" : ", ") + extent(d);
    return shared("const cc_extent", "cc_s", "{" + dims + "}");
  }

  /// The layout array of `type` (null without mesh axes).
  std::string layout(const ir::TensorType &type) {
    return type.layout.size() > 0
               ? shared("const cc_axis_layout", "cc_l", layoutInit(type.layout))
               : "nullptr";
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

std::string quoted(llvm::StringRef text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
    } else {
      static const char hex[] = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
      out += "\" \""; // end the escape: the next character is not a digit
    }
  }
  return out + "\"";
}

void emitDescription(CodeWriter &w, const Plan &plan) {
  const ir::Mesh &mesh = plan.mesh;
  w.comment("The program as data (coconet/description.h): its sizes, mesh "
            "axes,\nparameters and outputs (the blocks a step takes, in "
            "order), results and\nsegment tables.");
  Arrays arrays(plan, w);
  std::string sizeNames;
  for (const std::string &s : arrays.sizes())
    sizeNames += (sizeNames.empty() ? "" : ", ") + quoted(s);
  w.line("const char *const cc_sizeNames[] = {" + sizeNames + "};");
  std::string axisSizes;
  for (const auto &a : mesh.axes)
    axisSizes +=
        (axisSizes.empty() ? "" : ", ") + std::to_string(arrays.size(a.size));
  if (!axisSizes.empty())
    w.line("const uint32_t cc_axisSizes[] = {" + axisSizes + "};");

  auto tableOf = [&](const ir::TensorType &type) {
    for (unsigned t = 0; t < plan.tables.size(); ++t)
      if (plan.tables[t].name == type.segments)
        return std::to_string(t);
    return std::string("-1");
  };
  // The blocks: the parameters, then the outputs.
  std::vector<std::string> blocks;
  std::map<unsigned, unsigned> blockOf;
  for (const Plan::Param &p : plan.params) {
    const Buffer &b = plan.buffers[p.buffer];
    blockOf[p.buffer] = blocks.size();
    const char *kind = b.kind == Buffer::Kind::ScalarParam ? "CC_BLOCK_SCALAR"
                                                           : "CC_BLOCK_TENSOR";
    blocks.push_back("{" + quoted(p.name) + ", " + std::to_string(p.index) +
                     ", " + kind + ", " + dtypeIndex(p.type.dtype) + ", " +
                     std::to_string(p.type.shape.size()) + ", " +
                     arrays.shape(p.type) + ", " + arrays.layout(p.type) +
                     ", " + (b.written ? "1" : "0") + ", " +
                     (b.team ? "1" : "0") + ", " + tableOf(p.type) + ", " +
                     quoted(p.type.str(mesh)) + "}");
  }
  for (unsigned o : plan.outputs()) {
    const Buffer &b = plan.buffers[o];
    const Plan::Result &r = plan.results[b.result];
    blockOf[o] = blocks.size();
    blocks.push_back("{" + quoted(r.name) + ", 0, CC_BLOCK_OUTPUT, " +
                     dtypeIndex(r.type.dtype) + ", " +
                     std::to_string(r.type.shape.size()) + ", " +
                     arrays.shape(r.type) + ", " + arrays.layout(r.type) +
                     ", 1, " + (b.team ? "1" : "0") + ", " + tableOf(r.type) +
                     ", " + quoted(r.type.str(mesh)) + "}");
  }
  std::vector<std::string> results;
  for (const Plan::Result &r : plan.results)
    results.push_back("{" + quoted(r.name) + ", " +
                      std::to_string(blockOf.at(r.buffer)) + "}");
  std::vector<std::string> tables;
  for (const Plan::Table &tb : plan.tables)
    tables.push_back(
        "{" + quoted(tb.name) + ", " + std::to_string(arrays.size(tb.count)) +
        ", " + quoted(tb.length.str()) + ", " + arrays.extent(tb.length) + "}");
  auto array = [&](const std::string &type, const std::string &name,
                   const std::vector<std::string> &items) {
    if (items.empty())
      return std::string("nullptr");
    w.line("const " + type + " " + name + "[] = {");
    for (const std::string &item : items)
      w.line("    " + item + ",");
    w.line("};");
    return name;
  };
  const std::string blockArray = array("cc_block", "cc_blocks", blocks);
  const std::string resultArray = array("cc_result", "cc_results", results);
  const std::string tableArray = array("cc_table", "cc_segmentTables", tables);
  w.line("const cc_description cc_program = {");
  w.line("    COCONET_DESCRIPTION_VERSION,");
  w.line("    " + quoted(plan.name) + ", " + quoted(plan.programName) + ", " +
         quoted(plan.schedule) + ",");
  w.line("    " + std::to_string(arrays.sizes().size()) + ", cc_sizeNames,");
  w.line("    " + std::to_string(mesh.axes.size()) + ", " +
         (axisSizes.empty() ? "nullptr" : "cc_axisSizes") + ", " +
         (mesh.isImplicit ? std::to_string(arrays.size(mesh.axes[0].size))
                          : std::string("-1")) +
         ",");
  w.line("    " + std::to_string(blocks.size()) + ", " +
         std::to_string(plan.params.size()) + ", " + blockArray + ",");
  w.line("    " + std::to_string(results.size()) + ", " + resultArray + ",");
  w.line("    " + std::to_string(tables.size()) + ", " + tableArray + ",");
  w.line(std::string("    ") + (hasPath(plan) ? "1" : "0") + ",");
  w.line("};");
}

} // namespace coconet::codegen
