//===- Npy.cpp - reading and writing NumPy .npy files ---------------------===//
//
// The compiler's interface to the runtime's .npy code (coconet/npy.h), so
// that the simulator and the generated drivers read and write the same
// bytes: the types convert one to one, and a failed rt::Status becomes an
// llvm::Error with the same message.
//
//===----------------------------------------------------------------------===//

#include "support/Npy.h"

#include "coconet/npy.h"

#include "llvm/ADT/STLExtras.h"

#include <cassert>
#include <utility>

namespace coconet::support {

namespace {

rt::NpyType toRuntime(NpyType type) { return static_cast<rt::NpyType>(type); }
NpyType fromRuntime(rt::NpyType type) { return static_cast<NpyType>(type); }

static_assert(static_cast<int>(rt::NpyType::Bool) ==
                  static_cast<int>(NpyType::Bool),
              "support::NpyType mirrors rt::NpyType");

llvm::Error toError(const rt::Status &status) {
  if (status.ok())
    return llvm::Error::success();
  return llvm::createStringError(status.message());
}

NpyArray fromRuntime(rt::NpyArray &&array) {
  NpyArray out;
  out.type = fromRuntime(array.type);
  out.shape = std::move(array.shape);
  out.data = std::move(array.data);
  return out;
}

const uint8_t *element(const NpyArray &array, int64_t i) {
  const size_t size = npyElementSize(array.type);
  assert(i >= 0 && (static_cast<size_t>(i) + 1) * size <= array.data.size() &&
         "element index out of range");
  return array.data.data() + static_cast<size_t>(i) * size;
}

} // namespace

llvm::StringRef npyDescr(NpyType type) { return rt::npyDescr(toRuntime(type)); }

unsigned npyElementSize(NpyType type) {
  return rt::npyElementSize(toRuntime(type));
}

int64_t NpyArray::numElements() const {
  // A zero extent first: the others' product may overflow (parseNpy accepts
  // (2^32, 2^32, 0)).
  if (llvm::is_contained(shape, 0))
    return 0;
  int64_t n = 1;
  for (int64_t extent : shape)
    n *= extent;
  return n;
}

double NpyArray::getAsDouble(int64_t i) const {
  return rt::npyElementAsDouble(toRuntime(type), element(*this, i));
}

int64_t NpyArray::getAsInt(int64_t i) const {
  return rt::npyElementAsInt(toRuntime(type), element(*this, i));
}

llvm::Expected<NpyArray> parseNpy(llvm::StringRef bytes) {
  rt::NpyArray array;
  if (auto err = toError(
          rt::parseNpy(std::string_view(bytes.data(), bytes.size()), &array)))
    return err;
  return fromRuntime(std::move(array));
}

llvm::Expected<NpyArray> readNpyFile(llvm::StringRef path) {
  rt::NpyArray array;
  if (auto err = toError(rt::readNpyFile(path.str(), &array)))
    return err;
  return fromRuntime(std::move(array));
}

std::string serializeNpy(const NpyArray &array) {
  return rt::serializeNpy(toRuntime(array.type), array.shape, array.data.data(),
                          array.data.size());
}

llvm::Error writeNpyFile(llvm::StringRef path, const NpyArray &array) {
  return toError(rt::writeNpyFile(path.str(), toRuntime(array.type),
                                  array.shape, array.data.data(),
                                  array.data.size()));
}

bool npyKindMatches(NpyType type, rt::DType dtype) {
  return rt::npyKindMatches(toRuntime(type), dtype);
}

llvm::Expected<rt::ElementValue> npyElementValue(const NpyArray &array,
                                                 int64_t i, rt::DType dtype) {
  rt::ElementValue v;
  if (llvm::Error err = toError(rt::npyElementValue(
          toRuntime(array.type), element(array, i), i, dtype, &v)))
    return err;
  return v;
}

} // namespace coconet::support
