# SPDX-License-Identifier: Apache-2.0
# rnic_net_rx: the whole receive front end (hold, lookup, walk, split) against NetRef, at 512 bits.
set(RNIC_NET_RX_SOURCES ${RNIC_RTL_DIR}/rnic_fifo.sv ${RNIC_RTL_DIR}/rnic_skid.sv ${RNIC_RTL_DIR}/rnic_slice.sv
    ${RNIC_RTL_DIR}/rnic_crc32c.sv ${RNIC_RTL_DIR}/rnic_sctp_crc.sv
    ${RNIC_RTL_DIR}/rnic_net_hold.sv ${RNIC_RTL_DIR}/rnic_net_assoc.sv ${RNIC_RTL_DIR}/rnic_net_walk.sv
    ${RNIC_RTL_DIR}/rnic_net_split.sv ${RNIC_RTL_DIR}/rnic_net_rx.sv)
# net_rx_test at the defaults; net_rx_src2_test with a source FIFO of 2 (SrcFifoDepth), so that packets
# wait for room in it (the full path) under the same traffic.
rnic_verilate(net_rx_model TOP rnic_net_rx SOURCES ${RNIC_NET_RX_SOURCES})
rnic_verilate(net_rx_src2_model TOP rnic_net_rx PREFIX Vrnic_net_rx_src2 SOURCES ${RNIC_NET_RX_SOURCES}
              PARAMS -GSrcFifoDepth=2)
foreach(v "" "_src2")
  add_executable(net_rx${v}_test rx_test.cpp)
  target_compile_definitions(net_rx${v}_test PRIVATE RNIC_RX_CLASS=Vrnic_net_rx${v} RNIC_RX_HDR="Vrnic_net_rx${v}.h")
  target_link_libraries(net_rx${v}_test PRIVATE rnic_tb_common rnic_tb_net rnic_capture rnic_warnings GTest::gtest
                        GTest::gtest_main)
  rnic_tb_verilated(net_rx${v}_test net_rx${v}_model)
endforeach()
gtest_discover_tests(net_rx_test TEST_PREFIX "net.rx." PROPERTIES LABELS rtl)
gtest_discover_tests(net_rx_src2_test TEST_PREFIX "net.rx.src2." TEST_FILTER "*Random*:*Hostile*" PROPERTIES LABELS rtl)
add_test(NAME net.rx.VerilatorLintClean
  COMMAND ${VERILATOR_BIN} --lint-only -Wall -I${RNIC_RTL_DIR} --top-module rnic_net_rx
          ${RNIC_RTL_DIR}/rnic_waivers.vlt ${RNIC_NET_RX_SOURCES})
set_tests_properties(net.rx.VerilatorLintClean PROPERTIES LABELS rtl)
add_test(NAME net.rx.Budget COMMAND ${PROJECT_SOURCE_DIR}/scripts/budget.sh --top rnic_net_rx --check)
set_tests_properties(net.rx.Budget PROPERTIES LABELS "rtl;extended" TIMEOUT 600)
