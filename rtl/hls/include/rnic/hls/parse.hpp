// SPDX-License-Identifier: Apache-2.0
// Parse: the first stage of the SystemC-HLS kernel (the model of rnic_rx_parse). It takes the AXI-Stream
// packets the LLP hands over, one DDP segment each (RFC 5041 section 3), one beat per cycle with packets
// back to back (a packet may start the beat after the previous tlast), and
//   - forwards every beat of the packet to the data FIFO (DataBeat). A packet longer than MAX_SEG_BYTES
//     is cut: its first ceil(MAX_SEG_BYTES / BYTES) beats are kept, the beats after them are discarded
//     and its tlast beat closes it (marked last), so at most C::MAX_SEG_BEATS beats per packet; the
//     segment is flagged oversize (validate reports it Local Catastrophic);
//   - gathers packet bytes 0..17 (from up to three beats at 64 bits) and decodes the DDP header: the
//     control field (RFC 5041 4.1: T, L, DV; the Rsvd bits are ignored on receive), the tagged header
//     (4.2: RsvdULP byte 1, STag bytes 2..5, TO bytes 6..13) and the untagged header (4.3: RsvdULP bytes
//     1..5, QN bytes 6..9, MSN bytes 10..13, MO bytes 14..17), all big-endian on the wire. Every field is
//     decoded whatever T says; the later stages pick the ones of the segment's format;
//   - takes stream, DDP-SSN (RFC 5043 5.2.1) and the net flag from tuser of the packet's first beat;
//   - at tlast emits the Seg: seg_bytes = the packet's byte count (mod 2^16; tkeep is contiguous from
//     lane 0 and only the last beat may be partial), hdr_raw = bytes 0..17 (zero past the packet end).
// A packet shorter than its header is passed on as it is (its missing header bytes read as zero):
// validate reports it. ev_seg pulses once per Seg taken by the segment FIFO (CNT_SEGMENTS).
//
// Structure: one loop iteration per cycle. Each output has a two-entry queue (its output register and
// one spare), and the input is ready while both queues have room for what the next beat may add, so a
// beat is accepted every cycle while the FIFOs take the outputs, and a back-pressured output never
// loses an item.
#pragma once

#include <systemc.h>

#include "rnic/hls/base.hpp"

