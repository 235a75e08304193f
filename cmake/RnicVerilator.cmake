# SPDX-License-Identifier: Apache-2.0
# rnic_verilate(<target> TOP <module> SOURCES <files...> [PREFIX <class>] [PARAMS -GName=value ...] [ARGS ...])
# Verilates <module> once into the static library <target> (C++ model, FST tracing compiled in), to be
# linked into every test or tool that needs it (toolchain notes: each verilate() call recompiles).
# --assert: the RTL's assertions (rtl/rnic_assert.svh) are checked in every model; the lint waivers
# (rtl/rnic_waivers.vlt, first: a Verilator configuration file applies to the files after it) apply.
find_package(verilator REQUIRED HINTS $ENV{VERILATOR_ROOT} /usr/share/verilator)
find_package(Threads REQUIRED)

set(RNIC_RTL_DIR ${PROJECT_SOURCE_DIR}/rtl)

function(rnic_verilate target)
  cmake_parse_arguments(V "" "TOP;PREFIX" "SOURCES;PARAMS;ARGS" ${ARGN})
  if(NOT V_PREFIX)
    set(V_PREFIX V${V_TOP})
  endif()
  add_library(${target} STATIC)
  verilate(${target}
    SOURCES ${RNIC_RTL_DIR}/rnic_waivers.vlt ${V_SOURCES}
    TOP_MODULE ${V_TOP}
    PREFIX ${V_PREFIX}
    TRACE_FST
    INCLUDE_DIRS ${RNIC_RTL_DIR}
    VERILATOR_ARGS -O3 --x-assign fast --x-initial fast --assert -Wall -Wno-fatal ${V_PARAMS} ${V_ARGS})
  # Verilator's generated code is not ours: no project warnings on it.
  target_compile_options(${target} PRIVATE -w)
  target_link_libraries(${target} PUBLIC Threads::Threads)
endfunction()
