// SPDX-License-Identifier: Apache-2.0
// Validate: the RFC 5041 7.1 checks of the SystemC-HLS kernel (the model of rnic_rx_validate). One
// Lookup item per cycle becomes one Verdict, in order:
//   - FENCE, STREAM_RESET and QUEUE_SET items are tokens (Action::kToken), kind, arg and seg passed on;
//   - a segment of a stream not NORMAL or PENDING is DROPped (7.1: every later segment of a stream in
//     error is dropped), and so is one of a PENDING stream that is not in the window before the DDP-SSN
//     its error waits at (1 <= essn - ssn < SSN_WINDOW mod 2^16, and ssn in the window); a segment is
//     taken only if both lookup's state and the one validate's own errors gave the stream take it
//     (below);
//   - otherwise the checks in the order of docs/rtl-architecture.md "Validation order" (the order of the
//     software Data Sink, driver/model), the first failing one giving the ERROR's 7.2 type and code
//     (section 7.2) and the row of hw ddp_errors.def (the per-error counter index):
//       oversize packet, packet shorter than its header, failed descriptor read -> Local Catastrophic;
//       DDP-SSN outside [next_ssn, next_ssn + SSN_WINDOW) -> LLP error (RFC 5043 10); a segment from
//       the network (seg.net) is instead dropped as a duplicate (behind) or declined (ahead), checked
//       right after the stream state, and its fate reported on fate / fate_valid;
//       tagged (4.2): DV != 1 -> Invalid version; then, only with payload (5.2: a zero-length tagged
//         segment is not checked): entry invalid or key differs -> Invalid STag (7.1 tagged #1); PD
//         differs or the STag is bound to another stream -> STag not associated (#1, 8.2); no remote
//         write right (#2) -> Invalid STag, counted as an access violation; TO + length wraps 2^64 -> TO
//         wrap (#5, before the bounds: after a wrap they are meaningless); TO < base or past the end ->
//         Base or bounds (#3, #4);
//       untagged (4.3): DV != 1 -> Invalid version; QN -> Invalid QN (#1); MSN before the first
//         available buffer -> MSN range (#5), not yet posted -> No buffer (#2); MO at or past the buffer end
//         (past it for a zero-length segment) -> Invalid MO (#3); MO + length past it -> Message too
//         long (#4);
//     and PLACE: addr = the host address of the first payload byte (tagged: the STag's address + TO -
//     base TO; untagged: the buffer's address + MO), pay_bytes, hdr_bytes (14 / 18), msg_len = MO +
//     payload (5.4).
// Where an error is reported (docs/rtl-architecture.md, "Errors in DDP-SSN order"): an ERROR of a
// segment in the window [next_ssn, next_ssn + SSN_WINDOW) (every 7.1 error) carries err_at_ssn: deliver
// reports it at its DDP-SSN position, and the stream becomes PENDING with that DDP-SSN: it takes only
// the segments before it in the window, each checked as on a NORMAL stream (one failing moves the
// position back to it). An ERROR outside the window (the LLP error, or a Local Catastrophic one found
// before the window check) has no position: err_at_ssn = 0, reported at once, the stream in ERROR.
// Each ERROR also goes to lookup as a StreamErr (stream, its PD, the new state PENDING + DDP-SSN or
// ERROR), which writes the stream word there; until then lookup may still emit segments of that stream
// with the state before, so validate keeps the state its own errors gave each stream (none, PENDING
// with the DDP-SSN, or ERROR; cleared by the stream's STREAM_RESET item) and applies it as well as
// lookup's: every segment decided after a failing one sees the stream's new state, as in the RTL (whose
// forwarding into lookup's table makes it exact there). Where lookup's state is older, the newer one
// here decides alone (a failing segment was taken, so its PENDING position is before the older one);
// lookup's is newer only when deliver reported an error of the stream (kConsFail: ERROR) or a command
// changed it.
// `busy` is high while a verdict or a StreamErr of a taken item has not been taken yet: lookup runs
// table commands only when it is low. Counter events (ev_drop, ev_access, ev_error + ev_error_idx, the
// RTL's drop / access / error events, counted once per verdict) pulse in the cycle after the item is taken.
//
// Structure: one loop iteration per cycle; the verdict and the StreamErr each wait in a two-entry queue
// (output register and one spare), so an item is taken every cycle while place takes the verdicts.
#pragma once