namespace rnic::hls {

template <class C>
SC_MODULE(Parse) {
  sc_core::sc_in<bool> clk;
  sc_core::sc_in<bool> rst_n;

  p2p_in<AxisBeat<C::DATA_WIDTH>> axis;
  p2p_out<Seg> seg;
  p2p_out<DataBeat<C::DATA_WIDTH>> beat;
  sc_core::sc_out<bool> ev_seg;

  SC_CTOR(Parse) {
    SC_CTHREAD(run, clk.pos());
    reset_signal_is(rst_n, false);
  }

  // Parse has no memories: its state is registers, all set by the reset section.
  void power_on() {}

 private:
  static constexpr int W = C::DATA_WIDTH;
  static constexpr int BYTES = C::BYTES;
  static constexpr int HDR_BYTES = static_cast<int>(rnic::hw::kUNTAGGED_HDR_BYTES);  // the longest DDP header
  // Beats of a MAX_SEG_BYTES packet: the beats kept before the cut (the closing beat is the one more).
  static constexpr int KEEP_BEATS = (C::MAX_SEG_BYTES + BYTES - 1) / BYTES;
  static_assert(KEEP_BEATS + 1 == C::MAX_SEG_BEATS, "MAX_SEG_BEATS = kept beats + the closing beat");
  static constexpr int QDEPTH = 2;  // output register + one spare per output

  using Beat = DataBeat<W>;
  using Hdr = sc_dt::sc_biguint<8 * HDR_BYTES>;

  // Packet state.
  sc_dt::sc_uint<16> cnt_;  // beats accepted in this packet, saturating at KEEP_BEATS (0: next is first)
  Hdr hdr_;                 // bytes 0..17 gathered so far, byte i at [8i+7:8i]
  sc_dt::sc_uint<16> stream_, ssn_;
  bool net_ = false;

  // Output queues (entry 0 is the one offered).
  Beat bq_[QDEPTH];
  int bcount_;
  Seg sq_[QDEPTH];
  int scount_;

  // Byte i of the gathered header.
  static sc_dt::sc_uint<8> hbyte(const Hdr& h, int i) { return h.range(8 * i + 7, 8 * i).to_uint(); }
  // Bytes [first, first + N) as a big-endian number (network order, RFC 5041 4).
  template <int N>
  static sc_dt::sc_uint<8 * N> be(const Hdr& h, int first) {
    sc_dt::sc_uint<8 * N> v = 0;
    for (int i = 0; i < N; ++i) v.range(8 * (N - 1 - i) + 7, 8 * (N - 1 - i)) = hbyte(h, first + i);
    return v;
  }

  // The descriptor of a packet from its gathered header bytes.
  static Seg decode(const Hdr& h) {
    Seg s;
    const sc_dt::sc_uint<8> ctrl = hbyte(h, 0);
    s.is_tagged = ctrl[7];  // 4.1: T is the most significant bit of the control field
    s.last = ctrl[6];       // L
    s.dv = ctrl.range(1, 0);
    // structs.def: tagged RsvdULP is byte 1 in [7:0]; untagged bytes 1..5 with byte 1 in [39:32].
    if (ctrl[7]) {
      s.rsvd_ulp = hbyte(h, 1);
    } else {
      s.rsvd_ulp = be<5>(h, 1);
    }
    s.stag = be<4>(h, 2);
    s.to = be<8>(h, 6);
    s.qn = be<4>(h, 6);
    s.msn = be<4>(h, 10);
    s.mo = be<4>(h, 14);
    s.hdr_raw = h;
    return s;
  }

  // One accepted input beat.
  void take(const AxisBeat<W>& in) {
    const bool first = cnt_ == 0;
    const bool cut = cnt_ == KEEP_BEATS;  // KEEP_BEATS beats kept and the packet goes on
    // Header bytes: byte b travels in beat b / BYTES, lane b % BYTES (the lanes past tkeep read zero).
    Hdr h = first ? Hdr(0) : hdr_;
    for (int b = 0; b < HDR_BYTES; ++b) {
      if (cnt_ == static_cast<unsigned>(b / BYTES)) {
        const int lane = b % BYTES;
        h.range(8 * b + 7, 8 * b) = in.keep[lane] ? in.data.range(8 * lane + 7, 8 * lane).to_uint() : 0u;
      }
    }
    hdr_ = h;
    if (first) {
      stream_ = in.user.range(15, 0);
      ssn_ = in.user.range(31, 16);
      net_ = in.user.bit(32);
    }
    // After the cut only the closing beat goes to the data FIFO.
    if (!cut || in.last) {
      Beat d;
      d.data = in.data;
      d.last = in.last;
      bq_[bcount_] = d;
      ++bcount_;
    }
    if (in.last) {
      int ones = 0;
      for (int l = 0; l < BYTES; ++l) ones += in.keep[l] ? 1 : 0;
      const sc_dt::sc_uint<32> total =
          sc_dt::sc_uint<32>(cnt_) * static_cast<unsigned>(BYTES) + static_cast<unsigned>(ones);
      Seg s = decode(h);
      s.stream = first ? sc_dt::sc_uint<16>(in.user.range(15, 0)) : stream_;
      s.ssn = first ? sc_dt::sc_uint<16>(in.user.range(31, 16)) : ssn_;
      s.net = first ? in.user.bit(32) : net_;
      s.seg_bytes = total.range(15, 0);
      s.oversize = cut || total > sc_dt::sc_uint<32>(C::MAX_SEG_BYTES);
      sq_[scount_] = s;
      ++scount_;
      cnt_ = 0;
    } else if (!cut) {
      cnt_ = cnt_ + 1;
    }
  }

  void run() {
    cnt_ = 0;
    hdr_ = 0;
    stream_ = 0;
    ssn_ = 0;
    net_ = false;
    bcount_ = 0;
    scount_ = 0;
    axis.reset();
    seg.reset();
    beat.reset();
    ev_seg.write(false);
    wait();
    while (true) {
      // What moved at the edge just passed.
      bool seg_went = false;
      if (beat.taken()) {
        bq_[0] = bq_[1];
        --bcount_;
      }
      if (seg.taken()) {
        sq_[0] = sq_[1];
        --scount_;
        seg_went = true;
      }
      if (axis.fired()) take(axis.data());
      // Offer the heads; take a beat at the next edge only if its outputs will have room even when
      // neither head is taken at that edge.
      if (bcount_ != 0) {
        beat.offer(bq_[0]);
      } else {
        beat.idle();
      }
      if (scount_ != 0) {
        seg.offer(sq_[0]);
      } else {
        seg.idle();
      }
      axis.ready(bcount_ < QDEPTH && scount_ < QDEPTH);
      ev_seg.write(seg_went);
      wait();
    }
  }
};

}  // namespace rnic::hls
