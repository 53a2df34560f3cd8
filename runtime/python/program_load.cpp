//===- program_load.cpp - coconet._core.Program: loading a library --------===//
//
// Loading a program's shared library (dlopen, its COCONET_PY_SYMBOL entry
// point), checking its description once so that nothing reads past it, and
// reading it into BlockViews and Params (program.h); the constructor (the
// world, the sizes, and the program created where every size is known),
// and what Python reads of a program: info (describe()), path and repr.
//
//===----------------------------------------------------------------------===//

#include "program.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cstring>

namespace coconet::py {

void Program::load(const std::string &path) {
  library_ = path;
  // The path as messages show it (a user's: escaped and cut).
  const std::string library = shownText(path);
  // dlopen opens a FIFO and waits for a writer, and reads a device: a path
  // that names something is a regular file (a bare name is dlopen's to
  // search for).
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    raise(PyExc_ImportError,
          "cannot load the coconet program " + library + ": it is " +
              (S_ISDIR(st.st_mode) ? "a directory" : "not a regular file"));
  void *h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *e = dlerror();
    raise(PyExc_ImportError,
          "cannot load the coconet program " + library + ": " +
              (e ? shownText(e, 4 * kMaxShown) : "unknown error"));
  }
  // Never closed: the program's code must outlive every object made from it.
  auto fn = reinterpret_cast<cc_py_program_fn>(dlsym(h, COCONET_PY_SYMBOL));
  if (!fn)
    raise(PyExc_ImportError,
          library + " has no " COCONET_PY_SYMBOL
                    "(): it is not a coconet program's "
                    "library (python3 -m coconet build writes one)");
  d_ = fn();
  if (!d_)
    raise(PyExc_ImportError,
          library + ": " COCONET_PY_SYMBOL "() returned null");
  if (d_->abi != COCONET_PY_ABI)
    raise(PyExc_ImportError,
          library + ": built for coconet Python ABI " +
              std::to_string(d_->abi) + ", this coconet has " +
              std::to_string(COCONET_PY_ABI) + ": rebuild it");
  // The description is checked once, so that nothing below reads past it.
  auto bad = [&](const std::string &what) {
    raise(PyExc_ImportError, library + ": a malformed program description (" +
                                 what + "): rebuild it with this coconet");
  };
  desc_ = d_->description;
  if (!desc_)
    bad("no description");
  if (desc_->version != COCONET_DESCRIPTION_VERSION)
    bad("description version " + std::to_string(desc_->version) +
        ", this coconet reads " + std::to_string(COCONET_DESCRIPTION_VERSION));
  if (!desc_->name || !desc_->program || !desc_->schedule || !d_->target ||
      !d_->source)
    bad("a name is null");
  // Counts that fit in an int, each with its array.
  constexpr uint32_t kMaxCount = 1u << 20;
  if (desc_->num_sizes > kMaxCount || desc_->num_axes > desc_->num_sizes ||
      desc_->num_blocks > kMaxCount || desc_->num_params > desc_->num_blocks ||
      desc_->num_tables > kMaxCount || desc_->num_results > kMaxCount ||
      (desc_->num_sizes && !desc_->size_names) ||
      (desc_->num_axes && !desc_->axis_sizes) ||
      (desc_->num_blocks && (!desc_->blocks || !d_->names)) ||
      (desc_->num_tables && !desc_->tables) ||
      (desc_->num_results && !desc_->results))
    bad("counts");
  numSizes_ = static_cast<int>(desc_->num_sizes);
  numAxes_ = static_cast<int>(desc_->num_axes);
  numBlocks_ = static_cast<int>(desc_->num_blocks);
  numTables_ = static_cast<int>(desc_->num_tables);
  if (!d_->world || !d_->place || !d_->create || !d_->step || !d_->destroy)
    bad("an entry point is null");
  const bool cuda = std::strcmp(d_->target, "cuda") == 0 ||
                    std::strcmp(d_->target, "cuda-emulated") == 0;
  if (cuda && (!d_->device_count || !d_->nccl_unique_id || !d_->nccl_init ||
               !d_->nccl_destroy || !d_->synchronize))
    bad("a CUDA runtime entry point is null");
  for (int s = 0; s < numSizes_; ++s)
    if (!desc_->size_names[s])
      bad("size name");
  // The mesh axes' sizes come first, in order (the program's Sizes).
  for (int a = 0; a < numAxes_; ++a)
    if (desc_->axis_sizes[a] != static_cast<uint32_t>(a))
      bad("axis " + std::to_string(a) + "'s size");
  auto extentOk = [&](const cc_extent &e) {
    if (e.num_sizes && !e.sizes)
      return false;
    for (uint32_t k = 0; k < e.num_sizes; ++k)
      if (e.sizes[k] >= desc_->num_sizes)
        return false;
    return e.num_sizes <= kMaxCount;
  };
  for (int t = 0; t < numTables_; ++t) {
    const cc_table &tb = desc_->tables[t];
    if (!tb.name || !tb.length_name || tb.count_size >= desc_->num_sizes ||
        !extentOk(tb.length))
      bad("table " + std::to_string(t));
  }
  for (uint32_t r = 0; r < desc_->num_results; ++r)
    if (!desc_->results[r].name || desc_->results[r].block >= desc_->num_blocks)
      bad("result " + std::to_string(r));
  for (int i = 0; i < numBlocks_; ++i) {
    const cc_block &b = desc_->blocks[i];
    if (!b.name || !d_->names[i] || !b.type || b.kind < CC_BLOCK_TENSOR ||
        b.kind > CC_BLOCK_OUTPUT || b.dtype < 0 || b.dtype >= kNumDTypes ||
        b.rank > kMaxCount || (b.kind == CC_BLOCK_SCALAR && b.rank != 0) ||
        (b.rank && !b.shape) ||
        (b.kind != CC_BLOCK_SCALAR && numAxes_ && !b.layout) || b.table < -1 ||
        b.table >= numTables_)
      bad("parameter " + std::to_string(i));
    BlockView v;
    v.name = d_->names[i];
    v.kind = b.kind;
    v.dtype = b.dtype;
    v.rank = static_cast<int>(b.rank);
    v.written = b.written;
    v.type = b.type;
    v.segments = b.table >= 0 ? desc_->tables[b.table].name : "";
    for (uint32_t k = 0; k < b.rank; ++k) {
      const cc_extent &e = b.shape[k];
      if (!extentOk(e))
        bad("dims of " + std::string(v.name));
      v.dims.push_back(e.coefficient == 1 && e.num_sizes == 1
                           ? static_cast<int>(e.sizes[0])
                           : -1);
    }
    // A scalar's layout says whether it is each rank's own (local).
    if (b.layout)
      for (int a = 0; a < numAxes_; ++a) {
        const cc_axis_layout &l = b.layout[a];
        if (l.state == CC_AXIS_REPLICATED)
          v.layout.push_back(kReplicatedAxis);
        else if (l.state == CC_AXIS_LOCAL)
          v.layout.push_back(kLocalAxis);
        else if (l.state == CC_AXIS_SLICED && l.dim >= 0 && l.dim < v.rank)
          v.layout.push_back(l.dim);
        else
          bad("layout of " + std::string(v.name));
      }
    for (uint32_t r = 0; r < desc_->num_results; ++r)
      if (desc_->results[r].block == static_cast<uint32_t>(i))
        v.result = desc_->results[r].name;
    views_.push_back(std::move(v));
  }

