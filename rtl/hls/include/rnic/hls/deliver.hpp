// SPDX-License-Identifier: Apache-2.0
// Deliver: the last stage of the SystemC-HLS kernel (the model of rnic_rx_deliver): in-order delivery
// and the completion ring.
//   - DDP-SSN order (RFC 5041 5.3, 5.4): per stream next_ssn and one slot per DDP-SSN in
//     [next_ssn, next_ssn + SSN_WINDOW). A placed segment fills its slot; one outside the window or whose
//     slot is filled (by a segment or an error mark) is a duplicate (ev_dup, nothing else changes: 5.3,
//     the first copy is the one delivered). While slot next_ssn is filled it is released, one per
//     cycle, and next_ssn moves on (SsnUpd to lookup each time).
//   - Message order (4.3, 5.3, 7.1 untagged #5): a released untagged segment must carry its queue's
//     expected MSN (QUEUE_SET's first MSN, + 1 per completed message; 0 while the queue was not set since
//     STREAM_RESET). Any other is an ORDER error: an error completion 2/0x03 (7.2 Invalid MSN range)
//     with FLAGS.order, STAG_QN = QN and MSN of the segment, HEADER zero; lookup is told (kConsFail: the
//     stream enters the error state, 7.1) and nothing more of the stream is delivered until STREAM_RESET
//     (it is still sequenced: the stream's error bit). Completions thus consume buffers strictly in MSN
//     order.
//   - A released last segment (L, 5.4) completes its message: a delivery completion (tagged: STag and
//     RsvdULP[7:0]; untagged: QN, MSN, message length, RsvdULP[39:0]; both the DDP-SSN of the last
//     segment), ev_msg; untagged: the expected MSN + 1 (ExpUpd to place, for its stale check) and a
//     consume (kConsConsume) to lookup.
//   - ERROR items (validate's 7.1 failures; docs/rtl-architecture.md "Errors in DDP-SSN order"): an
//     error with err_at_ssn (every 7.1 error) is sequenced like a segment: at next_ssn it is reported at
//     once and next_ssn advances (the filled slots after it are released as usual, nothing of them is
//     delivered); ahead of next_ssn in the window it fills its slot with an error mark (a segment placed
//     there is replaced: the failing one is reported) and the stream's error record (T, type, code,
//     segment length, header bytes) is written (validate takes a later failing segment of the stream
//     only before the waiting one, so the record holds the first in DDP-SSN order); behind next_ssn, or
//     without err_at_ssn (the LLP error), or for a stream >= NUM_STREAMS, it is reported at once. A
//     released error mark is reported with the record. Reported: an error completion (type, code,
//     DDP-SSN, segment length, the 18 header bytes as received; STAG_QN, MSN and RsvdULP zero) only if
//     the stream has no error yet (its error bit, set by an order error too): then the bit is set and
//     lookup is told (kConsFail: ERROR from then on). A later error of the stream is not reported. So a
//     stream reports one error, at its DDP-SSN position: after every message before it, nothing after.
//   - STREAM_RESET: next_ssn 0, no slot filled, no order error, no queue set (SsnUpd 0, ExpUpd set = 0
//     per QN), echo kConsReset. QUEUE_SET: the queue's expected MSN (ExpUpd set = 1), echo kConsQset,
//     then a fence. FENCE: fence_done once everything before it is written and acknowledged.
//   - Items of a stream >= NUM_STREAMS: PLACED is a duplicate; STREAM_RESET and QUEUE_SET only echo.
// Completion ring (hw.def CQ_*, CQE): decided completions and fence markers wait in order in a 16-entry
// queue. Each takes its data mark: place's commit_cnt read at least 2 cycles after its decision and after
// the edge at which every ExpUpd pushed up to it was taken (write safety 4: place sees the new expected
// MSN before it commits another segment of the queue). The head is written once b_segs reaches its mark
// (every segment committed before it is acknowledged), the ring is enabled and has room counting entries
// in flight ((started - cq_cons) < 2^log2) and fewer than 32 entries await their B: one burst of 64
// bytes (64 / BYTES beats, all strobes) at cq_base + 64 * (index mod 2^log2), phase bit 1 on the first
// lap. CQ_PROD advances when the entry's own B has come (b1_count, in order). cq_enable low: entries
// reaching the head are discarded. cq_reset: producer 0 (phase 1), entries in flight finish uncounted.
// cq_busy: a completion is loaded or its write not yet acknowledged (write safety 5). A fence marker
// leaves once its mark is reached and nothing is in flight: fence_done pulses.
//
// Structure: one loop iteration per cycle; per cycle one item taken or one slot released, one
// completion head handled, one item per output queue offered.
#pragma once

