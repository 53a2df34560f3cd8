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
// version the description claims; FAKE_TABLE=1 adds a segment table.
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
const int dimsN[] = {N}, dimsX[] = {-1};
const int local[] = {CC_PY_LOCAL}, replicated[] = {CC_PY_REPLICATED},
          sliced[] = {0};
const int F16 = 0, F32 = 2, I32 = 4; // dtypes.def order

const cc_py_param params[] = {
    {"g", CC_PY_TENSOR, F32, 1, 0, dimsN, local, "f32[N] local", "", ""},
    {"w", CC_PY_TENSOR, F32, 1, 1, dimsN, replicated, "f32[N] replicated", "",
     "w"},
    {"m", CC_PY_TENSOR, F32, 1, 1, dimsN, sliced, "f32[N] sliced(0)", "", "m"},
    {"x", CC_PY_TENSOR, F16, 1, 0, dimsX, sliced, "f16[4*H] sliced(0)", "", ""},
    {"lr", CC_PY_SCALAR, F32, 0, 0, nullptr, nullptr, "f32", "", ""},
    {"step", CC_PY_SCALAR, I32, 0, 0, nullptr, nullptr, "i32", "", ""},
    {"out", CC_PY_OUTPUT, F32, 1, 1, dimsN, replicated, "f32[N] replicated", "",
     "out"},
};

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

cc_py_program description = {
    COCONET_PY_ABI, "fake_prog", "fake",  "prog",  "cpu", "fake.coco", 3,
    sizeNames,      1,           7,       params,  0,     nullptr,     world,
    place,          create,      step,    destroy, path,  nullptr,     nullptr,
    nullptr,        nullptr,     nullptr,
};

} // namespace

// With FAKE_TABLE=1, a segment table "layers" whose count is H, its
// lengths summing to N (create() does not look at it): the checks of
// `tables=` are coconet._core's.
const cc_py_table tables[] = {{"layers", H, "N"}};

extern "C" COCONET_PY_EXPORT const cc_py_program *coconet_python_program(void) {
  description.abi = envInt("FAKE_ABI", COCONET_PY_ABI);
  const bool table = envInt("FAKE_TABLE", 0) != 0;
  description.num_tables = table ? 1 : 0;
  description.tables = table ? tables : nullptr;
  return &description;
}
extern "C" COCONET_PY_EXPORT int fake_calls(void) { return calls; }
extern "C" COCONET_PY_EXPORT int fake_creates(void) { return creates; }
extern "C" COCONET_PY_EXPORT int fake_destroys(void) { return destroys; }
