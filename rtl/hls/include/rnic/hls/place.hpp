// SPDX-License-Identifier: Apache-2.0
// Place: the DMA placement stage of the SystemC-HLS kernel (the model of rnic_rx_place,
// docs/rtl-architecture.md). It takes validate's verdicts in order and, for every verdict of a segment
// (PLACE, DROP, ERROR: each has its packet's beats in the data FIFO; a TOKEN has none), pops the packet's
// beats up to the one marked last.
//   - PLACE (RFC 5041 5.1 tagged / 5.2 untagged placement): the payload starts at packet byte hdr_bytes;
//     its pay_bytes bytes go to host address addr as AXI INCR bursts of BYTES-wide beats, awaddr aligned
//     down to BYTES, byte strobes selecting exactly the payload bytes, at most 256 beats and never
//     crossing a 4 KiB boundary (AXI A3.4.1). The last burst of a segment that writes carries
//     WrAw.seg_last, and commit_cnt counts those segments (free-running) from the moment they are
//     committed. A zero-length PLACE writes nothing and is not counted.
//   - An untagged PLACE is checked at its commit against the expected MSN of its queue (deliver's ExpUpd,
//     accepted every cycle, kept in a copy per (stream, QN)): with the queue set and the MSN below the
//     expected one ((msn - expected) mod 2^32 >= 2^31, the RFC 5041 4.3 wrap) the segment belongs to a
//     message deliver has completed since lookup (write safety 4): it is STALE, its beats are discarded,
//     nothing is written, and it still goes to deliver as kPlaced (deliver reports the order error).
//   - DROP (7.1: a stream in error): beats discarded, nothing to deliver. ERROR: beats discarded, a
//     kDlvError with the 7.2 type/code, err_at_ssn and the segment's bytes as length goes to deliver.
//   - Tokens (FENCE, STREAM_RESET, QUEUE_SET) go to deliver as kDlvFence / kDlvReset / kDlvQueueSet, in
//     order with the segments.
// A Dlv leaves only after its segment's beats were all taken and, for a segment that writes, all its AWs
// and W beats were taken by the write mux, in verdict order.
// ev_bytes / ev_bytes_n (CNT_BYTES): one pulse per PLACE that is not stale, with its payload bytes.
//
// Structure: one loop iteration per cycle, in three parts that run side by side:
//   - the engine: the head verdict of a 4-entry verdict queue becomes the current segment (this is the
//     commit: stale check, commit_cnt, its AW job and its Dlv entry queued) when the previous one has
//     taken its last beat, so segments follow each other without a bubble (a token, which has no beats,
//     lets a second item commit in the same cycle); one input beat per cycle.
//     Write beat k covers host bytes A0 + k*BYTES.. (A0 = addr aligned down) and takes packet bytes
//     s + k*BYTES.. with s = hdr_bytes - (addr mod BYTES). With sh = ((s - 1) mod BYTES) + 1 (1..BYTES)
//     and lead = floor((s - 1) / BYTES) + 1 (0..3), write beat k = (in[k+lead-1] >> sh bytes) |
//     (in[k+lead] << (BYTES - sh) bytes): input beat i completes write beat i - lead, and the last
//     input beat also the tail write beat that needs no later input, so an input beat completes 0, 1 or
//     2 write beats. They go into a 4-entry W queue; the input is taken whenever it has room for two, so
//     only the W channel itself limits the rate (a packet shorter than its payload, which parse and
//     validate never produce, gets its missing write beats as zero data so AW and W still agree);
//   - the AW generator: splits each committed segment's write beats into bursts, one AW per cycle;
//   - the Dlv queue (8 entries), its head offered once its segment is finished.
#pragma once

#include <systemc.h>

#include "rnic/hls/base.hpp"