#include <systemc.h>

#include "rnic/hls/base.hpp"
#include "rnic/hw/hw.hpp"

namespace rnic::hls {

template <class C>
SC_MODULE(Deliver) {
  sc_core::sc_in<bool> clk;
  sc_core::sc_in<bool> rst_n;

  p2p_in<Dlv> in;
  p2p_out<Cons> cons;
  p2p_out<SsnUpd> ssn;
  p2p_out<ExpUpd> exp;
  p2p_out<WrAw> aw;
  p2p_out<AxiW<C::DATA_WIDTH>> w;
  sc_core::sc_in<sc_dt::sc_uint<32>> commit_cnt, b_segs, b1_count;
  sc_core::sc_in<sc_dt::sc_uint<64>> cq_base;
  sc_core::sc_in<sc_dt::sc_uint<5>> cq_log2;
  sc_core::sc_in<bool> cq_enable, cq_reset;
  sc_core::sc_in<sc_dt::sc_uint<32>> cq_cons;
  sc_core::sc_out<sc_dt::sc_uint<32>> cq_prod;
  sc_core::sc_out<bool> cq_busy, fence_done;
  sc_core::sc_out<bool> ev_msg, ev_dup, ev_order;

  SC_CTOR(Deliver) {
    SC_CTHREAD(run, clk.pos());
    reset_signal_is(rst_n, false);
  }

  // The FPGA's configuration-time contents of the memories.
  void power_on() {
    for (int s = 0; s < NS; ++s) {
      nssn_[s] = 0;
      filled_[s] = 0;
      err_[s] = false;
      qset_[s] = 0;
    }
    for (int i = 0; i < NS * WIN; ++i) slot_[i] = Slot();
    for (int s = 0; s < NS; ++s) rec_[s] = ErrRec();
    for (int i = 0; i < NS * NQ; ++i) exp_msn_[i] = 0;
    for (int i = 0; i < CE_DEPTH; ++i) {
      ce_[i] = Ce();
      ce_mark_[i] = 0;
    }
  }

 private:
  using u16 = sc_dt::sc_uint<16>;
  using u32 = sc_dt::sc_uint<32>;
  using u8 = sc_dt::sc_uint<8>;
  static constexpr int W = C::DATA_WIDTH;
  static constexpr int NS = C::NUM_STREAMS;
  static constexpr int NQ = C::NUM_QNS;
  static constexpr int WIN = C::SSN_WINDOW;
  static constexpr int BEATS = 64 / C::BYTES;  // beats of one completion entry (hw.def CQE_BYTES)
  static constexpr int CE_DEPTH = 16;          // decided completions / fence markers not yet written
  static constexpr int CO_DEPTH = 8;           // consume events not yet taken by lookup
  static constexpr int EQ_DEPTH = 4;           // expected-MSN updates not yet taken by place
  static constexpr int SQ_DEPTH = 4;           // next-SSN updates not yet taken by lookup
  static constexpr int ACK_DEPTH = 32;         // completion writes awaiting their B
  static constexpr int WQ_DEPTH = 2;           // completion entries loaded whose W beats are not all taken
  static_assert(rnic::hw::kCQE_BYTES == 64, "a completion entry is 64 bytes");

  // RFC 5041 7.2 Invalid MSN range: the order error (docs/rtl-architecture.md, "What the card reports").
  static constexpr unsigned kOrderType = hw::ddp_error::kType[hw::ddp_error::kUntaggedMsnRange];
  static constexpr unsigned kOrderCode = hw::ddp_error::kCode[hw::ddp_error::kUntaggedMsnRange];

  // What a filled DDP-SSN slot keeps for its completion, or an error mark (err: the stream's error
  // record is the report of the failing segment at this DDP-SSN).
  struct Slot {
    bool last = false;
    bool tagged = false;
    bool err = false;
    u32 stag_qn, msn, length;
    sc_dt::sc_uint<40> rsvd;
  };
  // Per stream the failing segment waiting at its DDP-SSN (the slot with the error mark).
  struct ErrRec {
    bool tagged = false;
    sc_dt::sc_uint<4> etype;
    u8 ecode;
    u16 length;  // segment bytes
    sc_dt::sc_biguint<144> hdr;
  };
  // A decided completion or a fence marker.
  struct Ce {
    bool marker = false;  // a FENCE / QUEUE_SET: fence_done, nothing written
    bool err = false;
    bool order = false;
    bool tagged = false;
    u16 stream, ssn;
    u32 length, stag_qn, msn;
    sc_dt::sc_uint<40> rsvd;
    sc_dt::sc_uint<4> etype;
    u8 ecode;
    sc_dt::sc_biguint<144> hdr;
    u32 exp_seq;  // ExpUpd entries pushed up to this decision (its own included)
    u32 mk_cyc;   // first cycle its data mark may be read
  };
  // An expected-MSN update; `all`: STREAM_RESET's set = 0 for every QN of the stream, one per cycle.
  struct ExpQ {
    u16 stream;
    u8 qn;
    u32 msn;
    bool set = false;
    bool all = false;
  };

  // ---- memories (fixed arrays) ----
  u16 nssn_[static_cast<std::size_t>(NS)];          // next DDP-SSN to deliver
  bits<WIN> filled_[static_cast<std::size_t>(NS)];  // slot i holds DDP-SSN i mod WIN
  Slot slot_[static_cast<std::size_t>(NS * WIN)];
  ErrRec rec_[static_cast<std::size_t>(NS)];     // the error record of the slot with the error mark
  bool err_[static_cast<std::size_t>(NS)];       // an error reported since the last STREAM_RESET: deliver nothing more
  bits<NQ> qset_[static_cast<std::size_t>(NS)];  // the queue's expected MSN was set since the last STREAM_RESET
  u32 exp_msn_[static_cast<std::size_t>(NS *
                                        NQ)];  // expected MSN per (stream, QN), meaningful while its qset bit is set
  Ce ce_[static_cast<std::size_t>(CE_DEPTH)];  // completion queue
  u32 ce_mark_[static_cast<std::size_t>(CE_DEPTH)];  // its data marks
  Cons co_[static_cast<std::size_t>(CO_DEPTH)];      // consume queue
  ExpQ eq_[static_cast<std::size_t>(EQ_DEPTH)];      // expected-MSN queue
  SsnUpd sq_[static_cast<std::size_t>(SQ_DEPTH)];    // next-SSN queue

  // ---- registers ----
  u8 ce_rd_, ce_mk_, ce_wr_;  // free-running: [rd, mk) have their mark, [mk, wr) wait for it
  u8 co_rd_, co_wr_, eq_rd_, eq_wr_, sq_rd_, sq_wr_;
  u16 eq_qi_;                  // the QN an `all` head is at
  u32 exp_pushed_, exp_done_;  // ExpUpd entries pushed / fully taken
  u32 exp_h1_, exp_h2_;        // exp_done_ one and two cycles ago
  u32 cyc_;                    // cycle counter
  bool hold_v_;                // an input item waits
  Dlv hold_;
  bool rel_v_;  // releasing filled slots of stream rel_s_
  u16 rel_s_;
  bool ev_msg_, ev_order_;
  // Completion writer.
  // AW and W are independent (AXI A3.3.1): an entry's AW waits in the AW register, its data in the W
  // queue; the next entry loads as soon as the AW register is free and the W queue has room, so one
  // entry's W beats leave while the next one's AW is offered (one completion per cycle at 512 bits).
  bool aw_pend_;  // the AW register holds the AW of the entry loaded last, not yet taken
  bool drop_;     // a cq_reset came since the entry in the AW register was loaded: its AW is not counted
  sc_dt::sc_uint<64> waddr_;
  sc_dt::sc_biguint<512> wq_[static_cast<std::size_t>(WQ_DEPTH)];  // entries whose W beats are not all taken
  sc_dt::sc_uint<1> wq_rd_;
  sc_dt::sc_uint<2> wq_cnt_;
  u8 beat_;          // the next beat of the W queue's head
  u32 widx_, prod_;  // entries started / acknowledged since the last cq_reset
  u32 infl_;         // started, not yet acknowledged
  u32 aw1_;          // this port's AW handshakes (b1_count counts their B)
  u32 last_aw_;      // aw1_ at the last AW handshake (cq_busy until b1_count reaches it)
  u32 ack_head_;     // aw1_ position of the oldest counted entry awaiting its B
  u32 n_ack_;        // counted entries awaiting their B (positions consecutive from ack_head_)

  // (a - b) mod 2^32 < 2^31: a has reached b.
  static bool reached(const u32& a, const u32& b) {
    const u32 d = a - b;
    return !d[31];
  }
  static unsigned used(const u8& wr, const u8& rd) { return u8(wr - rd).to_uint(); }
  static unsigned qn_index(const u32& qn) { return qn.to_uint() % NQ; }  // NQ a power of two: low bits

  void push_ce(Ce e) {
    e.exp_seq = exp_pushed_;
    e.mk_cyc = cyc_ + 2;
    ce_[ce_wr_.to_uint() % CE_DEPTH] = e;
    ce_wr_ = ce_wr_ + 1;
  }
  void push_co(unsigned kind, const u16& stream, const u8& qn) {
    Cons c;
    c.kind = kind;
    c.stream = stream;
    c.qn = qn;
    co_[co_wr_.to_uint() % CO_DEPTH] = c;
    co_wr_ = co_wr_ + 1;
  }
  void push_exp(const u16& stream, unsigned qn, const u32& msn, bool set, bool all) {
    ExpQ e;
    e.stream = stream;
    e.qn = qn;
    e.msn = msn;
    e.set = set;
    e.all = all;
    eq_[eq_wr_.to_uint() % EQ_DEPTH] = e;
    eq_wr_ = eq_wr_ + 1;
    exp_pushed_ = exp_pushed_ + 1;
  }
  void push_ssn(const u16& stream, const u16& next) {
    SsnUpd u;
    u.stream = stream;
    u.next_ssn = next;
    sq_[sq_wr_.to_uint() % SQ_DEPTH] = u;
    sq_wr_ = sq_wr_ + 1;
  }

  // An error reported (in item order, or at its DDP-SSN): an error completion, only for a stream
  // without one since its STREAM_RESET; then the stream delivers nothing more (its error bit) and
  // lookup puts it in ERROR (kConsFail; none for a stream past the table).
  void report_err(const u16& stream, const u16& seg_ssn, bool tagged, const u32& length, const sc_dt::sc_uint<4>& etype,
                  const u8& ecode, const sc_dt::sc_biguint<144>& hdr) {
    const unsigned s = stream.to_uint();
    const bool ok = s < static_cast<unsigned>(NS);
    if (ok && err_[s]) return;  // the stream reported its error already
    Ce e;
    e.err = true;
    e.tagged = tagged;
    e.stream = stream;
    e.ssn = seg_ssn;
    e.length = length;
    e.etype = etype;
    e.ecode = ecode;
    e.hdr = hdr;
    push_ce(e);
    if (!ok) return;  // a stream past the table: no FAIL (it has no entry in lookup's table)
    push_co(ConsKind::kConsFail, stream, 0);
    err_[s] = true;
  }

  // A slot released in DDP-SSN order (5.3): an error mark reports its stream's record; a segment gets
  // the message-order check and, at L, the completion.
  void release(unsigned s, const u16& seg_ssn, const Slot& g) {
    if (g.err) {
      const ErrRec& r = rec_[s];
      report_err(s, seg_ssn, r.tagged, r.length, r.etype, r.ecode, r.hdr);
      return;
    }
    deliver_seg(s, seg_ssn, g);
  }

  // A segment released in DDP-SSN order (5.3): the message-order check and, at L, the completion.
  void deliver_seg(unsigned s, const u16& seg_ssn, const Slot& g) {
    if (err_[s]) return;  // an error reported: nothing more is delivered until STREAM_RESET
    const unsigned q = qn_index(g.stag_qn);
    if (!g.tagged) {
      const bool set = qset_[s][static_cast<int>(q)];
      const u32 expected = set ? exp_msn_[s * NQ + q] : u32(0);
      if (g.msn != expected) {  // 4.3 broken: order error, no buffer consumed
        Ce e;
        e.err = true;
        e.order = true;
        e.stream = s;
        e.ssn = seg_ssn;
        e.stag_qn = g.stag_qn;
        e.msn = g.msn;
        e.etype = kOrderType;
        e.ecode = kOrderCode;
        push_co(ConsKind::kConsFail, s, 0);
        push_ce(e);
        err_[s] = true;
        ev_order_ = true;
        return;
      }
    }
    if (!g.last) return;
    if (!g.tagged) {  // the buffer of (QN, MSN) is handed back: the queue expects MSN + 1 (4.3)
      const u32 next = g.msn + 1;
      exp_msn_[s * NQ + q] = next;
      bits<NQ> qs = qset_[s];
      qs[static_cast<int>(q)] = 1;
      qset_[s] = qs;
      push_exp(s, q, next, true, false);
      push_co(ConsKind::kConsConsume, s, q);
    }
    Ce e;
    e.tagged = g.tagged;
    e.stream = s;
    e.ssn = seg_ssn;
    e.stag_qn = g.stag_qn;
    e.msn = g.msn;
    e.length = g.length;
    e.rsvd = g.rsvd;
    push_ce(e);
    ev_msg_ = true;
  }

  // next_ssn of stream s moves on; the slot after it, if filled, is released next cycle.
  void advance(unsigned s) {
    const u16 next = nssn_[s] + 1;
    nssn_[s] = next;
    push_ssn(s, next);
    rel_v_ = filled_[s][next.to_uint() % WIN];
    rel_s_ = s;
  }

  // The completion entry as hw.def RNIC_FIELD(CQE, ...) lays it out, little-endian.
  static void put(sc_dt::sc_biguint<512> & q, unsigned byte_off, unsigned nbits, sc_dt::uint64 v) {
    q.range(static_cast<int>(8 * byte_off + nbits - 1), static_cast<int>(8 * byte_off)) = v;
  }
  static sc_dt::sc_biguint<512> cqe_of(const Ce& e, bool phase) {
    using namespace rnic::hw;
    sc_dt::sc_biguint<512> q = 0;
    put(q, kCQE_STREAM_OFFSET, 16, e.stream);
    sc_dt::sc_uint<8> flags = 0;
    flags[0] = phase;
    flags[1] = e.err;
    flags[2] = e.tagged;
    flags[3] = e.order;
    put(q, kCQE_FLAGS_OFFSET, 8, flags);
    put(q, kCQE_SSN_OFFSET, 16, e.ssn);
    if (e.err) {
      put(q, kCQE_ERR_TYPE_OFFSET, 8, e.etype);
      put(q, kCQE_ERR_CODE_OFFSET, 8, e.ecode);
      put(q, kCQE_LENGTH_OFFSET, 32, e.length);
      if (e.order) {  // found at delivery: the segment's QN and MSN, no header
        put(q, kCQE_STAG_QN_OFFSET, 32, e.stag_qn);
        put(q, kCQE_MSN_OFFSET, 32, e.msn);
      } else {
        q.range(8 * kCQE_HEADER_OFFSET + kCQE_HEADER_BITS - 1, 8 * kCQE_HEADER_OFFSET) = e.hdr;
      }
    } else {
      put(q, kCQE_STAG_QN_OFFSET, 32, e.stag_qn);
      if (e.tagged) {
        put(q, kCQE_RSVD_ULP_OFFSET, 8, e.rsvd.range(7, 0));
      } else {
        put(q, kCQE_MSN_OFFSET, 32, e.msn);
        put(q, kCQE_LENGTH_OFFSET, 32, e.length);
        put(q, kCQE_RSVD_ULP_OFFSET, 40, e.rsvd);
      }
    }
    return q;
  }

  // One item (hold_), when the output queues have room (`room`). Returns whether it was consumed.
  bool take_item(bool room, bool& dup) {
    const Dlv& d = hold_;
    const unsigned s = d.stream.to_uint();
    const bool ok = s < static_cast<unsigned>(NS);
    switch (d.kind.to_uint()) {
      case DlvKind::kPlaced: {
        if (!ok) {
          dup = true;
          return true;
        }
        const u16 ahead = d.ssn - nssn_[s];
        const unsigned idx = d.ssn.to_uint() % WIN;
        if (ahead.to_uint() >= static_cast<unsigned>(WIN) || filled_[s][static_cast<int>(idx)]) {
          dup = true;  // 5.3: outside the window or placed already; the first copy is delivered
          return true;
        }
        Slot g;
        g.last = d.last;
        g.tagged = d.is_tagged;
        g.stag_qn = d.stag_qn;
        g.msn = d.msn;
        g.length = d.length;
        g.rsvd = d.rsvd_ulp;
        if (ahead != 0) {  // 5.4: wait for the segments before it
          slot_[s * WIN + idx] = g;
          bits<WIN> f = filled_[s];
          f[static_cast<int>(idx)] = 1;
          filled_[s] = f;
          return true;
        }
        if (!room) return false;
        deliver_seg(s, d.ssn, g);
        advance(s);
        return true;
      }
      case DlvKind::kDlvError: {
        const u16 ahead = ok ? u16(d.ssn - nssn_[s]) : u16(0);
        const bool seq = ok && d.err_at_ssn == 1 && ahead.to_uint() < static_cast<unsigned>(WIN);
        if (seq && ahead != 0) {  // waits at its DDP-SSN (replacing a segment placed there)
          const unsigned idx = d.ssn.to_uint() % WIN;
          Slot g;
          g.err = true;
          slot_[s * WIN + idx] = g;
          ErrRec r;
          r.tagged = d.is_tagged;
          r.etype = d.err_type;
          r.ecode = d.err_code;
          r.length = d.length.range(15, 0);
          r.hdr = d.hdr_raw;
          rec_[s] = r;
          bits<WIN> f = filled_[s];
          f[static_cast<int>(idx)] = 1;
          filled_[s] = f;
          return true;
        }
        if (!room) return false;
        // At next_ssn (reported, next_ssn advances), behind it, or with no position: reported now.
        report_err(d.stream, d.ssn, d.is_tagged, d.length, d.err_type, d.err_code, d.hdr_raw);
        if (seq) advance(s);
        return true;
      }
      case DlvKind::kDlvReset: {
        if (!room) return false;
        if (ok) {
          nssn_[s] = 0;
          filled_[s] = 0;
          err_[s] = false;
          qset_[s] = 0;
          push_exp(d.stream, 0, 0, false, true);
          push_ssn(d.stream, 0);
        }
        push_co(ConsKind::kConsReset, d.stream, 0);
        return true;
      }
      case DlvKind::kDlvFence: {
        if (!room) return false;
        Ce e;
        e.marker = true;
        push_ce(e);
        return true;
      }
      case DlvKind::kDlvQueueSet: {
        if (!room) return false;
        if (ok) {
          const unsigned q = qn_index(d.stag_qn);
          exp_msn_[s * NQ + q] = d.msn;
          bits<NQ> qs = qset_[s];
          qs[static_cast<int>(q)] = 1;
          qset_[s] = qs;
          push_exp(d.stream, q, d.msn, true, false);
        }
        push_co(ConsKind::kConsQset, d.stream, d.stag_qn.range(7, 0));
        Ce e;
        e.marker = true;
        push_ce(e);  // after its ExpUpd: the fence waits for place to have seen it
        return true;
      }
      default:
        return true;  // unused code: ignored
    }
  }

  void run() {
    in.reset();
    cons.reset();
    ssn.reset();
    exp.reset();
    aw.reset();
    w.reset();
    cq_prod.write(0);
    cq_busy.write(false);
    fence_done.write(false);
    ev_msg.write(false);
    ev_dup.write(false);
    ev_order.write(false);
    ce_rd_ = 0;
    ce_mk_ = 0;
    ce_wr_ = 0;
    co_rd_ = 0;
    co_wr_ = 0;
    eq_rd_ = 0;
    eq_wr_ = 0;
    sq_rd_ = 0;
    sq_wr_ = 0;
    eq_qi_ = 0;
    exp_pushed_ = 0;
    exp_done_ = 0;
    exp_h1_ = 0;
    exp_h2_ = 0;
    cyc_ = 0;
    hold_v_ = false;
    rel_v_ = false;
    rel_s_ = 0;
    aw_pend_ = false;
    wq_rd_ = 0;
    wq_cnt_ = 0;
    drop_ = false;
    beat_ = 0;
    waddr_ = 0;
    widx_ = 0;
    prod_ = 0;
    infl_ = 0;
    aw1_ = 0;
    last_aw_ = 0;
    ack_head_ = 0;
    n_ack_ = 0;
    wait();
    // After reset the per-stream words are cleared, one stream per cycle, input not ready (as the RTL);
    // the payload slots and expected MSNs mean nothing until a fill / QUEUE_SET writes them.
    for (int s = 0; s < NS; ++s) {
      nssn_[s] = 0;
      filled_[s] = 0;
      err_[s] = false;
      qset_[s] = 0;
      wait();
    }
    in.ready(true);
    while (true) {
      wait();
      cyc_ = cyc_ + 1;
      const bool rst_cq = cq_reset.read();
      const u32 b1 = b1_count.read();

      // ---- what moved at the edge just passed ----
      if (in.fired()) {
        hold_ = in.data();
        hold_v_ = true;
      }
      if (cons.taken()) co_rd_ = co_rd_ + 1;
      if (ssn.taken()) sq_rd_ = sq_rd_ + 1;
      if (exp.taken()) {
        if (!eq_[eq_rd_.to_uint() % EQ_DEPTH].all || eq_qi_ == NQ - 1) {
          eq_rd_ = eq_rd_ + 1;
          eq_qi_ = 0;
          exp_done_ = exp_done_ + 1;
        } else {
          eq_qi_ = eq_qi_ + 1;
        }
      }
      if (aw.taken()) {
        aw_pend_ = false;
        aw1_ = aw1_ + 1;
        last_aw_ = aw1_;
        if (!drop_ && !rst_cq) {  // counted: CQ_PROD passes it when its B has come
          if (n_ack_ == 0) ack_head_ = aw1_;
          n_ack_ = n_ack_ + 1;
        }
      }
      if (w.taken()) {
        if (beat_ == BEATS - 1) {
          beat_ = 0;
          wq_rd_ = wq_rd_ + 1;
          wq_cnt_ = wq_cnt_ - 1;
        } else {
          beat_ = beat_ + 1;
        }
      }
      // A completion write not yet handed to the mux whole (its AW or a W beat still here).
      const bool writing = aw_pend_ || wq_cnt_ != 0;

      // ---- acknowledgements: CQ_PROD in order, each entry after its own B ----
      if (rst_cq) {  // producer 0, phase 1; entries in flight finish uncounted
        drop_ = true;
        widx_ = 0;
        prod_ = 0;
        infl_ = 0;
        n_ack_ = 0;
      } else if (n_ack_ != 0 && reached(b1, ack_head_)) {
        prod_ = prod_ + 1;
        infl_ = infl_ - 1;
        ack_head_ = ack_head_ + 1;
        n_ack_ = n_ack_ - 1;
      }

      // ---- data marks, in queue order (write safety 4) ----
      if (ce_mk_ != ce_wr_) {
        const unsigned i = ce_mk_.to_uint() % CE_DEPTH;
        if (reached(exp_h2_, ce_[i].exp_seq) && reached(cyc_, ce_[i].mk_cyc)) {
          ce_mark_[i] = commit_cnt.read();
          ce_mk_ = ce_mk_ + 1;
        }
      }

      // ---- the head of the completion queue ----
      bool mk_done = false;
      if (ce_rd_ != ce_wr_) {
        const unsigned i = ce_rd_.to_uint() % CE_DEPTH;
        const Ce& h = ce_[i];
        const bool gate = ce_rd_ != ce_mk_ && reached(b_segs.read(), ce_mark_[i]);
        bool pop = false;
        if (h.marker) {  // every completion before it written and acknowledged
          mk_done = gate && !writing && infl_ == 0 && !rst_cq;
          pop = mk_done;
        } else if (!cq_enable.read()) {
          pop = !rst_cq;  // ring disabled: decided completions are discarded
        } else {
          const unsigned lg = cq_log2.read().to_uint();
          const u32 size = u32(1) << lg;
          const u32 in_ring = widx_ - cq_cons.read();
          const bool wr_room = !aw_pend_ && wq_cnt_.to_uint() < static_cast<unsigned>(WQ_DEPTH);
          if (gate && !rst_cq && wr_room && in_ring < size && infl_ < static_cast<unsigned>(ACK_DEPTH)) {
            const u32 index = widx_ & (size - 1);
            const u32 lap = widx_ >> lg;
            sc_dt::sc_uint<64> base = cq_base.read();
            base.range(5, 0) = 0;
            waddr_ = base + (sc_dt::sc_uint<64>(index) << 6);
            wq_[(wq_rd_.to_uint() + wq_cnt_.to_uint()) % WQ_DEPTH] = cqe_of(h, !lap[0]);
            wq_cnt_ = wq_cnt_ + 1;
            aw_pend_ = true;
            drop_ = false;
            widx_ = widx_ + 1;
            infl_ = infl_ + 1;
            pop = true;
          }
        }
        if (pop) {
          if (ce_mk_ == ce_rd_) ce_mk_ = ce_mk_ + 1;
          ce_rd_ = ce_rd_ + 1;
        }
      }

      // ---- decide: one item or one released slot per cycle ----
      bool dup = false;
      ev_msg_ = false;
      ev_order_ = false;
      const bool room = used(ce_wr_, ce_rd_) < CE_DEPTH && used(co_wr_, co_rd_) < CO_DEPTH &&
                        used(eq_wr_, eq_rd_) < EQ_DEPTH && used(sq_wr_, sq_rd_) < SQ_DEPTH;
      if (rel_v_) {
        if (room) {
          const unsigned s = rel_s_.to_uint();
          const u16 n = nssn_[s];
          const unsigned idx = n.to_uint() % WIN;
          bits<WIN> f = filled_[s];
          f[static_cast<int>(idx)] = 0;
          filled_[s] = f;
          release(s, n, slot_[s * WIN + idx]);
          advance(s);
        }
      } else if (hold_v_) {
        if (take_item(room, dup)) hold_v_ = false;
      }

      // ---- outputs for the next edge ----
      in.ready(!hold_v_);
      if (co_rd_ != co_wr_) {
        cons.offer(co_[co_rd_.to_uint() % CO_DEPTH]);
      } else {
        cons.idle();
      }
      if (sq_rd_ != sq_wr_) {
        ssn.offer(sq_[sq_rd_.to_uint() % SQ_DEPTH]);
      } else {
        ssn.idle();
      }
      if (eq_rd_ != eq_wr_) {
        const ExpQ& e = eq_[eq_rd_.to_uint() % EQ_DEPTH];
        ExpUpd u;
        u.stream = e.stream;
        u.qn = e.all ? eq_qi_.to_uint() : e.qn.to_uint();
        u.msn = e.msn;
        u.set = e.set;
        exp.offer(u);
      } else {
        exp.idle();
      }
      if (aw_pend_) {
        WrAw a;
        a.addr = waddr_;
        a.len = BEATS - 1;
        a.seg_last = false;
        aw.offer(a);
      } else {
        aw.idle();
      }
      if (wq_cnt_ != 0) {
        AxiW<W> b;
        const sc_dt::sc_biguint<512>& q = wq_[wq_rd_.to_uint()];
        for (int i = 0; i < BEATS; ++i) {
          if (beat_ == static_cast<unsigned>(i)) b.data = q.range(W * i + W - 1, W * i);
        }
        b.strb = 0;
        b.strb = ~b.strb;
        b.last = beat_ == BEATS - 1;
        w.offer(b);
      } else {
        w.idle();
      }
      cq_prod.write(prod_);
      cq_busy.write(aw_pend_ || wq_cnt_ != 0 || !reached(b1, last_aw_));
      fence_done.write(mk_done);
      ev_msg.write(ev_msg_);
      ev_dup.write(dup);
      ev_order.write(ev_order_);
      exp_h2_ = exp_h1_;
      exp_h1_ = exp_done_;
    }
  }
};

}  // namespace rnic::hls
