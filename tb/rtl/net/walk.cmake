# SPDX-License-Identifier: Apache-2.0
# rnic_net_walk (label rtl; issue 14): the SCTP chunk walker checked item by item against NetRef's walk()
# (tb/net) at DataWidth 512 and 64 (net_walk_test_Dw512, net_walk_test_Dw64, each on its own Verilated model),
# lint at both widths and the logic-depth budget at 512 bits.
find_program(VERILATOR_BIN verilator REQUIRED)

foreach(dw 512 64)
  rnic_verilate(net_walk_model_${dw} TOP rnic_net_walk PREFIX Vrnic_net_walk_${dw}
                SOURCES ${RNIC_RTL_DIR}/rnic_skid.sv ${RNIC_RTL_DIR}/rnic_net_walk.sv PARAMS -GDataWidth=${dw})
  add_executable(net_walk_test_Dw${dw} ${CMAKE_CURRENT_LIST_DIR}/walk_test.cpp)
  target_compile_definitions(net_walk_test_Dw${dw} PRIVATE RNIC_WALK_DW=${dw} RNIC_WALK_NAME=Dw${dw}
    RNIC_WALK_CLASS=Vrnic_net_walk_${dw} RNIC_WALK_HDR="Vrnic_net_walk_${dw}.h")
  target_link_libraries(net_walk_test_Dw${dw} PRIVATE rnic_tb_common rnic_tb_net rnic_warnings GTest::gtest
                        GTest::gtest_main)
  rnic_tb_verilated(net_walk_test_Dw${dw} net_walk_model_${dw})
  gtest_discover_tests(net_walk_test_Dw${dw} TEST_PREFIX "net.walk." PROPERTIES LABELS rtl)

  add_test(NAME net.walk.VerilatorLintClean.DataWidth${dw}
    COMMAND ${VERILATOR_BIN} --lint-only -Wall -I${RNIC_RTL_DIR} --top-module rnic_net_walk -GDataWidth=${dw}
            ${RNIC_RTL_DIR}/rnic_waivers.vlt ${RNIC_RTL_DIR}/rnic_skid.sv ${RNIC_RTL_DIR}/rnic_net_walk.sv)
  set_tests_properties(net.walk.VerilatorLintClean.DataWidth${dw} PROPERTIES LABELS rtl)
endforeach()
add_test(NAME net.walk.Budget COMMAND ${PROJECT_SOURCE_DIR}/scripts/budget.sh --top rnic_net_walk --check)
set_tests_properties(net.walk.Budget PROPERTIES LABELS "rtl;extended" TIMEOUT 300)
