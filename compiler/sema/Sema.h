//===- Sema.h - from source files to the typed IR ---------------*- C++ -*-===//
//
// The front end's entry points: load a .coco file and its imports, check
// names, element types, shapes and layouts, and build the typed IR. Every
// user error is a located diagnostic; checking goes on after an error where
// that gives useful further errors (a bad statement poisons only its name).
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_SEMA_SEMA_H
#define COCONET_SEMA_SEMA_H

#include "ast/Ast.h"
#include "diag/Diagnostic.h"
#include "ir/Program.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

#include <memory>
#include <string>
#include <vector>

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace coconet::sema {

struct SemaOptions {
  /// Extra directories searched for imports (-I), after the importing
  /// file's own directory and before the standard library.
  std::vector<std::string> importDirs;
  /// The standard library directory (stdlib/).
  std::string stdlibDir;
};

/// Parses `path` and, transitively, the modules it imports. Returns the
/// syntax trees with imported modules first (each file once), or an empty
/// vector after reporting errors.
std::vector<std::unique_ptr<ast::Module>>
loadModules(llvm::SourceMgr &sourceMgr, DiagnosticEngine &diags,
            llvm::StringRef path, const SemaOptions &options);

/// Checks syntax trees and builds the IR. Returns null if any error was
/// reported.
std::unique_ptr<ir::Module>
checkModules(llvm::ArrayRef<const ast::Module *> modules,
             DiagnosticEngine &diags);

/// loadModules + checkModules.
std::unique_ptr<ir::Module> compileFile(llvm::SourceMgr &sourceMgr,
                                        DiagnosticEngine &diags,
                                        llvm::StringRef path,
                                        const SemaOptions &options);

/// Checks one parsed module with no imports (for tests).
std::unique_ptr<ir::Module> checkModule(const ast::Module &module,
                                        DiagnosticEngine &diags);

/// The algorithm files a compilation's schedules name
/// (sema/AlgorithmFiles.cpp), each read and checked once.
class AlgorithmFiles {
public:
  /// The table of `file` (a string of a directive, its text without the
  /// quotes), or null after reporting why not.
  std::shared_ptr<const ir::AlgorithmTable> load(const ast::Ident &file,
                                                 DiagnosticEngine &diags);
  /// The same for a file named outside a source (`coconetc tune --algorithms`):
  /// `path` as given, errors not located in a source.
  std::shared_ptr<const ir::AlgorithmTable> loadPath(llvm::StringRef path,
                                                     DiagnosticEngine &diags);

private:
  llvm::StringMap<std::shared_ptr<const ir::AlgorithmTable>> loaded;
};

} // namespace coconet::sema

#endif // COCONET_SEMA_SEMA_H
