//===- Json.h - JSON inputs with located diagnostics ------------*- C++ -*-===//
//
// The synthesis reads JSON files written by people and by other tools:
// TACCL's topology and sketch files, and algorithm files. They are parsed
// by LLVM's JSON parser; what LLVM's values do not keep, where each value
// is in the text, is found again by a small scanner of the same text, so
// that every complaint about a value is a located diagnostic
// (`file:line:col: error: ...` with the line and a caret), as the
// compiler's others are. A syntax error is reported at LLVM's line and
// column; a key given twice in one object is refused (JSON leaves it to
// the reader; Python keeps the last silently).
//
// JsonReader checks what a file's schema says: the kind of each value,
// integer ranges, the keys an object may have, and reports at the value.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_SYNTH_JSON_H
#define COCONET_SYNTH_JSON_H

#include "diag/Diagnostic.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SMLoc.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace coconet::synth {

/// A place in a JSON document: keys of objects and indices of arrays from
/// the root. Printed as a JSON pointer (RFC 6901), "/internode_sketch/0".
class JsonPath {
public:
  JsonPath() = default;
  JsonPath key(llvm::StringRef k) const;
  JsonPath index(size_t i) const;
  llvm::ArrayRef<std::variant<std::string, size_t>> steps() const {
    return parts;
  }
  /// The last key ("switches"), or the pointer of an index ("/switches/0").
  std::string name() const;
  std::string pointer() const;

private:
  llvm::SmallVector<std::variant<std::string, size_t>, 4> parts;
};

/// A parsed JSON file: its root value and its text, which locates values.
class JsonDocument {
public:
  /// Parses `buffer`, which joins `sourceMgr`. A syntax error or a key
  /// given twice in an object is reported and gives nullopt.
  static std::optional<JsonDocument>
  parse(std::unique_ptr<llvm::MemoryBuffer> buffer, llvm::SourceMgr &sourceMgr,
        DiagnosticEngine &diags);

  const llvm::json::Value &root() const { return *value; }
  /// The text of the value at `path`; the nearest enclosing value's where
  /// the path goes further than the text (a missing key: its object).
  llvm::SMRange locate(const JsonPath &path) const;
  /// The text of the key `key` of the object at `path` (the object's own
  /// range if it has no such key).
  llvm::SMRange locateKey(const JsonPath &path, llvm::StringRef key) const;
  llvm::StringRef text() const { return source; }

private:
  JsonDocument(llvm::StringRef source, llvm::json::Value value)
      : source(source),
        value(std::make_shared<llvm::json::Value>(std::move(value))) {}
  llvm::StringRef source;
  std::shared_ptr<llvm::json::Value> value;
};

/// Typed reads of a document's values, each failure reported at its value
/// (DiagId::JsonBadValue, JsonMissing, JsonUnknownKey).
class JsonReader {
public:
  JsonReader(const JsonDocument &doc, DiagnosticEngine &diags,
             llvm::StringRef fileWhat)
      : doc(doc), diags(diags), fileWhat(fileWhat.str()) {}

  /// The value at `path` (nullptr where the path has none).
  const llvm::json::Value *at(const JsonPath &path) const;

  /// An object at `path` whose keys are among `allowed` (others are
  /// refused, each at its key).
  const llvm::json::Object *object(const JsonPath &path,
                                   llvm::ArrayRef<llvm::StringRef> allowed);
  /// An array at `path` with at most `maxSize` elements.
  const llvm::json::Array *array(const JsonPath &path, size_t maxSize);
  /// A whole number in [lo, hi] at `path` (a JSON number with no fraction;
  /// TACCL's files write some as strings of digits where they are keys,
  /// which `integerKey` reads).
  std::optional<int64_t> integer(const JsonPath &path, int64_t lo, int64_t hi);
  /// A finite number in [lo, hi].
  std::optional<double> number(const JsonPath &path, double lo, double hi);
  std::optional<bool> boolean(const JsonPath &path);
  std::optional<std::string> string(const JsonPath &path, size_t maxBytes);
  /// A key of the object at `path`, read as a whole number in [lo, hi].
  std::optional<int64_t> integerKey(const JsonPath &path, llvm::StringRef key,
                                    int64_t lo, int64_t hi);

  /// True when the object at `path` has `key`.
  bool has(const JsonPath &path, llvm::StringRef key) const;
  /// True when it has `key`; else reports it missing (`missing`).
  bool require(const JsonPath &path, llvm::StringRef key, llvm::StringRef why);
  /// Reports that the object at `path` lacks `key`, which `why` explains.
  void missing(const JsonPath &path, llvm::StringRef key, llvm::StringRef why);
  /// Reports `message` at the value at `path` (DiagId::SynthInvalid).
  InFlightDiagnostic invalid(const JsonPath &path, llvm::StringRef message);

  bool hadError() const { return errors != 0; }
  const JsonDocument &document() const { return doc; }

private:
  void bad(const JsonPath &path, llvm::StringRef needs);

  const JsonDocument &doc;
  DiagnosticEngine &diags;
  std::string fileWhat;
  unsigned errors = 0;
};

/// A number as a message writes it: "0.3", "3600000000", "1e-09".
std::string numberText(double v);
/// A value as a short text for a message: `"abc"`, `12`, `an object`.
std::string describeJson(const llvm::json::Value &v);

} // namespace coconet::synth

#endif // COCONET_SYNTH_JSON_H
