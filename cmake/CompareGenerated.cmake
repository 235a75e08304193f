# cmake -DGEN=<generator> -DSVH=<checked-in file> -DOUT=<scratch> -P CompareGenerated.cmake
# Fails when the checked-in file differs from what the generator writes now.
execute_process(COMMAND ${GEN} ${OUT} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${GEN} failed (${rc})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${OUT} ${SVH} RESULT_VARIABLE diff)
if(NOT diff EQUAL 0)
  message(FATAL_ERROR "${SVH} is stale: regenerate it with `cmake --build --preset default --target rnic-gen-svh-update`")
endif()
message(STATUS "${SVH} matches hw.def and ddp_errors.def")
