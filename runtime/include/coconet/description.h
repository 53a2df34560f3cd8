/*===- description.h - a generated program, described as data -*- C -*-===
 *
 * What every host of a generated program reads about it: the runtime's
 * driver (coconet/driver.h, ProgramDescription), the Python package
 * (coconet/python_abi.h, read by coconet._core) and whatever comes next.
 * `coconetc` prints one cc_description per program from its plan (the
 * same printer for every host); the hosts add their own entry points.
 *
 * Plain C (coconet._core reads it without linking the runtime) and
 * versioned: a host refuses a description whose `version` is not
 * COCONET_DESCRIPTION_VERSION.
 *
 *===----------------------------------------------------------------------===*/

#ifndef COCONET_RUNTIME_DESCRIPTION_H
#define COCONET_RUNTIME_DESCRIPTION_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever a struct below or the meaning of a field changes. */
#define COCONET_DESCRIPTION_VERSION 1

/* What a block (an argument of a step) is. */
enum {
  CC_BLOCK_TENSOR = 0, /* a tensor parameter: this rank's block, by pointer */
  CC_BLOCK_SCALAR = 1, /* a scalar parameter: by value */
  CC_BLOCK_OUTPUT = 2  /* a returned value: this rank's block, written */
};

/* How a tensor lies along one mesh axis (ir::AxisState; the driver's
 * AxisState has the same values). */
enum {
  CC_AXIS_REPLICATED = 0, /* every rank of the axis has the whole tensor */
  CC_AXIS_LOCAL = 1,      /* every rank has its own tensor of the shape */
  CC_AXIS_SLICED = 2      /* `dim` is split over the axis's ranks */
};

/* A global extent: `coefficient` times the product of the sizes
 * `sizes[0..num_sizes)` (indices into cc_description::size_names): "4*H"
 * is {4, 1, {H}}, "N" {1, 1, {N}}, "3" {3, 0, null}. */
typedef struct cc_extent {
  int64_t coefficient;
  uint32_t num_sizes;
  const uint32_t *sizes;
} cc_extent;

typedef struct cc_axis_layout {
  int32_t state; /* CC_AXIS_* */
  int32_t dim;   /* the sliced dimension; 0 otherwise */
} cc_axis_layout;

/* A parameter or an output: an argument of a step, in order. */
typedef struct cc_block {
  /* As declared ("step"); an output as the program returns it. */
  const char *name;
  uint32_t param_index;         /* a parameter's position in the declaration */
  int32_t kind;                 /* CC_BLOCK_* */
  int32_t dtype;                /* coconet::rt::DType (dtypes.def order) */
  uint32_t rank;                /* dimensions; 0 for a scalar */
  const cc_extent *shape;       /* `rank` global extents */
  const cc_axis_layout *layout; /* one per mesh axis */
  uint8_t written;   /* updated in place (a tensor) or written (an output) */
  uint8_t symmetric; /* lives in the program's symmetric memory if bound */
  int32_t table;     /* the segment table its segments are of, or -1 */
  /* Its declared type, for messages: "f32[N] sliced(0)". */
  const char *type;
} cc_block;

/* A result a step leaves: its name, as the simulator names it, and the
 * block that holds it (an update in place lives in its parameter's). */
typedef struct cc_result {
  const char *name;
  uint32_t block;
} cc_result;

/* A segment table: its count is the size `count_size`; its lengths sum to
 * `length` (the size named `length_name`). */
typedef struct cc_table {
  const char *name;
  uint32_t count_size;
  const char *length_name;
  cc_extent length;
} cc_table;

typedef struct cc_description {
  uint32_t version;     /* COCONET_DESCRIPTION_VERSION */
  const char *name;     /* the class: "adam_rs_c_ag" */
  const char *program;  /* "adam" */
  const char *schedule; /* "rs_c_ag", or "" unscheduled */
  /* Every size, in the order of the program's Sizes struct: the mesh
   * axes' sizes first, then the others. */
  uint32_t num_sizes;
  const char *const *size_names;
  /* Each mesh axis's size (an index into size_names), outer axis first. */
  uint32_t num_axes;
  const uint32_t *axis_sizes;
  /* The size the rank count gives where none is given (an implicit
   * mesh's axis), or -1. */
  int32_t world_size;
  /* The parameters in declaration order, then the outputs. */
  uint32_t num_blocks;
  uint32_t num_params;
  const cc_block *blocks;
  uint32_t num_results;
  const cc_result *results;
  uint32_t num_tables;
  const cc_table *tables;
  /* The program says how its fused collectives and overlaps run. */
  uint8_t has_path;
} cc_description;

#ifdef __cplusplus
}
#endif

#endif /* COCONET_RUNTIME_DESCRIPTION_H */
