//===- environment.cpp - the runtime's environment variables --------------===//

#include "coconet/environment.h"

#include <cstdlib>

namespace coconet::rt {

bool parseWholeNumber(const char *text, uint64_t least, uint64_t most,
                      uint64_t *out, std::string *why) {
  auto refuse = [&](const std::string &reason) {
    if (why)
      *why = reason;
    return false;
  };
  const std::string range = "a whole number from " + std::to_string(least) +
                            " to " + std::to_string(most);
  if (!text || !*text)
    return refuse("empty; it must be " + range);
  uint64_t v = 0;
  for (const char *p = text; *p; ++p) {
    if (*p < '0' || *p > '9')
      return refuse("not " + range);
    const uint64_t d = static_cast<uint64_t>(*p - '0');
    if (v > (UINT64_MAX - d) / 10)
      return refuse("more than 2^64 - 1; it must be " + range);
    v = v * 10 + d;
  }
  if (v < least || v > most)
    return refuse("outside the range " + std::to_string(least) + " to " +
                  std::to_string(most));
  *out = v;
  return true;
}

uint64_t wholeNumberFromEnv(const char *name, uint64_t least, uint64_t most,
                            uint64_t fallback, std::string *why) {
  const char *v = std::getenv(name);
  if (!v || !*v)
    return fallback;
  uint64_t n = 0;
  std::string reason;
  if (parseWholeNumber(v, least, most, &n, &reason))
    return n;
  if (why) {
    // The value as text: printable ASCII only, at most 64 characters.
    std::string shown;
    for (const char *p = v; *p && shown.size() < 64; ++p)
      shown += (*p >= 0x20 && *p < 0x7f) ? *p : '?';
    *why = std::string(name) + "='" + shown + "' is " + reason +
           "; the default " + std::to_string(fallback) + " is used";
  }
  return fallback;
}

} // namespace coconet::rt
