//===- transport.cpp - one process as the only rank; agreeing on errors ---===//

#include "driver_impl.h"

#include <cstdio>
#include <cstring>
#include <map>

namespace coconet::rt::driver {

namespace {

class SingleProcess final : public Transport {
public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  Status gather(const void *data, size_t bytes,
                std::vector<uint8_t> *all) override {
    const auto *p = static_cast<const uint8_t *>(data);
    all->assign(p, p + bytes);
    return Status::success();
  }
  int maxOf(int value) override { return value; }
  void barrier() override {}
  void maxOf(double *, size_t) override {}
};

/// "ranks 1, 3" / "rank 2".
std::string rankList(const std::vector<int> &ranks) {
  std::string s = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size(); ++i)
    s += (i ? ", " : "") + std::to_string(ranks[i]);
  return s;
}

} // namespace

Transport &singleProcess() {
  static SingleProcess transport;
  return transport;
}

int agree(Transport &transport, const Status &status, int code,
          const char *program) {
  const std::string p = program ? program : "driver";
  // A usage error is the message alone (it names the option).
  const bool usage = code == 2 && status.code() == StatusCode::InvalidArgument;
  // A program object's messages start with its name ("adam: ..."), which
  // the line already does: said once.
  std::string message = status.message();
  if (message.rfind(p + ": ", 0) == 0)
    message.erase(0, p.size() + 2);
  // Escaped and cut before it travels: it quotes what the user typed.
  const std::string text =
      status.ok()
          ? ""
          : detail::safeText(usage
                                 ? message
                                 : std::string(statusCodeName(status.code())) +
                                       ": " + message);
  // Every rank's message to rank 0: the length, then the bytes.
  std::vector<uint8_t> all;
  if (Status st = transport.gather(text.data(), text.size(), &all); !st.ok()) {
    // No agreement on the messages: say ours here.
    if (!status.ok())
      std::fprintf(stderr, "%s: %s (rank %d)\n", p.c_str(), text.c_str(),
                   transport.rank());
    return transport.maxOf(status.ok() ? 0 : code);
  }
  std::vector<uint8_t> lengths;
  const uint64_t mine = text.size();
  Status st = transport.gather(&mine, sizeof mine, &lengths);
  if (st.ok() && transport.rank() == 0) {
    // Distinct messages in the order of the first rank that met each.
    std::vector<std::string> order;
    std::map<std::string, std::vector<int>> from;
    size_t at = 0;
    for (int r = 0; r < transport.size(); ++r) {
      uint64_t n = 0;
      std::memcpy(&n, lengths.data() + r * sizeof n, sizeof n);
      std::string message(reinterpret_cast<const char *>(all.data()) + at, n);
      at += n;
      if (message.empty())
        continue;
      if (!from.count(message))
        order.push_back(message);
      from[message].push_back(r);
    }
    for (const std::string &message : order) {
      const std::vector<int> &ranks = from[message];
      const bool everyRank = static_cast<int>(ranks.size()) == transport.size();
      std::fprintf(stderr, "%s: %s%s\n", p.c_str(), message.c_str(),
                   everyRank || transport.size() == 1
                       ? ""
                       : (" (" + rankList(ranks) + ")").c_str());
    }
  } else if (!st.ok() && !status.ok()) {
    std::fprintf(stderr, "%s: %s (rank %d)\n", p.c_str(), text.c_str(),
                 transport.rank());
  }
  return transport.maxOf(status.ok() ? 0 : code);
}

} // namespace coconet::rt::driver
