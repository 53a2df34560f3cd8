# CMake rules for applications that use coconetc-generated code.
#
#   set(COCONET_BUILD_DIR /path/to/coconetc/build)   # built by tools/build.sh
#   include(/path/to/coconetc/tools/cmake/Coconet.cmake)
#   coconet_add_program(adam_step
#     SOURCE adam.coco SCHEDULE rs_c_ag TARGET cpu)  # a static library
#   coconet_add_program(adam_main
#     SOURCE adam.coco SCHEDULE rs_c_ag TARGET cpu DRIVER)  # an executable
#   target_link_libraries(my_app PRIVATE adam_step)  # then #include "adam_rs_c_ag.h"
#
# coconet_add_program(<name> SOURCE <file.coco> [SCHEDULE <s>] [PROGRAM <p>]
#                     [TARGET cpu|cuda] [DRIVER])
# runs coconetc at build time (again whenever the source or coconetc
# changes) into ${CMAKE_CURRENT_BINARY_DIR}/<name>.generated/ and builds the
# generated code with the flags it is tested with (C++17; on the CPU those of
# tools/cpu-flags.txt: vectorised for the building machine, without
# floating-point contraction; with OpenMP and MPI), linked with the runtime
# of COCONET_BUILD_DIR. The generated header's directory is a PUBLIC include
# directory of <name>. TARGET defaults to cuda (CMake's CUDA language must
# be enabled then: architecture sm_90 unless CMAKE_CUDA_ARCHITECTURES says
# otherwise).

include_guard(GLOBAL)

get_filename_component(COCONET_SOURCE_DIR "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)
if(NOT COCONET_BUILD_DIR)
  set(COCONET_BUILD_DIR "${COCONET_SOURCE_DIR}/build")
endif()
set(COCONETC "${COCONET_BUILD_DIR}/bin/coconetc" CACHE FILEPATH "The coconetc compiler")
set(COCONET_RUNTIME_INCLUDE "${COCONET_SOURCE_DIR}/runtime/include")
set(COCONET_RUNTIME_LIB "${COCONET_BUILD_DIR}/runtime")

function(coconet_add_program name)
  cmake_parse_arguments(ARG "DRIVER" "SOURCE;SCHEDULE;PROGRAM;TARGET" "" ${ARGN})
  if(NOT ARG_SOURCE)
    message(FATAL_ERROR "coconet_add_program(${name}): SOURCE is required")
  endif()
  if(NOT ARG_TARGET)
    set(ARG_TARGET cuda)
  endif()
  if(NOT ARG_TARGET MATCHES "^(cpu|cuda)$")
    message(FATAL_ERROR "coconet_add_program(${name}): TARGET must be cpu or cuda")
  endif()
  get_filename_component(source "${ARG_SOURCE}" ABSOLUTE)

  # The name coconetc gives the files: PROGRAM or PROGRAM_SCHEDULE.
  set(select "")
  if(ARG_SCHEDULE)
    list(APPEND select --schedule ${ARG_SCHEDULE})
  endif()
  if(ARG_PROGRAM)
    list(APPEND select --program ${ARG_PROGRAM})
  endif()
  if(ARG_SCHEDULE)
    if(NOT ARG_PROGRAM)
      message(FATAL_ERROR "coconet_add_program(${name}): give PROGRAM with SCHEDULE (the files are named PROGRAM_SCHEDULE)")
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
  target_include_directories(${name} PUBLIC "${dir}" "${COCONET_RUNTIME_INCLUDE}")
  set(rt "${COCONET_RUNTIME_LIB}")
  if(ARG_TARGET STREQUAL "cpu")
    find_package(MPI REQUIRED COMPONENTS CXX)
    find_package(OpenMP REQUIRED COMPONENTS CXX)
    # The flags the generated code is tested with (tools/cpu-flags.txt).
    file(STRINGS "${COCONET_SOURCE_DIR}/tools/cpu-flags.txt" flags LIMIT_COUNT 1)
    separate_arguments(flags UNIX_COMMAND "${flags}")
    target_compile_options(${name} PRIVATE ${flags})
    target_link_libraries(${name} PUBLIC
      "${rt}/libcoconet_rt_mpi.a" "${rt}/libcoconet_rt_cpu.a" "${rt}/libcoconet_rt.a"
      MPI::MPI_CXX OpenMP::OpenMP_CXX)
  else()
    find_package(CUDAToolkit REQUIRED)
    find_library(COCONET_NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR} REQUIRED)
    if(NOT CMAKE_CUDA_ARCHITECTURES)
      set_target_properties(${name} PROPERTIES CUDA_ARCHITECTURES 90)
    endif()
    target_link_libraries(${name} PUBLIC
      "${rt}/libcoconet_rt_cuda.a" "${rt}/libcoconet_rt.a"
      ${COCONET_NCCL_LIBRARY} CUDA::cublas CUDA::cudart)
  endif()
endfunction()
