//===- algorithm.cpp - checking a collective algorithm table --------------===//

#include "coconet/algorithm_check.h"

#include <climits>
#include <string>

namespace coconet::rt::algorithm {

namespace {

Status invalid(const char *caller, std::string message) {
  return Status::error(StatusCode::InvalidArgument,
                       std::string(caller) + ": " + std::move(message));
}

} // namespace

Status check(const Table &t, int worldSize, const char *caller) {
  const std::string name = t.name ? t.name : "(unnamed)";
  if (t.ranks == 0 || static_cast<int64_t>(t.ranks) != worldSize)
    return invalid(caller, "algorithm '" + name + "' is for " +
                               std::to_string(t.ranks) +
                               " ranks, the communicator has " +
                               std::to_string(worldSize));
  if (t.chunksPerRank == 0)
    return invalid(caller, "algorithm '" + name + "' has no chunks");
  if (!t.stepBegin || (t.stepBegin[t.numSteps] > 0 && !t.transfers))
    return invalid(caller, "algorithm '" + name + "' has no steps table");
  const uint64_t chunks = algorithm::numChunks(t);
  for (uint32_t s = 0; s < t.numSteps; ++s) {
    if (t.stepBegin[s] > t.stepBegin[s + 1])
      return invalid(caller, "algorithm '" + name + "': step " +
                                 std::to_string(s) + " ends before it begins");
    for (uint32_t i = t.stepBegin[s]; i < t.stepBegin[s + 1]; ++i) {
      const Transfer &x = t.transfers[i];
      if (x.chunk >= chunks || x.src >= t.ranks || x.dst >= t.ranks ||
          x.src == x.dst || x.reduce > 1)
        return invalid(caller, "algorithm '" + name + "': transfer " +
                                   std::to_string(i) + " of step " +
                                   std::to_string(s) + " is out of range");
      if (x.reduce && !algorithm::reduces(t))
        return invalid(caller, "algorithm '" + name + "': a reduction in a " +
                                   "collective that has none (transfer " +
                                   std::to_string(i) + ")");
    }
  }
  return Status::success();
}

Status checkRun(const Table &t, int64_t chunkElements, DType dtype, ReduceOp op,
                const char *caller) {
  if (chunkElements < 0)
    return invalid(caller, "a negative chunk size");
  if (reduces(t)) {
    if (op == ReduceOp::Avg)
      return invalid(caller, "avg is not offered (sum, then divide)");
    if (dtype == DType::Bool && (op == ReduceOp::Sum || op == ReduceOp::Prod))
      return invalid(caller, std::string("bool has no ") + reduceOpName(op));
  }
  return Status::success();
}

Status checkCall(const Table &t, int64_t members, int64_t count, DType dtype,
                 ReduceOp op, const char *caller, int64_t *chunkElements) {
  if (members > INT32_MAX)
    members = 0; // no table has that many ranks
  COCONET_RETURN_IF_ERROR(check(t, static_cast<int>(members), caller));
  const uint64_t chunks = inputChunks(t);
  if (count < 0 || static_cast<uint64_t>(count) % chunks != 0)
    return invalid(
        caller, "algorithm '" + std::string(t.name ? t.name : "(unnamed)") +
                    "' cuts each rank's input into " + std::to_string(chunks) +
                    " chunks, and " + std::to_string(count) +
                    " elements are not a multiple of " +
                    std::to_string(chunks));
  const int64_t each = count / static_cast<int64_t>(chunks);
  COCONET_RETURN_IF_ERROR(checkRun(t, each, dtype, op, caller));
  if (chunkElements)
    *chunkElements = each;
  return Status::success();
}

} // namespace coconet::rt::algorithm
