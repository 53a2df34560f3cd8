//===- environment.h - the runtime's environment variables ------*- C++ -*-===//
//
// The runtime reads a few numbers from the environment (docs/codegen.md,
// "Environment variables"): COCONET_TEAM_ALGORITHM_BYTES,
// COCONET_MPI_PIECE_BYTES, COCONET_TEAM_SHM_BYTES. Each is read by one rule:
// decimal digits only (no sign, no blank, no suffix), within the variable's
// range; unset or empty gives its default, and so does any other text,
// with a reason the caller may print. (strtoull took "-1" as 2^64 - 1 and
// a number past 2^64 as 2^64 - 1.)
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_RUNTIME_ENVIRONMENT_H
#define COCONET_RUNTIME_ENVIRONMENT_H

#include <cstdint>
#include <string>

namespace coconet::rt {

/// The whole number `text` holds, when it is one from `least` to `most`.
/// False (and `*why`, if given, saying why) otherwise.
bool parseWholeNumber(const char *text, uint64_t least, uint64_t most,
                      uint64_t *out, std::string *why = nullptr);

/// The environment variable `name` by parseWholeNumber; `fallback` when it
/// is unset, empty or refused (then `*why`, if given, says why, naming the
/// variable).
uint64_t wholeNumberFromEnv(const char *name, uint64_t least, uint64_t most,
                            uint64_t fallback, std::string *why = nullptr);

} // namespace coconet::rt

#endif // COCONET_RUNTIME_ENVIRONMENT_H
