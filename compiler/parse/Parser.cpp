//===- Parser.cpp - parse a .coco buffer into an AST ----------------------===//
//
// Runs the ANTLR-generated lexer and parser over one SourceMgr buffer and
// turns their errors into located, clang-like diagnostics. The steps:
//
//   1. decode the buffer (any bytes; invalid UTF-8 becomes U+FFFD);
//   2. lex it token by token, each token seen by TokenScan, up to the first
//      lexical problem (bad character, unterminated block comment) or
//      expression nested too deeply, which is reported without parsing at
//      all (TokenScan.h);
//   3. parse with an error strategy that formats the first syntax error from
//      the parser's own state (rule, expected tokens) and stops;
//   4. report the earliest problem found; with none, build the AST.
//
// The console listeners of ANTLR are replaced by one that rewrites ANTLR's
// own message texts into the same style, for errors that do not go through
// the strategy (the lexer's, in particular). No exception leaves this file.
//
//===----------------------------------------------------------------------===//

#include "parse/Parser.h"

#include "parse/AstBuilder.h"
#include "parse/TokenScan.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

// ANTLR's runtime headers trip -Wattributes with GCC.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wattributes"
#include "CoCoNetLexer.h"
#include "CoCoNetParser.h"
#include "antlr4-runtime.h"
#pragma GCC diagnostic pop

#include <cctype>
#include <exception>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace coconet::parse {

namespace {

using P = coconet_antlr::CoCoNetParser;

/// An ANTLR character stream over code points decoded by SourceMap.
class CodePointStream : public antlr4::ANTLRInputStream {
public:
  CodePointStream(std::u32string codePoints, std::string sourceName) {
    _data = std::move(codePoints);
    p = 0;
    name = std::move(sourceName);
  }
};

/// One syntax problem. `order` is the byte offset of the token it is about;
/// the one with the smallest order is reported.
struct Problem {
  size_t order;
  llvm::SMRange range;
  std::string message;
};

/// Keeps the earliest problem offered; on a tie the one offered first.
class ProblemSink {
public:
  void offer(Problem problem) {
    if (!best || problem.order < best->order)
      best = std::move(problem);
  }
  const std::optional<Problem> &get() const { return best; }

private:
  std::optional<Problem> best;
};

//===----------------------------------------------------------------------===//
// Describing tokens and sets of tokens
//===----------------------------------------------------------------------===//

/// `'text'`, shortened when long; "end of file" for the end.
std::string describeToken(const SourceMap &map, const antlr4::Token *token) {
  if (!token || token->getType() == antlr4::Token::EOF)
    return "end of file";
  llvm::StringRef text = map.textOf(*token);
  std::string shown;
  if (text.size() > 32)
    shown = text.take_front(29).str() + "...";
  else
    shown = text.str();
  return "'" + shown + "'";
}

/// "a", "a or b", "a, b or c".
std::string joinAlternatives(llvm::ArrayRef<std::string> items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i != 0)
      out += i + 1 == items.size() ? " or " : ", ";
    out += items[i];
  }
  return out;
}

bool containsAll(const antlr4::misc::IntervalSet &set,
                 std::initializer_list<size_t> types) {
  return llvm::all_of(types, [&](size_t t) { return set.contains(t); });
}

