//===- npy.cpp - reading and writing NumPy .npy files ---------------------===//
//
// A .npy file is
//
//   "\x93NUMPY" major minor  header-length  header  data
//
// with a 2-byte little-endian header length in version 1.0 and a 4-byte
// one in 2.0 and 3.0 (3.0 only allows UTF-8 in the header, which changes
// nothing here). The header's dict is parsed by npy_header.cpp.
//
// The writer produces exactly the bytes np.save writes (checked against
// NumPy 1.26): keys sorted, shape as Python's repr of a tuple, 21 - len of
// the first extent's digits spaces of room for growth (NumPy >= 1.23 leaves
// them so that the header can be rewritten in place), then padding to a
// multiple of 64 bytes with spaces and '\n'. Version 2.0 is used only if
// the header does not fit in a 1.0 header length field.
//
//===----------------------------------------------------------------------===//

#include "coconet/npy.h"

#include "coconet/files.h"
#include "coconet/numeric.h"

#include "npy_header.h"

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>

namespace coconet::rt {

namespace {

constexpr std::string_view kMagic("\x93NUMPY", 6);
/// Magic string and version bytes.
constexpr size_t kPrefixSize = 8;
constexpr size_t kAlign = 64;
/// NumPy reserves room for this many digits of the growing axis.
constexpr size_t kGrowthAxisMaxDigits = 21;

/// An unsigned little-endian integer of `n` bytes.
uint64_t readLE(const uint8_t *p, unsigned n) {
  uint64_t v = 0;
  for (unsigned i = n; i-- > 0;)
    v = (v << 8) | p[i];
  return v;
}

Status invalid(const std::string &message) {
  return Status::error(StatusCode::InvalidArgument, message);
}

std::optional<NpyType> typeFromDescr(const std::string &descr) {
  for (NpyType t : {NpyType::F16, NpyType::F32, NpyType::F64, NpyType::I32,
                    NpyType::I64, NpyType::U64, NpyType::Bool})
    if (descr == npyDescr(t))
      return t;
  return std::nullopt;
}

/// Python's repr of the shape tuple: "()", "(5,)", "(2, 3)".
std::string shapeRepr(const std::vector<int64_t> &shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

/// The number of elements of `shape`, or -1 when it overflows int64.
int64_t checkedCount(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t extent : shape) {
    if (extent < 0)
      return -1;
    if (extent == 0)
      return 0;
  }
  for (int64_t extent : shape)
    if (__builtin_mul_overflow(n, extent, &n))
      return -1;
  return n;
}

} // namespace

const char *npyDescr(NpyType type) {
  switch (type) {
  case NpyType::F16:
    return "<f2";
  case NpyType::F32:
    return "<f4";
  case NpyType::F64:
    return "<f8";
  case NpyType::I32:
    return "<i4";
  case NpyType::I64:
    return "<i8";
  case NpyType::U64:
    return "<u8";
  case NpyType::Bool:
    return "|b1";
  }
  return "";
}

unsigned npyElementSize(NpyType type) {
  switch (type) {
  case NpyType::F16:
    return 2;
  case NpyType::F32:
  case NpyType::I32:
    return 4;
  case NpyType::F64:
  case NpyType::I64:
  case NpyType::U64:
    return 8;
  case NpyType::Bool:
    return 1;
  }
  return 0;
}

double npyElementAsDouble(NpyType type, const uint8_t *p) {
  switch (type) {
  case NpyType::F16:
    return halfBitsToFloat(static_cast<uint16_t>(readLE(p, 2)));
  case NpyType::F32:
    return floatFromBits(static_cast<uint32_t>(readLE(p, 4)));
  case NpyType::F64:
    return doubleFromBits(readLE(p, 8));
  case NpyType::I32:
    return static_cast<int32_t>(static_cast<uint32_t>(readLE(p, 4)));
  case NpyType::I64:
    return static_cast<double>(static_cast<int64_t>(readLE(p, 8)));
  case NpyType::U64:
    return static_cast<double>(readLE(p, 8));
  case NpyType::Bool:
    return *p != 0 ? 1.0 : 0.0;
  }
  return 0;
}

int64_t npyElementAsInt(NpyType type, const uint8_t *p) {
  switch (type) {
  case NpyType::I32:
    return static_cast<int32_t>(static_cast<uint32_t>(readLE(p, 4)));
  case NpyType::I64:
  case NpyType::U64:
    // The same 64 bits: u64 values of 2^63 and above come back negative.
    return static_cast<int64_t>(readLE(p, 8));
  case NpyType::Bool:
    return *p != 0 ? 1 : 0;
  case NpyType::F16:
  case NpyType::F32:
  case NpyType::F64:
    break;
  }
  // Not meant for floating-point arrays; give the value truncated toward
  // zero and saturated (NaN gives 0) rather than undefined behaviour.
  return floatToInt<int64_t>(npyElementAsDouble(type, p));
}

int64_t NpyArray::numElements() const {
  // A zero extent first: the others' product may overflow (parseNpy accepts
  // (2^32, 2^32, 0)).
  const int64_t n = checkedCount(shape);
  assert(n >= 0 && "the shape's element count overflows int64");
  return n;
}

double NpyArray::getAsDouble(int64_t i) const {
  const size_t size = npyElementSize(type);
  assert(i >= 0 && (static_cast<size_t>(i) + 1) * size <= data.size() &&
         "element index out of range");
  return npyElementAsDouble(type, data.data() + static_cast<size_t>(i) * size);
}

int64_t NpyArray::getAsInt(int64_t i) const {
  const size_t size = npyElementSize(type);
  assert(i >= 0 && (static_cast<size_t>(i) + 1) * size <= data.size() &&
         "element index out of range");
  return npyElementAsInt(type, data.data() + static_cast<size_t>(i) * size);
}

namespace {

/// Where the header of the .npy file whose first bytes are `bytes` ends
/// (the prefix, the length field and the header; the data starts there):
/// the magic, version and length field checked, which `bytes` must hold.
Status npyHeaderEnd(std::string_view bytes, uint64_t *headerEnd,
                    size_t *lengthSize) {
  const auto *base = reinterpret_cast<const uint8_t *>(bytes.data());
  if (bytes.substr(0, kMagic.size()) != kMagic)
    return invalid("not a .npy file");
  if (bytes.size() < kPrefixSize)
    return invalid("truncated .npy header");
  const unsigned major = base[6], minor = base[7];
  if (major == 1 && minor == 0)
    *lengthSize = 2;
  else if ((major == 2 || major == 3) && minor == 0)
    *lengthSize = 4;
  else
    return invalid("unsupported .npy version " + std::to_string(major) + "." +
                   std::to_string(minor));
  if (bytes.size() < kPrefixSize + *lengthSize)
    return invalid("truncated .npy header");
  *headerEnd = kPrefixSize + *lengthSize +
               readLE(base + kPrefixSize, static_cast<unsigned>(*lengthSize));
  return Status::success();
}

/// The header of the .npy file whose first bytes are `bytes` (at least the
/// prefix, the length field and the header): the type and shape into
/// `*out` (no data), where the data starts into `*dataStart`, and the
/// element count into `*count` (-1: more than 2^63 - 1).
Status parseNpyHeader(std::string_view bytes, NpyArray *out, size_t *dataStart,
                      int64_t *count) {
  uint64_t headerEnd = 0;
  size_t lengthSize = 0;
  COCONET_RETURN_IF_ERROR(npyHeaderEnd(bytes, &headerEnd, &lengthSize));
  const uint64_t headerLength = headerEnd - kPrefixSize - lengthSize;
  const size_t headerStart = kPrefixSize + lengthSize;
  if (headerLength > bytes.size() - headerStart)
    return invalid("truncated .npy header: it should be " +
                   std::to_string(headerLength) + " bytes long, the file has " +
                   std::to_string(bytes.size() - headerStart));

  detail::PyDict entries;
  COCONET_RETURN_IF_ERROR(detail::parseNpyHeaderDict(
      bytes.substr(headerStart, headerLength), &entries));

  using detail::PyValue;
  const PyValue *descr = nullptr, *fortranOrder = nullptr, *shape = nullptr;
  for (const auto &[key, value] : entries) {
    const PyValue **slot = key == "descr"           ? &descr
                           : key == "fortran_order" ? &fortranOrder
                           : key == "shape"         ? &shape
                                                    : nullptr;
    if (!slot)
      return invalid("unexpected key '" + key + "' in the .npy header");
    if (*slot)
      return invalid("duplicate key '" + key + "' in the .npy header");
    *slot = &value;
  }
  const std::pair<const PyValue *, const char *> required[] = {
      {descr, "descr"}, {fortranOrder, "fortran_order"}, {shape, "shape"}};
  for (const auto &[value, name] : required)
    if (!value)
      return invalid(std::string("the .npy header has no '") + name + "'");

  NpyArray array;
  if (descr->kind != PyValue::Kind::String)
    return invalid("unsupported dtype: only the simple types '<f2', '<f4', "
                   "'<f8', '<i4', '<i8', '<u8' and '|b1' are read");
  std::optional<NpyType> type = typeFromDescr(descr->str);
  if (!type)
    return invalid("unsupported dtype '" + descr->str + "'");
  array.type = *type;

  if (fortranOrder->kind != PyValue::Kind::Bool)
    return invalid("'fortran_order' is not True or False");
  if (fortranOrder->boolean)
    return invalid("fortran_order is not supported");

  if (shape->kind != PyValue::Kind::Tuple)
    return invalid("'shape' is not a tuple");
  for (const PyValue &extent : shape->items) {
    if (extent.kind != PyValue::Kind::Int || extent.integer < 0)
      return invalid("'shape' is not a tuple of non-negative integers");
    array.shape.push_back(extent.integer);
  }
  // A zero extent makes the product zero whatever the others are.
  *count = checkedCount(array.shape);
  *dataStart = headerStart + headerLength;
  *out = std::move(array);
  return Status::success();
}

/// Checks that `dataBytes` bytes of data are what the header's `count`
/// elements of `type` take.
Status checkNpyData(NpyType type, int64_t count, uint64_t dataBytes) {
  const bool tooLarge = count < 0;
  const unsigned elementSize = npyElementSize(type);
  if (tooLarge || static_cast<uint64_t>(count) > dataBytes / elementSize ||
      dataBytes != static_cast<uint64_t>(count) * elementSize) {
    std::string holds = std::to_string(dataBytes / elementSize);
    if (dataBytes % elementSize != 0)
      holds +=
          " and " + std::to_string(dataBytes % elementSize) + " stray bytes";
    const std::string says =
        tooLarge ? "more than 2^63" : std::to_string(count);
    return invalid("the header says " + says + " elements but the file holds " +
                   holds);
  }
  return Status::success();
}

} // namespace

Status parseNpy(std::string_view bytes, NpyArray *out) {
  NpyArray array;
  size_t dataStart = 0;
  int64_t count = 0;
  COCONET_RETURN_IF_ERROR(parseNpyHeader(bytes, &array, &dataStart, &count));
  COCONET_RETURN_IF_ERROR(
      checkNpyData(array.type, count, bytes.size() - dataStart));
  const auto *base = reinterpret_cast<const uint8_t *>(bytes.data());
  array.data.assign(base + dataStart, base + bytes.size());
  *out = std::move(array);
  return Status::success();
}
Status readNpyFile(const std::string &path, NpyArray *out) {
  InputFile file;
  COCONET_RETURN_IF_ERROR(
      InputFile::open(path, "", std::numeric_limits<uint64_t>::max(), &file));
  auto parseError = [&](const Status &st) {
    return Status::error(st.code(), path + ": " + st.message());
  };
  // The prefix and the length field, then the header, then the data: no
  // more is read than the header says the file holds.
  const uint64_t size = file.size();
  std::string header(static_cast<size_t>(std::min<uint64_t>(size, 12)), '\0');
  COCONET_RETURN_IF_ERROR(file.read(header.data(), header.size()));
  uint64_t headerEnd = 0;
  size_t lengthSize = 0;
  if (Status st = npyHeaderEnd(header, &headerEnd, &lengthSize); !st.ok())
    return parseError(st);
  if (headerEnd - kPrefixSize - lengthSize > kMaxNpyHeaderBytes)
    return parseError(
        invalid("the .npy header is " +
                std::to_string(headerEnd - kPrefixSize - lengthSize) +
                " bytes long; at most " + byteLimitText(kMaxNpyHeaderBytes) +
                " are read"));
  // Up to the header's end (the whole file, when it ends first: the header
  // is then truncated) and never past it: the data is read below. A header
  // shorter than what was read leaves the data's first bytes in `early`.
  std::string early;
  if (headerEnd <= header.size()) {
    early = header.substr(static_cast<size_t>(headerEnd));
    header.resize(static_cast<size_t>(headerEnd));
  } else {
    const size_t known = header.size();
    header.resize(static_cast<size_t>(std::min(headerEnd, size)));
    COCONET_RETURN_IF_ERROR(
        file.read(header.data() + known, header.size() - known));
  }
  NpyArray array;
  size_t dataStart = 0;
  int64_t count = 0;
  if (Status st = parseNpyHeader(header, &array, &dataStart, &count); !st.ok())
    return parseError(st);
  if (Status st = checkNpyData(array.type, count, size - dataStart); !st.ok())
    return parseError(st);
  const size_t dataBytes = static_cast<size_t>(size - dataStart);
  try {
    array.data.resize(dataBytes);
  } catch (const std::exception &) { // bad_alloc, length_error
    return Status::error(StatusCode::IoError,
                         "cannot read '" + path + "': its " +
                             std::to_string(dataBytes) +
                             " bytes of data do not fit in memory");
  }
  if (!early.empty())
    std::memcpy(array.data.data(), early.data(), early.size());
  COCONET_RETURN_IF_ERROR(
      file.read(array.data.data() + early.size(), dataBytes - early.size()));
  COCONET_RETURN_IF_ERROR(file.expectEnd());
  *out = std::move(array);
  return Status::success();
}

std::string serializeNpy(NpyType type, const std::vector<int64_t> &shape,
                         const void *data, size_t bytes) {
  assert(checkedCount(shape) >= 0 &&
         static_cast<uint64_t>(checkedCount(shape)) * npyElementSize(type) ==
             bytes &&
         "data size does not match the shape");
  std::string dict = std::string("{'descr': '") + npyDescr(type) +
                     "', 'fortran_order': False, 'shape': " + shapeRepr(shape) +
                     ", }";
  if (!shape.empty()) {
    const size_t digits = std::to_string(shape.front()).size();
    if (digits < kGrowthAxisMaxDigits)
      dict.append(kGrowthAxisMaxDigits - digits, ' ');
  }
  // Version 1.0 has a 2-byte header length; 2.0 a 4-byte one. The padding
  // is always 1 to 64 spaces (never 0), as NumPy computes it.
  auto paddedLength = [&](size_t lengthSize) {
    const size_t unpadded = kPrefixSize + lengthSize + dict.size() + 1;
    return dict.size() + 1 + (kAlign - unpadded % kAlign);
  };
  size_t lengthSize = 2;
  if (paddedLength(2) > 0xffff)
    lengthSize = 4;
  const size_t headerLength = paddedLength(lengthSize);

  std::string out(kMagic);
  out += static_cast<char>(lengthSize == 2 ? 1 : 2);
  out += '\0';
  for (size_t i = 0; i < lengthSize; ++i)
    out += static_cast<char>((headerLength >> (8 * i)) & 0xff);
  out += dict;
  out.append(headerLength - dict.size() - 1, ' ');
  out += '\n';
  out.append(static_cast<const char *>(data), bytes);
  return out;
}

std::string serializeNpy(const NpyArray &array) {
  return serializeNpy(array.type, array.shape, array.data.data(),
                      array.data.size());
}

Status writeNpyFile(const std::string &path, NpyType type,
                    const std::vector<int64_t> &shape, const void *data,
                    size_t bytes) {
  const int64_t count = checkedCount(shape);
  if (count < 0 || static_cast<uint64_t>(count) * npyElementSize(type) != bytes)
    return invalid("cannot write '" + path + "': " + std::to_string(bytes) +
                   " bytes of data do not match the shape " + shapeRepr(shape));
  const std::string contents = serializeNpy(type, shape, data, bytes);
  auto cannotWrite = [&](int err) {
    return Status::error(StatusCode::IoError,
                         "cannot write '" + path + "': " + std::strerror(err));
  };
  std::FILE *file = std::fopen(path.c_str(), "wb");
  if (!file)
    return cannotWrite(errno);
  const size_t written = std::fwrite(contents.data(), 1, contents.size(), file);
  int err = errno;
  const bool failed = written != contents.size() || std::fflush(file) != 0;
  if (failed)
    err = errno;
  if (std::fclose(file) != 0 && !failed)
    return cannotWrite(errno);
  if (failed)
    return cannotWrite(err);
  return Status::success();
}

Status writeNpyFile(const std::string &path, const NpyArray &array) {
  return writeNpyFile(path, array.type, array.shape, array.data.data(),
                      array.data.size());
}

} // namespace coconet::rt
