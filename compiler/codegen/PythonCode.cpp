//===- PythonCode.cpp - a program's Python module (--emit=python) ---------===//
//
// Three files beside the program's own (docs/python.md):
//   NAME_python.cpp / .cu  the C entry points (coconet/python_abi.h): the
//                          program's description (coconet/description.h,
//                          as the driver prints it), Python's names, and
//                          one-line functions over the program class;
//                          built with NAME.cpp / NAME.cu into _NAME.so
//   NAME.py                the module: class Step, whose __call__ has the
//                          program's parameters by name and hands them to
//                          coconet._core, which checks them and calls the
//                          library (no array is copied)
//   NAME.pyi               its stub, for type checkers and editors
// The Python names are the declared ones; a name Python reserves (`in`,
// `lambda`, `self`) gets a trailing underscore.
//
//===----------------------------------------------------------------------===//

#include "codegen/CodegenImpl.h"
#include "codegen/Names.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

namespace coconet::codegen {

using namespace lower;

namespace {

using names::driverSize;

bool reservedInPython(llvm::StringRef name) {
  static const char *const words[] = {
      "False",
      "None",
      "True",
      "and",
      "as",
      "assert",
      "async",
      "await",
      "break",
      "class",
      "continue",
      "def",
      "del",
      "elif",
      "else",
      "except",
      "finally",
      "for",
      "from",
      "global",
      "if",
      "import",
      "in",
      "is",
      "lambda",
      "nonlocal",
      "not",
      "or",
      "pass",
      "raise",
      "return",
      "try",
      "while",
      "with",
      "yield",
      // What the generated module's __call__ uses itself.
      "self",
      "id",
  };
  return llvm::is_contained(words, name);
}

/// A parameter or an output as Python sees it.
struct Entry {
  std::string name; ///< the Python name
  unsigned buffer = 0;
  bool output = false;
  bool scalar = false;
  ir::TensorType type;
};

/// The parameters in declaration order, then the outputs (named as the
/// C++ API names them), with Python names unique and not reserved.
std::vector<Entry> entries(const Plan &plan) {
  std::vector<Entry> out;
  for (const Plan::Param &p : plan.params) {
    const Buffer &b = plan.buffers[p.buffer];
    out.push_back(
        {p.name, p.buffer, false, b.kind == Buffer::Kind::ScalarParam, p.type});
  }
  llvm::StringSet<> taken;
  for (const Entry &e : out)
    taken.insert(e.name);
  // An output is named as the program returns it, unless a parameter (or
  // an earlier output: `return h` of a scalar parameter h) has that name;
  // then as the C++ API names it (out_NAME).
  for (unsigned o : plan.outputs()) {
    const Plan::Result &r = plan.results[plan.buffers[o].result];
    std::string name = taken.contains(r.name) ? plan.buffers[o].name : r.name;
    taken.insert(name);
    out.push_back({name, o, true, false, r.type});
  }
  for (Entry &e : out) {
    if (!reservedInPython(e.name))
      continue;
    std::string n = e.name + "_";
    while (taken.contains(n) || reservedInPython(n))
      n += "_";
    taken.insert(n);
    e.name = n;
  }
  return out;
}

const char *pythonScalar(ir::DType dtype) {
  switch (dtype) {
  case ir::DType::F16:
  case ir::DType::BF16:
  case ir::DType::F32:
  case ir::DType::F64:
    return "float";
  case ir::DType::I32:
  case ir::DType::I64:
  case ir::DType::U64:
    return "int";
  case ir::DType::Bool:
    return "bool";
  }
  return "float";
}

/// NumPy's name of a dtype ("float32").
const char *numpyName(ir::DType dtype) {
  switch (dtype) {
  case ir::DType::F16:
    return "float16";
  case ir::DType::BF16:
    return "bfloat16";
  case ir::DType::F32:
    return "float32";
  case ir::DType::F64:
    return "float64";
  case ir::DType::I32:
    return "int32";
  case ir::DType::I64:
    return "int64";
  case ir::DType::U64:
    return "uint64";
  case ir::DType::Bool:
    return "bool";
  }
  return "float32";
}

/// "(N / P,)" or "(B, H)": this rank's block shape, as the docs print it.
std::string blockShape(const Plan &plan, const Buffer &b) {
  std::string out = "(";
  for (size_t d = 0; d < b.shape.size(); ++d)
    out += (d ? ", " : "") + printExtent(b.shape[d], plan.mesh, sizeAsWritten);
  return out + (b.shape.size() == 1 ? ",)" : ")");
}

/// One line of the module's parameter list: "w: f32[N] replicated,
/// float32, shape (N,) on this rank; updated in place".
std::string describe(const Plan &plan, const Entry &e) {
  const Buffer &b = plan.buffers[e.buffer];
  std::string out = e.name + ": " + e.type.str(plan.mesh);
  if (e.scalar)
    return out + " (a Python " + pythonScalar(e.type.dtype) + ")";
  if (b.sharded)
    out += " (sharded: this rank's slice)";
  out += ": " + std::string(numpyName(e.type.dtype)) + ", shape " +
         blockShape(plan, b) + " on this rank";
  if (b.written && !e.output)
    out += "; updated in place";
  return out;
}

std::string emitShim(const Plan &plan, const EmitOptions &options,
                     llvm::ArrayRef<Entry> all) {
  const Target &t = Target::get(options.target);
  // The CUDA target's program is an Instance (coconet/cuda/python.h): the
  // program, its device and this rank's block bytes.
  const bool cuda = options.target == TargetKind::Cuda;
  std::string text;
  llvm::raw_string_ostream os(text);
  CodeWriter w(os);
  os << banner(plan, options, "The Python entry points");
  w.comment("\ncoconet_python_program() describes the program and gives C "
            "entry points to its\nclass (coconet/python_abi.h). Built with " +
            plan.name + t.info.sourceExtension.str() + " into _" + plan.name +
            ".so, it is what\n" + plan.name +
            ".py loads (through the coconet package's _core).");
  w.line();
  w.line("#include \"" + plan.name + ".h\"").line();
  w.line("#include \"" + t.info.pythonHeader.str() + "\"");
  w.line("#include \"coconet/python_shim.h\"").line();
  w.line("#include <memory>").line("#include <vector>").line();
  w.open("namespace");
  w.dedent();
  w.line();
  w.line("namespace cc_rt = coconet::rt;");
  w.line("namespace cc_target = " + t.info.runtimeNamespace.str() +
         "::python;");
  w.line("using cc_Program = coconet::generated::" + plan.name + ";");
  if (cuda)
    w.line("using cc_Instance = cc_target::Instance<cc_Program>;");
  w.line();
  emitDescription(w, plan);
  std::string names;
  for (const Entry &e : all)
    names += (names.empty() ? "" : ", ") + quoted(e.name);
  if (!all.empty())
    w.line("const char *const cc_names[] = {" + names + "};");
  w.line();
  w.open("cc_Program::Sizes cc_sizesOf(const int64_t *cc_s)");
  emitSizesFrom(w, plan);
  w.line("return cc_sizes;");
  w.close().line();

  w.open("int cc_place(const int64_t *cc_s, int cc_rank, int64_t *cc_shape, "
         "int64_t *cc_offset,\n             char *cc_err, size_t cc_cap)");
  w.line(std::string("return cc_rt::python::place(cc_program, ") +
         (all.empty() ? "nullptr" : "cc_names") +
         ", cc_s, cc_rank, cc_shape, cc_offset, cc_err,");
  w.line("                            cc_cap);");
  w.close().line();

  w.open("int cc_create(int64_t cc_comm, const int64_t *cc_s, const int64_t "
         "*const *cc_t,\n              void *cc_stream, void **cc_out, char "
         "*cc_err, size_t cc_cap)");
  if (t.info.pythonStreamArg.empty())
    w.line("(void)cc_stream;");
  if (plan.tables.empty())
    w.line("(void)cc_t;");
  w.line("std::unique_ptr<" + t.info.runtimeNamespace.str() +
         "::Communicator> cc_world;");
  w.line("if (int cc_rc = cc_rt::python::report(cc_target::worldOf(cc_comm, "
         "&cc_world), cc_err, cc_cap))");
  w.line("  return cc_rc;");
  emitTablesFrom(w, plan);
  w.line("std::unique_ptr<cc_Program> cc_object;");
  w.line("if (int cc_rc = cc_rt::python::report(");
  w.line("        cc_Program::create(*cc_world, cc_sizesOf(cc_s)" +
         std::string(plan.tables.empty() ? "" : ", cc_tables") +
         t.info.pythonStreamArg.str() + ", &cc_object),");
  w.line("        cc_err, cc_cap))");
  w.line("  return cc_rc;");
  if (cuda) {
    w.line("return cc_target::instance(std::move(cc_object), cc_comm, "
           "cc_world->rank(), cc_s, cc_place,");
    w.line("                           cc_program, cc_out, cc_err, "
           "cc_cap);");
  } else {
    w.line("*cc_out = cc_object.release();");
    w.line("return 0;");
  }
  w.close().line();

  // The step: each argument cast back to the API's type.
  w.open("int cc_step(void *cc_p, void *const *cc_a, char *cc_err, size_t "
         "cc_cap)");
  std::string args;
  for (unsigned i = 0; i < all.size(); ++i) {
    const Entry &e = all[i];
    const Buffer &b = plan.buffers[e.buffer];
    const std::string a = "cc_a[" + std::to_string(i) + "]";
    std::string arg;
    if (e.scalar)
      arg = "*static_cast<const " + scalarParamType(e.type.dtype) + " *>(" + a +
            ")";
    else
      arg = "static_cast<" +
            std::string(b.written || e.output ? "" : "const ") +
            t.storageType(e.type.dtype) + " *>(" + a + ")";
    args += (args.empty() ? "" : ",\n        ") + arg;
  }
  if (cuda) {
    w.line("const cc_Instance &cc_i = *static_cast<const cc_Instance "
           "*>(cc_p);");
    w.line("return cc_target::step(cc_i, cc_a, cc_err, cc_cap, [&] {");
    w.line("  return (*cc_i.program)(" + args + ");");
    w.line("});");
  } else {
    w.line("return cc_rt::python::report(");
    w.line("    (*static_cast<cc_Program *>(cc_p))(" + args + "),");
    w.line("    cc_err, cc_cap);");
  }
  w.close().line();
  if (cuda) {
    w.line("void cc_destroy(void *cc_p) { delete static_cast<cc_Instance "
           "*>(cc_p); }");
    if (hasPath(plan))
      w.line("const char *cc_path(void *cc_p) { return static_cast<cc_Instance "
             "*>(cc_p)->program->path(); }");
  } else {
    w.line("void cc_destroy(void *cc_p) { delete static_cast<cc_Program "
           "*>(cc_p); }");
    if (hasPath(plan))
      w.line("const char *cc_path(void *cc_p) { return static_cast<cc_Program "
             "*>(cc_p)->path(); }");
  }
  w.line();
  w.open("const cc_py_program cc_python =");
  w.line("COCONET_PY_ABI,");
  w.line("&cc_program,");
  w.line(all.empty() ? "nullptr," : "cc_names,");
  // The CUDA target's says whether it was built for the emulation.
  w.line(cuda ? std::string("cc_target::kTarget,")
              : quoted(t.info.pythonTarget) + ",");
  w.line(quoted(options.sourceName) + ",");
  w.line("cc_target::world, cc_place, cc_create, cc_step, cc_destroy, " +
         std::string(hasPath(plan) ? "cc_path" : "nullptr") + ",");
  if (cuda)
    w.line("cc_target::deviceCount, cc_target::uniqueId, "
           "cc_target::initWorld,");
  if (cuda)
    w.line("cc_target::destroyWorld, cc_target::synchronize,");
  else
    w.line("nullptr, nullptr, nullptr, nullptr, nullptr,");
  w.close(";");
  w.line();
  w.line("} // namespace");
  w.line();
  w.line("extern \"C\" COCONET_PY_EXPORT const cc_py_program "
         "*coconet_python_program(void) {");
  w.line("  return &cc_python;");
  w.line("}");
  return text;
}

/// The comment banner of a Python file.
std::string pythonBanner(const Plan &plan, const EmitOptions &options,
                         llvm::StringRef what) {
  std::string b = banner(plan, options, what);
  std::string out;
  for (size_t i = 0; i < b.size(); ++i) {
    if ((i == 0 || b[i - 1] == '\n') && b.compare(i, 2, "//") == 0) {
      out += "#";
      ++i;
      continue;
    }
    out += b[i];
  }
  return out;
}

/// The Python parameter list of __call__ ("g, w, lr, *, out_y=None").
std::string callParams(llvm::ArrayRef<Entry> all, bool annotated) {
  std::string out;
  bool star = false;
  for (const Entry &e : all) {
    out += out.empty() ? "" : ", ";
    if (e.output && !star) {
      out += "*, ";
      star = true;
    }
    out += e.name;
    if (annotated)
      out += e.scalar   ? std::string(": ") + pythonScalar(e.type.dtype)
             : e.output ? ": Optional[Array]"
                        : ": Array";
    if (e.output)
      out += annotated ? " = None" : "=None";
  }
  return out;
}

/// Python text: lines at 4 spaces per level.
class PyWriter {
public:
  explicit PyWriter(std::string &text) : text(text) {}
  PyWriter &line(const std::string &s = "") {
    if (!s.empty())
      text += std::string(4 * level, ' ') + s;
    text += '\n';
    return *this;
  }
  void in() { ++level; }
  void out() { --level; }

private:
  std::string &text;
  unsigned level = 0;
};

/// `("a", "b")`, `("a",)`, `()`.
std::string pyTuple(llvm::ArrayRef<std::string> items) {
  std::string out = "(";
  for (size_t i = 0; i < items.size(); ++i)
    out += (i ? ", " : "") + quoted(items[i]);
  return out + (items.size() == 1 ? ",)" : ")");
}

std::string emitModule(const Plan &plan, const EmitOptions &options,
                       llvm::ArrayRef<Entry> all) {
  const Target &t = Target::get(options.target);
  const bool cuda = options.target == TargetKind::Cuda;
  std::string text = pythonBanner(plan, options, "The Python module");
  PyWriter w(text);
  const std::string title =
      "One step of program `" + plan.programName + "`" +
      (plan.schedule.empty() ? std::string(" (unscheduled)")
                             : " under schedule `" + plan.schedule + "`") +
      ", for the " + t.info.displayName.str() + " target.";
  std::vector<std::string> updates, outputs;
  std::string names, argList;
  for (const Entry &e : all) {
    argList += (argList.empty() ? "" : ", ") + e.name;
    if (e.output) {
      outputs.push_back(e.name);
      continue;
    }
    names += (names.empty() ? "" : ", ") + e.name;
    if (plan.buffers[e.buffer].written)
      updates.push_back(e.name);
  }
  w.line("\"\"\"" + title);
  w.line();
  w.line("    import " + plan.name);
  w.line("    step = " + plan.name + ".Step()" +
         (cuda ? "  # NCCL over MPI_COMM_WORLD; Step(comm, stream=...)"
               : "  # MPI_COMM_WORLD; or Step(comm), an mpi4py communicator"));
  w.line("    step(" + names + ")");
  w.line();
  w.line(std::string("Each rank passes its own block of every tensor (") +
         (cuda ? "device memory: PyTorch CUDA\ntensors, CuPy arrays"
               : "host memory: NumPy arrays,\nPyTorch CPU tensors") +
         ", anything with __dlpack__), C-contiguous, of the dtype and");
  w.line("shape below: the arrays are the step's own memory, never copied. "
         "Sizes not given");
  w.line("to Step() are read from the first call's arrays. docs/python.md "
         "has the rest.");
  w.line();
  w.line("Parameters, in declaration order:");
  for (const Entry &e : all)
    if (!e.output)
      w.line("    " + describe(plan, e));
  if (!outputs.empty()) {
    w.line("Outputs, returned (keyword arguments: arrays to write them into; "
           "else allocated");
    w.line("like the first tensor argument):");
    for (const Entry &e : all)
      if (e.output)
        w.line("    " + describe(plan, e));
  }
  for (const Plan::Table &tb : plan.tables)
    w.line("Segment table `" + tb.name + "`: Step(tables={\"" + tb.name +
           "\": lengths}), " + tb.count + " lengths summing to " +
           tb.length.str() + ".");
  w.line("\"\"\"");
  w.line();
  w.line("import os as _os");
  w.line();
  w.line("import coconet as _coconet");
  w.line();
  w.line("_LIBRARY = _os.path.join(_os.path.dirname(_os.path.abspath(__file__"
         ")),");
  w.line("                         \"_" + plan.name + ".so\")");
  w.line();
  w.line("#: The size names (the mesh axes' first).");
  w.line("SIZES = " + pyTuple(plan.allSizeNames()));
  w.line("#: The parameters a step updates in place.");
  w.line("UPDATES = " + pyTuple(updates));
  w.line("#: What a step returns.");
  w.line("OUTPUTS = " + pyTuple(outputs));
  w.line();
  w.line();
  w.line("class Step:");
  w.in();
  w.line("\"\"\"" + title);
  w.line();
  if (cuda) {
    w.line("comm: the world: a coconet.NcclCommunicator (kept as long as "
           "the step), an mpi4py");
    w.line("communicator (an NCCL communicator is made over its ranks), or "
           "None: the process's");
    w.line("NCCL communicator over MPI_COMM_WORLD, made at the first such "
           "Step.");
    w.line("stream: the CUDA stream steps are enqueued on: an integer handle");
    w.line("(torch.cuda.current_stream().cuda_stream) or an object with "
           ".cuda_stream (0: the");
    w.line("legacy default stream). A step never waits for the device: "
           "synchronize() does.");
    if (llvm::any_of(plan.steps, [](const lower::Step &s) {
          const auto *c = std::get_if<lower::CollectiveCall>(&s.body);
          const auto *m = std::get_if<lower::MatMulCall>(&s.body);
          return (c && c->kind == lower::Collective::AllToAllV) ||
                 (m && m->counts);
        }))
      w.line("Except this program's alltoallv and grouped matmul, which "
             "wait for their counts.");
  } else {
    w.line("comm: the world, an mpi4py communicator (None: MPI_COMM_WORLD).");
  }
  w.line("sizes: values of size names (optional: read from the first call's "
         "arrays).");
  if (!plan.tables.empty())
    w.line("tables: the segment tables' lengths, {name: sequence of int}.");
  w.line("Creating the program is collective over the communicator's ranks: "
         "here, or at");
  w.line("the first call where the arrays give the sizes.");
  w.line("\"\"\"");
  w.line();
  w.line(std::string("def __init__(self, comm=None, *, ") +
         (cuda ? "stream=0, " : "") + "sizes=None, tables=None):");
  w.in();
  if (cuda) {
    w.line("self._comm = _coconet.nccl_communicator(comm, _LIBRARY)");
    w.line("# The program keeps the communicator and the stream until it is "
           "destroyed.");
    w.line("self._program = _coconet.Program(");
    w.line("    _LIBRARY, _coconet.nccl_handle(self._comm), "
           "_coconet.stream_handle(stream),");
    w.line("    dict(sizes or {}), dict(tables or {}), _coconet.allocate,");
    w.line("    (self._comm, stream))");
  } else {
    w.line("self._program = _coconet.Program(");
    w.line("    _LIBRARY, _coconet.mpi_handle(comm), 0,");
    w.line("    dict(sizes or {}), dict(tables or {}), _coconet.allocate)");
    w.line("self._comm = comm  # kept alive as long as the step");
  }
  w.line("# The torch op a call with torch tensors goes through (torch >= "
         "2.4), and the");
  w.line("# Tensor type that tells; the op finds the step by its id.");
  w.line("self._op, self._tensor = _torch_op()");
  w.line("_coconet.STEPS[id(self)] = self");
  w.out();
  w.line();
  w.line("def __call__(self, " + callParams(all, false) + "):");
  w.in();
  std::string doc = "\"\"\"Runs one step";
  if (!updates.empty())
    doc += "; updates " + llvm::join(updates, ", ") + " in place";
  if (!outputs.empty())
    doc += outputs.size() == 1 ? "; returns the output"
                               : "; returns the outputs, a tuple";
  w.line(doc + ".\"\"\"");
  const Entry *firstTensor = nullptr;
  for (const Entry &e : all)
    if (!e.scalar && !firstTensor)
      firstTensor = &e;
  if (outputs.empty() && firstTensor) {
    // The op's schema has plain Python scalars.
    std::string opArgs;
    for (const Entry &e : all)
      opArgs += ", " + (e.scalar ? std::string(pythonScalar(e.type.dtype)) +
                                       "(" + e.name + ")"
                                 : e.name);
    w.line("if self._op is not None and isinstance(" + firstTensor->name +
           ", self._tensor):");
    w.line("    self._op(id(self)" + opArgs + ")");
    w.line("else:");
    w.line("    self._program(" + argList + ")");
  } else if (outputs.empty()) {
    w.line("self._program(" + argList + ")");
  } else {
    w.line("return self._program(" + argList + ")" +
           (outputs.size() == 1 ? "[0]" : ""));
  }
  w.out();
  for (const char *p : {"sizes", "rank", "world_size", "path", "created"}) {
    w.line();
    w.line("@property");
    w.line(std::string("def ") + p + "(self):");
    w.line(std::string("    return self._program.") + p);
  }
  w.line();
  w.line("@property");
  w.line("def program(self):");
  w.line("    \"\"\"The coconet.Program; its .info describes the "
         "parameters.\"\"\"");
  w.line("    return self._program");
  w.line();
  w.line("def block(self, name):");
  w.line("    \"\"\"(offset, shape) of this rank's block of tensor `name` in "
         "the global tensor.\"\"\"");
  w.line("    return self._program.block(name)");
  if (cuda) {
    w.line();
    w.line("@property");
    w.line("def communicator(self):");
    w.line("    \"\"\"The world: a coconet.NcclCommunicator (or the handle "
           "given).\"\"\"");
    w.line("    return self._comm");
    w.line();
    w.line("def synchronize(self):");
    w.line("    \"\"\"Waits until every step enqueued on the stream has run "
           "(cudaStreamSynchronize).\"\"\"");
    w.line("    self._program.synchronize()");
  }
  w.out();
  w.line();
  w.line();
  // torch.library.custom_op: the step as an op torch.compile leaves
  // opaque. Only steps without outputs: an op's mutated arguments must be
  // given, not allocated by it.
  w.line("def _torch_op():");
  w.in();
  w.line("\"\"\"(the step as a PyTorch custom op, torch.Tensor) where torch "
         ">= 2.4 is imported,");
  w.line("else (None, None). One op per program and signature in a process "
         "(coconet.TORCH_OPS).\"\"\"");
  if (!outputs.empty() || !firstTensor) {
    w.line("return None, None  # a step that returns arrays is called "
           "directly");
  } else {
    w.line("torch = _coconet.imported_torch()");
    w.line("if torch is None or not hasattr(torch.library, \"custom_op\"):");
    w.line("    return None, None");
    // The step's id: a name no parameter has.
    llvm::StringSet<> names;
    for (const Entry &e : all)
      names.insert(e.name);
    std::string handle = "handle";
    while (names.contains(handle))
      handle += "_";
    std::string sig = handle + ": int";
    for (const Entry &e : all)
      sig +=
          ", " + e.name + ": " +
          (e.scalar ? std::string(pythonScalar(e.type.dtype)) : "torch.Tensor");
    // One op per name and signature in a process: a module loaded again
    // finds its op; two programs of one name (from two files) get two.
    uint32_t hash = 2166136261u;
    for (char c : sig + "|" + llvm::join(updates, ","))
      hash = (hash ^ static_cast<uint8_t>(c)) * 16777619u;
    std::string hex;
    llvm::raw_string_ostream(hex) << llvm::format_hex_no_prefix(hash, 8);
    const std::string opName = "coconet::" + plan.name + "_" + hex;
    w.line("op = _coconet.TORCH_OPS.get(" + quoted(opName) + ")");
    w.line("if op is None:");
    w.in();
    w.line("@torch.library.custom_op(" + quoted(opName) +
           ", mutates_args=UPDATES)");
    w.line("def op(" + sig + ") -> None:");
    w.line("    _coconet.STEPS[" + handle + "]._program(" + argList + ")");
    w.line();
    w.line("@op.register_fake");
    w.line("def _(" + sig + ") -> None:");
    w.line("    return None");
    w.line();
    w.line("_coconet.TORCH_OPS[" + quoted(opName) + "] = op");
    w.out();
    w.line("return op, torch.Tensor");
  }
  w.out();
  return text;
}

std::string emitStub(const Plan &plan, const EmitOptions &options,
                     llvm::ArrayRef<Entry> all) {
  const bool cuda = options.target == TargetKind::Cuda;
  std::string text = pythonBanner(plan, options, "The Python stub");
  PyWriter w(text);
  w.line("from typing import Any, Mapping, Optional, Sequence");
  w.line();
  w.line("import coconet");
  w.line();
  w.line("# A DLPack array: NumPy, PyTorch, CuPy, JAX.");
  w.line("Array = Any");
  w.line();
  w.line("SIZES: tuple[str, ...]");
  w.line("UPDATES: tuple[str, ...]");
  w.line("OUTPUTS: tuple[str, ...]");
  w.line();
  w.line("class Step:");
  w.in();
  w.line(std::string("def __init__(self, comm: Any = None, *, ") +
         (cuda ? "stream: Any = 0, " : "") +
         "sizes: Optional[Mapping[str, int]] = None,");
  w.line("             tables: Optional[Mapping[str, Sequence[int]]] = None) "
         "-> None: ...");
  const size_t numOutputs = plan.outputs().size();
  std::string ret = numOutputs == 0   ? "None"
                    : numOutputs == 1 ? "Array"
                                      : "tuple[Array, ...]";
  w.line("def __call__(self, " + callParams(all, true) + ") -> " + ret +
         ": ...");
  const char *const properties[][2] = {
      {"sizes", "dict[str, int]"}, {"rank", "int"},
      {"world_size", "int"},       {"path", "Optional[str]"},
      {"created", "bool"},         {"program", "coconet.Program"}};
  for (const auto &p : properties) {
    w.line("@property");
    w.line(std::string("def ") + p[0] + "(self) -> " + p[1] + ": ...");
  }
  w.line("def block(self, name: str) -> tuple[tuple[int, ...], tuple[int, "
         "...]]: ...");
  if (cuda) {
    w.line("@property");
    w.line("def communicator(self) -> Any: ...");
    w.line("def synchronize(self) -> None: ...");
  }
  w.out();
  return text;
}

} // namespace

std::vector<File> emitPython(const Plan &plan, const EmitOptions &options) {
  const Target &t = Target::get(options.target);
  const std::vector<Entry> all = entries(plan);
  return {
      {plan.name + "_python" + t.info.sourceExtension.str(),
       emitShim(plan, options, all)},
      {plan.name + ".py", emitModule(plan, options, all)},
      {plan.name + ".pyi", emitStub(plan, options, all)},
  };
}

} // namespace coconet::codegen
