# SPDX-License-Identifier: Apache-2.0
# rnic_net_tx (label rtl; issue 14, docs/network.md "Rings in host memory"): the transmit packet ring
# reader, Verilated at DataWidth 512 (BufBeats 512) and 128 (BufBeats 2048: two maximum packets of 576
# beats), each tested by tx_test.cpp (suites NetTxDw512, NetTxDw128) against rnic::tb::AxiHostMemory,
# lint-clean at both widths, and the logic-depth budget at 512.
find_program(VERILATOR_BIN verilator REQUIRED)
set(RNIC_TX_SOURCES ${RNIC_RTL_DIR}/rnic_crc32c.sv ${RNIC_RTL_DIR}/rnic_sctp_crc.sv ${RNIC_RTL_DIR}/rnic_fifo.sv
    ${RNIC_RTL_DIR}/rnic_slice.sv ${RNIC_RTL_DIR}/rnic_net_gather.sv ${RNIC_RTL_DIR}/rnic_net_tx.sv)
foreach(dw 512 128)
  if(dw EQUAL 512)
    set(depth 512)
  else()
    set(depth 2048)
  endif()
  rnic_verilate(net_tx_model_${dw} TOP rnic_net_tx PREFIX Vrnic_net_tx_${dw}
                SOURCES ${RNIC_TX_SOURCES} PARAMS -GDataWidth=${dw} -GBufBeats=${depth})
  add_executable(net_tx_test_Dw${dw} ${CMAKE_CURRENT_LIST_DIR}/tx_test.cpp)
  target_compile_definitions(net_tx_test_Dw${dw} PRIVATE RNIC_TX_DW=${dw} RNIC_TX_NAME=Dw${dw}
    RNIC_TX_CLASS=Vrnic_net_tx_${dw} RNIC_TX_HDR="Vrnic_net_tx_${dw}.h")
  target_link_libraries(net_tx_test_Dw${dw} PRIVATE rnic_tb_common rnic_capture rnic_warnings
                        GTest::gtest GTest::gtest_main)
  rnic_tb_verilated(net_tx_test_Dw${dw} net_tx_model_${dw})
  gtest_discover_tests(net_tx_test_Dw${dw} TEST_PREFIX "net.tx." PROPERTIES LABELS rtl DISCOVERY_TIMEOUT 60)
  add_test(NAME net.tx.VerilatorLintClean.DataWidth${dw}
    COMMAND ${VERILATOR_BIN} --lint-only -Wall -I${RNIC_RTL_DIR} --top-module rnic_net_tx -GDataWidth=${dw}
            -GBufBeats=${depth} ${RNIC_RTL_DIR}/rnic_waivers.vlt ${RNIC_TX_SOURCES})
  set_tests_properties(net.tx.VerilatorLintClean.DataWidth${dw} PROPERTIES LABELS rtl)
endforeach()
add_test(NAME net.tx.Budget COMMAND ${PROJECT_SOURCE_DIR}/scripts/budget.sh --top rnic_net_tx --check)
set_tests_properties(net.tx.Budget PROPERTIES LABELS "rtl;extended" TIMEOUT 600)