namespace rnic::hls {

template <class C>
SC_MODULE(Place) {
  sc_core::sc_in<bool> clk;
  sc_core::sc_in<bool> rst_n;

  p2p_in<Verdict> in;
  p2p_in<DataBeat<C::DATA_WIDTH>> beat;
  p2p_out<Dlv> dlv;
  p2p_out<WrAw> aw;
  p2p_out<AxiW<C::DATA_WIDTH>> w;
  p2p_in<ExpUpd> exp;
  sc_core::sc_out<sc_dt::sc_uint<32>> commit_cnt;
  sc_core::sc_out<bool> ev_bytes;
  sc_core::sc_out<sc_dt::sc_uint<16>> ev_bytes_n;

  SC_CTOR(Place) {
    SC_CTHREAD(run, clk.pos());
    reset_signal_is(rst_n, false);
  }

  // The FPGA's configuration-time init: the expected-MSN copy is zero.
  void power_on() {
    for (int i = 0; i < NQ; ++i) {
      exp_msn_[i] = 0;
      exp_set_[i] = false;
    }
  }

 private:
  static constexpr int W = C::DATA_WIDTH;
  static constexpr int B = C::BYTES;
  static constexpr int LB = B == 8 ? 3 : B == 16 ? 4 : B == 32 ? 5 : 6;  // log2(BYTES)
  // A burst ends at a block boundary: 4 KiB (A3.4.1), or 256 beats when that is less (64 bits: 2 KiB).
  static constexpr int BLK = (256 * B < 4096) ? 256 * B : 4096;
  static constexpr int NQ = C::NUM_STREAMS * C::NUM_QNS;  // (stream, QN) queues
  static constexpr int VQ = 4;                            // verdicts accepted ahead of the engine
  static constexpr int AQ = 4;                            // committed segments ahead of the AW generator
  static constexpr int DQ = 8;                            // Dlv entries waiting for their segment
  static constexpr int WQ = 4;                            // write beats produced ahead of W

  using Data = sc_dt::sc_biguint<W>;
  using Strb = sc_dt::sc_uint<B>;

  // The expected-MSN copy (deliver's ExpUpd): the MSN and whether the queue is set.
  sc_dt::sc_uint<32> exp_msn_[static_cast<std::size_t>(NQ)];
  bool exp_set_[static_cast<std::size_t>(NQ)];

  // Verdict queue.
  Verdict vq_[static_cast<std::size_t>(VQ)];
  sc_dt::sc_uint<3> vq_rd_, vq_cnt_;

  // AW jobs: aligned address and write beats of each committed segment.
  sc_dt::sc_uint<64> aq_addr_[static_cast<std::size_t>(AQ)];
  sc_dt::sc_uint<16> aq_n_[static_cast<std::size_t>(AQ)];
  sc_dt::sc_uint<3> aq_rd_, aq_cnt_;

  // W queue: the write beat and whether it is its segment's last.
  AxiW<W> wq_[static_cast<std::size_t>(WQ)];
  bool wq_end_[static_cast<std::size_t>(WQ)];
  sc_dt::sc_uint<3> wq_rd_, wq_cnt_;

  // Dlv queue: the item, whether its segment's beats were all taken (set by the engine), and whether it
  // waits for writes (wsegn: its number among the segments committed with writes).
  Dlv dq_[static_cast<std::size_t>(DQ)];
  bool dq_bdone_[DQ], dq_w_[DQ];
  sc_dt::sc_uint<32> dq_wsegn_[static_cast<std::size_t>(DQ)];
  sc_dt::sc_uint<4> dq_rd_, dq_cnt_;

  // Progress counters (free-running).
  sc_dt::sc_uint<32> commit_;  // segments committed with writes
  sc_dt::sc_uint<32> aw_sd_;   // of those, segments whose last AW was taken
  sc_dt::sc_uint<32> w_sd_;    // of those, segments whose last W beat was taken

  // The engine's current segment.
  bool cur_v_;  // a segment is current
  bool cur_w_;  // it writes
  bool flush_;  // its last beat came with write beats still owed (malformed packet)
  bool cur_d_;  // it has a Dlv entry, in slot cur_dslot_
  sc_dt::sc_uint<3> cur_dslot_;
  sc_dt::sc_uint<8> sh_;      // 1..BYTES
  sc_dt::sc_uint<3> lead_;    // input beats still to come before the one completing write beat 0
  sc_dt::sc_uint<16> nout_;   // write beats
  sc_dt::sc_uint<16> k_;      // write beats produced
  sc_dt::sc_uint<8> off_;     // addr mod BYTES
  sc_dt::sc_uint<8> ll_;      // lane of the last payload byte
  sc_dt::sc_uint<64> waddr_;  // host address of write beat k_
  Data prev_;                 // the previous input beat shifted down by sh_ bytes

  // The AW generator: the segment being split and the burst offered.
  sc_dt::sc_uint<64> aw_addr_;
  sc_dt::sc_uint<16> aw_rem_;
  bool aw_off_;
  bool aw_off_last_;

  static bool msb32(const sc_dt::sc_uint<32>& v) { return v[31]; }

  // What deliver gets for a verdict (structs.def rnic_dlv_t), as rnic_rx_place builds it.
  static Dlv make_dlv(const Verdict& v) {
    Dlv d;
    const bool tok = v.action == Action::kToken;
    if (tok && (v.kind == ItemKind::kFence || v.kind == ItemKind::kStreamReset)) {
      d.kind = v.kind == ItemKind::kFence ? DlvKind::kDlvFence : DlvKind::kDlvReset;
      d.stream = v.arg;
      return d;
    }
    d.stream = v.seg.stream;
    d.ssn = v.seg.ssn;
    d.last = v.seg.last;
    d.is_tagged = v.seg.is_tagged;
    d.stag_qn = v.seg.is_tagged ? v.seg.stag : v.seg.qn;
    d.msn = v.seg.msn;
    d.rsvd_ulp = v.seg.rsvd_ulp;
    d.hdr_raw = v.seg.hdr_raw;
    if (tok) {  // QUEUE_SET: stag_qn = QN, msn = the first MSN
      d.kind = DlvKind::kDlvQueueSet;
      d.stag_qn = v.seg.qn;
      d.rsvd_ulp = 0;
      d.hdr_raw = 0;
    } else if (v.action == Action::kError) {
      d.kind = DlvKind::kDlvError;
      d.length = v.seg.seg_bytes;
      d.err_type = v.err_type;
      d.err_code = v.err_code;
      d.err_at_ssn = v.err_at_ssn;
    } else {
      d.kind = DlvKind::kPlaced;
      d.length = v.msg_len;
    }
    return d;
  }

  // Write beat k_ of the current segment into the W queue.
  void emit(const Data& data) {
    const Strb ones = ~Strb(0);
    const bool first = k_ == 0;
    const bool last = k_ == nout_ - 1;
    Strb strb = ones;
    if (first) strb = strb & Strb(ones << off_.to_uint());
    if (last) strb = strb & Strb(ones >> (B - 1 - ll_.to_uint()));
    // The burst's last beat: the segment's last, or the last before a block boundary.
    const sc_dt::sc_uint<64> next = waddr_ + B;
    const bool blk_end = (next & sc_dt::sc_uint<64>(BLK - 1)) == 0;
    AxiW<W> wb;
    wb.data = data;
    wb.strb = strb;
    wb.last = last || blk_end;
    const unsigned slot = unsigned((wq_rd_ + wq_cnt_) % WQ);
    wq_[slot] = wb;
    wq_end_[slot] = last;
    ++wq_cnt_;
    ++k_;
    waddr_ = next;
  }

  // The current segment has taken all its beats (and produced all its write beats).
  void seg_end() {
    cur_v_ = false;
    flush_ = false;
    if (cur_d_) dq_bdone_[cur_dslot_.to_uint()] = true;
  }

  // One input beat of the current segment.
  void on_beat(const DataBeat<W>& b) {
    if (cur_w_) {
      if (lead_ != 0) {
        --lead_;
      } else if (k_ != nout_) {
        Data hi = b.data << (8 * (B - sh_.to_uint()));
        emit(prev_ | hi);
      }
      if (sh_ == B) {
        prev_ = 0;
      } else {
        prev_ = b.data >> (8 * sh_.to_uint());
      }
      if (b.last && k_ != nout_) emit(prev_);  // the tail: its bytes are all in this beat
    }
    if (b.last) {
      if (cur_w_ && k_ != nout_) {
        flush_ = true;
      } else {
        seg_end();
      }
    }
  }

  // Commit the verdict at the head of the verdict queue (the engine is free, the AW and Dlv queues have
  // room). Returns whether ev_bytes pulses, with its byte count in n.
  bool load(sc_dt::sc_uint<16> & n) {
    const Verdict v = vq_[vq_rd_.to_uint()];
    vq_rd_ = (vq_rd_ + 1) % VQ;
    --vq_cnt_;
    const unsigned dslot = unsigned((dq_rd_ + dq_cnt_) % DQ);
    if (v.action == Action::kToken) {
      if (v.kind != ItemKind::kSeg) {
        dq_[dslot] = make_dlv(v);
        dq_bdone_[dslot] = true;
        dq_w_[dslot] = false;
        dq_wsegn_[dslot] = 0;
        ++dq_cnt_;
      }
      return false;
    }
    const bool place = v.action == Action::kPlace;
    bool stale = false;
    if (place && !v.seg.is_tagged && v.seg.stream < C::NUM_STREAMS) {
      const unsigned q = v.seg.stream.to_uint() * C::NUM_QNS + v.seg.qn.to_uint() % C::NUM_QNS;
      const sc_dt::sc_uint<32> d = v.seg.msn - exp_msn_[q];
      stale = exp_set_[q] && msb32(d);
    }
    const bool wr = place && !stale && v.pay_bytes != 0;
    cur_v_ = true;
    cur_w_ = wr;
    flush_ = false;
    cur_d_ = place || v.action == Action::kError;
    cur_dslot_ = dslot;
    if (cur_d_) {
      dq_[dslot] = make_dlv(v);
      dq_bdone_[dslot] = false;
      dq_w_[dslot] = wr;
      dq_wsegn_[dslot] = commit_;
      ++dq_cnt_;
    }
    if (wr) {
      off_ = v.addr.range(LB - 1, 0);
      const sc_dt::sc_uint<64> a0 = v.addr & ~sc_dt::sc_uint<64>(B - 1);
      const sc_dt::sc_uint<17> end = v.pay_bytes + off_;  // off + pay_bytes
      nout_ = (end + (B - 1)) >> LB;
      ll_ = (end - 1) & (B - 1);
      // s - 1 = hdr_bytes - off - 1 (signed): sh = ((s - 1) mod BYTES) + 1, lead = floor((s - 1) / BYTES) + 1.
      const sc_dt::sc_int<10> sm1 = sc_dt::sc_int<10>(v.hdr_bytes.to_int()) - off_.to_int() - 1;
      sh_ = sm1.range(LB - 1, 0).to_uint() + 1;
      lead_ = (sm1 >> LB) + 1;
      k_ = 0;
      waddr_ = a0;
      prev_ = 0;
      const unsigned aslot = unsigned((aq_rd_ + aq_cnt_) % AQ);
      aq_addr_[aslot] = a0;
      aq_n_[aslot] = nout_;
      ++aq_cnt_;
      ++commit_;
    }
    n = v.pay_bytes;
    return place && !stale;
  }

  bool dq_head_ready() const {
    const unsigned h = dq_rd_.to_uint();
    if (!dq_bdone_[h]) return false;
    if (dq_w_[h]) {  // aw_sd_ and w_sd_ past wsegn (at most DQ apart)
      const sc_dt::sc_uint<32> da = aw_sd_ - dq_wsegn_[h] - 1;
      const sc_dt::sc_uint<32> dw = w_sd_ - dq_wsegn_[h] - 1;
      if (msb32(da) || msb32(dw)) return false;
    }
    return true;
  }

  void run() {
    in.reset();
    beat.reset();
    exp.reset();
    dlv.reset();
    aw.reset();
    w.reset();
    commit_cnt.write(0);
    ev_bytes.write(false);
    ev_bytes_n.write(0);
    vq_rd_ = 0;
    vq_cnt_ = 0;
    aq_rd_ = 0;
    aq_cnt_ = 0;
    wq_rd_ = 0;
    wq_cnt_ = 0;
    dq_rd_ = 0;
    dq_cnt_ = 0;
    commit_ = 0;
    aw_sd_ = 0;
    w_sd_ = 0;
    cur_v_ = false;
    cur_w_ = false;
    flush_ = false;
    cur_d_ = false;
    cur_dslot_ = 0;
    sh_ = B;
    lead_ = 0;
    nout_ = 0;
    k_ = 0;
    off_ = 0;
    ll_ = 0;
    waddr_ = 0;
    prev_ = 0;
    aw_addr_ = 0;
    aw_rem_ = 0;
    aw_off_ = false;
    aw_off_last_ = false;
    // After reset every queue expects nothing until its QUEUE_SET (deliver clears its words too).
    for (int i = 0; i < NQ; ++i) exp_set_[i] = false;
    wait();
    while (true) {
      // ---- what moved at the edge just passed ----
      // Deliver's expected MSN first: a segment committed in this iteration sees it.
      if (exp.fired()) {
        const ExpUpd u = exp.data();
        if (u.stream < C::NUM_STREAMS) {
          const unsigned q = u.stream.to_uint() * C::NUM_QNS + u.qn.to_uint() % C::NUM_QNS;
          exp_msn_[q] = u.msn;
          exp_set_[q] = u.set;
        }
      }
      if (in.fired()) {
        vq_[unsigned((vq_rd_ + vq_cnt_) % VQ)] = in.data();
        ++vq_cnt_;
      }
      if (aw.taken()) {
        aw_off_ = false;
        if (aw_off_last_) ++aw_sd_;
      }
      if (w.taken()) {
        if (wq_end_[wq_rd_.to_uint()]) ++w_sd_;
        wq_rd_ = (wq_rd_ + 1) % WQ;
        --wq_cnt_;
      }
      if (dlv.taken()) {
        dq_rd_ = (dq_rd_ + 1) % DQ;
        --dq_cnt_;
      }
      // A malformed segment's missing write beats (beat is not ready meanwhile).
      if (cur_v_ && flush_ && wq_cnt_ < WQ) {
        emit(Data(0));
        if (k_ == nout_) seg_end();
      }
      if (beat.fired()) on_beat(beat.data());

      // ---- commit the next verdict when the engine is free ----
      bool bytes_ev = false;
      sc_dt::sc_uint<16> bytes_n = 0;
      // A token leaves the engine free: a second item may follow it in the same cycle.
      for (int t = 0; t < 2; ++t) {
        if (!cur_v_ && vq_cnt_ != 0 && aq_cnt_ < AQ && dq_cnt_ < DQ) {
          sc_dt::sc_uint<16> n = 0;
          if (load(n)) {
            bytes_ev = true;
            bytes_n = n;
          }
        }
      }

      // ---- AW generator: the next burst once the offered one was taken ----
      if (!aw_off_) {
        if (aw_rem_ == 0 && aq_cnt_ != 0) {
          aw_addr_ = aq_addr_[aq_rd_.to_uint()];
          aw_rem_ = aq_n_[aq_rd_.to_uint()];
          aq_rd_ = (aq_rd_ + 1) % AQ;
          --aq_cnt_;
        }
        if (aw_rem_ != 0) {
          // Beats up to the block end (awaddr is aligned to BYTES).
          const sc_dt::sc_uint<16> room = (BLK - (aw_addr_ & sc_dt::sc_uint<64>(BLK - 1))) >> LB;
          const sc_dt::sc_uint<16> n = aw_rem_ < room ? aw_rem_ : room;
          WrAw a;
          a.addr = aw_addr_;
          a.len = n - 1;
          a.seg_last = n == aw_rem_;
          aw.offer(a);
          aw_off_ = true;
          aw_off_last_ = a.seg_last;
          aw_addr_ += sc_dt::sc_uint<64>(n) << LB;
          aw_rem_ -= n;
        } else {
          aw.idle();
        }
      }

      // ---- offers for the next edge ----
      if (wq_cnt_ != 0) {
        w.offer(wq_[wq_rd_.to_uint()]);
      } else {
        w.idle();
      }
      if (dq_cnt_ != 0 && dq_head_ready()) {
        dlv.offer(dq_[dq_rd_.to_uint()]);
      } else {
        dlv.idle();
      }
      // An input beat may complete two write beats: take it only with room for both.
      beat.ready(cur_v_ && !flush_ && (!cur_w_ || wq_cnt_ <= WQ - 2));
      in.ready(vq_cnt_ < VQ);
      exp.ready(true);
      commit_cnt.write(commit_);
      ev_bytes.write(bytes_ev);
      if (bytes_ev) ev_bytes_n.write(bytes_n);
      wait();
    }
  }
};

}  // namespace rnic::hls
