//===- npy_header.cpp - the Python literal of a .npy header ---------------===//
//
// A recursive-descent parser over a bounded string; nesting is limited, so
// the recursion is too.
//
//===----------------------------------------------------------------------===//

#include "npy_header.h"

#include <limits>

namespace coconet::rt::detail {

namespace {

/// Nesting beyond this in a header is rejected (a real one nests twice).
constexpr int kMaxNesting = 32;

class HeaderParser {
public:
  explicit HeaderParser(std::string_view text) : text(text) {}

  Status parseDict(PyDict *out);

private:
  std::string_view text;
  size_t pos = 0;

  static Status malformed(const std::string &why) {
    return Status::error(StatusCode::InvalidArgument,
                         "malformed .npy header: " + why);
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

  Status parseValue(int depth, PyValue *out);
  Status parseString(PyValue *out);
  Status parseInteger(PyValue *out);
  Status parseSequence(char close, int depth, PyValue *out);
};

Status HeaderParser::parseDict(PyDict *out) {
  PyDict entries;
  if (!consume('{'))
    return malformed("it does not start with '{'");
  while (!consume('}')) {
    skipSpace();
    if (atEnd())
      return malformed("missing '}'");
    if (peek() != '\'' && peek() != '"')
      return malformed("expected a quoted key");
    PyValue key;
    COCONET_RETURN_IF_ERROR(parseString(&key));
    if (!consume(':'))
      return malformed("expected ':' after '" + key.str + "'");
    PyValue value;
    COCONET_RETURN_IF_ERROR(parseValue(1, &value));
    entries.emplace_back(std::move(key.str), std::move(value));
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
  *out = std::move(entries);
  return Status::success();
}

Status HeaderParser::parseValue(int depth, PyValue *out) {
  if (depth > kMaxNesting)
    return malformed("nested too deeply");
  skipSpace();
  const char c = peek();
  if (c == '\'' || c == '"')
    return parseString(out);
  if (c == '(' || c == '[') {
    ++pos;
    return parseSequence(c == '(' ? ')' : ']', depth, out);
  }
  if (c == '-' || c == '+' || (c >= '0' && c <= '9'))
    return parseInteger(out);
  for (std::string_view word : {"True", "False", "None"}) {
    if (text.substr(pos, word.size()) == word) {
      pos += word.size();
      *out = PyValue();
      out->kind = word == "None" ? PyValue::Kind::None : PyValue::Kind::Bool;
      out->boolean = word == "True";
      return Status::success();
    }
  }
  if (atEnd())
    return malformed("it ends where a value should be");
  return malformed("unexpected character '" + std::string(1, c) + "'");
}

Status HeaderParser::parseString(PyValue *out) {
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
  *out = std::move(v);
  return Status::success();
}

Status HeaderParser::parseInteger(PyValue *out) {
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
  *out = PyValue();
  out->kind = PyValue::Kind::Int;
  out->integer = value;
  return Status::success();
}

Status HeaderParser::parseSequence(char close, int depth, PyValue *out) {
  PyValue v;
  v.kind = close == ')' ? PyValue::Kind::Tuple : PyValue::Kind::List;
  bool sawComma = false;
  while (!consume(close)) {
    PyValue item;
    COCONET_RETURN_IF_ERROR(parseValue(depth + 1, &item));
    v.items.push_back(std::move(item));
    if (consume(','))
      sawComma = true;
    else if (!consume(close))
      return malformed("expected ',' or '" + std::string(1, close) + "'");
    else
      break;
  }
  // As in Python, "(x)" is just x; a tuple of one needs the comma.
  if (close == ')' && v.items.size() == 1 && !sawComma) {
    PyValue only = std::move(v.items.front());
    *out = std::move(only);
    return Status::success();
  }
  *out = std::move(v);
  return Status::success();
}

} // namespace

Status parseNpyHeaderDict(std::string_view text, PyDict *out) {
  return HeaderParser(text).parseDict(out);
}

} // namespace coconet::rt::detail
