//===- fake_program.cpp - a hand-written program library for coconet._core
//-===//
//
// What `coconetc --emit=python` builds into _NAME.so, written by hand for a
// tiny program, so that coconet._core's checks are tested without the
// compiler, MPI or a runtime (test/python/test_core.py):
//
//   program fake over mesh (P):
//     g: f32[N] local            read
//     w: f32[N] replicated       updated in place: w += lr * g
//     m: f32[N] sliced(0)        updated in place: m += step
//     x: f16[4*H] sliced(0)      read (its extent is an expression: H can
//                                only be given)
//     lr: f32, step: i32         scalars
//     -> out: f32[N] replicated  out = w (after the update)
//
// world() reports rank and size from FAKE_RANK and FAKE_SIZE (default 0 and
// 1); step == -1 makes the step fail; FAKE_ABI, where set, is the ABI
// version the description claims; FAKE_TABLE=1 adds a segment table;
// FAKE_BROKEN=1..4 breaks the description (below).
// fake_calls() and fake_creates() count steps and creations (the test reads
// them with ctypes).
//
// Build: g++ -std=c++17 -shared -fPIC -fvisibility=hidden -I runtime/include
//        test/python/fake_program.cpp -o _fake.so
//
//===----------------------------------------------------------------------===//

#include "coconet/python_abi.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

int calls = 0, creates = 0, destroys = 0;

enum { P, N, H };
const char *const sizeNames[] = {"P", "N", "H"};
const uint32_t axisSizes[] = {P};
const uint32_t sizeN[] = {N}, sizeH[] = {H};
const cc_extent shapeN[] = {{1, 1, sizeN}}, shapeX[] = {{4, 1, sizeH}};
const cc_axis_layout local[] = {{CC_AXIS_LOCAL, 0}},
                     replicated[] = {{CC_AXIS_REPLICATED, 0}},
                     sliced[] = {{CC_AXIS_SLICED, 0}};
const int32_t F16 = 0, F32 = 2, I32 = 4; // dtypes.def order

const cc_block blocks[] = {
    {"g", 0, CC_BLOCK_TENSOR, F32, 1, shapeN, local, 0, 0, -1, "f32[N] local"},
    {"w", 1, CC_BLOCK_TENSOR, F32, 1, shapeN, replicated, 1, 0, -1,
     "f32[N] replicated"},
    {"m", 2, CC_BLOCK_TENSOR, F32, 1, shapeN, sliced, 1, 0, -1,
     "f32[N] sliced(0)"},
    {"x", 3, CC_BLOCK_TENSOR, F16, 1, shapeX, sliced, 0, 0, -1,
     "f16[4*H] sliced(0)"},
    {"lr", 4, CC_BLOCK_SCALAR, F32, 0, nullptr, replicated, 0, 0, -1, "f32"},
    {"step", 5, CC_BLOCK_SCALAR, I32, 0, nullptr, replicated, 0, 0, -1, "i32"},
    {"out", 0, CC_BLOCK_OUTPUT, F32, 1, shapeN, replicated, 1, 0, -1,
     "f32[N] replicated"},
};
const char *const names[] = {"g", "w", "m", "x", "lr", "step", "out"};
const cc_result results[] = {{"w", 1}, {"m", 2}, {"out", 6}};

int fail(char *err, size_t cap, const char *message) {
  std::snprintf(err, cap, "%s", message);
  return 1;
}

int envInt(const char *name, int fallback) {
  const char *v = std::getenv(name);
  return v ? std::atoi(v) : fallback;
}

int world(int64_t comm, int *rank, int *size, char *err, size_t cap) {
  if (comm != -1)
    return fail(err, cap, "the fake program takes comm=-1 only");
  *rank = envInt("FAKE_RANK", 0);
  *size = envInt("FAKE_SIZE", 1);
  return 0;
}

// One sliced dimension of extent `n` over `p` ranks: this rank's block.
int block(int64_t n, int64_t p, int rank, int64_t *shape, int64_t *offset,
          char *err, size_t cap) {
  if (n % p != 0)
    return fail(err, cap,
                "a sliced dimension does not divide evenly over the ranks");
  *shape = n / p;
  *offset = rank * (n / p);
  return 0;
}

