//===- Report.cpp - what a scheduled program launches and moves -----------===//
// Placeholder until the report lands.
#include "analysis/Report.h"
#include "llvm/Support/raw_ostream.h"
namespace coconet::analysis {
void printReport(const ir::Program &program, llvm::StringRef scheduleName,
                 const ir::DimEnv &sizes, llvm::raw_ostream &os) {
  (void)sizes;
  os << "report " << program.name << ' ' << scheduleName << '\n';
}
} // namespace coconet::analysis
