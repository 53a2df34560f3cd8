//===- ModuleLoader.cpp - reading a file and its imports ------------------===//
//
// Resolves `import a.b;` to a/b.coco in the importing file's directory, then
// each -I directory, then the standard library, and parses each file once.
// Works through a stack, not recursion, and reports import cycles.
//
//===----------------------------------------------------------------------===//

#include "parse/Parser.h"
#include "sema/Sema.h"
#include "support/Files.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

namespace coconet::sema {

namespace {
struct Pending {
  std::string path;
  llvm::SMRange importRange; ///< The import that asked for it.
};
} // namespace

static std::optional<std::string> resolveImport(const ast::Import &import,
                                                llvm::StringRef importerDir,
                                                const SemaOptions &options,
                                                std::string &searched) {
  llvm::SmallString<128> rel;
  for (const auto &part : import.path)
    llvm::sys::path::append(rel, part.name);
  rel += ".coco";
  llvm::SmallVector<std::string, 4> dirs;
  dirs.push_back(importerDir.empty() ? "." : importerDir.str());
  for (const auto &d : options.importDirs)
    dirs.push_back(d);
  if (!options.stdlibDir.empty())
    dirs.push_back(options.stdlibDir);
  for (const auto &dir : dirs) {
    llvm::SmallString<256> candidate(dir);
    llvm::sys::path::append(candidate, rel);
    if (llvm::sys::fs::is_regular_file(candidate))
      return std::string(candidate);
    if (!searched.empty())
      searched += ", ";
    searched += dir;
  }
  return std::nullopt;
}

std::vector<std::unique_ptr<ast::Module>>
loadModules(llvm::SourceMgr &sourceMgr, DiagnosticEngine &diags,
            llvm::StringRef path, const SemaOptions &options) {
  std::vector<std::unique_ptr<ast::Module>> ordered;
  llvm::StringSet<> done, inProgress;
  bool ok = true;

  // A depth-first walk with an explicit stack: a module is emitted after all
  // of its imports (post-order).
  struct Frame {
    std::unique_ptr<ast::Module> module;
    std::string path;
    size_t nextImport = 0;
  };
  std::vector<Frame> stack;

  auto open = [&](const std::string &file,
                  llvm::SMRange from) -> std::unique_ptr<ast::Module> {
    // A regular file of at most 64 MiB (support/Files.h).
    support::ReadFile read =
        support::readUserFile(file, support::FileKind::Source);
    if (!read.buffer) {
      // The input file has no place to point at (`from` is empty): the
      // diagnostic is then `coconetc: error: ...`, as clang's.
      switch (read.problem) {
      case support::FileProblem::Missing:
        diags.report(from, DiagId::NoSuchFile, file);
        break;
      case support::FileProblem::Directory:
        diags.report(from, DiagId::IsADirectory, file);
        break;
      case support::FileProblem::NotRegular:
        diags.report(from, DiagId::NotRegularFile, file, read.reason);
        break;
      case support::FileProblem::TooLarge:
        diags.report(from, DiagId::FileTooLarge, file, read.reason);
        break;
      case support::FileProblem::None:
      case support::FileProblem::Unreadable:
        diags.report(from, DiagId::CannotOpenFile, file, read.reason);
        break;
      }
      return nullptr;
    }
    unsigned id =
        sourceMgr.AddNewSourceBuffer(std::move(read.buffer), llvm::SMLoc());
    return parse::parseBuffer(sourceMgr, id, diags);
  };

  auto root = open(path.str(), llvm::SMRange());
  if (!root)
    return {};
  llvm::SmallString<256> rootKey;
  if (llvm::sys::fs::real_path(path, rootKey))
    rootKey = path;
  inProgress.insert(rootKey);
  stack.push_back({std::move(root), std::string(rootKey), 0});
  while (!stack.empty()) {
    Frame &top = stack.back();
    if (top.nextImport == top.module->imports.size()) {
      inProgress.erase(top.path);
      done.insert(top.path);
      ordered.push_back(std::move(top.module));
      stack.pop_back();
      continue;
    }
    const ast::Import &import = top.module->imports[top.nextImport++];
    std::string searched;
    auto file = resolveImport(import, llvm::sys::path::parent_path(top.path),
                              options, searched);
    if (!file) {
      diags.report(import.range, DiagId::ImportNotFound, import.dotted(),
                   searched);
      ok = false;
      continue;
    }
    llvm::SmallString<256> real;
    if (llvm::sys::fs::real_path(*file, real))
      real = *file;
    std::string key(real);
    if (inProgress.contains(key)) {
      diags.report(import.range, DiagId::ImportCycle, import.dotted());
      ok = false;
      continue;
    }
    if (done.contains(key))
      continue;
    auto module = open(key, import.range);
    if (!module) {
      ok = false;
      continue;
    }
    inProgress.insert(key);
    stack.push_back({std::move(module), key, 0});
  }
  if (!ok)
    return {};
  return ordered;
}

std::unique_ptr<ir::Module> compileFile(llvm::SourceMgr &sourceMgr,
                                        DiagnosticEngine &diags,
                                        llvm::StringRef path,
                                        const SemaOptions &options) {
  auto modules = loadModules(sourceMgr, diags, path, options);
  if (modules.empty())
    return nullptr;
  llvm::SmallVector<const ast::Module *, 4> views;
  for (const auto &m : modules)
    views.push_back(m.get());
  return checkModules(views, diags);
}

} // namespace coconet::sema