/// What may come at a point, in words: expected token types with groups
/// named after the rule the parser is in. Nullopt when more than four
/// things would be listed (or nothing is known).
std::optional<std::string>
describeExpected(const antlr4::misc::IntervalSet &expected, size_t rule,
                 const antlr4::dfa::Vocabulary &vocabulary) {
  antlr4::misc::IntervalSet set = expected;
  std::vector<std::string> items;
  auto group = [&](std::initializer_list<size_t> types, const char *name) {
    if (!containsAll(set, types))
      return;
    items.push_back(name);
    for (size_t t : types)
      set.remove(t);
  };
  group({P::IDENT, P::INT, P::FLOAT, P::TRUE, P::FALSE, P::LPAREN, P::MINUS,
         P::PLUS},
        "an expression");
  if (rule == P::RuleBlock)
    group({P::IDENT, P::RETURN, P::REQUIRE, P::LPAREN}, "a statement");
  if (rule == P::RuleScheduleDecl)
    group({P::APPLY, P::LPAREN, P::IDENT}, "a directive");
  group({P::LOCAL, P::REPLICATED, P::SLICED, P::SEGMENTED}, "a layout");

  bool hasEof = false;
  std::vector<std::string> words, symbols;
  for (ssize_t value : set.toList()) {
    if (value == -1) {
      hasEof = true;
      continue;
    }
    if (value < 0)
      continue; // Epsilon and other markers.
    size_t type = static_cast<size_t>(value);
    if (type == P::IDENT)
      words.push_back(rule == P::RuleTypeSpec ? "a type" : "an identifier");
    else if (type == P::INT)
      words.push_back("an integer");
    else if (type == P::FLOAT)
      words.push_back("a number");
    else if (type == P::STRING)
      words.push_back(rule == P::RuleStmt ? "a message in quotes"
                                          : "a file name in quotes");
    else if (type == P::BAD_CHAR)
      continue;
    else
      symbols.push_back(vocabulary.getLiteralName(type));
  }
  items.insert(items.end(), words.begin(), words.end());
  items.insert(items.end(), symbols.begin(), symbols.end());
  if (items.empty() && hasEof)
    items.push_back("end of file");
  if (items.empty() || items.size() > 4)
    return std::nullopt;
  return joinAlternatives(items);
}

/// For a missing ';' at the end of a statement, an import or a directive,
/// what the ';' ends; null otherwise. Applies when ';' could come here and
/// the only other possibilities continue a list (',' or '.') or would be
/// 'chunks' before a `current` token that is not a chunk count.
const char *semicolonEnds(const antlr4::misc::IntervalSet &expected,
                          size_t rule, const antlr4::Token *current) {
  if (!expected.contains(size_t(P::SEMI)))
    return nullptr;
  bool countFollows = current && current->getType() == P::INT;
  for (ssize_t value : expected.toList())
    if (value != P::SEMI && value != P::COMMA && value != P::DOT &&
        (value != P::CHUNKS || countFollows))
      return nullptr;
  switch (rule) {
  case P::RuleStmt:
    return "statement";
  case P::RuleImportDecl:
    return "import";
  case P::RuleDirective:
    return "directive";
  default:
    return nullptr;
  }
}

//===----------------------------------------------------------------------===//
// The error strategy: first error only, formatted from the parser's state
//===----------------------------------------------------------------------===//

class FirstErrorStrategy : public antlr4::DefaultErrorStrategy {
public:
  FirstErrorStrategy(ProblemSink &sink, const SourceMap &map)
      : sink(sink), map(map) {}

protected:
  void
  reportNoViableAlternative(antlr4::Parser *parser,
                            const antlr4::NoViableAltException &e) override {
    antlr4::Token *offending = e.getOffendingToken();
    antlr4::Token *start = e.getStartToken();
    if (offending && start &&
        offending->getTokenIndex() == start->getTokenIndex())
      wrongToken(parser, offending, expectedAt(parser));
    else
      fail(offending, "unexpected " + describeToken(map, offending));
  }

  void reportInputMismatch(antlr4::Parser *parser,
                           const antlr4::InputMismatchException &e) override {
    antlr4::misc::IntervalSet expected;
    try {
      expected = e.getExpectedTokens();
    } catch (...) {
    }
    wrongToken(parser, e.getOffendingToken(), expected);
  }

  void
  reportFailedPredicate(antlr4::Parser *,
                        const antlr4::FailedPredicateException &e) override {
    fail(e.getOffendingToken(),
         "unexpected " + describeToken(map, e.getOffendingToken()));
  }

  void reportUnwantedToken(antlr4::Parser *parser) override {
    wrongToken(parser, parser->getCurrentToken(), expectedAt(parser));
  }

