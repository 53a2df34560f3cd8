//===- FuzzNpy.cpp - libFuzzer target for the .npy reader -----------------===//
//
// The simulator reads .npy files through support::parseNpy and generated
// drivers through coconet::rt::parseNpy (which the former wraps); the
// header's dict is parsed by rt::detail::parseNpyHeaderDict. The input is
// given to all three as a whole file, and to the header parser alone as
// header text. Checked besides the absence of crashes and sanitizer
// reports:
//   - both readers accept the same files, or refuse them with the same
//     message;
//   - an accepted array's data is exactly its shape's elements, every one
//     readable (as double and as integer);
//   - writing it and reading it back gives the same type, shape and bytes,
//     and writing that again gives the same file.
//
//   build-fuzz/tools/coconet-fuzz-npy -dict=tools/fuzz/npy.dict
//       test/fuzz/corpus/npy
//
//===----------------------------------------------------------------------===//

#include "support/Npy.h"

#include "coconet/npy.h"
#include "npy_header.h"

#include "llvm/Support/Error.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace rt = coconet::rt;
namespace support = coconet::support;

namespace {

[[noreturn]] void bug(const std::string &what) {
  std::fprintf(stderr, "==== coconet-fuzz-npy: %s ====\n", what.c_str());
  std::abort();
}

void checkArray(const rt::NpyArray &array) {
  // A zero extent makes the count zero whatever the others are (NumPy
  // refuses such a shape when the others overflow; this reader accepts it
  // by design, and every user compares the shape before reading).
  int64_t count = 1;
  bool empty = false;
  for (int64_t extent : array.shape) {
    if (extent < 0)
      bug("negative extent accepted");
    empty |= extent == 0;
  }
  for (int64_t extent : array.shape) {
    if (empty)
      break;
    if (count > INT64_MAX / extent)
      bug("element count overflows but the file was accepted");
    count *= extent;
  }
  if (empty)
    count = 0;
  if (array.numElements() != count)
    bug("numElements() differs from the shape's product");
  const unsigned size = rt::npyElementSize(array.type);
  if (array.data.size() != static_cast<uint64_t>(count) * size)
    bug("the data is not the shape's elements");
  volatile double sum = 0;
  for (int64_t i = 0; i < count; ++i) {
    sum = sum + array.getAsDouble(i);
    sum = sum + static_cast<double>(array.getAsInt(i));
  }

  const std::string written = rt::serializeNpy(array);
  rt::NpyArray again;
  rt::Status status = rt::parseNpy(written, &again);
  if (!status.ok())
    bug("a written file does not read back: " + status.message());
  if (again.type != array.type || again.shape != array.shape ||
      again.data != array.data)
    bug("a written file reads back different");
  if (rt::serializeNpy(again) != written)
    bug("writing is not stable");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char *>(data), size);

  rt::NpyArray array;
  const rt::Status status = rt::parseNpy(bytes, &array);
  llvm::Expected<support::NpyArray> wrapped =
      support::parseNpy(llvm::StringRef(bytes.data(), bytes.size()));
  if (status.ok() != static_cast<bool>(wrapped))
    bug("the two readers disagree on whether the file is valid");
  if (!wrapped) {
    std::string message = llvm::toString(wrapped.takeError());
    if (message != status.message())
      bug("the two readers' messages differ: '" + message + "' vs '" +
          status.message() + "'");
  } else {
    if (static_cast<int>(wrapped->type) != static_cast<int>(array.type) ||
        wrapped->shape != array.shape || wrapped->data != array.data ||
        wrapped->numElements() != array.numElements())
      bug("the two readers read different arrays");
    checkArray(array);
  }

  rt::detail::PyDict dict;
  (void)rt::detail::parseNpyHeaderDict(bytes, &dict);
  return 0;
}
