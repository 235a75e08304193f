# SPDX-License-Identifier: Apache-2.0
# rnic_net_gather (label rtl; issue 35, docs/transmit.md): the transmit gather, Verilated at DataWidth 512,
# 256 and 128, each tested by gather_test.cpp (suites NetGatherDw512, ...) against the reference model
# tb/net TxGatherRef and rnic::tb::AxiHostMemory; lint-clean at each width; the logic-depth budget at 512.
find_program(VERILATOR_BIN verilator REQUIRED)
set(RNIC_GATHER_SOURCES ${RNIC_RTL_DIR}/rnic_fifo.sv ${RNIC_RTL_DIR}/rnic_slice.sv ${RNIC_RTL_DIR}/rnic_net_gather.sv)
foreach(dw 512 256 128)
  rnic_verilate(net_gather_model_${dw} TOP rnic_net_gather PREFIX Vrnic_net_gather_${dw}
                SOURCES ${RNIC_GATHER_SOURCES} PARAMS -GDataWidth=${dw})
  add_executable(net_gather_test_Dw${dw} ${CMAKE_CURRENT_LIST_DIR}/gather_test.cpp)
  target_compile_definitions(net_gather_test_Dw${dw} PRIVATE RNIC_GATHER_DW=${dw} RNIC_GATHER_NAME=Dw${dw}
    RNIC_GATHER_CLASS=Vrnic_net_gather_${dw} RNIC_GATHER_HDR="Vrnic_net_gather_${dw}.h")
  target_link_libraries(net_gather_test_Dw${dw} PRIVATE rnic_tb_common rnic_tb_net rnic_hw rnic_warnings GTest::gtest
                        GTest::gtest_main)
  rnic_tb_verilated(net_gather_test_Dw${dw} net_gather_model_${dw})
  gtest_discover_tests(net_gather_test_Dw${dw} TEST_PREFIX "net.gather." PROPERTIES LABELS rtl DISCOVERY_TIMEOUT 60)
  add_test(NAME net.gather.VerilatorLintClean.DataWidth${dw}
    COMMAND ${VERILATOR_BIN} --lint-only -Wall -I${RNIC_RTL_DIR} --top-module rnic_net_gather -GDataWidth=${dw}
            ${RNIC_RTL_DIR}/rnic_waivers.vlt ${RNIC_GATHER_SOURCES})
  set_tests_properties(net.gather.VerilatorLintClean.DataWidth${dw} PROPERTIES LABELS rtl)
endforeach()
add_test(NAME net.gather.Budget COMMAND ${PROJECT_SOURCE_DIR}/scripts/budget.sh --top rnic_net_gather --check)
set_tests_properties(net.gather.Budget PROPERTIES LABELS "rtl;extended" TIMEOUT 600)
