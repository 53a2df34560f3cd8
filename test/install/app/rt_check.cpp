// Links coconet::rt alone (the imported target's include directory and
// library): f16 rounding (inline) and an element type's name (libcoconet_rt).
#include "coconet/types.h"

#include <cstdio>
#include <cstring>

int main() {
  const float x = coconet::rt::toFloat(coconet::rt::toHalf(1.0f / 3.0f));
  const char *name = coconet::rt::dtypeName(coconet::rt::DType::BF16);
  std::printf("rt_check: f16(1/3) = %.12f, %s\n", x, name);
  return x == 0.333251953125f && std::strcmp(name, "bf16") == 0 ? 0 : 1;
}
