//===- emu/prelude.h - CUDA device code for a host compiler -----*- C++ -*-===//
//
// Force-included (g++ -include coconet/emu/prelude.h) into every CUDA
// source built for the emulation: the real CUDA headers for the types and
// the host API's declarations (the emulation library defines the API), then
// what device code needs and a host compiler lacks: the thread and block
// indices, __syncthreads, the _rn intrinsics, the launch, and the device
// side of NCCL's symmetric memory (nccl_device.h).
//
// A block runs on one OS thread, its CUDA threads as fibers of it, so
// `__shared__` is `static thread_local`: one variable per block, shared by
// its threads. (A GPU's shared memory starts uninitialised; here it holds
// what the previous block on the thread left.)
//
// A testing aid (test/emu/README.md), not a product target.
//
//===----------------------------------------------------------------------===//

#ifndef COCONET_EMU_PRELUDE_H
#define COCONET_EMU_PRELUDE_H

#if defined(__CUDACC__)
#error "coconet/emu/prelude.h is for a host compiler, not nvcc"
#endif

// Before the CUDA headers, which keep a __shared__ defined already.
#define __shared__ static thread_local

#include <cuda_runtime.h>
// The half and bfloat16 headers define their functions for a host
// compiler as `static __attribute__ ((unused))`, not inline: at -O0 GCC
// emits every one of them (about 340) into every translation unit, and a
// sanitized build instrumented them all. So `unused` closes the attribute
// list there and goes on as `inline __attribute__ ((no_sanitize_...))`:
// each function is emitted only where a program calls it, and not
// instrumented (NVIDIA's functions, not the code under test). (A sanitized
// program's compile 3.1 s -> 2.3 s with no_sanitize alone; inline, 2.4 s
// -> 1.9 s for adam_fused_rs_c_ag.cu, 335 functions emitted -> 30 for an
// empty file.)
#define unused unused)) inline __attribute__((no_sanitize_address, no_sanitize_undefined
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#undef unused

#include "coconet/emu/device.h"
#include "coconet/emu/nccl_device.h"

// A hint to nvcc's register allocator: nothing to do here.
#undef __launch_bounds__
#define __launch_bounds__(...)

#define threadIdx (::coconet::emu::currentThreadIdx())
#define blockIdx (::coconet::emu::currentBlockIdx())
#define blockDim (::coconet::emu::currentBlockDim())
#define gridDim (::coconet::emu::currentGridDim())

inline void __syncthreads() { ::coconet::emu::syncThreads(); }

// Arithmetic rounded once to nearest even, never contracted: the host's
// IEEE operations (the emulation is built with -ffp-contract=off).
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __fsqrt_rn(float a) { return std::sqrt(a); }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dsub_rn(double a, double b) { return a - b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __ddiv_rn(double a, double b) { return a / b; }
inline double __dsqrt_rn(double a) { return std::sqrt(a); }
inline float __double2float_rn(double a) { return static_cast<float>(a); }

#endif // COCONET_EMU_PRELUDE_H
