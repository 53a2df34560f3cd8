//===- Json.cpp - JSON inputs with located diagnostics --------------------===//

#include "synth/Json.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdio>
#include <cstring>

namespace coconet::synth {

namespace {

/// The deepest nesting of arrays and objects a file may have (TACCL's go
/// 3 deep, an algorithm file 5): past it the file is refused before LLVM's
/// recursive parser sees it.
constexpr unsigned kMaxDepth = 64;

/// Walks JSON text that LLVM's parser has accepted.
class Scanner {
public:
  explicit Scanner(llvm::StringRef text) : text(text) {}

  size_t pos = 0;

  void space() {
    while (pos < text.size() && std::strchr(" \t\r\n", text[pos]) &&
           text[pos] != '\0')
      ++pos;
  }
  bool at(char c) const { return pos < text.size() && text[pos] == c; }

  /// At '"': the string, decoded.
  std::string string() {
    std::string out;
    ++pos;
    while (pos < text.size() && text[pos] != '"') {
      char c = text[pos++];
      if (c != '\\' || pos >= text.size()) {
        out += c;
        continue;
      }
      char e = text[pos++];
      if (e != 'u') {
        // \b \f \n \r \t, else the character itself (" \ /).
        static const char from[] = "bfnrt", to[] = "\b\f\n\r\t";
        const char *p = std::strchr(from, e);
        out += p && e ? to[p - from] : e;
        continue;
      }
      unsigned cp = hex4();
      if (cp >= 0xD800 && cp < 0xDC00 && pos + 1 < text.size() &&
          text[pos] == '\\' && text[pos + 1] == 'u') {
        pos += 2;
        unsigned low = hex4();
        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
      }
      char buf[8];
      char *p = buf;
      if (llvm::ConvertCodePointToUTF8(cp, p))
        out.append(buf, p);
    }
    ++pos; // the closing quote
    return out;
  }

  /// At an object's key: the key, and past the ':' and blanks after it.
  std::string key() {
    std::string k = string();
    space();
    ++pos; // ':'
    space();
    return k;
  }
  /// After a value: past blanks and a ',' that follows.
  void next() {
    space();
    if (at(','))
      ++pos;
  }

  /// At an object: true, at the value of its member `name` (whose key
  /// starts at offset `*keyAt`), or false where it has no such member.
  bool member(llvm::StringRef name, size_t *keyAt = nullptr) {
    if (!at('{'))
      return false;
    ++pos;
    while (true) {
      space();
      if (!at('"'))
        return false;
      size_t b = pos;
      if (key() == name) {
        if (keyAt)
          *keyAt = b;
        return true;
      }
      skip();
      next();
    }
  }

  /// Past the value starting here.
  void skip() {
    space();
    if (at('"')) {
      string();
      return;
    }
    if (at('{') || at('[')) {
      unsigned depth = 0;
      do {
        if (at('"')) {
          string();
          continue;
        }
        char c = text[pos++];
        if (c == '{' || c == '[')
          ++depth;
        else if (c == '}' || c == ']')
          --depth;
      } while (depth > 0 && pos < text.size());
      return;
    }
    while (pos < text.size() && !std::strchr(",]} \t\r\n", text[pos]))
      ++pos;
  }

  llvm::StringRef text;

private:
  unsigned hex4() {
    unsigned v = 0;
    for (int i = 0; i < 4 && pos < text.size(); ++i)
      v = v * 16 + llvm::hexDigitValue(text[pos++]);
    return v;
  }
};

/// The deepest nesting of the text, strings skipped; stops counting past
/// `limit` and gives the offset where it got there.
std::optional<size_t> tooDeep(llvm::StringRef text, unsigned limit) {
  unsigned depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
    } else if (c == '{' || c == '[') {
      if (++depth > limit)
        return i;
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    }
  }
  return std::nullopt;
}

