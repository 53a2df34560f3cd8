//===- sizes.h - checked size arithmetic for program objects ----*- C++ -*-===//
//
// A program object's create() and a generated driver compute element and
// byte counts from the sizes a user gives (--size N=...). These functions
// refuse sizes whose counts do not fit, before anything is computed from
// them, with a message that names the tensor, its type, its size and why:
//
//   adam: 'w' (f32[N]) has 4611686018427387904 elements of 4 bytes, more
//   than 2^63 - 1 bytes: choose smaller sizes
//
// Once every tensor's global size fits in 2^63 - 1 bytes, every block,
// offset and byte count of a rank (at most that) fits too.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_SIZES_H
#define COCONET_RUNTIME_SIZES_H

#include "coconet/status.h"
#include "coconet/types.h"

#include <cstddef>
#include <cstdint>
#include <initializer_list>

namespace coconet::rt {

/// The most bytes one tensor may have: 2^63 - 1 (ptrdiff_t's range).
constexpr int64_t kMaxTensorBytes = INT64_MAX;

/// The product of `factors` (each positive) into `*out`; false when it
/// overflows int64.
bool checkedProduct(std::initializer_list<int64_t> factors, int64_t *out);

/// Checks that tensor `tensor` of program `program`, of type `type` (as the
/// program prints it: "f32[N, 4*H]"), whose global element count is the
/// product of `factors` (its dimensions' sizes and coefficients), has at
/// most kMaxTensorBytes bytes of `dtype`. InvalidArgument otherwise.
Status checkTensorSize(const char *program, const char *tensor,
                       const char *type, DType dtype,
                       std::initializer_list<int64_t> factors);

/// Checks that the mesh's axes (`names`: "D * T") have at most 2^31 - 1
/// ranks in all (MPI's and NCCL's limit), so that products of axis sizes
/// do not overflow. InvalidArgument otherwise.
Status checkMeshSize(const char *program, const char *names,
                     std::initializer_list<int64_t> axisSizes);

/// Adds `bytes` rounded up to a multiple of 256 to `*total`; false (and
/// `*total` unchanged) when the sum does not fit in size_t.
bool addAligned(size_t *total, size_t bytes);

/// The bytes of a team's window for the one- and two-shot collectives of
/// either target (cpu/team_collectives.h, cuda/team_collectives.h):
/// COCONET_TEAM_ALGORITHM_BYTES when it is a whole number from 64 to 2^40
/// (coconet/environment.h's rule), else 32 MiB. Larger calls run in pieces.
constexpr uint64_t kMinTeamWindowBytes = 64;
constexpr uint64_t kMaxTeamWindowBytes = uint64_t(1) << 40;
constexpr uint64_t kDefaultTeamWindowBytes = uint64_t(32) << 20;
size_t teamAlgorithmWindowBytes();

} // namespace coconet::rt

#endif // COCONET_RUNTIME_SIZES_H
