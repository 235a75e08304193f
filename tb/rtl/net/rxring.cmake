# SPDX-License-Identifier: Apache-2.0
# rnic_net_rxring (label rtl; issue 14, docs/network.md "Rings in host memory"): the receive packet ring
# writer, Verilated at DataWidth 512 and 128, each tested by rxring_test.cpp (suites NetRxRingDw512,
# NetRxRingDw128) against AxiHostMemory, lint-clean at both widths, and the logic-depth budget at 512.
set(RNIC_RXRING_SOURCES ${RNIC_RTL_DIR}/rnic_fifo.sv ${RNIC_RTL_DIR}/rnic_net_rxring.sv)
foreach(dw 512 128)
  rnic_verilate(net_rxring_model_${dw} TOP rnic_net_rxring PREFIX Vrnic_net_rxring_${dw}
                SOURCES ${RNIC_RXRING_SOURCES} PARAMS -GDataWidth=${dw})
  add_executable(net_rxring_test_Dw${dw} ${CMAKE_CURRENT_LIST_DIR}/rxring_test.cpp)
  target_compile_definitions(net_rxring_test_Dw${dw} PRIVATE RNIC_RXRING_DW=${dw} RNIC_RXRING_NAME=Dw${dw}
    RNIC_RXRING_CLASS=Vrnic_net_rxring_${dw} RNIC_RXRING_HDR="Vrnic_net_rxring_${dw}.h")
  target_link_libraries(net_rxring_test_Dw${dw} PRIVATE rnic_tb_common rnic_hw rnic_warnings GTest::gtest GTest::gtest_main)
  rnic_tb_verilated(net_rxring_test_Dw${dw} net_rxring_model_${dw})
  gtest_discover_tests(net_rxring_test_Dw${dw} TEST_PREFIX "net.rxring." PROPERTIES LABELS rtl)
  add_test(NAME net.rxring.VerilatorLintClean.DataWidth${dw}
    COMMAND ${VERILATOR_BIN} --lint-only -Wall -I${RNIC_RTL_DIR} --top-module rnic_net_rxring -GDataWidth=${dw}
            ${RNIC_RTL_DIR}/rnic_waivers.vlt ${RNIC_RXRING_SOURCES})
  set_tests_properties(net.rxring.VerilatorLintClean.DataWidth${dw} PROPERTIES LABELS rtl)
endforeach()
add_test(NAME net.rxring.Budget COMMAND ${PROJECT_SOURCE_DIR}/scripts/budget.sh --top rnic_net_rxring --check)
set_tests_properties(net.rxring.Budget PROPERTIES LABELS "rtl;extended" TIMEOUT 600)
