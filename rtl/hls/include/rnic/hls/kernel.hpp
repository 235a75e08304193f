// SPDX-License-Identifier: Apache-2.0
// rnic::hls::Kernel: the DDP (RFC 5041) receive pipeline as a SystemC-HLS model, stage for stage the
// pipeline of docs/rtl-architecture.md:
//   axis -> Parse -> [seg FIFO] -> Lookup -> Validate -> Place -> Deliver
//                \-> [data FIFO] ------------------------^   \-> WrMux -> host memory
// with Regs on AXI4-Lite. This module only instantiates the stages and wires them (as rnic_kernel.sv
// does for the RTL); its kernel-boundary channels are p2p bundles of the AXI4-Lite, AXI4 and AXI-Stream
// signals (rnic::bus::ScKernel maps them to the RTL's port names).
#pragma once

#include <string>

#include "rnic/hls/base.hpp"
#include "rnic/hls/deliver.hpp"
#include "rnic/hls/lookup.hpp"
#include "rnic/hls/parse.hpp"
#include "rnic/hls/place.hpp"
#include "rnic/hls/regs.hpp"
#include "rnic/hls/validate.hpp"
#include "rnic/hls/wr_mux.hpp"

namespace rnic::hls {

// Data FIFO depth: two maximum segments, as a power of two (input runs at full rate while the previous
// segment is placed).
constexpr int fifo_depth_pow2(int n) {
  int d = 2;
  while (d < n) d *= 2;
  return d;
}

template <class C>
SC_MODULE(Kernel) {
  static constexpr int W = C::DATA_WIDTH;
  static constexpr int kRxFifoBeats = fifo_depth_pow2(2 * C::MAX_SEG_BEATS);

  sc_core::sc_in<bool> clk;
  sc_core::sc_in<bool> rst_n;

  // Kernel boundary (driven / read by the pin wrapper).
  p2p<LiteAddr> ctl_aw{"ctl_aw"};
  p2p<LiteW> ctl_w{"ctl_w"};
  p2p<LiteB> ctl_b{"ctl_b"};
  p2p<LiteAddr> ctl_ar{"ctl_ar"};
  p2p<LiteR> ctl_r{"ctl_r"};
  p2p<AxisBeat<W>> rx{"rx"};
  p2p<WrAw> gmem_aw{"gmem_aw"};
  p2p<AxiW<W>> gmem_w{"gmem_w"};
  p2p<AxiB> gmem_b{"gmem_b"};
  p2p<AxiAr> gmem_ar{"gmem_ar"};
  p2p<AxiR<W>> gmem_r{"gmem_r"};
  // The fate of every segment from the network (m_axis_fate: no ready, always taken).
  sc_core::sc_signal<bool> fate_valid{"fate_valid"};
  sc_core::sc_signal<sc_dt::sc_uint<2>> fate{"fate"};

  Parse<C> parse{"parse"};
  Fifo<Seg, 16> seg_fifo{"seg_fifo"};
  Fifo<DataBeat<W>, kRxFifoBeats> data_fifo{"data_fifo"};
  LookupStage<C> lookup{"lookup"};
  Validate<C> validate{"validate"};
  Place<C> place{"place"};
  WrMux<C> wr_mux{"wr_mux"};
  Deliver<C> deliver{"deliver"};
  Regs<C> regs{"regs"};

  SC_CTOR(Kernel) {
    parse.clk(clk), parse.rst_n(rst_n), seg_fifo.clk(clk), seg_fifo.rst_n(rst_n), data_fifo.clk(clk);
    data_fifo.rst_n(rst_n), lookup.clk(clk), lookup.rst_n(rst_n), validate.clk(clk), validate.rst_n(rst_n);
    place.clk(clk), place.rst_n(rst_n), wr_mux.clk(clk), wr_mux.rst_n(rst_n), deliver.clk(clk);
    deliver.rst_n(rst_n), regs.clk(clk), regs.rst_n(rst_n);

    // Network side.
    parse.axis.bind(rx);
    parse.seg.bind(ps_seg_);
    seg_fifo.in.bind(ps_seg_);
    seg_fifo.out.bind(lk_seg_);
    lookup.seg.bind(lk_seg_);
    parse.beat.bind(ps_beat_);
    data_fifo.in.bind(ps_beat_);
    data_fifo.out.bind(pl_beat_);
    place.beat.bind(pl_beat_);
    parse.ev_seg(ev_seg_);

    // Lookup.
    lookup.out.bind(lk_out_);
    validate.in.bind(lk_out_);
    lookup.cmd.bind(cmd_);
    regs.cmd.bind(cmd_);
    lookup.cmd_done(cmd_done_);
    lookup.cmd_refused(cmd_refused_);
    lookup.cmd_result(cmd_result_);
    regs.cmd_done(cmd_done_);
    regs.cmd_refused(cmd_refused_);
    regs.cmd_result(cmd_result_);
    lookup.db.bind(db_);
    regs.db.bind(db_);
    lookup.err.bind(err_);
    validate.err.bind(err_);
    lookup.cons.bind(cons_);
    deliver.cons.bind(cons_);
    lookup.ssn.bind(ssn_);
    deliver.ssn.bind(ssn_);
    lookup.ar.bind(gmem_ar);
    lookup.r.bind(gmem_r);
    lookup.validate_busy(validate_busy_);
    lookup.ev_read_err(ev_read_err_);

    // Validate.
    validate.out.bind(vd_out_);
    place.in.bind(vd_out_);
    validate.busy(validate_busy_);
    validate.ev_drop(ev_drop_);
    validate.ev_access(ev_access_);
    validate.ev_error(ev_error_);
    validate.ev_error_idx(ev_error_idx_);
    validate.fate_valid(fate_valid);
    validate.fate(fate);

    // Place.
    place.dlv.bind(dlv_);
    deliver.in.bind(dlv_);
    place.aw.bind(pl_aw_);
    wr_mux.aw0.bind(pl_aw_);
    place.w.bind(pl_w_);
    wr_mux.w0.bind(pl_w_);
    place.exp.bind(exp_);
    deliver.exp.bind(exp_);
    place.commit_cnt(commit_cnt_);
    deliver.commit_cnt(commit_cnt_);
    place.ev_bytes(ev_bytes_);
    place.ev_bytes_n(ev_bytes_n_);

    // Write mux.
    deliver.aw.bind(dl_aw_);
    wr_mux.aw1.bind(dl_aw_);
    deliver.w.bind(dl_w_);
    wr_mux.w1.bind(dl_w_);
    wr_mux.m_aw.bind(gmem_aw);
    wr_mux.m_w.bind(gmem_w);
    wr_mux.m_b.bind(gmem_b);
    wr_mux.b_segs(b_segs_);
    deliver.b_segs(b_segs_);
    wr_mux.b1_count(b1_count_);
    deliver.b1_count(b1_count_);
    wr_mux.ev_write_err(ev_write_err_);

    // Deliver <-> regs.
    regs.cq_base(cq_base_);
    deliver.cq_base(cq_base_);
    regs.cq_log2(cq_log2_);
    deliver.cq_log2(cq_log2_);
    regs.cq_enable(cq_enable_);
    deliver.cq_enable(cq_enable_);
    regs.cq_reset(cq_reset_);
    deliver.cq_reset(cq_reset_);
    regs.cq_cons(cq_cons_);
    deliver.cq_cons(cq_cons_);
    deliver.cq_prod(cq_prod_);
    regs.cq_prod(cq_prod_);
    deliver.cq_busy(cq_busy_);
    regs.cq_busy(cq_busy_);
    deliver.fence_done(fence_done_);
    regs.fence_done(fence_done_);
    deliver.ev_msg(ev_msg_);
    deliver.ev_dup(ev_dup_);
    deliver.ev_order(ev_order_);

    // Regs: AXI4-Lite and the counters' events.
    regs.aw.bind(ctl_aw);
    regs.w.bind(ctl_w);
    regs.b.bind(ctl_b);
    regs.ar.bind(ctl_ar);
    regs.r.bind(ctl_r);
    regs.ev_seg(ev_seg_);
    regs.ev_bytes(ev_bytes_);
    regs.ev_bytes_n(ev_bytes_n_);
    regs.ev_msg(ev_msg_);
    regs.ev_drop(ev_drop_);
    regs.ev_access(ev_access_);
    regs.ev_dup(ev_dup_);
    regs.ev_write_err(ev_write_err_);
    regs.ev_read_err(ev_read_err_);
    regs.ev_error(ev_error_);
    regs.ev_error_idx(ev_error_idx_);
    regs.ev_order(ev_order_);
  }

  // A segment parsed and not yet taken by lookup (the lockstep harness waits for none before it replays a
  // command, as the testbench drains the RTL first).
  bool segments_in_flight() const { return ps_seg_.vld.read() || lk_seg_.vld.read(); }
  // CQ_PROD (the lockstep harness replays a CQ_CONS write only once the model has produced that far).
  std::uint32_t cq_prod() const { return cq_prod_.read().to_uint(); }

  // Every internal channel's valid/ready (a stalled model: where it waits). Not modelled logic.
  std::string channel_states() const {
    std::string out;
    const auto ch = [&out](const char* n, const auto& c) {
      out += std::string(n) + (c.vld.read() ? " V" : " -") + (c.rdy.read() ? "R " : "- ");
    };
    ch("rx", rx), ch("ps_seg", ps_seg_), ch("lk_seg", lk_seg_), ch("ps_beat", ps_beat_), ch("pl_beat", pl_beat_);
    ch("lk_out", lk_out_), ch("cmd", cmd_), ch("db", db_), ch("err", err_), ch("cons", cons_), ch("ssn", ssn_);
    ch("vd_out", vd_out_), ch("dlv", dlv_), ch("pl_aw", pl_aw_), ch("dl_aw", dl_aw_), ch("pl_w", pl_w_);
    ch("dl_w", dl_w_), ch("exp", exp_), ch("gmem_aw", gmem_aw), ch("gmem_w", gmem_w), ch("gmem_b", gmem_b);
    ch("gmem_ar", gmem_ar), ch("gmem_r", gmem_r), ch("ctl_aw", ctl_aw), ch("ctl_w", ctl_w), ch("ctl_b", ctl_b);
    out += "commit_cnt " + std::to_string(commit_cnt_.read().to_uint()) + " b_segs " +
           std::to_string(b_segs_.read().to_uint()) + " b1 " + std::to_string(b1_count_.read().to_uint()) +
           " cq_prod " + std::to_string(cq_prod_.read().to_uint()) + " cq_cons " +
           std::to_string(cq_cons_.read().to_uint()) + " cq_en " + std::to_string(cq_enable_.read()) +
           " validate_busy " + std::to_string(validate_busy_.read());
    return out;
  }

  // Configuration-time initialization of every memory (a fresh card: the bitstream's initial values).
  void power_on() {
    parse.power_on();
    lookup.power_on();
    validate.power_on();
    place.power_on();
    wr_mux.power_on();
    deliver.power_on();
    regs.power_on();
  }

 private:
  p2p<Seg> ps_seg_{"ps_seg"}, lk_seg_{"lk_seg"};
  p2p<DataBeat<W>> ps_beat_{"ps_beat"}, pl_beat_{"pl_beat"};
  p2p<Lookup> lk_out_{"lk_out"};
  p2p<CmdReq> cmd_{"cmd"};
  p2p<Doorbell> db_{"db"};
  p2p<StreamErr> err_{"err"};
  p2p<Cons> cons_{"cons"};
  p2p<SsnUpd> ssn_{"ssn"};
  p2p<Verdict> vd_out_{"vd_out"};
  p2p<Dlv> dlv_{"dlv"};
  p2p<WrAw> pl_aw_{"pl_aw"}, dl_aw_{"dl_aw"};
  p2p<AxiW<W>> pl_w_{"pl_w"}, dl_w_{"dl_w"};
  p2p<ExpUpd> exp_{"exp"};
  sc_core::sc_signal<bool> cmd_done_{"cmd_done"}, cmd_refused_{"cmd_refused"}, fence_done_{"fence_done"};
  sc_core::sc_signal<sc_dt::sc_uint<32>> cmd_result_{"cmd_result"};
  sc_core::sc_signal<bool> validate_busy_{"validate_busy"};
  sc_core::sc_signal<sc_dt::sc_uint<32>> commit_cnt_{"commit_cnt"}, b_segs_{"b_segs"}, b1_count_{"b1_count"};
  sc_core::sc_signal<sc_dt::sc_uint<64>> cq_base_{"cq_base"};
  sc_core::sc_signal<sc_dt::sc_uint<5>> cq_log2_{"cq_log2"};
  sc_core::sc_signal<bool> cq_enable_{"cq_enable"}, cq_reset_{"cq_reset"}, cq_busy_{"cq_busy"};
  sc_core::sc_signal<sc_dt::sc_uint<32>> cq_cons_{"cq_cons"}, cq_prod_{"cq_prod"};
  sc_core::sc_signal<bool> ev_seg_{"ev_seg"}, ev_bytes_{"ev_bytes"}, ev_msg_{"ev_msg"}, ev_drop_{"ev_drop"};
  sc_core::sc_signal<bool> ev_access_{"ev_access"}, ev_dup_{"ev_dup"}, ev_write_err_{"ev_write_err"};
  sc_core::sc_signal<bool> ev_read_err_{"ev_read_err"}, ev_error_{"ev_error"}, ev_order_{"ev_order"};
  sc_core::sc_signal<sc_dt::sc_uint<16>> ev_bytes_n_{"ev_bytes_n"};
  sc_core::sc_signal<sc_dt::sc_uint<5>> ev_error_idx_{"ev_error_idx"};
};

}  // namespace rnic::hls