  const std::string target = d_->target;
  if (target == "cpu") {
    deviceType_ = kDLCPU;
    hostAlsoPinned_ = true;
  } else if (target == "cuda") {
    deviceType_ = kDLCUDA;
    hostAlsoPinned_ = false;
  } else if (target == "cuda-emulated") {
    deviceType_ = kDLCPU;
    hostAlsoPinned_ = false;
  } else {
    raise(PyExc_ImportError,
          library + ": target '" + target + "' is not one this coconet knows");
  }

  for (int i = 0; i < numBlocks_; ++i) {
    Param p;
    p.p = &views_[i];
    p.name = p.p->name;
    if (p.tensor()) {
      p.dl = dlpackOf(p.p->dtype);
      p.dimOffset = totalDims_;
      totalDims_ += static_cast<size_t>(p.p->rank);
      for (uint32_t k = 0; k < desc_->blocks[i].rank; ++k)
        p.dims.push_back(
            extentText(desc_->blocks[i].shape[k], desc_->size_names));
      tensors_.push_back(i);
    } else {
      p.scalar = scalarKind(p.p->dtype);
    }
    params_.push_back(std::move(p));
  }
  const size_t n = params_.size();
  arrays_.resize(n);
  viaView_.assign(n, 0);
  outputs_.resize(n);
  scalars_.resize(n);
  args_.assign(n, nullptr);
}

