//===- AstBuilder.cpp - from ANTLR's parse tree to the AST ----------------===//
//
// Reads the contexts of the generated parser directly (no visitor: the
// contexts already name every part) and builds the ast::Module in source
// order. Declarations are shallow and built by plain recursion; expressions,
// the only deep part of the tree, are built with an explicit stack and their
// depth is checked against kMaxExprNesting. Every node gets the range from
// the start of its first token to one past the end of its last token.
//
//===----------------------------------------------------------------------===//

#include "parse/AstBuilder.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <utility>

namespace coconet::parse {

//===----------------------------------------------------------------------===//
// SourceMap
//===----------------------------------------------------------------------===//

SourceMap::SourceMap(llvm::StringRef text, std::u32string &codePoints)
    : buffer(text) {
  codePoints.clear();
  bool ascii = llvm::all_of(
      text, [](char c) { return static_cast<unsigned char>(c) < 0x80; });
  if (ascii) {
    // In place: assign() from chars would build a temporary copy first.
    codePoints.resize(text.size());
    std::copy(text.begin(), text.end(), codePoints.begin());
    numCodePoints = codePoints.size();
    return;
  }
  codePoints.reserve(text.size());
  offsets.reserve(text.size() + 1);
  for (size_t pos = 0; pos < text.size();) {
    char32_t cp = 0;
    unsigned length = decodeUtf8(text, pos, cp);
    if (length == 0) {
      cp = 0xFFFD;
      length = 1;
    }
    codePoints.push_back(cp);
    offsets.push_back(pos);
    pos += length;
  }
  offsets.push_back(text.size());
  numCodePoints = codePoints.size();
}

size_t SourceMap::offsetOf(size_t index) const {
  if (index >= numCodePoints)
    return buffer.size();
  return offsets.empty() ? index : offsets[index];
}

llvm::SMLoc SourceMap::locOf(size_t index) const {
  return llvm::SMLoc::getFromPointer(buffer.data() + offsetOf(index));
}

size_t SourceMap::startOffset(const antlr4::Token &token) const {
  if (token.getType() == antlr4::Token::EOF)
    return buffer.size();
  return offsetOf(token.getStartIndex());
}

llvm::SMRange SourceMap::rangeOf(const antlr4::Token &token) const {
  size_t start = startOffset(token);
  size_t end = start;
  size_t stop = token.getStopIndex();
  if (token.getType() != antlr4::Token::EOF && stop != INVALID_INDEX &&
      stop >= token.getStartIndex())
    end = std::max(start, offsetOf(stop + 1));
  return {llvm::SMLoc::getFromPointer(buffer.data() + start),
          llvm::SMLoc::getFromPointer(buffer.data() + end)};
}

llvm::StringRef SourceMap::textOf(const antlr4::Token &token) const {
  llvm::SMRange range = rangeOf(token);
  return llvm::StringRef(range.Start.getPointer(),
                         range.End.getPointer() - range.Start.getPointer());
}

llvm::SMRange SourceMap::rangeOf(const antlr4::Token &first,
                                 const antlr4::Token &last) const {
  llvm::SMRange a = rangeOf(first), b = rangeOf(last);
  if (b.End.getPointer() < a.Start.getPointer())
    return a;
  return {a.Start, b.End};
}

//===----------------------------------------------------------------------===//
// AstBuilder
//===----------------------------------------------------------------------===//

ast::Ident AstBuilder::ident(const antlr4::Token *token) const {
  ast::Ident id;
  if (token) {
    id.name = map.textOf(*token).str();
    id.range = map.rangeOf(*token);
  }
  return id;
}

llvm::SMRange AstBuilder::rangeOf(antlr4::ParserRuleContext &ctx) const {
  const antlr4::Token *start = ctx.getStart();
  const antlr4::Token *stop = ctx.getStop();
  if (!start)
    return {};
  if (!stop || stop->getTokenIndex() < start->getTokenIndex())
    return map.rangeOf(*start);
  return map.rangeOf(*start, *stop);
}

std::optional<uint64_t> AstBuilder::intValue(const antlr4::Token *token,
                                             uint64_t max) {
  if (!token)
    return uint64_t(0);
  llvm::StringRef digits = map.textOf(*token);
  uint64_t value = 0;
  for (char c : digits) {
    unsigned digit = static_cast<unsigned>(c - '0');
    if (digit > 9)
      continue; // The lexer only makes INT tokens of digits.
    if (value > (max - digit) / 10) {
      diags.report(map.rangeOf(*token), DiagId::IntegerTooLarge, digits);
      failed = true;
      return std::nullopt;
    }
    value = value * 10 + digit;
  }
  return value;
}

static const antlr4::Token *symbol(antlr4::tree::TerminalNode *node) {
  return node ? node->getSymbol() : nullptr;
}

constexpr uint64_t kInt64Max =
    static_cast<uint64_t>(std::numeric_limits<int64_t>::max());

std::unique_ptr<ast::Module>
AstBuilder::build(coconet_antlr::CoCoNetParser::FileContext &file,
                  unsigned bufferId) {
  auto module = std::make_unique<ast::Module>();
  module->bufferId = bufferId;
  failed = false;
  std::vector<P::TopDeclContext *> decls = file.topDecl();
  // ast::Program cannot be relocated by std::vector (its SmallVector member
  // has a throwing move, so vector would copy it, and a Program holds
  // unique_ptrs): size the vector once and move each program into place.
  size_t numPrograms = llvm::count_if(decls, [](P::TopDeclContext *decl) {
    return decl && decl->programDecl();
  });
  module->programs = std::vector<ast::Program>(numPrograms);
  size_t nextProgram = 0;
  for (P::TopDeclContext *decl : decls) {
    if (!decl)
      continue;
    if (P::ImportDeclContext *import = decl->importDecl())
      module->imports.push_back(buildImport(*import));
    else if (P::ProgramDeclContext *program = decl->programDecl())
      module->programs[nextProgram++] = buildProgram(*program);
    else if (P::ScheduleDeclContext *schedule = decl->scheduleDecl())
      module->schedules.push_back(buildSchedule(*schedule));
  }
  if (failed)
    return nullptr;
  return module;
}

ast::Import AstBuilder::buildImport(P::ImportDeclContext &ctx) {
  ast::Import import;
  import.range = rangeOf(ctx);
  if (P::QualifiedNameContext *name = ctx.qualifiedName())
    for (antlr4::tree::TerminalNode *part : name->IDENT())
      import.path.push_back(ident(symbol(part)));
  return import;
}

ast::Program AstBuilder::buildProgram(P::ProgramDeclContext &ctx) {
  ast::Program program;
  program.name = ident(ctx.name);
  program.range = rangeOf(ctx);
  if (P::ProgramParamsContext *params = ctx.programParams()) {
    if (P::MeshDeclContext *mesh = params->meshDecl()) {
      program.hasMesh = true;
      program.meshRange = rangeOf(*mesh);
      for (P::MeshAxisContext *axis : mesh->meshAxis())
        if (axis)
          program.mesh.push_back({ident(axis->name), ident(axis->size)});
    }
    for (P::ParamContext *param : params->param())
      if (param)
        program.params.push_back(buildParam(*param));
  }
  if (P::BlockContext *block = ctx.block())
    for (P::StmtContext *stmt : block->stmt())
      if (stmt)
        program.body.push_back(buildStmt(*stmt));
  return program;
}

ast::Param AstBuilder::buildParam(P::ParamContext &ctx) {
  ast::Param param;
  param.name = ident(ctx.name);
  param.range = rangeOf(ctx);
  if (P::TypeSpecContext *type = ctx.typeSpec())
    param.type = buildTypeSpec(*type);
  return param;
}

ast::TypeSpec AstBuilder::buildTypeSpec(P::TypeSpecContext &ctx) {
  ast::TypeSpec type;
  type.dtype = ident(ctx.dtype);
  type.range = rangeOf(ctx);
  type.isTensor = ctx.LBRACK() != nullptr;
  if (P::DimListContext *dims = ctx.dimList())
    for (P::DimExprContext *dim : dims->dimExpr())
      if (dim)
        type.dims.push_back(buildDim(*dim));
  for (P::LayoutTermContext *term : ctx.layoutTerm()) {
    if (!term)
      continue;
    if (auto *seg = dynamic_cast<P::SegmentedLayoutContext *>(term)) {
      if (seg->table)
        type.segmentedBy.push_back(ident(seg->table));
      continue;
    }
    type.layout.push_back(buildLayout(*term));
  }
  return type;
}

ast::DimExpr AstBuilder::buildDim(P::DimExprContext &ctx) {
  ast::DimExpr dim;
  dim.range = rangeOf(ctx);
  for (P::DimFactorContext *factorCtx : ctx.dimFactor()) {
    if (!factorCtx)
      continue;
    ast::DimFactor factor;
    factor.range = rangeOf(*factorCtx);
    if (const antlr4::Token *literal = symbol(factorCtx->INT())) {
      factor.isLiteral = true;
      factor.value =
          static_cast<int64_t>(intValue(literal, kInt64Max).value_or(0));
    } else {
      factor.name = ident(symbol(factorCtx->IDENT())).name;
    }
    dim.factors.push_back(std::move(factor));
  }
  return dim;
}

ast::LayoutTerm AstBuilder::buildLayout(P::LayoutTermContext &ctx) {
  ast::LayoutTerm term;
  term.range = rangeOf(ctx);
  P::AxisListContext *axes = nullptr;
  if (auto *local = dynamic_cast<P::LocalLayoutContext *>(&ctx)) {
    term.kind = ast::LayoutKind::Local;
    axes = local->axisList();
  } else if (auto *replicated =
                 dynamic_cast<P::ReplicatedLayoutContext *>(&ctx)) {
    term.kind = ast::LayoutKind::Replicated;
    axes = replicated->axisList();
  } else if (auto *sliced = dynamic_cast<P::SlicedLayoutContext *>(&ctx)) {
    term.kind = ast::LayoutKind::Sliced;
    if (sliced->sliceDim)
      term.sliceDim = static_cast<int64_t>(
          intValue(sliced->sliceDim, kInt64Max).value_or(0));
    axes = sliced->axisList();
  }
  if (axes)
    for (antlr4::tree::TerminalNode *axis : axes->IDENT())
      term.axes.push_back(ident(symbol(axis)));
  return term;
}

ast::Stmt AstBuilder::buildStmt(P::StmtContext &ctx) {
  ast::Stmt stmt;
  stmt.range = rangeOf(ctx);
  if (auto *assign = dynamic_cast<P::AssignStmtContext *>(&ctx)) {
    stmt.kind = ast::Stmt::Kind::Assign;
    stmt.name = ident(assign->name);
    // A constant declares its type: `c: f32[N] = 0;`.
    if (P::TypeSpecContext *type = assign->typeSpec())
      stmt.declType = std::make_unique<ast::TypeSpec>(buildTypeSpec(*type));
    stmt.values.push_back(buildExpr(assign->expr()));
  } else if (auto *tuple = dynamic_cast<P::TupleAssignStmtContext *>(&ctx)) {
    stmt.kind = ast::Stmt::Kind::Assign;
    stmt.name = ident(tuple->names[0]);
    for (size_t i = 1; i < tuple->names.size(); ++i)
      stmt.moreNames.push_back(ident(tuple->names[i]));
    stmt.values.push_back(buildExpr(tuple->expr()));
  } else if (auto *ret = dynamic_cast<P::ReturnStmtContext *>(&ctx)) {
    stmt.kind = ast::Stmt::Kind::Return;
    for (P::ExprContext *value : ret->expr())
      stmt.values.push_back(buildExpr(value));
  } else if (auto *req = dynamic_cast<P::RequireStmtContext *>(&ctx)) {
    stmt.kind = ast::Stmt::Kind::Require;
    stmt.values.push_back(buildExpr(req->cond));
    stmt.message = ident(req->message);
    // The lexer's rule keeps both quotes.
    stmt.message.name =
        stmt.message.name.substr(1, stmt.message.name.size() - 2);
  }
  return stmt;
}

namespace {
using P = coconet_antlr::CoCoNetParser;

/// Skips the parentheses around an expression; they make no AST node.
P::ExprContext *skipParens(P::ExprContext *expr) {
  while (auto *primary = dynamic_cast<P::PrimaryExprContext *>(expr)) {
    auto *paren = dynamic_cast<P::ParenPrimaryContext *>(primary->primary());
    if (!paren)
      break;
    expr = paren->expr();
  }
  return expr;
}

/// The AST operands of `expr` in source order (the arguments of a call).
void operandsOf(P::ExprContext *expr,
                llvm::SmallVectorImpl<P::ExprContext *> &out) {
  if (auto *unary = dynamic_cast<P::UnaryExprContext *>(expr)) {
    out.push_back(unary->operand);
  } else if (auto *mul = dynamic_cast<P::MulExprContext *>(expr)) {
    out.append({mul->lhs, mul->rhs});
  } else if (auto *add = dynamic_cast<P::AddExprContext *>(expr)) {
    out.append({add->lhs, add->rhs});
  } else if (auto *cmp = dynamic_cast<P::CompareExprContext *>(expr)) {
    out.append({cmp->lhs, cmp->rhs});
  } else if (auto *primary = dynamic_cast<P::PrimaryExprContext *>(expr)) {
    if (auto *call = dynamic_cast<P::CallPrimaryContext *>(primary->primary()))
      if (P::ArgListContext *args = call->argList())
        for (P::ArgContext *arg : args->arg())
          out.push_back(arg ? arg->expr() : nullptr);
  }
}

ast::BinaryOp binaryOp(size_t tokenType) {
  switch (tokenType) {
  case P::PLUS:
    return ast::BinaryOp::Add;
  case P::MINUS:
    return ast::BinaryOp::Sub;
  case P::STAR:
    return ast::BinaryOp::Mul;
  case P::SLASH:
    return ast::BinaryOp::Div;
  case P::LT:
    return ast::BinaryOp::Lt;
  case P::LE:
    return ast::BinaryOp::Le;
  case P::GT:
    return ast::BinaryOp::Gt;
  case P::GE:
    return ast::BinaryOp::Ge;
  case P::EQ:
    return ast::BinaryOp::Eq;
  case P::NE:
    return ast::BinaryOp::Ne;
  default:
    return ast::BinaryOp::Add;
  }
}

/// The operator token of a binary expression context.
const antlr4::Token *binaryOpToken(P::ExprContext *expr) {
  if (auto *mul = dynamic_cast<P::MulExprContext *>(expr))
    return mul->op;
  if (auto *add = dynamic_cast<P::AddExprContext *>(expr))
    return add->op;
  if (auto *cmp = dynamic_cast<P::CompareExprContext *>(expr))
    return cmp->op;
  return nullptr;
}
} // namespace

ast::ExprPtr AstBuilder::buildLeaf(P::PrimaryContext *primary,
                                   llvm::SMRange range) {
  auto expr = std::make_unique<ast::Expr>();
  expr->range = range;
  if (auto *call = dynamic_cast<P::CallPrimaryContext *>(primary)) {
    expr->kind = ast::Expr::Kind::Call;
    ast::Ident callee = ident(call->callee);
    expr->text = std::move(callee.name);
    expr->calleeRange = callee.range;
    if (P::ArgListContext *args = call->argList())
      for (P::ArgContext *arg : args->arg())
        expr->argKeys.push_back(arg ? ident(arg->key) : ast::Ident());
  } else if (auto *name = dynamic_cast<P::NamePrimaryContext *>(primary)) {
    expr->kind = ast::Expr::Kind::Name;
    expr->text = ident(symbol(name->IDENT())).name;
  } else if (auto *real = dynamic_cast<P::FloatPrimaryContext *>(primary)) {
    expr->kind = ast::Expr::Kind::FloatLit;
    if (const antlr4::Token *token = symbol(real->FLOAT())) {
      expr->text = map.textOf(*token).str();
      expr->floatValue = std::strtod(expr->text.c_str(), nullptr);
    }
  } else if (auto *integer = dynamic_cast<P::IntPrimaryContext *>(primary)) {
    expr->kind = ast::Expr::Kind::IntLit;
    if (const antlr4::Token *token = symbol(integer->INT())) {
      expr->text = map.textOf(*token).str();
      expr->intValue =
          intValue(token, std::numeric_limits<uint64_t>::max()).value_or(0);
    }
  } else if (auto *boolean = dynamic_cast<P::BoolPrimaryContext *>(primary)) {
    expr->kind = ast::Expr::Kind::BoolLit;
    expr->boolValue = boolean->TRUE() != nullptr;
    expr->text = expr->boolValue ? "true" : "false";
  } else {
    // Only reachable for a tree with errors, which is never built.
    expr->kind = ast::Expr::Kind::IntLit;
    expr->text = "0";
  }
  return expr;
}

ast::ExprPtr AstBuilder::buildExpr(P::ExprContext *root) {
  // A post-order walk: a frame is visited once to push its operands and once
  // more, after they are built, to build the node from the results.
  struct Frame {
    P::ExprContext *ctx;
    unsigned numOperands;
    bool expanded;
  };
  struct Built {
    ast::ExprPtr expr;
    unsigned depth;
  };
  llvm::SmallVector<Frame, 32> work;
  llvm::SmallVector<Built, 32> done;
  llvm::SmallVector<P::ExprContext *, 4> operands;
  bool reported = false;

  work.push_back({skipParens(root), 0, false});
  while (!work.empty()) {
    if (!work.back().expanded) {
      work.back().expanded = true;
      operands.clear();
      operandsOf(work.back().ctx, operands);
      work.back().numOperands = operands.size();
      for (P::ExprContext *operand : llvm::reverse(operands))
        work.push_back({skipParens(operand), 0, false});
      continue;
    }
    Frame frame = work.pop_back_val();
    size_t first = done.size() - frame.numOperands;
    unsigned depth = 0;
    for (size_t i = first; i < done.size(); ++i)
      depth = std::max(depth, done[i].depth);
    ++depth;

    ast::ExprPtr expr;
    llvm::SMRange range = frame.ctx ? rangeOf(*frame.ctx) : llvm::SMRange();
    if (auto *unary = dynamic_cast<P::UnaryExprContext *>(frame.ctx)) {
      expr = std::make_unique<ast::Expr>();
      expr->kind = ast::Expr::Kind::Unary;
      expr->unaryOp = unary->op && unary->op->getType() == P::PLUS
                          ? ast::UnaryOp::Plus
                          : ast::UnaryOp::Neg;
    } else if (const antlr4::Token *op = binaryOpToken(frame.ctx)) {
      expr = std::make_unique<ast::Expr>();
      expr->kind = ast::Expr::Kind::Binary;
      expr->binaryOp = binaryOp(op->getType());
    } else {
      auto *primary = dynamic_cast<P::PrimaryExprContext *>(frame.ctx);
      expr = buildLeaf(primary ? primary->primary() : nullptr, range);
    }
    expr->range = range;
    for (size_t i = first; i < done.size(); ++i)
      expr->operands.push_back(std::move(done[i].expr));
    done.truncate(first);

    if (depth > kMaxExprNesting) {
      // Collapse the subtree so that nothing deeper than the limit is ever
      // built (or destroyed recursively); the module is dropped anyway.
      if (!reported)
        diags.report(llvm::SMRange(range.Start, range.Start),
                     DiagId::SyntaxError, "expression nested too deeply");
      reported = true;
      failed = true;
      auto leaf = std::make_unique<ast::Expr>();
      leaf->range = range;
      expr = std::move(leaf);
      depth = 1;
    }
    done.push_back({std::move(expr), depth});
  }
  if (done.empty())
    return std::make_unique<ast::Expr>();
  return std::move(done.back().expr);
}

ast::Schedule AstBuilder::buildSchedule(P::ScheduleDeclContext &ctx) {
  ast::Schedule schedule;
  schedule.name = ident(ctx.name);
  schedule.program = ident(ctx.program);
  schedule.range = rangeOf(ctx);
  for (P::DirectiveContext *directive : ctx.directive())
    if (directive)
      schedule.directives.push_back(buildDirective(*directive));
  return schedule;
}

ast::Directive AstBuilder::buildDirective(P::DirectiveContext &ctx) {
  ast::Directive directive;
  directive.range = rangeOf(ctx);
  P::NameListContext *names = nullptr;
  if (auto *apply = dynamic_cast<P::ApplyDirectiveContext *>(&ctx)) {
    directive.kind = ast::Directive::Kind::Apply;
    directive.transform = ident(apply->name);
  } else if (auto *bind = dynamic_cast<P::BindDirectiveContext *>(&ctx)) {
    directive.kind = ast::Directive::Kind::Transform;
    for (const antlr4::Token *result : bind->results)
      directive.results.push_back(ident(result));
    directive.transform = ident(bind->transform);
    names = bind->nameList();
  } else if (auto *transform =
                 dynamic_cast<P::TransformDirectiveContext *>(&ctx)) {
    directive.kind = ast::Directive::Kind::Transform;
    directive.transform = ident(transform->transform);
    names = transform->nameList();
    if (transform->chunks) {
      directive.chunks = static_cast<int64_t>(
          intValue(transform->chunks, kInt64Max).value_or(0));
      const antlr4::Token *keyword = symbol(transform->CHUNKS());
      directive.chunksRange = keyword
                                  ? map.rangeOf(*keyword, *transform->chunks)
                                  : map.rangeOf(*transform->chunks);
    }
  }
  if (names) {
    for (P::NameArgContext *arg : names->nameArg()) {
      if (!arg)
        continue;
      if (antlr4::tree::TerminalNode *name = arg->IDENT()) {
        if (directive.file) {
          diags.report(directive.file->range, DiagId::FileNotLast);
          failed = true;
        }
        directive.args.push_back(ident(symbol(name)));
      } else if (antlr4::tree::TerminalNode *path = arg->STRING()) {
        ast::Ident file = ident(symbol(path));
        // The lexer's rule keeps both quotes.
        file.name = file.name.substr(1, file.name.size() - 2);
        if (directive.file) {
          diags.report(file.range, DiagId::FileNotLast);
          failed = true;
        }
        directive.file = std::move(file);
      }
    }
  }
  return directive;
}

} // namespace coconet::parse
