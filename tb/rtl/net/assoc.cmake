# SPDX-License-Identifier: Apache-2.0
# rnic_net_assoc (label rtl; issue 14, docs/network.md): the association table, the live bits and the
# per-packet lookup, against tb/net NetRef's rule 3 (assoc_test.cpp), plus lint and the logic-depth
# budget. Included by tb/rtl/net/CMakeLists.txt.
find_program(VERILATOR_BIN verilator REQUIRED)

rnic_verilate(net_assoc_model TOP rnic_net_assoc PREFIX Vrnic_net_assoc
              SOURCES ${RNIC_RTL_DIR}/rnic_fifo.sv ${RNIC_RTL_DIR}/rnic_net_assoc.sv)
add_executable(net_assoc_test ${CMAKE_CURRENT_LIST_DIR}/assoc_test.cpp)
target_link_libraries(net_assoc_test PRIVATE rnic_tb_common rnic_tb_net rnic_tb_seed rnic_warnings GTest::gtest
                      GTest::gtest_main)
rnic_tb_verilated(net_assoc_test net_assoc_model)
gtest_discover_tests(net_assoc_test TEST_PREFIX "net.assoc." PROPERTIES LABELS rtl)

# Lint (verilator -Wall with the project's waivers) at the default size and at the smallest table with
# a live-bit count that is not a power of two; the logic-depth budget (docs/synthesis.md) at the
# default size, its ports counted as registers.
foreach(cfg "16;256" "2;200")
  list(GET cfg 0 entries)
  list(GET cfg 1 streams)
  add_test(NAME net.assoc.VerilatorLintClean.Entries${entries}Streams${streams}
    COMMAND ${VERILATOR_BIN} --lint-only -Wall -I${RNIC_RTL_DIR} --top-module rnic_net_assoc
            -GEntries=${entries} -GNumStreams=${streams}
            ${RNIC_RTL_DIR}/rnic_waivers.vlt ${RNIC_RTL_DIR}/rnic_fifo.sv ${RNIC_RTL_DIR}/rnic_net_assoc.sv)
  set_tests_properties(net.assoc.VerilatorLintClean.Entries${entries}Streams${streams} PROPERTIES LABELS rtl)
endforeach()
add_test(NAME net.assoc.Budget COMMAND ${PROJECT_SOURCE_DIR}/scripts/budget.sh --top rnic_net_assoc --check)
set_tests_properties(net.assoc.Budget PROPERTIES LABELS "rtl;extended" TIMEOUT 300)