Program::Program(const std::string &library, int64_t comm, nb::handle stream,
                 nb::handle sizes, nb::handle tables, nb::object allocate,
                 nb::object keep)
    : comm_(comm), allocate_(std::move(allocate)), keep_(std::move(keep)) {
  load(library);
  // The CUDA target's world is a cc_py_nccl * (coconet.NcclCommunicator's
  // handle): never MPI's -1 or null.
  if (std::string(d_->target) != "cpu" && (comm_ == -1 || comm_ == 0))
    fail(PyExc_ValueError,
         "the " + std::string(d_->target) +
             " target runs on an NCCL communicator: pass "
             "coconet.NcclCommunicator(...).handle (the generated Step "
             "makes one)");
  if (!stream.is_none()) {
    void *p = PyLong_AsVoidPtr(stream.ptr());
    if (!p && PyErr_Occurred())
      throw nb::python_error();
    stream_ = p;
  }
  char err[4096] = "";
  int rc = 0;
  {
    nb::gil_scoped_release release;
    rc = d_->world(comm_, &rank_, &size_, err, sizeof err);
  }
  if (rc)
    fail(PyExc_RuntimeError, err);
  if (deviceType_ == kDLCUDA && comm_ != 0 && comm_ != -1)
    device_ = reinterpret_cast<const cc_py_nccl *>(static_cast<intptr_t>(comm_))
                  ->device;
  setSizes(sizes, tables);
  settleAxes();
  bool all = true;
  for (int64_t s : sizes_)
    all &= s > 0;
  if (all)
    placeAndCreate(sizes_, from_);
}

Program::~Program() {
  for (const auto &c : ffi_)
    removeFfiCall(c.get()); // a stale address is refused, not run
  if (program_)
    d_->destroy(program_);
}

nb::object Program::path() const {
  if (!program_ || !d_->path)
    return nb::none();
  const char *p = d_->path(program_);
  if (!p)
    return nb::none();
  return nb::str(p);
}

nb::dict Program::info() const {
  nb::dict out;
  out["name"] = desc_->name;
  out["program"] = desc_->program;
  out["schedule"] = desc_->schedule;
  out["target"] = d_->target;
  out["source"] = d_->source;
  out["library"] = library_;
  nb::list sizes;
  for (int s = 0; s < numSizes_; ++s)
    sizes.append(desc_->size_names[s]);
  out["sizes"] = sizes;
  out["num_axes"] = numAxes_;
  static const char *kinds[] = {"tensor", "scalar", "output"};
  nb::list params;
  for (const Param &pp : params_) {
    const BlockView &p = *pp.p;
    nb::dict d;
    d["name"] = p.name;
    d["kind"] = kinds[p.kind];
    d["dtype"] = kDTypes[p.dtype].name;
    d["numpy_dtype"] = numpyName(p.dtype);
    d["rank"] = p.rank;
    d["written"] = p.written != 0;
    nb::list dims, layout;
    for (int k = 0; k < p.rank; ++k) {
      if (p.dims[k] >= 0)
        dims.append(desc_->size_names[p.dims[k]]);
      else
        dims.append(nb::none());
    }
    for (size_t a = 0; a < p.layout.size(); ++a) {
      const int l = p.layout[a];
      if (l == kReplicatedAxis)
        layout.append("replicated");
      else if (l == kLocalAxis)
        layout.append("local");
      else
        layout.append(l);
    }
    d["dims"] = dims;
    d["layout"] = layout;
    d["type"] = p.type;
    d["segments"] = p.segments;
    d["result"] = p.result;
    params.append(d);
  }
  out["params"] = params;
  nb::list tables;
  for (int t = 0; t < numTables_; ++t) {
    nb::dict d;
    d["name"] = desc_->tables[t].name;
    d["count"] =
        desc_->size_names[static_cast<int>(desc_->tables[t].count_size)];
    d["length"] =
        desc_->tables[t].length_name ? desc_->tables[t].length_name : "";
    tables.append(d);
  }
  out["tables"] = tables;
  return out;
}

std::string Program::repr() const {
  return std::string("<coconet.Program ") + desc_->name + ": rank " +
         std::to_string(rank_) + " of " + std::to_string(size_) +
         (program_ ? ", created" : ", not created yet") + ">";
}

} // namespace coconet::py
