//===- AlgorithmCode.cpp - collectives run by an algorithm file -----------===//
//
// A collective the schedule runs with an algorithm file
// (`algorithm(s, "ndv2.alg")`): the generated source holds the file's table
// as coconet/algorithm.h's plain data, and create() checks it against the
// mesh and the sizes (algorithm::checkCall: the axis's size is the
// table's ranks, the input cuts into its chunks, the operator is one it
// can apply) before the first step, naming the program and the stage. On
// a target whose runtime runs tables with an object made once
// (TargetInfo::algorithmRunner: CUDA's AlgorithmRunner, which allocates
// its device memory when made), create() makes one per collective; the
// CPU target's Mesh::runAlgorithm needs none. The call in a step is the
// target's (emitCollective).
//
//===----------------------------------------------------------------------===//

#include "codegen/CodegenImpl.h"

#include "ir/AlgorithmTable.h"

namespace coconet::codegen {

using lower::CollectiveCall;
using lower::Plan;
using lower::Step;

namespace {

std::string tableCollective(ir::AlgorithmCollective c) {
  const std::string ns = "coconet::rt::algorithm::Collective::";
  switch (c) {
  case ir::AlgorithmCollective::AllGather:
    return ns + "AllGather";
  case ir::AlgorithmCollective::AllToAll:
    return ns + "AllToAll";
  case ir::AlgorithmCollective::ReduceScatter:
    return ns + "ReduceScatter";
  case ir::AlgorithmCollective::AllReduce:
    return ns + "AllReduce";
  }
  return ns + "AllGather";
}

} // namespace

llvm::SmallVector<std::pair<const Step *, const CollectiveCall *>, 2>
algorithmCalls(const Plan &plan) {
  llvm::SmallVector<std::pair<const Step *, const CollectiveCall *>, 2> calls;
  for (const Step &s : plan.steps)
    if (const auto *c = std::get_if<CollectiveCall>(&s.body); c && c->table)
      calls.push_back({&s, c});
  return calls;
}

void emitAlgorithmTables(CodeWriter &w, const Plan &plan) {
  for (const auto &[step, c] : algorithmCalls(plan)) {
    const ir::AlgorithmTable &t = *c->table;
    const std::string &id = c->tableName;
    w.comment("The algorithm in '" + t.file + "' (" + t.name +
              "): " + std::to_string(t.ranks) + " ranks, " +
              std::to_string(t.chunksPerRank) + " chunk" +
              (t.chunksPerRank == 1 ? "" : "s") + " a rank, " +
              std::to_string(t.steps.size()) + " steps, " +
              std::to_string(t.numTransfers()) +
              " transfers {chunk, src, "
              "dst, reduce}.");
    std::string begins;
    uint64_t at = 0;
    begins += "0";
    for (const auto &st : t.steps) {
      at += st.size();
      begins += ", " + std::to_string(at);
    }
    w.line("const uint32_t " + id + "_steps[] = {" + begins + "};");
    if (t.numTransfers() > 0) {
      w.line("const coconet::rt::algorithm::Transfer " + id +
             "_transfers[] = {");
      for (size_t s = 0; s < t.steps.size(); ++s) {
        std::string line = "    ";
        for (const ir::AlgorithmTable::Transfer &x : t.steps[s])
          line += "{" + std::to_string(x.chunk) + ", " + std::to_string(x.src) +
                  ", " + std::to_string(x.dst) + ", " + (x.reduce ? "1" : "0") +
                  "}, ";
        w.line(llvm::StringRef(line).rtrim().str() + " // step " +
               std::to_string(s));
      }
      w.line("};");
    }
    w.line("const coconet::rt::algorithm::Table " + id + " = {");
    w.line("    " + quoted(t.name) + ", " + tableCollective(t.collective) +
           ", " + std::to_string(t.ranks) + ", " +
           std::to_string(t.chunksPerRank) + ", " +
           std::to_string(t.steps.size()) + ",");
    w.line("    " + id + "_steps, " +
           (t.numTransfers() > 0 ? id + "_transfers" : std::string("nullptr")) +
           "};");
    w.line();
  }
}

void emitAlgorithmState(CodeWriter &w, const Plan &plan, const Target &t) {
  if (t.info.algorithmRunner.empty())
    return;
  for (const auto &[step, c] : algorithmCalls(plan)) {
    w.comment("Runs " + step->summary + " by its algorithm file.");
    w.line("std::unique_ptr<" + t.info.algorithmRunner.str() + "> " +
           c->tableName + "_runner;");
  }
}

void emitAlgorithmCreate(CodeWriter &w, const Plan &plan, const Target &t) {
  auto calls = algorithmCalls(plan);
  if (calls.empty())
    return;
  w.comment("The algorithm files' collectives: the axis's ranks, the "
            "chunks and the\noperator checked before the first step.");
  for (const auto &[step, c] : calls) {
    const std::string members =
        c->axis < 0 ? "state->mesh->size()"
                    : "state->mesh->axisSize(" + std::to_string(c->axis) + ")";
    const std::string chunks = c->tableName + "_chunks";
    w.line("int64_t " + chunks + " = 0;");
    emitCreateCall(w, plan,
                   "coconet::rt::algorithm::checkCall(" + c->tableName + ", " +
                       members + ", state->" + geometryMember(*step) +
                       ".count, " + runtimeDType(c->dtype) + ", " +
                       runtimeReduceOp(c->op) + ", \"the algorithm in '" +
                       c->table->file + "'\", &" + chunks + ")",
                   step->summary);
    if (t.info.algorithmRunner.empty()) {
      w.line("(void)" + chunks + ";");
      continue;
    }
    emitCreateCall(w, plan,
                   t.info.algorithmRunner.str() + "::create(" + c->tableName +
                       ", state->mesh->axisComm(" + std::to_string(c->axis) +
                       "), " + chunks + ", " + runtimeDType(c->dtype) + ", " +
                       runtimeReduceOp(c->op) + ", &state->" + c->tableName +
                       "_runner)",
                   step->summary);
  }
}

} // namespace coconet::codegen