/// Refuses a key given twice in one object (each at the second, with a
/// note at the first); `s` is at a value. Returns false on a duplicate.
bool checkKeys(Scanner &s, DiagnosticEngine &diags, const char *base) {
  s.space();
  bool ok = true;
  if (s.at('{')) {
    ++s.pos;
    llvm::StringMap<std::pair<size_t, size_t>> seen;
    while (true) {
      s.space();
      if (s.at('}')) {
        ++s.pos;
        break;
      }
      size_t keyBegin = s.pos;
      std::string key = s.string();
      size_t keyEnd = s.pos;
      auto range = [&](size_t b, size_t e) {
        return llvm::SMRange(llvm::SMLoc::getFromPointer(base + b),
                             llvm::SMLoc::getFromPointer(base + e));
      };
      auto [it, inserted] = seen.try_emplace(key, keyBegin, keyEnd);
      if (!inserted) {
        diags.report(range(keyBegin, keyEnd), DiagId::JsonDuplicateKey, key)
            .note(range(it->second.first, it->second.second),
                  DiagId::JsonPreviousKey);
        ok = false;
      }
      s.space();
      ++s.pos; // ':'
      ok &= checkKeys(s, diags, base);
      s.next();
    }
    return ok;
  }
  if (s.at('[')) {
    ++s.pos;
    while (true) {
      s.space();
      if (s.at(']')) {
        ++s.pos;
        break;
      }
      ok &= checkKeys(s, diags, base);
      s.next();
    }
    return ok;
  }
  s.skip();
  return ok;
}

} // namespace

JsonPath JsonPath::key(llvm::StringRef k) const {
  JsonPath p = *this;
  p.parts.push_back(k.str());
  return p;
}

JsonPath JsonPath::index(size_t i) const {
  JsonPath p = *this;
  p.parts.push_back(i);
  return p;
}

std::string JsonPath::pointer() const {
  std::string out;
  for (const auto &part : parts) {
    out += '/';
    if (const auto *k = std::get_if<std::string>(&part)) {
      for (char c : *k) {
        if (c == '~')
          out += "~0";
        else if (c == '/')
          out += "~1";
        else
          out += c;
      }
    } else {
      out += std::to_string(std::get<size_t>(part));
    }
  }
  return out.empty() ? "/" : out;
}

std::string JsonPath::name() const {
  if (!parts.empty())
    if (const auto *k = std::get_if<std::string>(&parts.back()))
      return *k;
  return pointer();
}

std::optional<JsonDocument>
JsonDocument::parse(std::unique_ptr<llvm::MemoryBuffer> buffer,
                    llvm::SourceMgr &sourceMgr, DiagnosticEngine &diags) {
  llvm::StringRef text = buffer->getBuffer();
  unsigned id = sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  text = sourceMgr.getMemoryBuffer(id)->getBuffer();
  auto at = [&](size_t offset) {
    offset = std::min(offset, text.size());
    llvm::SMLoc loc = llvm::SMLoc::getFromPointer(text.data() + offset);
    return llvm::SMRange(loc, loc);
  };
  if (std::optional<size_t> deep = tooDeep(text, kMaxDepth)) {
    diags.report(at(*deep), DiagId::JsonSyntax,
                 "arrays and objects nested more than " +
                     std::to_string(kMaxDepth) + " deep");
    return std::nullopt;
  }
  llvm::Expected<llvm::json::Value> value = llvm::json::parse(text);
  if (!value) {
    // LLVM's ParseError prints "[LINE:COL, byte=OFFSET]: MESSAGE".
    std::string message = llvm::toString(value.takeError());
    size_t offset = 0;
    llvm::StringRef rest(message);
    size_t b = rest.find("byte="), close = rest.find("]: ");
    if (b != llvm::StringRef::npos && close != llvm::StringRef::npos &&
        b < close) {
      rest.substr(b + 5, close - b - 5).getAsInteger(10, offset);
      message = rest.substr(close + 3).str();
    }
    diags.report(at(offset), DiagId::JsonSyntax, message);
    return std::nullopt;
  }
  Scanner s(text);
  if (!checkKeys(s, diags, text.data()))
    return std::nullopt;
  return JsonDocument(text, std::move(*value));
}

