# CMake rules for applications that use coconetc-generated code.
#
# With an installed coconet (cmake --install, README.md):
#   find_package(coconet REQUIRED)          # CMAKE_PREFIX_PATH names the prefix
# or with a source and build tree (tools/build.sh):
#   set(COCONET_BUILD_DIR /path/to/coconetc/build)   # default: the sources' build/
#   include(/path/to/coconetc/tools/cmake/Coconet.cmake)
# then
#   coconet_add_program(adam_step
#     SOURCE adam.coco PROGRAM adam SCHEDULE rs_c_ag TARGET cpu)  # a static library
#   coconet_add_program(adam_main
#     SOURCE adam.coco PROGRAM adam SCHEDULE rs_c_ag TARGET cpu DRIVER)  # an executable
#   target_link_libraries(my_app PRIVATE adam_step)  # then #include "adam_rs_c_ag.h"
#
# coconet_add_program(<name> SOURCE <file.coco> [SCHEDULE <s>] [PROGRAM <p>]
#                     [TARGET cpu|cuda] [DRIVER])
# runs coconetc at build time (again whenever the source or coconetc
# changes) into ${CMAKE_CURRENT_BINARY_DIR}/<name>.generated/ and builds the
# generated code with the flags it is tested with (C++17; on the CPU those of
# tools/cpu-flags.txt: vectorised for the building machine, without
# floating-point contraction; with OpenMP and MPI), linked with the runtime
# (the imported targets coconet::rt_mpi and coconet::rt_cpu, or
# coconet::rt_cuda). The generated header's directory is a PUBLIC include
# directory of <name>. TARGET defaults to cuda (CMake's CUDA language must
# be enabled then: architecture sm_90 unless CMAKE_CUDA_ARCHITECTURES says
# otherwise). COCONETC, if set, is the coconetc to run.
#
# This file is the package's (coconetConfig.cmake includes it, installed or
# in the build tree); included directly, it loads the build tree's package.

