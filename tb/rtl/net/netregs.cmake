# SPDX-License-Identifier: Apache-2.0
# rnic_net_regs (label rtl; issue 14, docs/network.md): the network side's register window (hw.def's
# NET_* rows), Verilated at its defaults (suite NetRegsDefault: 16 entries, 256 streams) and small
# (suite NetRegsSmall: 8 entries, so an index >= Entries exists; 100 streams; every counter starting at
# 2^32 - 256, so the fence's compare and the counters cross the 32-bit wrap), each tested by
# netregs_test.cpp, lint-clean in both, and the logic-depth budget at the defaults.
find_program(VERILATOR_BIN verilator REQUIRED)
set(RNIC_NETREGS_SOURCES ${RNIC_RTL_DIR}/rnic_net_regs.sv)
foreach(cfg Default Small)
  if(cfg STREQUAL Default)
    set(entries 16)
    set(streams 256)
    set(init 0)
    set(params "")
  else()
    set(entries 8)
    set(streams 100)
    set(init 0xFFFFFF00)
    set(params -GEntries=8 -GNumStreams=100 "-GCountInit=32'hFFFFFF00")
  endif()
  rnic_verilate(net_regs_model_${cfg} TOP rnic_net_regs PREFIX Vrnic_net_regs_${cfg}
                SOURCES ${RNIC_NETREGS_SOURCES} PARAMS ${params})
  add_executable(net_regs_test_${cfg} ${CMAKE_CURRENT_LIST_DIR}/netregs_test.cpp)
  target_compile_definitions(net_regs_test_${cfg} PRIVATE RNIC_NETREGS_NAME=${cfg}
    RNIC_NETREGS_CLASS=Vrnic_net_regs_${cfg} RNIC_NETREGS_HDR="Vrnic_net_regs_${cfg}.h"
    RNIC_NETREGS_ENTRIES=${entries} RNIC_NETREGS_STREAMS=${streams} RNIC_NETREGS_INIT=${init})
  target_link_libraries(net_regs_test_${cfg} PRIVATE rnic_tb_common rnic_hw rnic_warnings
                        GTest::gtest GTest::gtest_main)
  rnic_tb_verilated(net_regs_test_${cfg} net_regs_model_${cfg})
  gtest_discover_tests(net_regs_test_${cfg} TEST_PREFIX "net.regs." PROPERTIES LABELS rtl DISCOVERY_TIMEOUT 60)
  add_test(NAME net.regs.VerilatorLintClean.${cfg}
    COMMAND ${VERILATOR_BIN} --lint-only -Wall -I${RNIC_RTL_DIR} --top-module rnic_net_regs ${params}
            ${RNIC_RTL_DIR}/rnic_waivers.vlt ${RNIC_NETREGS_SOURCES})
  set_tests_properties(net.regs.VerilatorLintClean.${cfg} PROPERTIES LABELS rtl)
endforeach()
add_test(NAME net.regs.Budget COMMAND ${PROJECT_SOURCE_DIR}/scripts/budget.sh --top rnic_net_regs --check)
set_tests_properties(net.regs.Budget PROPERTIES LABELS "rtl;extended" TIMEOUT 600)