/// Finds the value at `path` in the text: [begin, end) of the deepest
/// value on the way, and whether the whole path was found.
static std::pair<std::pair<size_t, size_t>, bool> find(llvm::StringRef text,
                                                       const JsonPath &path) {
  Scanner s(text);
  s.space();
  size_t begin = s.pos;
  for (const auto &step : path.steps()) {
    bool found = false;
    size_t here = s.pos;
    if (const auto *key = std::get_if<std::string>(&step)) {
      found = s.member(*key);
    } else if (s.at('[')) {
      ++s.pos;
      size_t want = std::get<size_t>(step);
      for (size_t i = 0;; ++i) {
        s.space();
        if (s.at(']'))
          break;
        if (i == want) {
          found = true;
          break;
        }
        s.skip();
        s.next();
      }
    }
    if (!found) {
      s.pos = here;
      s.skip();
      return {{here, s.pos}, false};
    }
    begin = s.pos;
  }
  s.pos = begin;
  s.skip();
  return {{begin, s.pos}, true};
}

llvm::SMRange JsonDocument::locate(const JsonPath &path) const {
  auto [range, found] = find(source, path);
  (void)found;
  return llvm::SMRange(
      llvm::SMLoc::getFromPointer(source.data() + range.first),
      llvm::SMLoc::getFromPointer(source.data() + range.second));
}

llvm::SMRange JsonDocument::locateKey(const JsonPath &path,
                                      llvm::StringRef key) const {
  auto [range, found] = find(source, path);
  Scanner s(source);
  s.pos = range.first;
  size_t b = 0;
  if (found && s.member(key, &b)) {
    s.pos = b;
    s.string();
    return llvm::SMRange(llvm::SMLoc::getFromPointer(source.data() + b),
                         llvm::SMLoc::getFromPointer(source.data() + s.pos));
  }
  return locate(path);
}

std::string numberText(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return buf;
}

std::string describeJson(const llvm::json::Value &v) {
  switch (v.kind()) {
  case llvm::json::Value::Null:
    return "null";
  case llvm::json::Value::Boolean:
    return *v.getAsBoolean() ? "true" : "false";
  case llvm::json::Value::Number: {
    if (std::optional<int64_t> i = v.getAsInteger())
      return std::to_string(*i);
    return numberText(*v.getAsNumber());
  }
  case llvm::json::Value::String:
    return "\"" + v.getAsString()->str() + "\"";
  case llvm::json::Value::Array:
    return "an array";
  case llvm::json::Value::Object:
    return "an object";
  }
  return "a value";
}

const llvm::json::Value *JsonReader::at(const JsonPath &path) const {
  const llvm::json::Value *v = &doc.root();
  for (const auto &step : path.steps()) {
    if (const auto *key = std::get_if<std::string>(&step)) {
      const llvm::json::Object *o = v->getAsObject();
      v = o ? o->get(*key) : nullptr;
    } else {
      const llvm::json::Array *a = v->getAsArray();
      size_t i = std::get<size_t>(step);
      v = a && i < a->size() ? &(*a)[i] : nullptr;
    }
    if (!v)
      return nullptr;
  }
  return v;
}

void JsonReader::bad(const JsonPath &path, llvm::StringRef needs) {
  const llvm::json::Value *v = at(path);
  ++errors;
  diags.report(doc.locate(path), DiagId::JsonBadValue, path.name(), needs,
               v ? describeJson(*v) : std::string("nothing"));
}

bool JsonReader::has(const JsonPath &path, llvm::StringRef key) const {
  const llvm::json::Value *v = at(path);
  const llvm::json::Object *o = v ? v->getAsObject() : nullptr;
  return o && o->get(key);
}

bool JsonReader::require(const JsonPath &path, llvm::StringRef key,
                         llvm::StringRef why) {
  if (has(path, key))
    return true;
  missing(path, key, why);
  return false;
}

void JsonReader::missing(const JsonPath &path, llvm::StringRef key,
                         llvm::StringRef why) {
  ++errors;
  std::string where = path.steps().empty() ? fileWhat : "'" + path.name() + "'";
  diags.report(doc.locate(path), DiagId::JsonMissing, where, key, why);
}

InFlightDiagnostic JsonReader::invalid(const JsonPath &path,
                                       llvm::StringRef message) {
  ++errors;
  return diags.report(doc.locate(path), DiagId::SynthInvalid, message);
}