  void reportMissingToken(antlr4::Parser *parser) override {
    antlr4::Token *current = parser->getCurrentToken();
    antlr4::misc::IntervalSet expected = expectedAt(parser);
    if (missingSemicolon(parser, current, expected))
      return;
    std::optional<std::string> what =
        describeExpected(expected, ruleOf(parser), parser->getVocabulary());
    if (!what)
      fail(current, "unexpected " + describeToken(map, current));
    if (!current || current->getType() == antlr4::Token::EOF)
      fail(current, "expected " + *what + " at end of file");
    fail(current,
         "expected " + *what + " before " + describeToken(map, current));
  }

private:
  static size_t ruleOf(antlr4::Parser *parser) {
    antlr4::ParserRuleContext *ctx = parser->getContext();
    return ctx ? ctx->getRuleIndex() : size_t(P::RuleFile);
  }

  static antlr4::misc::IntervalSet expectedAt(antlr4::Parser *parser) {
    try {
      return parser->getExpectedTokens();
    } catch (...) {
      return {};
    }
  }

  /// "expected ';' after statement", just past the previous token.
  bool missingSemicolon(antlr4::Parser *parser, antlr4::Token *current,
                        const antlr4::misc::IntervalSet &expected) {
    const char *what = semicolonEnds(expected, ruleOf(parser), current);
    if (!what)
      return false;
    antlr4::Token *previous = parser->getTokenStream()->LT(-1);
    llvm::SMLoc at;
    if (previous)
      at = map.rangeOf(*previous).End;
    else if (current)
      at = map.rangeOf(*current).Start;
    fail(current, std::string("expected ';' after ") + what,
         llvm::SMRange(at, at));
    return true;
  }

  /// `current` is not what the parser can take here.
  void wrongToken(antlr4::Parser *parser, antlr4::Token *current,
                  const antlr4::misc::IntervalSet &expected) {
    if (current && current->getType() == P::BAD_CHAR)
      fail(current, badCharMessage(map, map.startOffset(*current)));
    if (missingSemicolon(parser, current, expected))
      return;
    std::optional<std::string> what =
        describeExpected(expected, ruleOf(parser), parser->getVocabulary());
    if (what)
      fail(current,
           "expected " + *what + ", found " + describeToken(map, current));
    fail(current, "unexpected " + describeToken(map, current));
  }

  /// Records the error about `token` and stops the parse.
  [[noreturn]] void fail(const antlr4::Token *token, std::string message,
                         std::optional<llvm::SMRange> range = std::nullopt) {
    size_t order = token ? map.startOffset(*token) : map.text().size();
    llvm::SMRange where;
    if (range)
      where = *range;
    else if (token)
      where = map.rangeOf(*token);
    sink.offer({order, where, std::move(message)});
    throw antlr4::ParseCancellationException("syntax error");
  }

  ProblemSink &sink;
  const SourceMap &map;
};

//===----------------------------------------------------------------------===//
// The error listener: ANTLR's own messages, rewritten
//===----------------------------------------------------------------------===//

/// Turns a token as ANTLR shows it ('x' or <EOF>) into ours.
std::string antlrTokenText(llvm::StringRef shown) {
  shown = shown.trim();
  if (shown == "<EOF>" || shown == "'<EOF>'")
    return "end of file";
  return shown.str();
}

/// Turns an expected set as ANTLR shows it (`';'` or `{';', ')', IDENT}`)
/// into words; nullopt when more than four tokens are listed.
std::optional<std::string> antlrExpectedText(llvm::StringRef shown) {
  shown = shown.trim();
  if (shown.consume_front("{"))
    shown.consume_back("}");
  llvm::SmallVector<llvm::StringRef, 8> parts;
  shown.split(parts, ", ", -1, /*KeepEmpty=*/false);
  if (parts.empty() || parts.size() > 4)
    return std::nullopt;
  std::vector<std::string> items;
  for (llvm::StringRef part : parts) {
    part = part.trim();
    if (part == "IDENT")
      items.push_back("an identifier");
    else if (part == "INT")
      items.push_back("an integer");
    else if (part == "FLOAT")
      items.push_back("a number");
    else
      items.push_back(antlrTokenText(part));
  }
  return joinAlternatives(items);
}