#include <systemc.h>

#include "rnic/hls/base.hpp"
#include "rnic/hw/hw.hpp"

namespace rnic::hls {

template <class C>
SC_MODULE(Validate) {
  sc_core::sc_in<bool> clk;
  sc_core::sc_in<bool> rst_n;

  p2p_in<Lookup> in;
  p2p_out<Verdict> out;
  p2p_out<StreamErr> err;
  sc_core::sc_out<bool> busy;
  sc_core::sc_out<bool> ev_drop, ev_access, ev_error;
  sc_core::sc_out<sc_dt::sc_uint<5>> ev_error_idx;
  // The fate of every segment with seg.net = 1 (docs/network.md), one pulse per segment in order.
  sc_core::sc_out<bool> fate_valid;
  sc_core::sc_out<sc_dt::sc_uint<2>> fate;

  SC_CTOR(Validate) {
    SC_CTHREAD(run, clk.pos());
    reset_signal_is(rst_n, false);
    power_on();
  }

  // The error states start cleared on a fresh card; after that only a stream's STREAM_RESET item clears
  // its state (reset does not: see run()).
  void power_on() {
    for (int i = 0; i < C::NUM_STREAMS; ++i) {
      vstate_[i] = rnic::hw::kSTREAM_NORMAL;
      vessn_[i] = 0;
    }
  }

 private:
  static constexpr int QDEPTH = 2;
  static constexpr unsigned kTaggedHdrBytes = rnic::hw::kTAGGED_HDR_BYTES;      // RFC 5041 4.2
  static constexpr unsigned kUntaggedHdrBytes = rnic::hw::kUNTAGGED_HDR_BYTES;  // 4.3

  // Per stream the state its errors here gave it since its last STREAM_RESET item: NORMAL (none),
  // PENDING with vessn_ (the DDP-SSN its error waits at) or ERROR.
  sc_dt::sc_uint<2> vstate_[C::NUM_STREAMS];
  sc_dt::sc_uint<16> vessn_[C::NUM_STREAMS];
  Verdict vq_[QDEPTH];
  int vcount_;
  StreamErr eq_[QDEPTH];
  int ecount_;

  // What one item produced besides its verdict.
  struct Events {
    bool drop = false;
    bool access = false;
    bool error = false;
    bool fate_valid = false;
    unsigned fate = Fate::kFateTaken;
  };

  // An error of the 7.2 table; at_ssn: the segment is in the window (reported at its DDP-SSN).
  static void fail(Verdict & v, hw::ddp_error::Row row, bool at_ssn) {
    v.action = Action::kError;
    v.err_type = hw::ddp_error::kType[row];
    v.err_code = hw::ddp_error::kCode[row];
    v.err_idx = static_cast<unsigned>(row);
    v.err_at_ssn = at_ssn;
  }

  // A stream in state `state` (PENDING: its error waits at essn) takes the segment (in_win: its DDP-SSN
  // ssn is in the window): NORMAL takes it, PENDING only in the window before essn (1 <= essn - ssn <
  // SSN_WINDOW, mod 2^16: both in the window, so this is their order), ERROR and TORN_DOWN never.
  static bool takes(unsigned state, const sc_dt::sc_uint<16>& essn, const sc_dt::sc_uint<16>& ssn, bool in_win) {
    if (!stream_live(state)) return false;
    if (state == rnic::hw::kSTREAM_NORMAL) return true;
    const sc_dt::sc_uint<16> d = essn - ssn;
    return in_win && d != 0 && d < static_cast<unsigned>(C::SSN_WINDOW);
  }

  // The checks, in their order (see the header comment).
  Verdict decide(const Lookup& lk, Events& ev) const {
    using namespace hw::ddp_error;
    const Seg& s = lk.seg;
    Verdict v;
    v.kind = lk.kind;
    v.arg = lk.arg;
    v.seg = s;
    v.action = Action::kPlace;

    // Lengths: a packet shorter than its header has no payload (and fails below).
    const bool tagged = s.is_tagged == 1;
    const unsigned hdr = tagged ? kTaggedHdrBytes : kUntaggedHdrBytes;
    const bool short_seg = s.seg_bytes.to_uint() < hdr;
    const sc_dt::sc_uint<16> pay = short_seg ? 0u : s.seg_bytes.to_uint() - hdr;
    v.hdr_bytes = hdr;
    v.pay_bytes = pay;
    const sc_dt::sc_uint<33> mo_end = sc_dt::uint64(s.mo.to_uint()) + pay.to_uint();  // MO + payload
    v.msg_len = mo_end.range(31, 0);

    if (lk.kind != ItemKind::kSeg) {
      v.action = Action::kToken;
      return v;
    }
    ev.fate_valid = s.net == 1;
    const sc_dt::sc_uint<16> ssn_dist = s.ssn - lk.next_ssn;  // mod 2^16
    const bool in_win = ssn_dist < static_cast<unsigned>(C::SSN_WINDOW);
    // Lookup's state, and the one this stage's errors gave the stream since (an ERROR needs a stream
    // lookup says is NORMAL or PENDING, i.e. one in range of the stream table).
    const unsigned si = s.stream.to_uint();
    const bool own = si < static_cast<unsigned>(C::NUM_STREAMS);
    if (!takes(lk.stream_state.to_uint(), lk.stream_essn, s.ssn, in_win) ||
        (own && !takes(vstate_[si].to_uint(), vessn_[si], s.ssn, in_win))) {
      v.action = Action::kDrop;  // 7.1: silently dropped
      ev.drop = true;
      return v;
    }
    if (s.net == 1 && !in_win) {
      // From the network: behind the window a copy of a segment taken before, at or beyond it one
      // SCTP brings again once the front end cut it from the host copy (RFC 5043 10: a pause).
      v.action = Action::kDrop;
      ev.fate = ssn_dist.bit(15) ? Fate::kFateDup : Fate::kFateDeclined;
      return v;
    }
    if (s.oversize == 1 || short_seg || lk.local_fault == 1) {
      fail(v, kLocalCatastrophic, in_win);
    } else if (!in_win) {
      fail(v, kLlpError, false);  // RFC 5043 10: outside the reorder window
    } else if (tagged) {
      const sc_dt::sc_uint<64> to_off = s.to - lk.stag_base_to;  // mod 2^64
      if (s.dv != 1) {
        fail(v, kTaggedInvalidVersion, true);
      } else if (pay != 0) {  // 5.2: STag and TO of a zero-length segment are not checked
        const bool stag_bad = lk.stag_valid != 1 || lk.stag_key != s.stag.range(7, 0);
        const bool assoc_bad = lk.stag_pd != lk.stream_pd || (lk.stag_bound == 1 && lk.stag_stream != s.stream);
        const sc_dt::uint64 all_ones = ~sc_dt::uint64(0);
        const bool wraps = s.to.to_uint64() > all_ones - pay.to_uint64();  // TO + payload > 2^64 - 1
        const sc_dt::uint64 len = lk.stag_length.to_uint64();
        const bool past_end = pay.to_uint64() > len || to_off.to_uint64() > len - pay.to_uint64();
        if (stag_bad) {
          fail(v, kTaggedInvalidStag, true);
        } else if (assoc_bad) {
          fail(v, kTaggedStagNotAssociated, true);  // 8.2: PD and stream binding
        } else if (lk.stag_remote_write != 1) {
          fail(v, kTaggedInvalidStag, true);  // access rights: no 7.2 code of their own (as Linux siw)
          ev.access = true;
        } else if (wraps) {
          fail(v, kTaggedToWrap, true);
        } else if (s.to < lk.stag_base_to || past_end) {
          fail(v, kTaggedBaseBounds, true);
        }
      }
      v.addr = lk.stag_addr + to_off;
    } else {
      const bool mo_bad = pay != 0 ? s.mo >= lk.rq_length : s.mo > lk.rq_length;
      if (s.dv != 1) {
        fail(v, kUntaggedInvalidVersion, true);
      } else if (lk.rq_status == RqStatus::kRqBadQn) {
        fail(v, kUntaggedInvalidQn, true);
      } else if (lk.rq_status == RqStatus::kRqMsnRange) {
        fail(v, kUntaggedMsnRange, true);
      } else if (lk.rq_status == RqStatus::kRqNoBuf) {
        fail(v, kUntaggedNoBuffer, true);
      } else if (mo_bad) {
        fail(v, kUntaggedInvalidMo, true);
      } else if (mo_end > lk.rq_length) {
        fail(v, kUntaggedMessageTooLong, true);
      }
      v.addr = lk.rq_addr + sc_dt::uint64(s.mo.to_uint());
    }
    ev.error = v.action == Action::kError;
    return v;
  }

  void run() {
    // Reset does not clear vstate_ (a block RAM cannot be cleared in the reset state), and need not: a
    // state here only ever drops a segment lookup said was NORMAL or PENDING, and after a reset no
    // stream is either before its STREAM_ENABLE. Lookup's reset walk tears every stream down (it takes
    // no segment before the walk ends), and only STREAM_ENABLE makes a stream NORMAL again, on
    // deliver's echo of its STREAM_RESET item, which passed here first and cleared the state (items
    // arrive in lookup's order; lookup takes no segment between the command and the echo); PENDING
    // comes only from a StreamErr of this stage after that. A state left over from before the reset
    // therefore meets only segments of a stream torn down or in error, which are dropped anyway (same
    // verdict, same drop event).
    vcount_ = 0;
    ecount_ = 0;
    in.reset();
    out.reset();
    err.reset();
    busy.write(false);
    ev_drop.write(false);
    ev_access.write(false);
    ev_error.write(false);
    ev_error_idx.write(0);
    fate_valid.write(false);
    fate.write(0);
    wait();
    while (true) {
      // What moved at the edge just passed.
      if (out.taken()) {
        vq_[0] = vq_[1];
        --vcount_;
      }
      if (err.taken()) {
        eq_[0] = eq_[1];
        --ecount_;
      }
      Events ev;
      sc_dt::sc_uint<5> idx = 0;
      if (in.fired()) {
        const Lookup lk = in.data();
        const Verdict v = decide(lk, ev);
        vq_[vcount_] = v;
        ++vcount_;
        if (ev.error) {
          // The stream's new state: PENDING at the failing DDP-SSN, or ERROR (no position).
          const unsigned st = v.err_at_ssn == 1 ? rnic::hw::kSTREAM_PENDING : rnic::hw::kSTREAM_ERROR;
          StreamErr e;
          e.stream = lk.seg.stream;
          e.pd = lk.stream_pd;
          e.state = st;
          e.essn = lk.seg.ssn;
          eq_[ecount_] = e;
          ++ecount_;
          idx = v.err_idx;
          // An ERROR needs a stream NORMAL or PENDING in lookup, i.e. one in range of the stream table.
          if (lk.seg.stream.to_uint() < static_cast<unsigned>(C::NUM_STREAMS)) {
            vstate_[lk.seg.stream.to_uint()] = st;
            vessn_[lk.seg.stream.to_uint()] = lk.seg.ssn;
          }
        }
        if (lk.kind == ItemKind::kStreamReset && lk.arg.to_uint() < static_cast<unsigned>(C::NUM_STREAMS)) {
          vstate_[lk.arg.to_uint()] = rnic::hw::kSTREAM_NORMAL;  // STREAM_ENABLE: the stream starts over
          vessn_[lk.arg.to_uint()] = 0;
        }
      }
      if (vcount_ != 0) {
        out.offer(vq_[0]);
      } else {
        out.idle();
      }
      if (ecount_ != 0) {
        err.offer(eq_[0]);
      } else {
        err.idle();
      }
      // Take an item at the next edge only if its verdict and StreamErr will have room even when
      // neither head is taken at that edge.
      in.ready(vcount_ < QDEPTH && ecount_ < QDEPTH);
      busy.write(vcount_ != 0 || ecount_ != 0);
      ev_drop.write(ev.drop);
      ev_access.write(ev.access);
      ev_error.write(ev.error);
      ev_error_idx.write(idx);
      fate_valid.write(ev.fate_valid);
      fate.write(ev.fate);
      wait();
    }
  }
};

}  // namespace rnic::hls
