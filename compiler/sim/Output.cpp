//===- Output.cpp - assembling, summarising and writing results ----------===//

#include "sim/Inputs.h"
#include "sim/Simulator.h"

#include "support/Half.h"
#include "support/Npy.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>

namespace coconet::sim {

using ir::DType;

Tensor SimResult::assembled(const ir::Program &program,
                            const ir::Stage &stage) const {
  (void)program;
  const ir::Layout &layout = stage.type.layout;
  const Placement &first = placement(stage, 0);
  const int64_t n = numRanks();
  const bool stacked = layout.isLocalAnywhere();
  llvm::SmallVector<int64_t, 4> shape;
  if (stacked)
    shape.push_back(n);
  shape.append(first.globalShape.begin(), first.globalShape.end());
  Tensor out(stage.type.dtype, shape);
  int64_t globalSize = 1;
  for (int64_t d : first.globalShape)
    globalSize *= d;

  // Copies rank q's block into entry `entry`.
  auto copyBlock = [&](int64_t entry, int64_t q) {
    const Placement &p = placement(stage, q);
    const Tensor &block = value(stage, q);
    Coords c;
    for (int64_t i = 0; i < block.size(); ++i) {
      Tensor::coordsOf(i, p.localShape, c);
      for (size_t d = 0; d < c.size(); ++d)
        c[d] += p.offset[d];
      out.setScalar(entry * globalSize + Tensor::linearIndex(c, p.globalShape),
                    block.getScalar(i));
    }
  };
  if (!stacked) {
    for (int64_t q = n; q-- > 0;)
      copyBlock(0, q);
    return out;
  }
  for (int64_t r = 0; r < n; ++r) {
    int64_t group = localGroup(layout, grid, grid.coordsOf(r));
    for (int64_t q = n; q-- > 0;)
      if (localGroup(layout, grid, grid.coordsOf(q)) == group)
        copyBlock(r, q);
    copyBlock(r, r); // rank r's own block wins where blocks overlap
  }
  return out;
}

std::string resultName(const ir::Program &program, size_t index) {
  return program.getResultName(index).str();
}

static std::string listShapeText(llvm::ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

void printSummary(const ir::Program &program, const SimResult &result,
                  llvm::raw_ostream &os) {
  for (size_t i = 0; i < program.getResults().size(); ++i) {
    const ir::Stage *r = program.getResults()[i];
    Tensor t = result.assembled(program, *r);
    os << "  " << resultName(program, i) << " : " << r->type.str(program.mesh)
       << "  shape " << listShapeText(t.shape());
    if (r->type.layout.isLocalAnywhere())
      os << " (one entry per rank)";
    os << '\n';
    double sum = 0, sq = 0, lo = INFINITY, hi = -INFINITY;
    int64_t nans = 0;
    for (int64_t i = 0; i < t.size(); ++i) {
      double v = t.get(i);
      if (std::isnan(v)) {
        ++nans;
        continue;
      }
      sum += v;
      sq += v * v;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    os << "    sum " << llvm::format("%.9g", sum) << "  min "
       << llvm::format("%.9g", lo) << "  max " << llvm::format("%.9g", hi)
       << "  l2 " << llvm::format("%.9g", std::sqrt(sq));
    if (nans)
      os << "  nan " << nans;
    os << "\n    first";
    for (int64_t i = 0; i < std::min<int64_t>(t.size(), 6); ++i)
      os << ' ' << llvm::format("%.9g", t.get(i));
    if (t.size() > 6)
      os << " ...";
    os << '\n';
  }
}

/// The .npy form of a tensor: bf16 is written as f32 (exact).
static support::NpyArray toNpy(const Tensor &t) {
  support::NpyArray a;
  a.shape.assign(t.shape().begin(), t.shape().end());
  auto put = [&](const void *bytes, size_t n) {
    const auto *b = static_cast<const uint8_t *>(bytes);
    a.data.insert(a.data.end(), b, b + n);
  };
  using support::NpyType;
  switch (t.dtype()) {
  case DType::F16:
    a.type = NpyType::F16;
    break;
  case DType::BF16:
  case DType::F32:
    a.type = NpyType::F32;
    break;
  case DType::F64:
    a.type = NpyType::F64;
    break;
  case DType::I32:
    a.type = NpyType::I32;
    break;
  case DType::I64:
    a.type = NpyType::I64;
    break;
  case DType::U64:
    a.type = NpyType::U64;
    break;
  case DType::Bool:
    a.type = NpyType::Bool;
    break;
  }
  for (int64_t i = 0; i < t.size(); ++i) {
    Scalar s = t.getScalar(i);
    switch (a.type) {
    case NpyType::F16: {
      uint16_t h = support::doubleToHalfBits(s.f);
      put(&h, 2);
      break;
    }
    case NpyType::F32: {
      float f = static_cast<float>(s.f);
      put(&f, 4);
      break;
    }
    case NpyType::F64:
      put(&s.f, 8);
      break;
    case NpyType::I32: {
      int32_t v = static_cast<int32_t>(static_cast<int64_t>(s.i));
      put(&v, 4);
      break;
    }
    case NpyType::I64:
    case NpyType::U64:
      put(&s.i, 8);
      break;
    case NpyType::Bool: {
      uint8_t v = s.i != 0;
      put(&v, 1);
      break;
    }
    }
  }
  return a;
}

llvm::Error writeResults(const ir::Program &program, const SimResult &result,
                         llvm::StringRef dir) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return llvm::createStringError(ec, "cannot create directory '" + dir +
                                           "': " + ec.message());
  for (size_t i = 0; i < program.getResults().size(); ++i) {
    const ir::Stage *r = program.getResults()[i];
    llvm::SmallString<128> path(dir);
    llvm::sys::path::append(path, resultName(program, i) + ".npy");
    if (auto err =
            support::writeNpyFile(path, toNpy(result.assembled(program, *r))))
      return err;
  }
  return llvm::Error::success();
}

} // namespace coconet::sim