/// Rewrites one of ANTLR's messages in our style. `offending` is how the
/// offending token is shown, when there is one.
std::string rewriteAntlrMessage(llvm::StringRef msg,
                                std::optional<std::string> offending) {
  llvm::StringRef rest = msg;
  if (rest.consume_front("token recognition error at: ")) {
    rest = rest.trim();
    if (rest.size() >= 2 && rest.front() == '\'' && rest.back() == '\'')
      rest = rest.drop_front().drop_back();
    return "invalid character '" + rest.str() + "'";
  }
  if (rest.consume_front("mismatched input ")) {
    auto [found, expected] = rest.rsplit(" expecting ");
    std::string token = antlrTokenText(found);
    if (auto what = antlrExpectedText(expected))
      return "expected " + *what + ", found " + token;
    return "unexpected " + token;
  }
  if (rest.consume_front("missing ")) {
    auto [expected, at] = rest.rsplit(" at ");
    std::string token = antlrTokenText(at);
    if (auto what = antlrExpectedText(expected))
      return "expected " + *what +
             (token == "end of file" ? " at end of file" : " before " + token);
    return "unexpected " + token;
  }
  if (rest.consume_front("extraneous input ")) {
    auto [found, expected] = rest.rsplit(" expecting ");
    return "unexpected " + antlrTokenText(found);
  }
  if (rest.consume_front("no viable alternative at input ")) {
    if (offending)
      return "unexpected " + *offending;
    rest = rest.trim();
    if (rest.size() >= 2 && rest.front() == '\'' && rest.back() == '\'')
      rest = rest.drop_front().drop_back();
    llvm::StringRef last = rest.rtrim();
    size_t space = last.find_last_of(" \t");
    if (space != llvm::StringRef::npos)
      last = last.drop_front(space + 1);
    return "unexpected " + antlrTokenText("'" + last.str() + "'");
  }
  std::string out = msg.trim().str();
  while (!out.empty() && out.back() == '.')
    out.pop_back();
  if (!out.empty())
    out[0] =
        static_cast<char>(std::tolower(static_cast<unsigned char>(out[0])));
  return out;
}

/// Reports the lexer's errors, and any parser error that does not go through
/// FirstErrorStrategy, into the sink; stops the parser at its first.
class SinkErrorListener : public antlr4::BaseErrorListener {
public:
  SinkErrorListener(ProblemSink &sink, const SourceMap &map,
                    llvm::SourceMgr &sourceMgr, unsigned bufferId)
      : sink(sink), map(map), sourceMgr(sourceMgr), bufferId(bufferId) {}

  void syntaxError(antlr4::Recognizer *recognizer,
                   antlr4::Token *offendingSymbol, size_t line,
                   size_t charPositionInLine, const std::string &msg,
                   std::exception_ptr) override {
    Problem problem;
    std::optional<std::string> shown;
    if (offendingSymbol) {
      problem.order = map.startOffset(*offendingSymbol);
      problem.range = map.rangeOf(*offendingSymbol);
      shown = describeToken(map, offendingSymbol);
    } else if (auto *lexer = dynamic_cast<antlr4::Lexer *>(recognizer)) {
      size_t index = lexer->tokenStartCharIndex;
      problem.order = map.offsetOf(index);
      llvm::SMLoc start = map.locOf(index);
      llvm::SMLoc end = map.locOf(index + 1);
      problem.range = llvm::SMRange(start, end);
    } else {
      // ANTLR's columns count code points from 0; SourceMgr's count bytes
      // from 1. They agree on the ASCII text around tokens.
      llvm::SMLoc at = sourceMgr.FindLocForLineAndColumn(
          bufferId, static_cast<unsigned>(line),
          static_cast<unsigned>(charPositionInLine + 1));
      if (!at.isValid())
        at = map.locOf(0);
      problem.order = static_cast<size_t>(at.getPointer() - map.text().data());
      problem.range = llvm::SMRange(at, at);
    }
    problem.message = rewriteAntlrMessage(msg, shown);
    sink.offer(std::move(problem));
    if (dynamic_cast<antlr4::Parser *>(recognizer))
      throw antlr4::ParseCancellationException("syntax error");
  }

private:
  ProblemSink &sink;
  const SourceMap &map;
  llvm::SourceMgr &sourceMgr;
  unsigned bufferId;
};

