//===- transport.cpp - one process as the only rank -----------------------===//

#include "coconet/driver.h"

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
};

} // namespace

Transport &singleProcess() {
  static SingleProcess transport;
  return transport;
}

} // namespace coconet::rt::driver
