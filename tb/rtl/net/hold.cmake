# SPDX-License-Identifier: Apache-2.0
# rnic_net_hold (label rtl; issue 14, docs/network.md): the hold FIFO around rnic_sctp_crc, Verilated at
# DataWidth 512 (DepthBeats 512) and 64 (DepthBeats 4096: two maximum packets of 1152 beats), each tested
# by hold_test.cpp (suites NetHoldDw512, NetHoldDw64), lint-clean at both widths, and the logic-depth
# budget at 512.
find_program(VERILATOR_BIN verilator REQUIRED)
set(RNIC_HOLD_SOURCES ${RNIC_RTL_DIR}/rnic_crc32c.sv ${RNIC_RTL_DIR}/rnic_sctp_crc.sv ${RNIC_RTL_DIR}/rnic_fifo.sv
    ${RNIC_RTL_DIR}/rnic_slice.sv ${RNIC_RTL_DIR}/rnic_net_hold.sv)
foreach(dw 512 64)
  if(dw EQUAL 512)
    set(depth 512)
  else()
    set(depth 4096)
  endif()
  rnic_verilate(net_hold_model_${dw} TOP rnic_net_hold PREFIX Vrnic_net_hold_${dw}
                SOURCES ${RNIC_HOLD_SOURCES} PARAMS -GDataWidth=${dw} -GDepthBeats=${depth})
  add_executable(net_hold_test_Dw${dw} ${CMAKE_CURRENT_LIST_DIR}/hold_test.cpp)
  target_compile_definitions(net_hold_test_Dw${dw} PRIVATE RNIC_HOLD_DW=${dw} RNIC_HOLD_DEPTH=${depth}
    RNIC_HOLD_NAME=Dw${dw} RNIC_HOLD_CLASS=Vrnic_net_hold_${dw} RNIC_HOLD_HDR="Vrnic_net_hold_${dw}.h")
  target_link_libraries(net_hold_test_Dw${dw} PRIVATE rnic_tb_common rnic_tb_net rnic_capture rnic_warnings
                        GTest::gtest GTest::gtest_main)
  rnic_tb_verilated(net_hold_test_Dw${dw} net_hold_model_${dw})
  gtest_discover_tests(net_hold_test_Dw${dw} TEST_PREFIX "net.hold." PROPERTIES LABELS rtl)
  add_test(NAME net.hold.VerilatorLintClean.DataWidth${dw}
    COMMAND ${VERILATOR_BIN} --lint-only -Wall -I${RNIC_RTL_DIR} --top-module rnic_net_hold -GDataWidth=${dw}
            -GDepthBeats=${depth} ${RNIC_RTL_DIR}/rnic_waivers.vlt ${RNIC_HOLD_SOURCES})
  set_tests_properties(net.hold.VerilatorLintClean.DataWidth${dw} PROPERTIES LABELS rtl)
endforeach()
add_test(NAME net.hold.Budget COMMAND ${PROJECT_SOURCE_DIR}/scripts/budget.sh --top rnic_net_hold --check)
set_tests_properties(net.hold.Budget PROPERTIES LABELS "rtl;extended" TIMEOUT 300)
