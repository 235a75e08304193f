// SPDX-License-Identifier: Apache-2.0
// WrMux: the write mux of the SystemC-HLS kernel (the model of rnic_axi_wr_mux,
// docs/rtl-architecture.md). It joins the AXI4 write channels of place (port 0) and deliver (port 1)
// onto m_axi_gmem at burst granularity, AW and W as independent channels (AXI A3.3.1):
//   - AW: takes AWs from the ports (both in one cycle when there is room for two, else round robin
//     between the ports with one waiting), queues them for m_aw in the order taken, and records for
//     each burst {port, awlen} for W and {port, seg_last} for B;
//   - W: passes the beats of the oldest burst whose W is unfinished from its port, so W order is AW
//     order and a port's bursts keep the port's order; a burst's W beats are accepted from the port
//     only after its AW was taken from the port; WLAST is forced on beat awlen of each burst (A3.4.1;
//     the ports set it too). A W beat is offered on m_w only once its burst's AW has been offered on
//     m_aw (presented or accepted): W never precedes its own AWVALID, and it does not wait for AWREADY
//     either, so a slave that takes AW before W and one that waits for WVALID before AWREADY are both
//     served;
//   - B: always ready, B in AW order (one ID): b_segs counts the B's of place bursts that end a
//     segment (WrAw.seg_last), b1_count the B's of deliver bursts, ev_write_err pulses on a B whose
//     BRESP is not OKAY (CNT_WRITE_ERRORS).
// Structure: one loop iteration per cycle; an m_aw queue of 4, a burst queue of 4 (bursts whose W is
// unfinished), a W buffer of 2 (so one W beat per cycle passes with registered handshakes on both
// sides) and the B record of up to 256 bursts awaiting their B (no AW is taken beyond that).
#pragma once

#include <systemc.h>

#include "rnic/hls/base.hpp"

