//===- algorithm.cpp - running a collective algorithm over MPI ------------===//

#include "coconet/cpu/algorithm.h"
#include "coconet/cpu/team.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

namespace coconet::rt::cpu {

namespace {

using algorithm::Collective;
using algorithm::Table;
using algorithm::Transfer;

// Every message of an algorithm: two ranks' messages match in the order
// they post them.
constexpr int kTag = 0x5a17;
// The most bytes of one message (MPI counts are ints).
constexpr size_t kPieceBytes = size_t{1} << 30;

Status invalid(std::string message) {
  return Status::error(StatusCode::InvalidArgument,
                       "runAlgorithm: " + std::move(message));
}

/// Where this rank keeps its copy of each chunk it holds.
class Slots {
public:
  Slots(const Table &t, int rank, const char *in, char *out, size_t bytes)
      : t_(t), rank_(static_cast<uint32_t>(rank)), in_(in), out_(out),
        bytes_(bytes) {}

  /// Sizes the scratch of an AllToAll's relayed chunks, the work copy of a
  /// ReduceScatter's, and fills the slots with this rank's input.
  void prepare() {
    const uint64_t k = t_.chunksPerRank, r = rank_;
    switch (t_.collective) {
    case Collective::AllGather:
      std::memcpy(out_ + r * k * bytes_, in_, k * bytes_);
      break;
    case Collective::AllReduce:
      std::memcpy(out_, in_, algorithm::numChunks(t_) * bytes_);
      break;
    case Collective::ReduceScatter:
      work_.assign(in_, in_ + algorithm::numChunks(t_) * bytes_);
      break;
    case Collective::AllToAll: {
      std::memcpy(out_ + r * k * bytes_, in_ + r * k * bytes_, k * bytes_);
      const uint32_t steps = t_.numSteps;
      for (uint32_t i = 0; i < t_.stepBegin[steps]; ++i) {
        const Transfer &x = t_.transfers[i];
        if (x.dst == rank_ && !own(x.chunk) &&
            scratch_.find(x.chunk) == scratch_.end()) {
          const size_t index = scratch_.size();
          scratch_.emplace(x.chunk, index);
        }
      }
      work_.resize(scratch_.size() * bytes_);
      break;
    }
    }
  }

  char *slot(uint32_t chunk) {
    const uint64_t k = t_.chunksPerRank, rk = uint64_t{t_.ranks} * k;
    switch (t_.collective) {
    case Collective::AllGather:
    case Collective::AllReduce:
      return out_ + chunk * bytes_;
    case Collective::ReduceScatter:
      return work_.data() + chunk * bytes_;
    case Collective::AllToAll: {
      const uint64_t s = chunk / rk, d = (chunk / k) % t_.ranks, i = chunk % k;
      if (s == rank_) // sent, never received: read only
        return const_cast<char *>(in_) + (d * k + i) * bytes_;
      if (d == rank_)
        return out_ + (s * k + i) * bytes_;
      return work_.data() + scratch_.at(chunk) * bytes_;
    }
    }
    return nullptr;
  }

  /// A ReduceScatter's own chunks into the output.
  void finish() {
    if (t_.collective != Collective::ReduceScatter)
      return;
    const uint64_t k = t_.chunksPerRank;
    std::memcpy(out_, work_.data() + rank_ * k * bytes_, k * bytes_);
  }

private:
  bool own(uint32_t chunk) const {
    const uint64_t k = t_.chunksPerRank, rk = uint64_t{t_.ranks} * k;
    return chunk / rk == rank_ || (chunk / k) % t_.ranks == rank_;
  }

