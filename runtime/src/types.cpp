//===- types.cpp - element types and reduction operators ------------------===//

#include "coconet/types.h"

namespace coconet::rt {

namespace {
enum class DTypeKind { Float, Integer, Bool };
} // namespace

size_t dtypeSize(DType dtype) {
  switch (dtype) {
#define DTYPE(Name, Printed, Bytes, Kind)                                      \
  case DType::Name:                                                            \
    return Bytes;
#include "coconet/dtypes.def"
  }
  return 0;
}

const char *dtypeName(DType dtype) {
  switch (dtype) {
#define DTYPE(Name, Printed, Bytes, Kind)                                      \
  case DType::Name:                                                            \
    return Printed;
#include "coconet/dtypes.def"
  }
  return "?";
}

bool isFloat(DType dtype) {
  switch (dtype) {
#define DTYPE(Name, Printed, Bytes, Kind)                                      \
  case DType::Name:                                                            \
    return DTypeKind::Kind == DTypeKind::Float;
#include "coconet/dtypes.def"
  }
  return false;
}

const char *reduceOpName(ReduceOp op) {
  switch (op) {
#define REDUCE_OP(Name, Printed)                                               \
  case ReduceOp::Name:                                                         \
    return Printed;
#include "coconet/reduce_ops.def"
  }
  return "?";
}

} // namespace coconet::rt
