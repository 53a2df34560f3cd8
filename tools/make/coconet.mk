# GNU make rules for applications that use coconetc-generated code (the
# counterpart of tools/cmake/Coconet.cmake; test/make-rule/ is an example).
#
#   COCONET_SCHEDULES := rs_c_ag fused_rs_c_ag    # schedules the rules know
#   include /path/to/coconetc/tools/make/coconet.mk  # sources + build tree
#   include PREFIX/share/coconet/make/coconet.mk     # or an installed coconet
#
# Pattern rules (G is $(COCONET_GEN_DIR), default coconet-gen):
#   G/cpu/P.h G/cpu/P.cpp G/cpu/P_main.cpp      from P.coco, program P (CPU)
#   G/cpu/P_S.h G/cpu/P_S.cpp G/cpu/P_S_main.cpp   ... under schedule S, for
#                                               each S of COCONET_SCHEDULES
#   G/cuda/... .cu                              the same for the CUDA target
#   G/cpu/%.o from G/cpu/%.cpp (mpicxx), G/cuda/%.o from G/cuda/%.cu (nvcc)
# coconetc writes the driver (P_main) beside the code (--emit=driver): link
# G/cpu/P.o into an application, or G/cpu/P.o and G/cpu/P_main.o into the
# program that runs one step (docs/codegen.md, "Drivers"). P.coco is found
# through make's vpath (`vpath %.coco samples`); a program in a file of
# another name: COCONET_SOURCE_P := file.coco. The rules run again when the
# source or coconetc changes.
#
# For the application's own code and link:
#   COCONET_CPU_CXX, COCONET_CPU_CXXFLAGS   mpicxx, C++17, OpenMP, the flags
#                                           generated code is tested with
#                                           (tools/cpu-flags.txt), -I for
#                                           the runtime and G/cpu
#   COCONET_CPU_LIBS                        the CPU runtime libraries
#   COCONET_NVCC, COCONET_CUDA_FLAGS,       nvcc for sm_$(COCONET_CUDA_ARCH)
#   COCONET_CUDA_LIBS                       (default 90), NCCL, cuBLAS
# Settable before the include: COCONET_GEN_DIR, COCONET_SCHEDULES,
# COCONET_FLAGS (more coconetc options, e.g. -I DIR), COCONET_BUILD_DIR (a
# build tree; default the sources' build/), COCONETC, COCONET_CUDA_ARCH,
# CUDA_HOME. The rules use .SECONDEXPANSION (a `$$` in a later rule's
# prerequisites is expanded twice).

coconet_mk_dir := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))

# Where coconetc, the runtime and the flags are: an installation has
# coconet-paths.mk beside this file (written by cmake --install); else this
# is tools/make/ of the sources.
ifneq ($(wildcard $(coconet_mk_dir)/coconet-paths.mk),)
include $(coconet_mk_dir)/coconet-paths.mk
else
COCONET_SOURCE_DIR := $(abspath $(coconet_mk_dir)/../..)
COCONET_BUILD_DIR ?= $(COCONET_SOURCE_DIR)/build
COCONETC ?= $(COCONET_BUILD_DIR)/bin/coconetc
COCONET_INCLUDE_DIR := $(COCONET_SOURCE_DIR)/runtime/include
COCONET_LIB_DIR := $(abspath $(COCONET_BUILD_DIR))/runtime
COCONET_CPU_FLAGS_FILE := $(COCONET_SOURCE_DIR)/tools/cpu-flags.txt
endif

COCONET_GEN_DIR ?= coconet-gen
COCONET_SCHEDULES ?=
COCONET_FLAGS ?=
COCONET_CUDA_ARCH ?= 90
CUDA_HOME ?= /usr/local/cuda

COCONET_CPU_CXX ?= mpicxx
coconet_cpu_flags := $(shell cat $(COCONET_CPU_FLAGS_FILE))
COCONET_CPU_CXXFLAGS = -std=c++17 -fopenmp $(coconet_cpu_flags) \
  -I$(COCONET_INCLUDE_DIR) -I$(COCONET_GEN_DIR)/cpu
COCONET_CPU_LIBS = $(COCONET_LIB_DIR)/libcoconet_rt_mpi.a \
  $(COCONET_LIB_DIR)/libcoconet_rt_cpu.a $(COCONET_LIB_DIR)/libcoconet_rt.a -fopenmp

COCONET_NVCC ?= $(CUDA_HOME)/bin/nvcc
COCONET_CUDA_FLAGS = -std=c++17 -O2 -arch=sm_$(COCONET_CUDA_ARCH) \
  -I$(COCONET_INCLUDE_DIR) -I$(COCONET_GEN_DIR)/cuda
COCONET_CUDA_LIBS = $(COCONET_LIB_DIR)/libcoconet_rt_cuda.a \
  $(COCONET_LIB_DIR)/libcoconet_rt.a -L$(CUDA_HOME)/lib64 -lnccl -lcublas -lcudart

# The source of program $1: COCONET_SOURCE_$1, else $1.coco.
coconet_source = $(or $(COCONET_SOURCE_$1),$1.coco)

.SECONDEXPANSION:

# coconet_gen_rule TARGET EXT SUFFIX SCHEDULE-OPTION: the pattern rule that
# generates G/TARGET/%SUFFIX.{h,EXT} and %SUFFIX_main.EXT from program %.
define coconet_gen_rule
$(COCONET_GEN_DIR)/$1/%$3.h $(COCONET_GEN_DIR)/$1/%$3.$2 $(COCONET_GEN_DIR)/$1/%$3_main.$2: \
    $$$$(call coconet_source,$$$$*) $$(COCONETC)
	$$(COCONETC) --emit=driver --target=$1 --program $$* $4 $$(COCONET_FLAGS) \
	  -o $(COCONET_GEN_DIR)/$1 $$<
# Generated files stay after the build (make deletes intermediate files).
.PRECIOUS: $(COCONET_GEN_DIR)/$1/%$3.h $(COCONET_GEN_DIR)/$1/%$3.$2 \
  $(COCONET_GEN_DIR)/$1/%$3_main.$2
endef
$(foreach s,$(COCONET_SCHEDULES),\
  $(eval $(call coconet_gen_rule,cpu,cpp,_$s,--schedule $s))\
  $(eval $(call coconet_gen_rule,cuda,cu,_$s,--schedule $s)))
$(eval $(call coconet_gen_rule,cpu,cpp,,))
$(eval $(call coconet_gen_rule,cuda,cu,,))

$(COCONET_GEN_DIR)/cpu/%.o: $(COCONET_GEN_DIR)/cpu/%.cpp
	$(COCONET_CPU_CXX) $(COCONET_CPU_CXXFLAGS) -c -o $@ $<
$(COCONET_GEN_DIR)/cuda/%.o: $(COCONET_GEN_DIR)/cuda/%.cu
	$(COCONET_NVCC) $(COCONET_CUDA_FLAGS) -c -o $@ $<
