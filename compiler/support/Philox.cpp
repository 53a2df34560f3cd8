//===- Philox.cpp - Philox4x32-10 and the dropout mask --------------------===//
//
// The compiler's names for the runtime's Philox functions
// (coconet/numeric.h), so that the simulator's dropout masks and inputs
// are the generated code's bit for bit.
//
//===----------------------------------------------------------------------===//

#include "support/Philox.h"

#include "coconet/numeric.h"

namespace coconet::support {

PhiloxCounter philox4x32_10(PhiloxCounter counter, PhiloxKey key) {
  const rt::PhiloxCounter out = rt::philox4x32_10(
      rt::PhiloxCounter{{counter[0], counter[1], counter[2], counter[3]}},
      rt::PhiloxKey{{key[0], key[1]}});
  return {out.v[0], out.v[1], out.v[2], out.v[3]};
}

uint32_t dropoutBits(uint64_t seed, uint64_t index) {
  return rt::dropoutBits(seed, index);
}

float dropoutUniform(uint64_t seed, uint64_t index) {
  return rt::dropoutUniform(seed, index);
}

bool dropoutKeep(uint64_t seed, uint64_t index, float p) {
  return rt::dropoutKeep(seed, index, p);
}

double uniformInput(uint64_t seed, uint64_t stream, uint64_t index) {
  return rt::uniformInput(seed, stream, index);
}

uint64_t uniformInputBits(uint64_t seed, uint64_t stream, uint64_t index) {
  return rt::uniformInputBits(seed, stream, index);
}

} // namespace coconet::support