  const Table &t_;
  uint32_t rank_;
  const char *in_;
  char *out_;
  size_t bytes_;
  std::vector<char> work_;
  std::unordered_map<uint32_t, size_t> scratch_;
};

Status postPieces(bool send, char *data, size_t bytes, int peer, MPI_Comm comm,
                  std::vector<MPI_Request> &requests) {
  for (size_t at = 0; at < bytes; at += kPieceBytes) {
    const int n = static_cast<int>(std::min(kPieceBytes, bytes - at));
    MPI_Request request;
    const int rc =
        send ? MPI_Isend(data + at, n, MPI_BYTE, peer, kTag, comm, &request)
             : MPI_Irecv(data + at, n, MPI_BYTE, peer, kTag, comm, &request);
    if (rc != MPI_SUCCESS)
      return mpiStatus(rc, send ? "MPI_Isend" : "MPI_Irecv", __FILE__,
                       __LINE__);
    requests.push_back(request);
  }
  return Status::success();
}

} // namespace

void landTransfer(bool reduce, void *to, const void *value, int64_t elements,
                  DType dtype, ReduceOp op) {
  if (reduce) {
    const void *members[2] = {to, value};
    combineMembers(members, 2, to, elements, dtype, op);
  } else {
    std::memcpy(to, value, static_cast<size_t>(elements) * dtypeSize(dtype));
  }
}

Status runAlgorithm(const Table &t, MPI_Comm comm, const void *in, void *out,
                    int64_t chunkElements, DType dtype, ReduceOp op) {
  int rank = 0, size = 0;
  if (int rc = MPI_Comm_rank(comm, &rank); rc != MPI_SUCCESS)
    return mpiStatus(rc, "MPI_Comm_rank", __FILE__, __LINE__);
  if (int rc = MPI_Comm_size(comm, &size); rc != MPI_SUCCESS)
    return mpiStatus(rc, "MPI_Comm_size", __FILE__, __LINE__);
  COCONET_RETURN_IF_ERROR(algorithm::check(t, size, "runAlgorithm"));
  COCONET_RETURN_IF_ERROR(
      algorithm::checkRun(t, chunkElements, dtype, op, "runAlgorithm"));
  if (chunkElements == 0)
    return Status::success();
  if (!in || !out)
    return invalid("a null buffer");
  const size_t bytes = static_cast<size_t>(chunkElements) * dtypeSize(dtype);
  const uint32_t me = static_cast<uint32_t>(rank);
  Slots slots(t, rank, static_cast<const char *>(in), static_cast<char *>(out),
              bytes);
  slots.prepare();

  std::vector<MPI_Request> requests;
  std::vector<char> arrived;
  std::vector<uint32_t> sending;
  // Per receive of the step: where it landed (its slot, or arrived).
  std::vector<std::pair<const Transfer *, size_t>> receives;
  constexpr size_t kInSlot = ~size_t{0};
  for (uint32_t s = 0; s < t.numSteps; ++s) {
    const Transfer *first = t.transfers + t.stepBegin[s];
    const Transfer *last = t.transfers + t.stepBegin[s + 1];
    requests.clear();
    receives.clear();
    size_t staged = 0;
    // A copy lands in its slot unless this rank sends that chunk in the
    // same step (the send reads the value before the step).
    sending.clear();
    for (const Transfer *x = first; x != last; ++x)
      if (x->src == me)
        sending.push_back(x->chunk);
    std::sort(sending.begin(), sending.end());
    for (const Transfer *x = first; x != last; ++x) {
      if (x->dst != me)
        continue;
      const bool sent =
          std::binary_search(sending.begin(), sending.end(), x->chunk);
      if (x->reduce || sent)
        receives.emplace_back(x, staged++);
      else
        receives.emplace_back(x, kInSlot);
    }
    arrived.resize(std::max(arrived.size(), staged * bytes));
    for (const auto &[x, at] : receives)
      COCONET_RETURN_IF_ERROR(postPieces(
          false,
          at == kInSlot ? slots.slot(x->chunk) : arrived.data() + at * bytes,
          bytes, static_cast<int>(x->src), comm, requests));
    for (const Transfer *x = first; x != last; ++x)
      if (x->src == me)
        COCONET_RETURN_IF_ERROR(postPieces(true, slots.slot(x->chunk), bytes,
                                           static_cast<int>(x->dst), comm,
                                           requests));
    if (!requests.empty()) {
      const int rc = MPI_Waitall(static_cast<int>(requests.size()),
                                 requests.data(), MPI_STATUSES_IGNORE);
      if (rc != MPI_SUCCESS)
        return mpiStatus(rc, "MPI_Waitall", __FILE__, __LINE__);
    }
    // In the step's order: the receiver's value first.
    for (const auto &[x, at] : receives) {
      if (at == kInSlot)
        continue;
      landTransfer(x->reduce, slots.slot(x->chunk), arrived.data() + at * bytes,
                   chunkElements, dtype, op);
    }
  }
  slots.finish();
  return Status::success();
}

Status Mesh::runAlgorithm(const Table &t, const void *in, void *out,
                          int64_t count, DType dtype, ReduceOp op, int axis) {
  MPI_Comm comm = axisComm(axis);
  int size = 0;
  if (int rc = MPI_Comm_size(comm, &size); rc != MPI_SUCCESS)
    return mpiStatus(rc, "MPI_Comm_size", __FILE__, __LINE__);
  int64_t chunkElements = 0;
  COCONET_RETURN_IF_ERROR(algorithm::checkCall(
      t, size, count, dtype, op, "Mesh::runAlgorithm", &chunkElements));
  if (chunkElements == 0)
    return Status::success();
  // runAlgorithm reads its input while the output fills: an input the
  // output overlaps is copied first.
  const size_t element = dtypeSize(dtype);
  const size_t inBytes = algorithm::inputChunks(t) * chunkElements * element;
  const size_t outBytes = algorithm::outputChunks(t) * chunkElements * element;
  const char *i = static_cast<const char *>(in);
  const char *o = static_cast<const char *>(out);
  if (i < o + outBytes && o < i + inBytes) {
    uint8_t *copy = scratch(0, inBytes);
    std::memcpy(copy, in, inBytes);
    in = copy;
  }
  // On one node, through the team's window (the same bits); else, or where
  // the window has not room for every chunk's element, over MPI. An
  // AllToAll goes over MPI: through the window it copies its whole input
  // in and its output out besides what it moves, 1.5-5x MPI_Alltoall on
  // this development machine where MPI point-to-point is 0.6-2.7x
  // (docs/bench/synth.md).
  Team *members = nullptr;
  if (t.collective != algorithm::Collective::AllToAll)
    COCONET_RETURN_IF_ERROR(team(axis, &members));
  if (members && members->size() == size) {
    const int64_t piece =
        algorithmTeamPieceElements(t, *members, chunkElements, dtype);
    if (piece > 0)
      return runAlgorithmOnTeam(
          t, *members, in, out, chunkElements, dtype, op,
          scratch(1,
                  algorithmTeamStagingBytes(t, members->rank(), piece, dtype)));
  }
  return cpu::runAlgorithm(t, comm, in, out, chunkElements, dtype, op);
}

} // namespace coconet::rt::cpu
