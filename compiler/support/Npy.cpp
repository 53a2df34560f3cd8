//===- Npy.cpp - reading and writing NumPy .npy files ---------------------===//
//
// A .npy file is
//
//   "\x93NUMPY" major minor  header-length  header  data
//
// with a 2-byte little-endian header length in version 1.0 and a 4-byte
// one in 2.0 and 3.0 (3.0 only allows UTF-8 in the header, which changes
// nothing here). The header is a Python dict literal, e.g.
//
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
//
// padded with spaces and ended by '\n'. The reader parses the small subset
// of Python literal syntax such headers use (strings, integers, True, False,
// None, tuples and lists) with a recursive-descent parser that checks every
// bound, so that no input can crash it; keys may come in any order, with any
// whitespace and an optional trailing comma.
//
// The writer produces exactly the bytes np.save writes (checked against
// NumPy 1.26): keys sorted, shape as Python's repr of a tuple, 21 - len of
// the first extent's digits spaces of room for growth (NumPy >= 1.23 leaves
// them so that the header can be rewritten in place), then padding to a
// multiple of 64 bytes with spaces and '\n'. Version 2.0 is used only if the
// header does not fit in a 1.0 header length field.
//
//===----------------------------------------------------------------------===//

#include "support/Npy.h"

#include "support/Half.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <bit>
#include <cassert>
#include <cmath>
#include <limits>
#include <optional>
#include <utility>

namespace coconet::support {

namespace {

constexpr llvm::StringLiteral kMagic("\x93NUMPY");
/// Magic string and version bytes.
constexpr size_t kPrefixSize = 8;
constexpr size_t kAlign = 64;
/// NumPy reserves room for this many digits of the growing axis.
constexpr size_t kGrowthAxisMaxDigits = 21;
/// Nesting beyond this in a header is rejected (a real one nests twice).
constexpr int kMaxNesting = 32;

template <typename T> T readLE(const uint8_t *p) {
  return llvm::support::endian::read<T, llvm::endianness::little>(p);
}

//===----------------------------------------------------------------------===//
// The header's Python literal
//===----------------------------------------------------------------------===//

/// A parsed Python literal.
struct PyValue {
  enum class Kind { String, Int, Bool, None, Tuple, List };
  Kind kind = Kind::None;
  std::string str;
  int64_t integer = 0;
  bool boolean = false;
  std::vector<PyValue> items;
};

class HeaderParser {
public:
  explicit HeaderParser(llvm::StringRef text) : text(text) {}

  /// Parses the whole header: one dict, then only whitespace.
  llvm::Expected<std::vector<std::pair<std::string, PyValue>>> parseDict();

private:
  llvm::StringRef text;
  size_t pos = 0;

  static llvm::Error malformed(const llvm::Twine &why) {
    return llvm::createStringError("malformed .npy header: " + why);
  }
  bool atEnd() const { return pos >= text.size(); }
  char peek() const { return atEnd() ? '\0' : text[pos]; }
  void skipSpace() {
    while (!atEnd() && (text[pos] == ' ' || text[pos] == '\t' ||
                        text[pos] == '\n' || text[pos] == '\r'))
      ++pos;
  }
  /// Skips whitespace, then consumes `c` if it comes next.
  bool consume(char c) {
    skipSpace();
    if (peek() != c)
      return false;
    ++pos;
    return true;
  }

