# SPDX-License-Identifier: Apache-2.0
# rnic_net_rx: the whole receive front end (hold, lookup, walk, split) against NetRef, at 512 bits.
set(RNIC_NET_RX_SOURCES ${RNIC_RTL_DIR}/rnic_fifo.sv ${RNIC_RTL_DIR}/rnic_skid.sv ${RNIC_RTL_DIR}/rnic_slice.sv
    ${RNIC_RTL_DIR}/rnic_crc32c.sv ${RNIC_RTL_DIR}/rnic_sctp_crc.sv
    ${RNIC_RTL_DIR}/rnic_net_hold.sv ${RNIC_RTL_DIR}/rnic_net_assoc.sv ${RNIC_RTL_DIR}/rnic_net_walk.sv
    ${RNIC_RTL_DIR}/rnic_net_split.sv ${RNIC_RTL_DIR}/rnic_net_rx.sv)
rnic_verilate(net_rx_model TOP rnic_net_rx SOURCES ${RNIC_NET_RX_SOURCES})
add_executable(net_rx_test rx_test.cpp)
target_link_libraries(net_rx_test PRIVATE rnic_tb_common rnic_tb_net rnic_capture rnic_warnings GTest::gtest GTest::gtest_main)
rnic_tb_verilated(net_rx_test net_rx_model)
gtest_discover_tests(net_rx_test TEST_PREFIX "net.rx." PROPERTIES LABELS rtl)
add_test(NAME net.rx.VerilatorLintClean
  COMMAND ${VERILATOR_BIN} --lint-only -Wall -I${RNIC_RTL_DIR} --top-module rnic_net_rx
          ${RNIC_RTL_DIR}/rnic_waivers.vlt ${RNIC_NET_RX_SOURCES})
set_tests_properties(net.rx.VerilatorLintClean PROPERTIES LABELS rtl)
add_test(NAME net.rx.Budget COMMAND ${PROJECT_SOURCE_DIR}/scripts/budget.sh --top rnic_net_rx --check)
set_tests_properties(net.rx.Budget PROPERTIES LABELS "rtl;extended" TIMEOUT 600)
