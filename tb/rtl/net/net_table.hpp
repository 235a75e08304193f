// SPDX-License-Identifier: Apache-2.0
// The write ports of rnic_net_assoc (the association table and the live bits), driven from a NetRef
// entry on any Verilated model that has them: rnic_net_assoc itself (assoc_test.cpp) and rnic_net_rx
// (rx_test.cpp). Each call sets one cycle's inputs, strobe included; the caller clocks and drops the strobe.
#pragma once

#include <verilated.h>

#include "rnic/tb/net_ref.hpp"

namespace rnic::tb::net {

// Table entry `index` := e in this cycle (e.valid false clears the entry).
template <class Top>
void drive_assoc_write(Top& m, unsigned index, const AssocEntry& e) {
  m.wr_i = 1;
  m.wr_index_i = static_cast<CData>(index);
  m.wr_valid_i = e.valid ? 1 : 0;
  m.wr_my_ip_i = e.my_ip;
  m.wr_their_ip_i = e.their_ip;
  m.wr_my_udp_port_i = e.my_udp_port;
  m.wr_their_udp_port_i = e.their_udp_port;
  m.wr_my_sctp_port_i = e.my_sctp_port;
  m.wr_their_sctp_port_i = e.their_sctp_port;
  m.wr_my_vtag_i = e.my_vtag;
  m.wr_stream_base_i = e.stream_base;
  m.wr_stream_count_i = e.stream_count;
  m.wr_socket_i = e.vnx_socket;
}

// Live bit `stream` := value in this cycle (an index >= NumStreams is ignored by the RTL).
template <class Top>
void drive_live_write(Top& m, unsigned stream, bool value) {
  m.live_wr_i = 1;
  m.live_index_i = static_cast<SData>(stream);
  m.live_value_i = value ? 1 : 0;
}

}  // namespace rnic::tb::net