  llvm::Expected<PyValue> parseValue(int depth);
  llvm::Expected<PyValue> parseString();
  llvm::Expected<PyValue> parseInteger();
  llvm::Expected<PyValue> parseSequence(char close, int depth);
};

llvm::Expected<std::vector<std::pair<std::string, PyValue>>>
HeaderParser::parseDict() {
  std::vector<std::pair<std::string, PyValue>> entries;
  if (!consume('{'))
    return malformed("it does not start with '{'");
  while (!consume('}')) {
    skipSpace();
    if (atEnd())
      return malformed("missing '}'");
    if (peek() != '\'' && peek() != '"')
      return malformed("expected a quoted key");
    auto key = parseString();
    if (!key)
      return key.takeError();
    if (!consume(':'))
      return malformed("expected ':' after '" + key->str + "'");
    auto value = parseValue(1);
    if (!value)
      return value.takeError();
    entries.emplace_back(std::move(key->str), std::move(*value));
    // After an entry: ',' (possibly trailing) or the closing '}'.
    if (!consume(',')) {
      if (!consume('}'))
        return malformed("expected ',' or '}' after the value of '" +
                         entries.back().first + "'");
      break;
    }
  }
  skipSpace();
  if (!atEnd())
    return malformed("unexpected text after the dict");
  return entries;
}

llvm::Expected<PyValue> HeaderParser::parseValue(int depth) {
  if (depth > kMaxNesting)
    return malformed("nested too deeply");
  skipSpace();
  const char c = peek();
  if (c == '\'' || c == '"')
    return parseString();
  if (c == '(' || c == '[') {
    ++pos;
    return parseSequence(c == '(' ? ')' : ']', depth);
  }
  if (c == '-' || c == '+' || (c >= '0' && c <= '9'))
    return parseInteger();
  for (llvm::StringRef word : {"True", "False", "None"}) {
    if (text.substr(pos).starts_with(word)) {
      pos += word.size();
      PyValue v;
      v.kind = word == "None" ? PyValue::Kind::None : PyValue::Kind::Bool;
      v.boolean = word == "True";
      return v;
    }
  }
  if (atEnd())
    return malformed("it ends where a value should be");
  return malformed("unexpected character '" + std::string(1, c) + "'");
}

llvm::Expected<PyValue> HeaderParser::parseString() {
  const char quote = text[pos++];
  PyValue v;
  v.kind = PyValue::Kind::String;
  while (!atEnd() && text[pos] != quote) {
    if (text[pos] == '\\' && pos + 1 < text.size())
      ++pos; // an escaped character stands for itself
    v.str += text[pos++];
  }
  if (atEnd())
    return malformed("unterminated string");
  ++pos; // the closing quote
  return v;
}

llvm::Expected<PyValue> HeaderParser::parseInteger() {
  bool negative = false;
  if (peek() == '-' || peek() == '+')
    negative = text[pos++] == '-';
  if (!(peek() >= '0' && peek() <= '9'))
    return malformed("expected digits after a sign");
  // Accumulate as a negative number so that INT64_MIN fits.
  int64_t value = 0;
  while (peek() >= '0' && peek() <= '9') {
    const int64_t digit = text[pos++] - '0';
    if (value < (std::numeric_limits<int64_t>::min() + digit) / 10)
      return malformed("integer out of range");
    value = value * 10 - digit;
  }
  if (peek() == 'L' || peek() == 'l')
    ++pos; // Python 2 long suffix, written by old NumPy versions
  if (!negative) {
    if (value == std::numeric_limits<int64_t>::min())
      return malformed("integer out of range");
    value = -value;
  }
  PyValue v;
  v.kind = PyValue::Kind::Int;
  v.integer = value;
  return v;
}

llvm::Expected<PyValue> HeaderParser::parseSequence(char close, int depth) {
  PyValue v;
  v.kind = close == ')' ? PyValue::Kind::Tuple : PyValue::Kind::List;
  bool sawComma = false;
  while (!consume(close)) {
    auto item = parseValue(depth + 1);
    if (!item)
      return item.takeError();
    v.items.push_back(std::move(*item));
    if (consume(','))
      sawComma = true;
    else if (!consume(close))
      return malformed("expected ',' or '" + std::string(1, close) + "'");
    else
      break;
  }
  // As in Python, "(x)" is just x; a tuple of one needs the comma.
  if (close == ')' && v.items.size() == 1 && !sawComma)
    return std::move(v.items.front());
  return v;
}

//===----------------------------------------------------------------------===//
// Header fields
//===----------------------------------------------------------------------===//

std::optional<NpyType> typeFromDescr(llvm::StringRef descr) {
  for (NpyType t : {NpyType::F16, NpyType::F32, NpyType::F64, NpyType::I32,
                    NpyType::I64, NpyType::U64, NpyType::Bool})
    if (npyDescr(t) == descr)
      return t;
  return std::nullopt;
}

/// Python's repr of the shape tuple: "()", "(5,)", "(2, 3)".
std::string shapeRepr(llvm::ArrayRef<int64_t> shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

} // namespace

llvm::StringRef npyDescr(NpyType type) {
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

int64_t NpyArray::numElements() const {
  int64_t n = 1;
  for (int64_t extent : shape)
    n *= extent;
  return n;
}

double NpyArray::getAsDouble(int64_t i) const {
  const size_t size = npyElementSize(type);
  assert(i >= 0 && (static_cast<size_t>(i) + 1) * size <= data.size() &&
         "element index out of range");
  const uint8_t *p = data.data() + static_cast<size_t>(i) * size;
  switch (type) {
  case NpyType::F16:
    return halfBitsToFloat(readLE<uint16_t>(p));
  case NpyType::F32:
    return std::bit_cast<float>(readLE<uint32_t>(p));
  case NpyType::F64:
    return std::bit_cast<double>(readLE<uint64_t>(p));
  case NpyType::I32:
    return readLE<int32_t>(p);
  case NpyType::I64:
    return static_cast<double>(readLE<int64_t>(p));
  case NpyType::U64:
    return static_cast<double>(readLE<uint64_t>(p));
  case NpyType::Bool:
    return *p != 0 ? 1.0 : 0.0;
  }
  return 0;
}

int64_t NpyArray::getAsInt(int64_t i) const {
  const size_t size = npyElementSize(type);
  assert(i >= 0 && (static_cast<size_t>(i) + 1) * size <= data.size() &&
         "element index out of range");
  const uint8_t *p = data.data() + static_cast<size_t>(i) * size;
  switch (type) {
  case NpyType::I32:
    return readLE<int32_t>(p);
  case NpyType::I64:
    return readLE<int64_t>(p);
  case NpyType::U64:
    // The same 64 bits: values of 2^63 and above come back negative.
    return static_cast<int64_t>(readLE<uint64_t>(p));
  case NpyType::Bool:
    return *p != 0 ? 1 : 0;
  case NpyType::F16:
  case NpyType::F32:
  case NpyType::F64:
    break;
  }
  // Not meant for floating-point arrays; give the value truncated toward
  // zero and saturated (NaN gives 0) rather than undefined behaviour.
  const double d = getAsDouble(i);
  if (std::isnan(d))
    return 0;
  if (d >= 0x1p63)
    return std::numeric_limits<int64_t>::max();
  if (d < -0x1p63)
    return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(d);
}

llvm::Expected<NpyArray> parseNpy(llvm::StringRef bytes) {
  const auto *base = reinterpret_cast<const uint8_t *>(bytes.data());
  if (!bytes.starts_with(kMagic))
    return llvm::createStringError("not a .npy file");
  if (bytes.size() < kPrefixSize)
    return llvm::createStringError("truncated .npy header");
  const unsigned major = base[6], minor = base[7];
  size_t lengthSize;
  if (major == 1 && minor == 0)
    lengthSize = 2;
  else if ((major == 2 || major == 3) && minor == 0)
    lengthSize = 4;
  else
    return llvm::createStringError("unsupported .npy version " +
                                   llvm::Twine(major) + "." +
                                   llvm::Twine(minor));
  if (bytes.size() < kPrefixSize + lengthSize)
    return llvm::createStringError("truncated .npy header");
  const uint64_t headerLength = lengthSize == 2
                                    ? readLE<uint16_t>(base + kPrefixSize)
                                    : readLE<uint32_t>(base + kPrefixSize);
  const size_t headerStart = kPrefixSize + lengthSize;
  if (headerLength > bytes.size() - headerStart)
    return llvm::createStringError(
        "truncated .npy header: it should be " + llvm::Twine(headerLength) +
        " bytes long, the file has " + llvm::Twine(bytes.size() - headerStart));

  auto entries =
      HeaderParser(bytes.substr(headerStart, headerLength)).parseDict();
  if (!entries)
    return entries.takeError();

  const PyValue *descr = nullptr, *fortranOrder = nullptr, *shape = nullptr;
  for (const auto &[key, value] : *entries) {
    const PyValue **slot = key == "descr"           ? &descr
                           : key == "fortran_order" ? &fortranOrder
                           : key == "shape"         ? &shape
                                                    : nullptr;
    if (!slot)
      return llvm::createStringError("unexpected key '" + key +
                                     "' in the .npy header");
    if (*slot)
      return llvm::createStringError("duplicate key '" + key +
                                     "' in the .npy header");
    *slot = &value;
  }
  for (auto [value, name] :
       {std::pair(descr, "descr"), std::pair(fortranOrder, "fortran_order"),
        std::pair(shape, "shape")})
    if (!value)
      return llvm::createStringError(llvm::Twine("the .npy header has no '") +
                                     name + "'");

  NpyArray array;
  if (descr->kind != PyValue::Kind::String)
    return llvm::createStringError(
        "unsupported dtype: only the simple types '<f2', '<f4', '<f8', "
        "'<i4', '<i8', '<u8' and '|b1' are read");
  std::optional<NpyType> type = typeFromDescr(descr->str);
  if (!type)
    return llvm::createStringError("unsupported dtype '" + descr->str + "'");
  array.type = *type;

  if (fortranOrder->kind != PyValue::Kind::Bool)
    return llvm::createStringError("'fortran_order' is not True or False");
  if (fortranOrder->boolean)
    return llvm::createStringError("fortran_order is not supported");

  if (shape->kind != PyValue::Kind::Tuple)
    return llvm::createStringError("'shape' is not a tuple");
  int64_t count = 1;
  bool tooLarge = false, empty = false;
  for (const PyValue &extent : shape->items) {
    if (extent.kind != PyValue::Kind::Int || extent.integer < 0)
      return llvm::createStringError(
          "'shape' is not a tuple of non-negative integers");
    array.shape.push_back(extent.integer);
    empty |= extent.integer == 0;
    tooLarge |= llvm::MulOverflow(count, extent.integer, count);
  }
  // A zero extent makes the product zero whatever the others are.
  if (empty) {
    count = 0;
    tooLarge = false;
  }

  const size_t dataStart = headerStart + headerLength;
  const uint64_t dataBytes = bytes.size() - dataStart;
  const unsigned elementSize = npyElementSize(array.type);
  if (tooLarge || static_cast<uint64_t>(count) > dataBytes / elementSize ||
      dataBytes != static_cast<uint64_t>(count) * elementSize) {
    std::string holds = std::to_string(dataBytes / elementSize);
    if (dataBytes % elementSize != 0)
      holds +=
          " and " + std::to_string(dataBytes % elementSize) + " stray bytes";
    std::string says = tooLarge ? "more than 2^63" : std::to_string(count);
    return llvm::createStringError("the header says " + says +
                                   " elements but the file holds " + holds);
  }
  array.data.assign(base + dataStart, base + bytes.size());
  return array;
}

llvm::Expected<NpyArray> readNpyFile(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return llvm::createStringError(buffer.getError(),
                                   "cannot read '" + path +
                                       "': " + buffer.getError().message());
  auto array = parseNpy((*buffer)->getBuffer());
  if (!array)
    return llvm::createStringError(path + ": " +
                                   llvm::toString(array.takeError()));
  return array;
}

std::string serializeNpy(const NpyArray &array) {
  assert(static_cast<uint64_t>(array.numElements()) *
                 npyElementSize(array.type) ==
             array.data.size() &&
         "data size does not match the shape");
  std::string dict =
      "{'descr': '" + npyDescr(array.type).str() +
      "', 'fortran_order': False, 'shape': " + shapeRepr(array.shape) + ", }";
  if (!array.shape.empty()) {
    const size_t digits = std::to_string(array.shape.front()).size();
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
  out.append(reinterpret_cast<const char *>(array.data.data()),
             array.data.size());
  return out;
}

llvm::Error writeNpyFile(llvm::StringRef path, const NpyArray &array) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return llvm::createStringError(ec, "cannot write '" + path +
                                           "': " + ec.message());
  os << serializeNpy(array);
  os.close();
  if (os.has_error()) {
    ec = os.error();
    os.clear_error();
    return llvm::createStringError(ec, "cannot write '" + path +
                                           "': " + ec.message());
  }
  return llvm::Error::success();
}

} // namespace coconet::support