namespace rnic::hls {

template <class C>
SC_MODULE(WrMux) {
  sc_core::sc_in<bool> clk;
  sc_core::sc_in<bool> rst_n;

  p2p_in<WrAw> aw0, aw1;
  p2p_in<AxiW<C::DATA_WIDTH>> w0, w1;
  p2p_out<WrAw> m_aw;
  p2p_out<AxiW<C::DATA_WIDTH>> m_w;
  p2p_in<AxiB> m_b;
  sc_core::sc_out<sc_dt::sc_uint<32>> b_segs, b1_count;
  sc_core::sc_out<bool> ev_write_err;

  SC_CTOR(WrMux) {
    SC_CTHREAD(run, clk.pos());
    reset_signal_is(rst_n, false);
  }

  // The mux's state is queues the reset section empties: nothing to initialise at power-on.
  void power_on() {}

 private:
  static constexpr int W = C::DATA_WIDTH;
  static constexpr int MQ = 4;    // AWs taken, waiting for the slave's AWREADY
  static constexpr int BQ = 4;    // bursts taken whose W beats have not all been taken from their port
  static constexpr int WB = 2;    // W beats taken, waiting for WREADY
  static constexpr int BT = 256;  // bursts taken whose B has not come (MaxWrites)

  WrAw mq_[MQ];
  sc_dt::sc_uint<3> mq_rd_, mq_cnt_;
  bool bq_port_[BQ];
  sc_dt::sc_uint<8> bq_len_[BQ];
  sc_dt::sc_uint<8> bq_seq_[BQ];  // the burst's number among the AWs taken (mod 256)
  sc_dt::sc_uint<3> bq_rd_, bq_cnt_;
  AxiW<W> wb_[WB];
  sc_dt::sc_uint<8> wb_seq_[WB];
  sc_dt::sc_uint<2> wb_rd_, wb_cnt_;
  bool bt_port_[BT];
  bool bt_seg_[BT];
  sc_dt::sc_uint<8> bt_rd_;
  sc_dt::sc_uint<9> bt_cnt_;

  sc_dt::sc_uint<8> aw_in_;   // AWs taken from the ports (mod 256)
  sc_dt::sc_uint<8> aw_out_;  // AWs accepted by the slave (mod 256)
  sc_dt::sc_uint<8> w_beat_;  // beat index within the burst at the head of bq
  bool last_;                 // the port taken last (round robin)
  sc_dt::sc_uint<32> b_segs_, b1_;

  // Take the AW a port presented.
  void take_aw(bool port, const WrAw& a) {
    mq_[unsigned((mq_rd_ + mq_cnt_) % MQ)] = a;
    ++mq_cnt_;
    const unsigned s = unsigned((bq_rd_ + bq_cnt_) % BQ);
    bq_port_[s] = port;
    bq_len_[s] = a.len;
    bq_seq_[s] = aw_in_;
    ++bq_cnt_;
    const unsigned t = unsigned((bt_rd_ + bt_cnt_) % BT);
    bt_port_[t] = port;
    bt_seg_[t] = !port && a.seg_last;  // only place's segments count (b_segs)
    ++bt_cnt_;
    ++aw_in_;
    last_ = port;
  }

  void run() {
    aw0.reset();
    aw1.reset();
    w0.reset();
    w1.reset();
    m_aw.reset();
    m_w.reset();
    m_b.reset();
    m_b.ready(true);
    b_segs.write(0);
    b1_count.write(0);
    ev_write_err.write(false);
    mq_rd_ = 0;
    mq_cnt_ = 0;
    bq_rd_ = 0;
    bq_cnt_ = 0;
    wb_rd_ = 0;
    wb_cnt_ = 0;
    bt_rd_ = 0;
    bt_cnt_ = 0;
    aw_in_ = 0;
    aw_out_ = 0;
    w_beat_ = 0;
    last_ = true;
    b_segs_ = 0;
    b1_ = 0;
    wait();
    while (true) {
      // ---- what moved at the edge just passed ----
      bool err = false;
      if (m_b.fired()) {
        err = m_b.data().resp != 0;
        if (bt_cnt_ != 0) {  // one B per burst (a B for nothing taken is the slave's error)
          const unsigned h = bt_rd_.to_uint();
          if (bt_seg_[h]) ++b_segs_;
          if (bt_port_[h]) ++b1_;
          ++bt_rd_;
          --bt_cnt_;
        }
      }
      if (m_aw.taken()) {
        mq_rd_ = (mq_rd_ + 1) % MQ;
        --mq_cnt_;
        ++aw_out_;
      }
      if (m_w.taken()) {
        wb_rd_ = (wb_rd_ + 1) % WB;
        --wb_cnt_;
      }
      // A W beat of the head burst (only its port was ready).
      if (w0.fired() || w1.fired()) {
        const unsigned h = bq_rd_.to_uint();
        AxiW<W> b = bq_port_[h] ? w1.data() : w0.data();
        b.last = w_beat_ == bq_len_[h];
        const unsigned s = unsigned((wb_rd_ + wb_cnt_) % WB);
        wb_[s] = b;
        wb_seq_[s] = bq_seq_[h];
        ++wb_cnt_;
        if (b.last) {
          w_beat_ = 0;
          bq_rd_ = (bq_rd_ + 1) % BQ;
          --bq_cnt_;
        } else {
          ++w_beat_;
        }
      }
      // AWs from the ports: with both at once, the one not taken last goes first.
      const bool f0 = aw0.fired(), f1 = aw1.fired();
      if (f0 && f1) {
        const bool first = !last_;
        take_aw(first, first ? aw1.data() : aw0.data());
        take_aw(!first, first ? aw0.data() : aw1.data());
      } else if (f0) {
        take_aw(false, aw0.data());
      } else if (f1) {
        take_aw(true, aw1.data());
      }

      // ---- offers for the next edge ----
      if (mq_cnt_ != 0) {
        m_aw.offer(mq_[mq_rd_.to_uint()]);
      } else {
        m_aw.idle();
      }
      // The W head's burst has its AW presented (seq == aw_out_) or accepted (seq before aw_out_).
      bool w_ok = false;
      if (wb_cnt_ != 0) {
        const sc_dt::sc_uint<8> d = aw_out_ - wb_seq_[wb_rd_.to_uint()];
        w_ok = !d[7];
      }
      if (w_ok) {
        m_w.offer(wb_[wb_rd_.to_uint()]);
      } else {
        m_w.idle();
      }
      // AW ready: both ports with room for two; with room for one, the port known to be waiting
      // (round robin when both are), else the one not taken last.
      int room = MQ - mq_cnt_.to_int();
      if (BQ - bq_cnt_.to_int() < room) room = BQ - bq_cnt_.to_int();
      if (BT - bt_cnt_.to_int() < room) room = BT - bt_cnt_.to_int();
      bool r0 = false, r1 = false;
      if (room >= 2) {
        r0 = true;
        r1 = true;
      } else if (room == 1) {
        const bool wait0 = aw0.vld.read() && !f0;  // offered and not taken: still offered
        const bool wait1 = aw1.vld.read() && !f1;
        bool sel = !last_;
        if (wait0 != wait1) sel = wait1;
        r0 = !sel;
        r1 = sel;
      }
      aw0.ready(r0);
      aw1.ready(r1);
      // W ready: the head burst's port, while the W buffer has room for the beat.
      const bool wr = bq_cnt_ != 0 && wb_cnt_ < WB;
      const bool wport = bq_port_[bq_rd_.to_uint()];
      w0.ready(wr && !wport);
      w1.ready(wr && wport);
      m_b.ready(true);
      b_segs.write(b_segs_);
      b1_count.write(b1_);
      ev_write_err.write(err);
      wait();
    }
  }
};

}  // namespace rnic::hls
