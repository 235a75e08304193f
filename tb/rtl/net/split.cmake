# SPDX-License-Identifier: Apache-2.0
# rnic_net_split (issue 14, docs/network.md; the front end's unit interfaces, 4): the DDP segments, the host copy, the patch
# entries and the summaries of every packet against the reference model tb/net (NetRef rules 6..8), at
# DataWidth 512 and 64 (net_split_test_Dw512, net_split_test_Dw64), the descriptors made from NetRef's walk().
find_program(VERILATOR_BIN verilator REQUIRED)

foreach(dw 512 64)
  rnic_verilate(net_split_model_${dw} TOP rnic_net_split PREFIX Vrnic_net_split_${dw}
                SOURCES ${RNIC_RTL_DIR}/rnic_fifo.sv ${RNIC_RTL_DIR}/rnic_slice.sv ${RNIC_RTL_DIR}/rnic_net_split.sv
                PARAMS -GDataWidth=${dw})
  add_executable(net_split_test_Dw${dw} ${CMAKE_CURRENT_LIST_DIR}/split_test.cpp)
  target_compile_definitions(net_split_test_Dw${dw} PRIVATE RNIC_SPLIT_DW=${dw} RNIC_SPLIT_NAME=Dw${dw}
    RNIC_SPLIT_CLASS=Vrnic_net_split_${dw} RNIC_SPLIT_HDR="Vrnic_net_split_${dw}.h")
  target_link_libraries(net_split_test_Dw${dw} PRIVATE rnic_tb_net rnic_tb_common rnic_tb_seed rnic_warnings
                        GTest::gtest GTest::gtest_main)
  rnic_tb_verilated(net_split_test_Dw${dw} net_split_model_${dw})
  gtest_discover_tests(net_split_test_Dw${dw} TEST_PREFIX "net.split." PROPERTIES LABELS rtl)

  add_test(NAME net.split.VerilatorLintClean.DataWidth${dw}
    COMMAND ${VERILATOR_BIN} --lint-only -Wall -I${RNIC_RTL_DIR} --top-module rnic_net_split -GDataWidth=${dw}
            ${RNIC_RTL_DIR}/rnic_waivers.vlt ${RNIC_RTL_DIR}/rnic_fifo.sv ${RNIC_RTL_DIR}/rnic_slice.sv
            ${RNIC_RTL_DIR}/rnic_net_split.sv)
  set_tests_properties(net.split.VerilatorLintClean.DataWidth${dw} PROPERTIES LABELS rtl)
endforeach()

# The logic-depth budget (docs/synthesis.md) at 512 bits, the ports counted as registers.
add_test(NAME net.split.Budget COMMAND ${PROJECT_SOURCE_DIR}/scripts/budget.sh --top rnic_net_split --check)
set_tests_properties(net.split.Budget PROPERTIES LABELS "rtl;extended" TIMEOUT 300)
