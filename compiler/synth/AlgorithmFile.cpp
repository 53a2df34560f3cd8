//===- AlgorithmFile.cpp - algorithms as files: written and read back -----===//
//
// The format (docs/synth.md, "Algorithm files"): one JSON object,
//
//   {"format": "coconet-algorithm", "version": 1, "name": "...",
//    "collective": "Allgather", "ranks": 16, "chunks_per_rank": 1,
//    "topology": "NDv2-NDv2_1MB", "time_us": 184,
//    "steps": [{"rounds": 1, "transfers": [[chunk, src, dst], ...]}, ...]}
//
// a transfer [chunk, src, dst] copies, [chunk, src, dst, "reduce"]
// combines into dst's copy. "topology" and "time_us" say what the
// algorithm was made for; reading checks every value's kind and range,
// located, before the verifier checks what the steps do.
//
//===----------------------------------------------------------------------===//

#include "synth/AlgorithmFile.h"
#include "synth/Json.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

namespace coconet::synth {

namespace {
constexpr llvm::StringLiteral kFormat = "coconet-algorithm";
constexpr int64_t kVersion = 1;
constexpr size_t kMaxSteps = 1 << 16;
constexpr size_t kMaxTransfers = 1 << 20;
constexpr int64_t kMaxRounds = 1 << 20;
} // namespace

void writeAlgorithm(const Algorithm &alg, llvm::StringRef topologyName,
                    double timeUs, llvm::raw_ostream &os) {
  os << "{\n  \"format\": \"" << kFormat << "\",\n  \"version\": " << kVersion
     << ",\n  \"name\": " << llvm::json::Value(alg.name)
     << ",\n  \"collective\": \"" << collectiveName(alg.collective)
     << "\",\n  \"ranks\": " << alg.ranks
     << ",\n  \"chunks_per_rank\": " << alg.chunksPerRank
     << ",\n  \"topology\": " << llvm::json::Value(topologyName.str())
     << ",\n  \"time_us\": " << numberText(timeUs) << ",\n  \"steps\": [";
  for (size_t s = 0; s < alg.steps.size(); ++s) {
    const Step &step = alg.steps[s];
    os << (s ? ",\n" : "\n") << "    {\"rounds\": " << step.rounds
       << ", \"transfers\": [";
    for (size_t i = 0; i < step.transfers.size(); ++i) {
      const Transfer &t = step.transfers[i];
      os << (i ? ", " : "") << '[' << t.chunk << ", " << t.src << ", " << t.dst
         << (t.reduce ? ", \"reduce\"]" : "]");
    }
    os << "]}";
  }
  os << "\n  ]\n}\n";
}

std::optional<Algorithm>
parseAlgorithmFile(std::unique_ptr<llvm::MemoryBuffer> buffer,
                   llvm::SourceMgr &sourceMgr, DiagnosticEngine &diags) {
  std::optional<JsonDocument> doc =
      JsonDocument::parse(std::move(buffer), sourceMgr, diags);
  if (!doc)
    return std::nullopt;
  JsonReader r(*doc, diags, "an algorithm file");
  JsonPath root;
  if (!r.object(root, {"format", "version", "name", "collective", "ranks",
                       "chunks_per_rank", "topology", "time_us", "steps"}))
    return std::nullopt;
  for (llvm::StringRef key :
       {"format", "version", "collective", "ranks", "chunks_per_rank", "steps"})
    r.require(root, key, "an algorithm file");
  if (r.hadError())
    return std::nullopt;
  Algorithm alg;
  if (auto format = r.string(root.key("format"), 64);
      format && *format != kFormat)
    r.invalid(root.key("format"),
              "an algorithm file's format is \"coconet-algorithm\"");
  r.integer(root.key("version"), kVersion, kVersion);
  if (r.has(root, "name"))
    if (auto name = r.string(root.key("name"), 256))
      alg.name = *name;
  if (r.has(root, "topology"))
    r.string(root.key("topology"), 256);
  if (r.has(root, "time_us"))
    r.number(root.key("time_us"), 0, 1e12);
  if (auto c = r.string(root.key("collective"), 64)) {
    if (auto coll = parseCollective(*c))
      alg.collective = *coll;
    else
      r.invalid(root.key("collective"),
                "the collective is one of Allgather, Alltoall, ReduceScatter "
                "and Allreduce");
  }
  auto ranks = r.integer(root.key("ranks"), 1, kMaxRanks);
  auto chunkup = r.integer(root.key("chunks_per_rank"), 1, kMaxChunkup);
  if (r.hadError() || !ranks || !chunkup)
    return std::nullopt;
  alg.ranks = unsigned(*ranks);
  alg.chunksPerRank = unsigned(*chunkup);
  const int64_t chunks = int64_t(alg.chunks());

  JsonPath stepsPath = root.key("steps");
  const llvm::json::Array *steps = r.array(stepsPath, kMaxSteps);
  if (!steps)
    return std::nullopt;
  size_t total = 0;
  for (size_t s = 0; s < steps->size(); ++s) {
    JsonPath sp = stepsPath.index(s);
    if (!r.object(sp, {"rounds", "transfers"}) ||
        !r.require(sp, "rounds", "a step") ||
        !r.require(sp, "transfers", "a step"))
      continue;
    Step step;
    if (auto rounds = r.integer(sp.key("rounds"), 1, kMaxRounds))
      step.rounds = unsigned(*rounds);
    JsonPath tp = sp.key("transfers");
    const llvm::json::Array *ts = r.array(tp, kMaxTransfers - total);
    if (!ts)
      return std::nullopt; // past the bound: stop before reading more
    total += ts->size();
    for (size_t i = 0; i < ts->size(); ++i) {
      JsonPath xp = tp.index(i);
      const llvm::json::Array *x = r.array(xp, 4);
      if (!x)
        continue;
      if (x->size() < 3) {
        r.invalid(xp, "a transfer is [chunk, src, dst] or [chunk, src, dst, "
                      "\"reduce\"]");
        continue;
      }
      auto chunk = r.integer(xp.index(0), 0, chunks - 1);
      auto src = r.integer(xp.index(1), 0, int64_t(alg.ranks) - 1);
      auto dst = r.integer(xp.index(2), 0, int64_t(alg.ranks) - 1);
      bool reduce = false;
      if (x->size() == 4) {
        auto op = r.string(xp.index(3), 16);
        if (op && *op != "reduce")
          r.invalid(xp.index(3), "a transfer's fourth element is \"reduce\"");
        reduce = true;
      }
      if (chunk && src && dst)
        step.transfers.push_back(
            {unsigned(*chunk), unsigned(*src), unsigned(*dst), reduce});
    }
    alg.steps.push_back(std::move(step));
  }
  if (r.hadError())
    return std::nullopt;
  return alg;
}

} // namespace coconet::synth
