# SPDX-License-Identifier: Apache-2.0
# Every CTest name must be readable and the same on every discovery: no "GetParam() = ..." comment from
# gtest's test list, no raw parameter bytes ("48-byte object <98-16 BD-FF ...>"), no heap address, no
# whitespace. A value-parameterised gtest suite needs a name generator (4th argument of
# INSTANTIATE_TEST_SUITE_P) and NO_PRETTY_VALUES on its gtest_discover_tests().
#
#   cmake -DCTEST=<ctest> -DBUILD_DIR=<build dir> [-DEXPECT_OFFENDERS=<n>] -P check_test_names.cmake
#
# Lists the tests with `ctest -N` in BUILD_DIR (read-only, so it can run from inside a ctest run).
# EXPECT_OFFENDERS (the checker's own test): succeed only if exactly that many names are refused.
if(NOT CTEST OR NOT BUILD_DIR)
  message(FATAL_ERROR "check_test_names.cmake: pass -DCTEST=<ctest> and -DBUILD_DIR=<build dir>")
endif()
if(NOT EXISTS "${BUILD_DIR}/CTestTestfile.cmake")
  message(FATAL_ERROR "check_test_names.cmake: ${BUILD_DIR} has no CTestTestfile.cmake")
endif()

execute_process(COMMAND "${CTEST}" -N
                WORKING_DIRECTORY "${BUILD_DIR}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "`ctest -N` in ${BUILD_DIR} failed (${rc}):\n${err}")
endif()

# One name per line; ';' would split a CMake list, so it is escaped first.
string(REPLACE ";" "<semicolon>" out "${out}")
string(REPLACE "\n" ";" lines "${out}")
set(total 0)
set(offenders 0)
set(not_built "")
set(seen "")
foreach(line IN LISTS lines)
  if(NOT line MATCHES "^ *Test +#[0-9]+: (.*)$")
    continue()
  endif()
  set(name "${CMAKE_MATCH_1}")
  math(EXPR total "${total} + 1")
  set(why "")
  if(name MATCHES "GetParam\\(\\)")
    string(APPEND why " [gtest's GetParam() comment]")
  endif()
  if(name MATCHES "object <|[0-9A-F][0-9A-F]-[0-9A-F][0-9A-F] [0-9A-F][0-9A-F]-")
    string(APPEND why " [raw parameter bytes]")
  endif()
  if(name MATCHES "0x[0-9A-Fa-f][0-9A-Fa-f][0-9A-Fa-f][0-9A-Fa-f][0-9A-Fa-f][0-9A-Fa-f]")
    string(APPEND why " [hex address]")
  endif()
  if(name MATCHES "[ \t<>]" OR name MATCHES "<semicolon>")
    string(APPEND why " [whitespace, '<', '>' or ';']")
  endif()
  list(FIND seen "${name}" dup)
  if(NOT dup EQUAL -1)
    string(APPEND why " [listed twice]")
  endif()
  list(APPEND seen "${name}")
  if(name MATCHES "_NOT_BUILT$")
    list(APPEND not_built "${name}")
  endif()
  if(why)
    math(EXPR offenders "${offenders} + 1")
    message("refused test name: ${name}\n   ${why}")
  endif()
endforeach()

if(not_built)
  list(JOIN not_built " " nb)
  message("note: not built yet, so their names could not be checked: ${nb}")
endif()
if(total EQUAL 0)
  message(FATAL_ERROR "`ctest -N` in ${BUILD_DIR} listed no tests: nothing checked")
endif()
if(DEFINED EXPECT_OFFENDERS)
  if(NOT offenders EQUAL EXPECT_OFFENDERS)
    message(FATAL_ERROR "expected ${EXPECT_OFFENDERS} refused names of ${total}, got ${offenders}")
  endif()
  message("${offenders} of ${total} names refused, as expected")
  return()
endif()
if(offenders GREATER 0)
  message(FATAL_ERROR "${offenders} of ${total} test names are unreadable or change between discoveries. Give the "
                      "value-parameterised suite a name generator (4th argument of INSTANTIATE_TEST_SUITE_P) "
                      "and its gtest_discover_tests() NO_PRETTY_VALUES.")
endif()
message("${total} test names checked")
