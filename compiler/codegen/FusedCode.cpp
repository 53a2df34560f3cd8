//===- FusedCode.cpp - fused collectives: teams, symmetric memory, steps --===//
//
// A fused collective that one kernel computes (lower/Fusion.cpp) needs,
// besides its kernel (emitFusedKernel, with the target's hooks):
//   - a team per mesh axis, created with the program object (a collective
//     call: the runtime's Team, which says when the device path is
//     unavailable and why);
//   - symmetric memory on that team for the buffers peers reach: the
//     reducing collective's input and the allgather's output (Buffer::team),
//     at fixed offsets in the team's window;
//   - the application's way to that memory: symmetric() gives this rank's
//     block of every such parameter and output, which the application may
//     fill and pass to operator() (zero copy). operator() copies any other
//     pointer's data in before the steps and back after them (staging);
//     without a team, symmetric() is ordinary memory and nothing is copied;
//   - in operator(), the fused kernel where the team exists, else the
//     sequential steps (the fallback), and path(), which says which.
//
//===----------------------------------------------------------------------===//

#include "codegen/CodegenImpl.h"

#include "llvm/ADT/STLExtras.h"

namespace coconet::codegen {

using namespace lower;

namespace {

using names::createSize;
using names::stateSize;

/// The symmetric buffers of `plan`, in buffer order.
llvm::SmallVector<unsigned, 4> symmetricBuffers(const Plan &plan) {
  llvm::SmallVector<unsigned, 4> out;
  for (unsigned b = 0; b < plan.buffers.size(); ++b)
    if (plan.buffers[b].team)
      out.push_back(b);
  return out;
}

/// Does the application see buffer `b`'s symmetric memory (a parameter or
/// an output), or is it the program's own (scratch)?
bool caller(const Buffer &b) {
  return b.kind == Buffer::Kind::Param || b.kind == Buffer::Kind::Output;
}

std::string symMember(const Buffer &b) { return "cc_sym_" + b.name; }

std::string bytesOf(const Plan &plan, const Target &t, const Buffer &b,
                    SizeNamer sizes) {
  return "static_cast<size_t>(" + printCount(b.shape, plan.mesh, sizes) +
         ") * sizeof(" + t.storageType(b.dtype) + ")";
}

/// The error of create() when a memory's byte count does not fit.
std::string tooMuchMemory(const Plan &plan, const std::string &what) {
  return "coconet::rt::Status::error(coconet::rt::StatusCode::"
         "InvalidArgument, \"" +
         plan.name + ": the " + what +
         " at these sizes is more bytes than memory has addresses\");";
}

/// Is `b` read by a step of `plan` (itself, or a view of it)?
bool readByAStep(const Plan &plan, unsigned b) {
  return llvm::any_of(plan.steps, [&](const Step &s) {
    return llvm::any_of(s.reads, [&](unsigned r) {
      const Buffer &read = plan.buffers[r];
      return r == b || (read.kind == Buffer::Kind::View && read.base == b);
    });
  });
}
bool writtenByAStep(const Plan &plan, unsigned b) {
  return llvm::any_of(plan.steps, [&](const Step &s) {
    return llvm::is_contained(s.writes, b);
  });
}

} // namespace

std::string teamMember(const Plan &plan, unsigned axis) {
  return "cc_team_" + plan.mesh.axes[axis].name;
}

std::vector<FusedKernel> fusedKernels(const Plan &plan) {
  std::vector<FusedKernel> out;
  for (const FusedCollective &f : plan.fusedCollectives) {
    if (!f.fused())
      continue;
    FusedKernel k;
    static_cast<FusedKernelPlan &>(k) = *f.oneKernel;
    k.f = &f;
    k.team = teamMember(plan, f.axis);
    if (f.reducing)
      k.reducing = &std::get<CollectiveCall>(plan.steps[*f.reducing].body);
    if (f.gather)
      k.gather = &std::get<CollectiveCall>(plan.steps[*f.gather].body);
    k.name = "cc_fused_" + k.step.name;
    out.push_back(std::move(k));
  }
  return out;
}

bool hasPath(const Plan &plan) {
  return !plan.fusedCollectives.empty() || !plan.overlaps.empty();
}

void appendPath(CodeWriter &w, const std::string &what) {
  w.line("state->path += std::string(state->path.empty() ? \"\" : \"; \") + " +
         what + ";");
}

void emitSymmetricApi(CodeWriter &w, const Plan &plan, const Target &t) {
  if (!hasPath(plan))
    return;
  w.line();
  w.line("/// How the fused collectives and overlaps run on this rank, and "
         "why: one");
  w.line("/// kernel on the team's symmetric memory or their steps in "
         "sequence (the");
  w.line("/// fallback); parts beside the matmul or one after the other.");
  w.line("const char *path() const;");
  if (plan.teamAxes.empty())
    return;
  w.line("/// This rank's block of every tensor that a fused collective "
         "kernel reaches on");
  w.line("/// other ranks, in memory the program owns (symmetric memory: the "
         "same on every");
  w.line("/// rank of the team). Pass these pointers to operator() and a "
         "step copies");
  w.line("/// nothing; other pointers are copied in before the steps and "
         "back after them.");
  w.line("/// Valid while the object lives.");
  w.open("struct Symmetric");
  for (unsigned b : symmetricBuffers(plan)) {
    const Buffer &buf = plan.buffers[b];
    if (caller(buf))
      w.line(t.storageType(buf.dtype) + " *" + buf.name + " = nullptr;");
  }
  w.close(";");
  w.line("const Symmetric &symmetric() const;");
}

void emitTeamState(CodeWriter &w, const Plan &plan, const Target &t) {
  if (hasPath(plan))
    w.line("std::string path;");
  const auto &axes = plan.teamAxes;
  if (axes.empty())
    return;
  const std::string ns = t.info.runtimeNamespace.str();
  w.comment("Fused collectives: a team per axis (null: the fallback), the "
            "symmetric\nmemory of each buffer peers reach, and what path() "
            "says.");
  for (unsigned a : axes)
    w.line("std::unique_ptr<" + ns + "::Team> " + teamMember(plan, a) + ";");
  w.line("Symmetric symmetric;");
  for (unsigned b : symmetricBuffers(plan)) {
    const Buffer &buf = plan.buffers[b];
    w.line(t.storageType(buf.dtype) + " *" + symMember(buf) + " = nullptr;");
    t.emitTeamBufferState(w, plan, buf);
  }
  w.line("/// Without a team: the symmetric() memory.");
  w.line("char *plain = nullptr;");
  w.line("size_t plainBytes = 0;");
}

void emitTeamCreate(CodeWriter &w, const Plan &plan, const Target &t) {
  for (const FusedCollective &f : plan.fusedCollectives)
    if (!f.fused()) {
      std::string steps;
      for (unsigned s : f.steps)
        steps += (steps.empty() ? "" : " ") + std::to_string(s);
      appendPath(w, "\"steps " + steps + ": in sequence (" +
                        f.sequential->detail + ")\"");
    }
  const auto &axes = plan.teamAxes;
  if (axes.empty())
    return;
  const std::string ns = t.info.runtimeNamespace.str();
  w.comment("A team per axis of a fused collective (collective calls), and "
            "the\nsymmetric memory: each buffer at a fixed offset of its "
            "team's.");
  for (unsigned a : axes) {
    const std::string axis = plan.mesh.axes[a].name;
    const std::string team = "state->" + teamMember(plan, a);
    w.line("size_t cc_bytes_" + axis + " = 0;");
    for (unsigned b : symmetricBuffers(plan)) {
      const Buffer &buf = plan.buffers[b];
      if (buf.team != a)
        continue;
      w.line("const size_t cc_at_" + buf.name + " = cc_bytes_" + axis + ";");
      w.line("if (!coconet::rt::addAligned(&cc_bytes_" + axis + ", " +
             bytesOf(plan, t, buf, createSize) + "))");
      w.line("  return " + tooMuchMemory(plan, "symmetric memory of " + axis));
    }
    w.line("std::string cc_why_" + axis + ";");
    emitCreateCall(w, plan,
                   ns + "::Team::create(*state->mesh, " + std::to_string(a) +
                       ", cc_bytes_" + axis + ", &" + team + ", &cc_why_" +
                       axis + ")",
                   "the team of " + axis);
    w.open("if (" + team + ")");
    w.line("char *cc_base = static_cast<char *>(" + team + "->local());");
    for (unsigned b : symmetricBuffers(plan)) {
      const Buffer &buf = plan.buffers[b];
      if (buf.team != a)
        continue;
      const std::string type = t.storageType(buf.dtype);
      w.line("state->" + symMember(buf) + " = reinterpret_cast<" + type +
             " *>(cc_base + cc_at_" + buf.name + ");");
      t.emitTeamBufferBind(w, plan, buf, team);
    }
    w.close();
    appendPath(w, "\"fused collectives over " + axis + ": \" +\n    (" + team +
                      " ? \"one kernel on the team's symmetric memory (\" + "
                      "std::to_string(" +
                      team + "->size()) +\n" + "      (" + team +
                      "->size() == 1 ? \" member)\" : \" members)\")\n" +
                      "          : \"steps in sequence (\" + cc_why_" + axis +
                      " + \")\")");
  }
  // Without a team, symmetric() is ordinary memory of the same blocks.
  w.line("size_t cc_plain = 0;");
  for (unsigned b : symmetricBuffers(plan)) {
    const Buffer &buf = plan.buffers[b];
    if (!caller(buf))
      continue;
    w.line("const size_t cc_plain_" + buf.name + " = cc_plain;");
    w.line("if (!state->" + teamMember(plan, *buf.team) +
           " && !coconet::rt::addAligned(&cc_plain, " +
           bytesOf(plan, t, buf, createSize) + "))");
    w.line("  return " + tooMuchMemory(plan, "memory of symmetric()"));
  }
  w.open("if (cc_plain > 0)");
  w.line("void *cc_memory = nullptr;");
  std::string held;
  for (unsigned b : symmetricBuffers(plan))
    if (caller(plan.buffers[b]))
      held += (held.empty() ? "" : ", ") + plan.buffers[b].name;
  emitCreateCall(w, plan, "allocator.allocate(cc_plain, &cc_memory)",
                 "the memory of symmetric() (" + held + ")");
  w.line("state->plain = static_cast<char *>(cc_memory);");
  w.line("state->plainBytes = cc_plain;");
  w.close();
  for (unsigned b : symmetricBuffers(plan)) {
    const Buffer &buf = plan.buffers[b];
    if (!caller(buf))
      continue;
    const std::string m = "state->" + symMember(buf);
    w.line("if (!state->" + teamMember(plan, *buf.team) + ")");
    w.line("  " + m + " = reinterpret_cast<" + t.storageType(buf.dtype) +
           " *>(state->plain + cc_plain_" + buf.name + ");");
    w.line("state->symmetric." + buf.name + " = " + m + ";");
  }
}

void emitTeamDestroy(CodeWriter &w, const Plan &plan) {
  if (plan.teamAxes.empty())
    return;
  w.line("if (cc_state->plain)");
  w.line("  cc_state->allocator->deallocate(cc_state->plain, "
         "cc_state->plainBytes);");
}

void emitTeamMethods(CodeWriter &w, const Plan &plan, const Target &) {
  if (hasPath(plan)) {
    w.line();
    w.line("const char *" + plan.name +
           "::path() const { return cc_state->path.c_str(); }");
  }
  if (plan.teamAxes.empty())
    return;
  w.line();
  w.open("const " + plan.name + "::Symmetric &" + plan.name +
         "::symmetric() const");
  w.line("return cc_state->symmetric;");
  w.close();
}

void emitStagingIn(CodeWriter &w, const Plan &plan, const Target &t) {
  // Scratch that peers reach lives in the team's memory.
  for (unsigned b : symmetricBuffers(plan)) {
    const Buffer &buf = plan.buffers[b];
    if (buf.kind != Buffer::Kind::Scratch)
      continue;
    w.line("if (cc_s." + teamMember(plan, *buf.team) + ")");
    w.line("  " + buf.name + " = cc_s." + symMember(buf) + ";");
  }
  // The caller's tensors: moved into the team's memory (unless they are
  // there), and the steps use that copy.
  for (unsigned b : symmetricBuffers(plan)) {
    const Buffer &buf = plan.buffers[b];
    if (!caller(buf))
      continue;
    const std::string type = t.storageType(buf.dtype);
    const bool back = buf.kind == Buffer::Kind::Output || buf.written;
    if (back)
      w.line(type + " *cc_caller_" + buf.name + " = nullptr;");
    w.open("if (cc_s." + teamMember(plan, *buf.team) + " && " + buf.name +
           " != cc_s." + symMember(buf) + ")");
    if (buf.kind == Buffer::Kind::Param && readByAStep(plan, b))
      t.emitCopy(w, "cc_s." + symMember(buf), buf.name,
                 printCount(buf.shape, plan.mesh, stateSize), buf.dtype);
    if (back)
      w.line("cc_caller_" + buf.name + " = " + buf.name + ";");
    w.line(buf.name + " = cc_s." + symMember(buf) + ";");
    w.close();
  }
}

void emitStagingOut(CodeWriter &w, const Plan &plan, const Target &t) {
  for (unsigned b : symmetricBuffers(plan)) {
    const Buffer &buf = plan.buffers[b];
    if (!caller(buf) || !(buf.kind == Buffer::Kind::Output || buf.written))
      continue;
    if (!writtenByAStep(plan, b))
      continue;
    w.line("if (cc_caller_" + buf.name + ")");
    w.indent();
    t.emitCopy(w, "cc_caller_" + buf.name, buf.name,
               printCount(buf.shape, plan.mesh, stateSize), buf.dtype);
    w.dedent();
  }
}

void emitFusedKernel(CodeWriter &w, const Target &t, const Plan &plan,
                     const FusedKernel &f) {
  const ElementwiseKernel &k = f.kernel();
  std::string params;
  if (f.ranged)
    params = std::string("const int64_t cc_begin, const int64_t cc_end, ") +
             (f.reducing ? "const int64_t cc_from_at, " : "");
  params += t.fusedTeamParams(plan, f);
  w.comment(f.step.summary + ", with its collectives (steps " +
            std::to_string(f.f->steps.front()) + " to " +
            std::to_string(f.f->steps.back()) +
            "), as one kernel on the team's " + t.info.teamMemory.str() +
            ":\nthis member's block combined from every member's, in member "
            "order; the\ngathered value stored into every member's output.");
  t.openKernel(w, f.name, kernelParams(t, plan, f.step, params), k.flat,
               /*team=*/true);
  emitLines(w, t.info.elementwisePrologue);
  const UniformValues uniform = emitScalarInputs(w, plan, k, t);
  w.line("const int64_t cc_me = " + t.info.teamRank.str() +
         ", cc_members = " + t.info.teamSize.str() + ";");
  w.line("(void)cc_me;");
  w.line("(void)cc_members;");
  // Where this member's elements are in the members' memory: its block of
  // a reducescatter's input (an allreduce's: all of it) and of the
  // allgather's output; an overlap's part is told where its input is.
  if (f.reducing && !f.ranged)
    w.line(std::string("const int64_t cc_from_at = ") +
           (f.reducing->kind == Collective::ReduceScatter ? "cc_me * cc_g.n"
                                                          : "0") +
           ";");
  if (f.gather)
    w.line("const int64_t cc_to_at = cc_me * cc_g.n;");
  w.line("(void)cc_g;");
  w.comment("Every member's input is in place.");
  emitLines(w, t.info.teamBarrier);
  emitElementwiseBlocks(w, t, plan, f.step, k, uniform, &f, f.ranged);
  w.comment("Every member's output is complete, and no member reads this "
            "one's input.");
  emitLines(w, t.info.teamBarrier);
  w.close();
}

void emitFusedCall(CodeWriter &w, const Target &t, const Plan &plan,
                   const FusedKernel &k, const KernelRange &range) {
  const std::string g = "cc_s." + geometryMember(k.step);
  std::string args = g;
  if (!range.whole()) {
    args += ", " + range.lo + ", " + range.hi;
    if (k.reducing)
      args += ", " + range.fromAt;
  }
  args += ", " + t.fusedTeamArgs(plan, k, "cc_s." + k.team);
  for (const KernelArg &a : kernelArgs(plan, k.step, t))
    args += ", " + a.value;
  t.emitFusedLaunch(w, plan, k, g, args, range);
}

unsigned emitStepOrFused(CodeWriter &w, const Target &t, const Plan &plan,
                         unsigned index) {
  const FusedCollective *fused = nullptr;
  unsigned which = 0;
  for (const FusedCollective &f : plan.fusedCollectives) {
    if (f.fused() && f.steps.front() == index) {
      fused = &f;
      break;
    }
    which += f.fused() ? 1 : 0;
  }
  auto step = [&](unsigned i) {
    w.line();
    w.comment("Step " + std::to_string(i) + ": " + plan.steps[i].summary + ".");
    emitStep(w, t, plan, i);
  };
  if (!fused) {
    step(index);
    return index;
  }
  const FusedKernel k = fusedKernels(plan)[which];
  w.line();
  w.comment("Steps " + std::to_string(fused->steps.front()) + " to " +
            std::to_string(fused->steps.back()) +
            ": one kernel on the team, else in sequence.");
  w.open("if (cc_s." + k.team + ")");
  emitFusedCall(w, t, plan, k, {});
  w.dedent();
  w.line("} else {");
  w.indent();
  for (unsigned i : fused->steps)
    step(i);
  w.close();
  return fused->steps.back();
}

} // namespace coconet::codegen
