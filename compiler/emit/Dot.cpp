//===- Dot.cpp - Graphviz drawing of a (scheduled) program ----------------===//
//
// Nodes are named `s<id>` and labelled with three lines: name, operation,
// type (plus the results the stage is, and "sharded" for a sharded
// parameter). Parameters are grey ellipses, computation stages blue boxes,
// communication stages orange hexagons; results have a double border. A
// kernel is a `cluster_k<i>` subgraph, declared where its first member is
// in program order; overlap pairs are dashed red edges outside the layout
// constraints. All text goes through one escaping function.
//
//===----------------------------------------------------------------------===//

#include "emit/Dot.h"

#include "ir/Describe.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace coconet::emit {
namespace {

using ir::Stage;
using ir::StageKind;

/// A DOT double-quoted string: quotes and backslashes escaped, each
/// newline a centred line break.
std::string quote(llvm::StringRef text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string nodeName(const Stage &stage) {
  return "s" + std::to_string(stage.id);
}

/// The interface names under which `stage` is a result: "-> update w",
/// "result out".
llvm::SmallVector<std::string, 2> resultLines(const ir::Program &program,
                                              const Stage &stage) {
  llvm::SmallVector<std::string, 2> lines;
  for (size_t i = 0; i < program.getResults().size(); ++i) {
    if (program.getResults()[i] != &stage)
      continue;
    std::string name = program.getResultName(i).str();
    bool isUpdate = stage.updates && stage.updates->name == name;
    lines.push_back((isUpdate ? "-> update " : "result ") + name);
  }
  return lines;
}

void printNode(const ir::Program &program, const Stage &stage,
               llvm::StringRef indent, llvm::raw_ostream &os) {
  std::string label = stage.name + "\n" +
                      ir::operationText(ir::describeStage(program, stage)) +
                      "\n" + stage.type.str(program.mesh);
  if (stage.sharded)
    label += "\nsharded";
  llvm::SmallVector<std::string, 2> results = resultLines(program, stage);
  for (const std::string &line : results)
    label += "\n" + line;
  const char *shape = stage.isParam()                   ? "ellipse"
                      : ir::isCommunication(stage.kind) ? "hexagon"
                                                        : "box";
  const char *fill = stage.sharded                     ? "#fff2b2"
                     : stage.isParam()                 ? "#e5e5e5"
                     : ir::isCommunication(stage.kind) ? "#fdd0a2"
                                                       : "#c6dbef";
  os << indent << nodeName(stage) << " [label=" << quote(label)
     << ", shape=" << shape << ", fillcolor=\"" << fill << '"';
  if (stage.sharded)
    os << ", style=\"filled,bold\"";
  if (!results.empty())
    os << ", peripheries=2";
  os << "];\n";
}

void printCluster(const ir::Program &program, const ir::Kernel &kernel,
                  unsigned index, llvm::raw_ostream &os) {
  std::string label =
      "kernel k" + std::to_string(index) +
      (kernel.isFusedCollective() ? " (fused collective)" : " (elementwise)");
  os << "  subgraph cluster_k" << index << " {\n"
     << "    label=" << quote(label) << ";\n"
     << "    style=\"rounded,dashed\";\n"
     << "    color=\"#6a51a3\";\n";
  for (const Stage *s : kernel.stages)
    printNode(program, *s, "    ", os);
  os << "  }\n";
}

void printNodes(const ir::Program &program, llvm::raw_ostream &os) {
  for (const auto &ptr : program.getStages()) {
    const Stage &s = *ptr;
    const ir::Kernel *k = program.kernelOf(&s);
    if (!k)
      printNode(program, s, "  ", os);
    else if (k->stages.front() == &s)
      printCluster(program, *k,
                   static_cast<unsigned>(k - program.kernels.data()), os);
  }
}

void printEdges(const ir::Program &program, llvm::raw_ostream &os) {
  for (const auto &ptr : program.getStages()) {
    llvm::DenseSet<const Stage *> seen;
    for (const Stage *o : ptr->operands)
      if (seen.insert(o).second)
        os << "  " << nodeName(*o) << " -> " << nodeName(*ptr) << ";\n";
  }
  for (const ir::Overlap &o : program.overlaps) {
    if (!o.producer || !o.consumer)
      continue;
    std::string label = "overlap, " + std::to_string(o.chunks) + " chunks";
    os << "  " << nodeName(*o.producer) << " -> " << nodeName(*o.consumer)
       << " [style=dashed, color=\"#cb181d\", fontcolor=\"#cb181d\", "
          "constraint=false, label="
       << quote(label) << "];\n";
  }
}

} // namespace

void printDot(const ir::Program &program, llvm::StringRef title,
              llvm::raw_ostream &os) {
  os << "digraph " << quote(title) << " {\n"
     << "  label=" << quote(title) << ";\n"
     << "  labelloc=t;\n"
     << "  fontname=\"Helvetica\";\n"
     << "  node [fontname=\"Helvetica\", fontsize=10, style=filled];\n"
     << "  edge [fontname=\"Helvetica\", fontsize=9];\n";
  printNodes(program, os);
  printEdges(program, os);
  os << "}\n";
}

} // namespace coconet::emit
