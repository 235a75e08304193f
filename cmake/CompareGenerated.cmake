# SPDX-License-Identifier: Apache-2.0
# cmake -DGEN=<generator> -DCHECKED_IN=<checked-in file> -DOUT=<scratch> -DUPDATE=<update target>
#       -P CompareGenerated.cmake
# Fails when the checked-in file differs from what the generator writes now from hw.def and
# ddp_errors.def (one source of truth), naming the target that regenerates it.
execute_process(COMMAND ${GEN} ${OUT} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${GEN} failed (${rc})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${OUT} ${CHECKED_IN} RESULT_VARIABLE diff)
if(NOT diff EQUAL 0)
  message(FATAL_ERROR "${CHECKED_IN} is stale: regenerate it with "
                      "`cmake --build --preset default --target ${UPDATE}`")
endif()
message(STATUS "${CHECKED_IN} matches hw.def and ddp_errors.def")