/// A token stream the scan fills one token at a time, so that lexing stops
/// at the first problem; the parser then reads from it as from any other.
class ScannedTokenStream : public antlr4::CommonTokenStream {
public:
  using CommonTokenStream::CommonTokenStream;
  /// Lexes one more token; null once the end of file has been lexed.
  antlr4::Token *lexOne() {
    return fetch(1) == 1 ? _tokens.back().get() : nullptr;
  }
};

std::unique_ptr<ast::Module> parseText(llvm::SourceMgr &sourceMgr,
                                       unsigned bufferId,
                                       DiagnosticEngine &diags) {
  const llvm::MemoryBuffer *buffer = sourceMgr.getMemoryBuffer(bufferId);
  std::u32string codePoints;
  SourceMap map(buffer->getBuffer(), codePoints);
  CodePointStream input(std::move(codePoints),
                        buffer->getBufferIdentifier().str());

  ProblemSink sink;
  SinkErrorListener listener(sink, map, sourceMgr, bufferId);
  coconet_antlr::CoCoNetLexer lexer(&input);
  lexer.removeErrorListeners();
  lexer.addErrorListener(&listener);
  ScannedTokenStream tokens(&lexer);

  auto report = [&]() -> std::unique_ptr<ast::Module> {
    const Problem &problem = *sink.get();
    diags.report(problem.range, DiagId::SyntaxError, problem.message);
    return nullptr;
  };

  // Each token is scanned once the one after it is lexed.
  TokenScan scan(map);
  antlr4::Token *token = tokens.lexOne();
  while (token) {
    antlr4::Token *next =
        token->getType() == antlr4::Token::EOF ? nullptr : tokens.lexOne();
    if (auto problem = scan.check(*token, next)) {
      sink.offer({problem->order, problem->range, problem->message});
      if (problem->tooDeep) // Not parsed at all.
        return report();
      break; // The parser lexes the rest, as far as it gets.
    }
    token = next;
  }

  coconet_antlr::CoCoNetParser parser(&tokens);
  parser.removeErrorListeners();
  parser.addErrorListener(&listener);
  parser.setErrorHandler(std::make_shared<FirstErrorStrategy>(sink, map));
  P::FileContext *file = nullptr;
  try {
    file = parser.file();
  } catch (const antlr4::ParseCancellationException &) {
    file = nullptr; // The problem is in the sink.
  }
  if (sink.get() || !file)
    return sink.get() ? report() : nullptr;

  AstBuilder builder(map, diags);
  return builder.build(*file, bufferId);
}

} // namespace

std::unique_ptr<ast::Module> parseBuffer(llvm::SourceMgr &sourceMgr,
                                         unsigned bufferId,
                                         DiagnosticEngine &diags) {
  std::string what;
  try {
    return parseText(sourceMgr, bufferId, diags);
  } catch (const std::exception &e) {
    what = e.what();
  } catch (...) {
    what = "unknown error";
  }
  // Not expected to happen: ANTLR failed in a way it does not report.
  const llvm::MemoryBuffer *buffer = sourceMgr.getMemoryBuffer(bufferId);
  llvm::SMLoc start = llvm::SMLoc::getFromPointer(buffer->getBufferStart());
  diags.report(llvm::SMRange(start, start), DiagId::SyntaxError,
               "cannot parse this file: " + what);
  return nullptr;
}

} // namespace coconet::parse