if(NOT TARGET coconet::rt)
  get_filename_component(COCONET_SOURCE_DIR "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)
  if(NOT COCONET_BUILD_DIR)
    set(COCONET_BUILD_DIR "${COCONET_SOURCE_DIR}/build")
  endif()
  # Its coconetConfig.cmake includes this file again, with the targets.
  find_package(coconet CONFIG REQUIRED PATHS "${COCONET_BUILD_DIR}" NO_DEFAULT_PATH)
  return()
endif()
include_guard(GLOBAL)

# What both rules below take from their arguments (in the caller's scope):
# checks SOURCE and TARGET (default `default_target`) against this coconet;
# sets `source` (absolute), `select` (coconetc's --program/--schedule),
# `stem` (the name coconetc gives the files: PROGRAM or PROGRAM_SCHEDULE),
# `dir` (where they are generated) and `ext` (cpp or cu).
macro(_coconet_program_files rule name default_target)
  if(NOT ARG_SOURCE)
    message(FATAL_ERROR "${rule}(${name}): SOURCE is required")
  endif()
  if(NOT ARG_TARGET)
    set(ARG_TARGET ${default_target})
  endif()
  if(NOT ARG_TARGET MATCHES "^(cpu|cuda)$")
    message(FATAL_ERROR "${rule}(${name}): TARGET must be cpu or cuda")
  endif()
  if(ARG_TARGET STREQUAL "cpu" AND NOT TARGET coconet::rt_cpu)
    message(FATAL_ERROR "${rule}(${name}): this coconet was built "
                        "without its CPU runtime (MPI and OpenMP)")
  elseif(ARG_TARGET STREQUAL "cuda" AND NOT TARGET coconet::rt_cuda)
    message(FATAL_ERROR "${rule}(${name}): this coconet was built "
                        "without its CUDA runtime (nvcc, the CUDA toolkit and NCCL)")
  endif()
  get_filename_component(source "${ARG_SOURCE}" ABSOLUTE)
  set(select "")
  if(ARG_SCHEDULE)
    list(APPEND select --schedule ${ARG_SCHEDULE})
  endif()
  if(ARG_PROGRAM)
    list(APPEND select --program ${ARG_PROGRAM})
  endif()
  if(ARG_SCHEDULE)
    if(NOT ARG_PROGRAM)
      message(FATAL_ERROR "${rule}(${name}): give PROGRAM with SCHEDULE (the files are named PROGRAM_SCHEDULE)")
    endif()
    set(stem "${ARG_PROGRAM}_${ARG_SCHEDULE}")
  elseif(ARG_PROGRAM)
    set(stem "${ARG_PROGRAM}")
  else()
    get_filename_component(stem "${source}" NAME_WE)
  endif()
  set(dir "${CMAKE_CURRENT_BINARY_DIR}/${name}.generated")
  if(ARG_TARGET STREQUAL "cpu")
    set(ext cpp)
  else()
    set(ext cu)
  endif()
endmacro()

function(coconet_add_program name)
  cmake_parse_arguments(ARG "DRIVER" "SOURCE;SCHEDULE;PROGRAM;TARGET" "" ${ARGN})
  _coconet_program_files(coconet_add_program ${name} cuda)
  set(outputs "${dir}/${stem}.h" "${dir}/${stem}.${ext}")
  set(emit code)
  if(ARG_DRIVER)
    set(emit driver)
    list(APPEND outputs "${dir}/${stem}_main.${ext}")
  endif()
  add_custom_command(
    OUTPUT ${outputs}
    COMMAND "${COCONETC}" --emit=${emit} --target=${ARG_TARGET} ${select}
            -o "${dir}" "${source}"
    DEPENDS "${source}" "${COCONETC}"
    COMMENT "coconetc: ${ARG_SOURCE} (${stem}, ${ARG_TARGET})"
    VERBATIM)

  list(FILTER outputs EXCLUDE REGEX "\\.h$")
  if(ARG_DRIVER)
    add_executable(${name} ${outputs})
  else()
    add_library(${name} STATIC ${outputs})
  endif()
  set_target_properties(${name} PROPERTIES CXX_STANDARD 17 CUDA_STANDARD 17)
  target_include_directories(${name} PUBLIC "${dir}")
  if(ARG_TARGET STREQUAL "cpu")
    # The flags the generated code is tested with (tools/cpu-flags.txt).
    file(STRINGS "${COCONET_CPU_FLAGS_FILE}" flags LIMIT_COUNT 1)
    separate_arguments(flags UNIX_COMMAND "${flags}")
    target_compile_options(${name} PRIVATE ${flags})
    target_link_libraries(${name} PUBLIC coconet::rt_mpi coconet::rt_cpu)
  else()
    if(NOT CMAKE_CUDA_ARCHITECTURES)
      set_target_properties(${name} PROPERTIES CUDA_ARCHITECTURES 90)
    endif()
    target_link_libraries(${name} PUBLIC coconet::rt_cuda)
  endif()
endfunction()

# coconet_add_python_module(<name> SOURCE <file.coco> [SCHEDULE <s>]
#                           [PROGRAM <p>] [TARGET cpu|cuda]
#                           [OUTPUT_DIRECTORY <dir>])
# The program as a Python module (docs/python.md): coconetc --emit=python
# at build time, the program and its C entry points built into the shared
# library _<stem>.so (<stem>: PROGRAM or PROGRAM_SCHEDULE; the runtime
# linked in, nothing but the entry point exported), and <stem>.py and
# <stem>.pyi copied beside it, into OUTPUT_DIRECTORY (default:
# ${CMAKE_CURRENT_BINARY_DIR}/<name>). `import <stem>` then works with that
# directory and COCONET_PYTHON_DIR (the coconet package) on PYTHONPATH.
function(coconet_add_python_module name)
  cmake_parse_arguments(ARG "" "SOURCE;SCHEDULE;PROGRAM;TARGET;OUTPUT_DIRECTORY" "" ${ARGN})
  _coconet_program_files(coconet_add_python_module ${name} cpu)
  if(NOT ARG_OUTPUT_DIRECTORY)
    set(ARG_OUTPUT_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}/${name}")
  endif()
  add_custom_command(
    OUTPUT "${dir}/${stem}.h" "${dir}/${stem}.${ext}" "${dir}/${stem}_python.${ext}"
           "${dir}/${stem}.py" "${dir}/${stem}.pyi"
    COMMAND "${COCONETC}" --emit=python --target=${ARG_TARGET} ${select}
            -o "${dir}" "${source}"
    DEPENDS "${source}" "${COCONETC}"
    COMMENT "coconetc: ${ARG_SOURCE} (${stem}, ${ARG_TARGET}, Python)"
    VERBATIM)
  add_library(${name} SHARED "${dir}/${stem}.${ext}" "${dir}/${stem}_python.${ext}")
  set_target_properties(${name} PROPERTIES
    CXX_STANDARD 17 CUDA_STANDARD 17 PREFIX "" OUTPUT_NAME "_${stem}" SUFFIX ".so"
    LIBRARY_OUTPUT_DIRECTORY "${ARG_OUTPUT_DIRECTORY}"
    CXX_VISIBILITY_PRESET hidden CUDA_VISIBILITY_PRESET hidden)
  target_include_directories(${name} PRIVATE "${dir}")
  # The runtime's symbols stay inside the library: two programs' libraries
  # in one process each have their own.
  target_link_options(${name} PRIVATE "LINKER:--exclude-libs,ALL")
  if(ARG_TARGET STREQUAL "cpu")
    file(STRINGS "${COCONET_CPU_FLAGS_FILE}" flags LIMIT_COUNT 1)
    separate_arguments(flags UNIX_COMMAND "${flags}")
    target_compile_options(${name} PRIVATE ${flags})
    target_link_libraries(${name} PRIVATE coconet::rt_cpu)
  else()
    if(NOT CMAKE_CUDA_ARCHITECTURES)
      set_target_properties(${name} PROPERTIES CUDA_ARCHITECTURES 90)
    endif()
    target_link_libraries(${name} PRIVATE coconet::rt_cuda)
  endif()
  add_custom_command(TARGET ${name} POST_BUILD
    COMMAND ${CMAKE_COMMAND} -E copy_if_different "${dir}/${stem}.py" "${dir}/${stem}.pyi"
            "${ARG_OUTPUT_DIRECTORY}/"
    VERBATIM)
endfunction()