const llvm::json::Object *
JsonReader::object(const JsonPath &path,
                   llvm::ArrayRef<llvm::StringRef> allowed) {
  const llvm::json::Value *v = at(path);
  const llvm::json::Object *o = v ? v->getAsObject() : nullptr;
  if (!o) {
    bad(path, "an object");
    return nullptr;
  }
  // In the text's order, so the first unknown key is reported first.
  llvm::SmallVector<std::string, 8> keys;
  for (const auto &member : *o)
    keys.push_back(member.first.str());
  llvm::sort(keys, [&](const std::string &a, const std::string &b) {
    return doc.locateKey(path, a).Start.getPointer() <
           doc.locateKey(path, b).Start.getPointer();
  });
  bool ok = true;
  for (const std::string &k : keys) {
    if (llvm::is_contained(allowed, k))
      continue;
    std::string expected;
    for (llvm::StringRef a : allowed)
      expected += (expected.empty() ? "'" : ", '") + a.str() + "'";
    ++errors;
    diags.report(doc.locateKey(path, k), DiagId::JsonUnknownKey, k,
                 path.steps().empty() ? fileWhat : "'" + path.name() + "'",
                 expected);
    ok = false;
  }
  return ok ? o : nullptr;
}

const llvm::json::Array *JsonReader::array(const JsonPath &path,
                                           size_t maxSize) {
  const llvm::json::Value *v = at(path);
  const llvm::json::Array *a = v ? v->getAsArray() : nullptr;
  if (!a) {
    bad(path, "an array");
    return nullptr;
  }
  if (a->size() > maxSize) {
    bad(path, "at most " + std::to_string(maxSize) + " elements (it has " +
                  std::to_string(a->size()) + ")");
    return nullptr;
  }
  return a;
}

std::optional<int64_t> JsonReader::integer(const JsonPath &path, int64_t lo,
                                           int64_t hi) {
  const llvm::json::Value *v = at(path);
  std::optional<int64_t> i = v ? v->getAsInteger() : std::nullopt;
  if (!i || *i < lo || *i > hi) {
    bad(path, "a whole number from " + std::to_string(lo) + " to " +
                  std::to_string(hi));
    return std::nullopt;
  }
  return i;
}

std::optional<double> JsonReader::number(const JsonPath &path, double lo,
                                         double hi) {
  const llvm::json::Value *v = at(path);
  std::optional<double> d = v ? v->getAsNumber() : std::nullopt;
  if (!d || !std::isfinite(*d) || *d < lo || *d > hi) {
    bad(path, "a number from " + numberText(lo) + " to " + numberText(hi));
    return std::nullopt;
  }
  return d;
}

std::optional<bool> JsonReader::boolean(const JsonPath &path) {
  const llvm::json::Value *v = at(path);
  std::optional<bool> b = v ? v->getAsBoolean() : std::nullopt;
  if (!b)
    bad(path, "true or false");
  return b;
}

std::optional<std::string> JsonReader::string(const JsonPath &path,
                                              size_t maxBytes) {
  const llvm::json::Value *v = at(path);
  std::optional<llvm::StringRef> s = v ? v->getAsString() : std::nullopt;
  if (!s || s->size() > maxBytes) {
    bad(path, "a string of at most " + std::to_string(maxBytes) + " bytes");
    return std::nullopt;
  }
  return s->str();
}

std::optional<int64_t> JsonReader::integerKey(const JsonPath &path,
                                              llvm::StringRef key, int64_t lo,
                                              int64_t hi) {
  int64_t v = 0;
  if (key.empty() || key.size() > 18 || !llvm::all_of(key, llvm::isDigit) ||
      key.getAsInteger(10, v) || v < lo || v > hi) {
    ++errors;
    diags.report(doc.locateKey(path, key), DiagId::JsonBadValue, path.name(),
                 "keys that are whole numbers from " + std::to_string(lo) +
                     " to " + std::to_string(hi),
                 "\"" + key.str() + "\"");
    return std::nullopt;
  }
  return v;
}

} // namespace coconet::synth