int place(const int64_t *s, int rank, int64_t *shape, int64_t *offset,
          char *err, size_t cap) {
  for (int k = 0; k < 3; ++k)
    if (s[k] <= 0)
      return fail(err, cap, "sizes must be positive");
  shape[0] = s[N], offset[0] = 0;                               // g
  shape[1] = s[N], offset[1] = 0;                               // w
  if (block(s[N], s[P], rank, &shape[2], &offset[2], err, cap)) // m
    return 1;
  if (block(4 * s[H], s[P], rank, &shape[3], &offset[3], err, cap)) // x
    return 1;
  shape[4] = s[N], offset[4] = 0; // out
  return 0;
}

struct Fake {
  int64_t n, block;
};

int create(int64_t comm, const int64_t *s, const int64_t *const *tables,
           void *stream, void **out, char *err, size_t cap) {
  (void)comm, (void)tables, (void)stream;
  int64_t shape[5], offset[5];
  if (place(s, envInt("FAKE_RANK", 0), shape, offset, err, cap))
    return 1;
  ++creates;
  *out = new Fake{s[N], shape[2]};
  return 0;
}

int step(void *program, void *const *args, char *err, size_t cap) {
  const Fake &f = *static_cast<Fake *>(program);
  const float *g = static_cast<const float *>(args[0]);
  float *w = static_cast<float *>(args[1]);
  float *m = static_cast<float *>(args[2]);
  const float lr = *static_cast<const float *>(args[4]);
  const int32_t step = *static_cast<const int32_t *>(args[5]);
  float *out = static_cast<float *>(args[6]);
  if (step == -1)
    return fail(err, cap, "step -1 is refused (the fake's failure)");
  ++calls;
  for (int64_t i = 0; i < f.n; ++i) {
    w[i] += lr * g[i];
    out[i] = w[i];
  }
  for (int64_t i = 0; i < f.block; ++i)
    m[i] += static_cast<float>(step);
  return 0;
}

void destroy(void *program) {
  ++destroys;
  delete static_cast<Fake *>(program);
}

const char *path(void *) { return "the fake's path"; }

cc_description program = {
    COCONET_DESCRIPTION_VERSION,
    "fake_prog",
    "fake",
    "prog",
    3,
    sizeNames,
    1,
    axisSizes,
    -1,
    7,
    6,
    blocks,
    3,
    results,
    0,
    nullptr,
    1,
};

cc_py_program description = {
    COCONET_PY_ABI, &program, names,   "cpu",   "fake.coco", world,
    place,          create,   step,    destroy, path,        nullptr,
    nullptr,        nullptr,  nullptr, nullptr,
};

} // namespace

// With FAKE_TABLE=1, a segment table "layers" whose count is H, its
// lengths summing to N (create() does not look at it): the checks of
// `tables=` are coconet._core's.
const cc_table tables[] = {{"layers", H, "N", {1, 1, sizeN}}};

// FAKE_BROKEN=1..4: a description coconet._core must refuse: of another
// version, with m sliced along a dimension it does not have, with a result
// held by no block, or none at all.
const cc_axis_layout slicedPastRank[] = {{CC_AXIS_SLICED, 1}};
cc_block brokenBlocks[7];
const cc_result resultPastBlocks[] = {{"w", 7}};

extern "C" COCONET_PY_EXPORT const cc_py_program *coconet_python_program(void) {
  description.abi = envInt("FAKE_ABI", COCONET_PY_ABI);
  const bool table = envInt("FAKE_TABLE", 0) != 0;
  program.num_tables = table ? 1 : 0;
  program.tables = table ? tables : nullptr;
  const int broken = envInt("FAKE_BROKEN", 0);
  program.version = broken == 1 ? 99 : COCONET_DESCRIPTION_VERSION;
  for (int i = 0; i < 7; ++i)
    brokenBlocks[i] = blocks[i];
  brokenBlocks[2].layout = slicedPastRank;
  program.blocks = broken == 2 ? brokenBlocks : blocks;
  program.results = broken == 3 ? resultPastBlocks : results;
  program.num_results = broken == 3 ? 1 : 3;
  description.description = broken == 4 ? nullptr : &program;
  return &description;
}
extern "C" COCONET_PY_EXPORT int fake_calls(void) { return calls; }
extern "C" COCONET_PY_EXPORT int fake_creates(void) { return creates; }
extern "C" COCONET_PY_EXPORT int fake_destroys(void) { return destroys; }
