//===- program_ffi.cpp - coconet._core.Program: calls through XLA's FFI ---===//
//
// The descriptions of a created program's step that XLA's FFI handler
// (jax_ffi.cpp) runs from (ffi_call.h): each parameter's kind, element type
// and block size, and where asked, a tensor taken as pieces of its block
// (a pytree's leaves, at given offsets), staged in a block of its own that
// the handler fills before the step and reads back after it. Each is
// checked here, once, so that the handler only compares sizes.
//
//===----------------------------------------------------------------------===//

#include "program.h"

#include <cstdlib>
#include <cstring>
#include <new>
#include <set>

namespace coconet::py {

namespace {

// A zeroed block of `bytes`, aligned to 64 bytes.
std::shared_ptr<void> stagingBlock(size_t bytes) {
  const size_t rounded = (bytes + 63) / 64 * 64;
  void *p = std::aligned_alloc(64, rounded ? rounded : 64);
  if (!p)
    throw std::bad_alloc();
  std::memset(p, 0, rounded);
  return std::shared_ptr<void>(p, std::free);
}

} // namespace

uintptr_t Program::ffiCall(nb::handle pieces, nb::handle deltas) {
  if (d_->synchronize)
    fail(PyExc_ValueError,
         std::string("coconet.jax runs the cpu target's programs; this is "
                     "the ") +
             d_->target + " target's");
  nb::dict given;
  if (!pieces.is_none()) {
    if (!nb::isinstance<nb::dict>(pieces))
      fail(PyExc_TypeError, "pieces: expected a dict {name: [(offset, count), "
                            "...]}, got " +
                                typeName(pieces));
    given = nb::borrow<nb::dict>(pieces);
  }
  std::set<std::string> delta;
  if (!deltas.is_none())
    for (nb::handle h : deltas) {
      if (!nb::isinstance<nb::str>(h))
        fail(PyExc_TypeError,
             "deltas: expected parameter names, got " + typeName(h));
      delta.insert(nb::cast<std::string>(h));
    }
  for (auto [k, v] : given) {
    (void)v;
    if (!nb::isinstance<nb::str>(k))
      fail(PyExc_TypeError,
           "pieces: expected parameter names as keys, got " + typeName(k));
    const std::string name = nb::cast<std::string>(k);
    bool found = false;
    for (const Param &p : params_)
      found = found || (p.name == name && p.p->kind == CC_BLOCK_TENSOR);
    if (!found)
      fail(PyExc_ValueError,
           "pieces: " + shown(k) + " is not a tensor parameter");
  }
  for (const std::string &name : delta)
    if (!given.contains(name.c_str()))
      fail(PyExc_ValueError, "deltas: '" + shownText(name) +
                                 "' is not passed as pieces (pieces=)");
  create();
  auto c = std::make_unique<FfiCall>();
  c->name = desc_->name;
  c->step = d_->step;
  c->program = program_;
  for (const Param &p : params_) {
    FfiParam f{p.name,     p.p->kind,
               p.p->dtype, p.p->kind == CC_BLOCK_OUTPUT || p.p->written != 0,
               p.scalar,   0,
               "",         {},
               {},         false,
               nullptr};
    if (p.tensor()) {
      f.count = 1;
      const int64_t *dims = shape_.data() + p.dimOffset;
      f.shape = tupleText(dims, static_cast<size_t>(p.p->rank));
      for (int k = 0; k < p.p->rank; ++k)
        f.count *= dims[k];
    }
    if (given.contains(p.name.c_str())) {
      // Pieces at increasing offsets, inside the block, not overlapping.
      int64_t end = 0;
      for (nb::handle piece : given[p.name.c_str()]) {
        int64_t offset = -1, count = -1;
        if (!nb::try_cast(piece[0], offset) || !nb::try_cast(piece[1], count))
          fail(PyExc_TypeError, "pieces of " +
                                    q(static_cast<int>(&p - params_.data())) +
                                    ": expected (offset, count) pairs");
        if (offset < end || count < 0 || count > f.count - offset)
          fail(PyExc_ValueError,
               "pieces of '" + p.name + "': (" + std::to_string(offset) + ", " +
                   std::to_string(count) +
                   ") overlaps the one before it or lies outside the block "
                   "of " +
                   std::to_string(f.count) + " elements");
        f.pieceOffset.push_back(offset);
        f.pieceCount.push_back(count);
        end = offset + count;
      }
      if (f.pieceOffset.empty())
        fail(PyExc_ValueError, "pieces of '" + p.name + "': none given");
      f.delta = delta.count(p.name) != 0;
      if (f.delta && !f.written)
        fail(PyExc_ValueError, "deltas: '" + p.name + "' is not written");
      if (f.delta &&
          (kDTypes[f.dtype].kind != 'F' || kDTypes[f.dtype].bytes < 4))
        fail(PyExc_ValueError, "deltas: '" + p.name + "' is " +
                                   kDTypes[f.dtype].name +
                                   "; a result new - old is f32 or f64");
      f.staging = stagingBlock(static_cast<size_t>(f.count) *
                               static_cast<size_t>(kDTypes[f.dtype].bytes));
    }
    c->params.push_back(std::move(f));
  }
  c->args.resize(params_.size());
  c->scalars.resize(params_.size());
  ffi_.push_back(std::move(c));
  addFfiCall(ffi_.back().get());
  return reinterpret_cast<uintptr_t>(ffi_.back().get());
}

nb::dict Program::ffiStats() const {
  uint64_t calls = 0, copies = 0;
  for (const auto &c : ffi_) {
    calls += c->calls.load();
    copies += c->copies.load();
  }
  nb::dict out;
  out["calls"] = calls;
  out["copies"] = copies;
  return out;
}

} // namespace coconet::py
