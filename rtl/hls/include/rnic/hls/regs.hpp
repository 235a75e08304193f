// SPDX-License-Identifier: Apache-2.0
// Regs: the AXI4-Lite control slave of the SystemC-HLS kernel (the model of rnic_regs). The register map
// is hw/include/rnic/hw/hw.def; this stage holds every piece of state the map names:
//   - identification and capabilities (RO, from hw.def and the Config);
//   - the command interface: CMD_ARG0..15 (RW), CMD (WO: a CmdReq to lookup), CMD_STATUS / CMD_RESULT
//     (completed by lookup's cmd_done, deliver's fence_done, or both for QUEUE_CONFIG);
//   - the receive-queue doorbell: DB_QUEUE (RW) names the queue, DB_PROD (WO) rings it (a Doorbell to
//     lookup, RFC 5041 5.3 untagged buffers posted); SLVERR and nothing rung when DB_QUEUE names no queue;
//   - the completion ring registers (CQ_BASE, CQ_LOG2_SIZE, CQ_CTRL, CQ_PROD, CQ_CONS) toward deliver;
//   - the 64-bit event counters, one per hw.def CNT_* row and one per RFC 5041 7.2 error row of
//     hw/include/rnic/hw/ddp_errors.def (CNT_ERROR0 + 8*i), with RC semantics: reading a
//     counter's _LO word latches its _HI word.
// Bus behaviour (as rnic_regs, the map leaves it open):
//   - 32-bit registers at word addresses, addr[1:0] ignored. AW and W are taken in any order or together,
//     each into its own holding register; the write executes once both are held and the previous write's
//     response (or doorbell) is gone. One read at a time; its R is offered the cycle after its AR.
//   - OKAY, or SLVERR for an address outside the map (a read then returns 0). Writes to RO / RC registers
//     are ignored (OKAY); reads of the WO CMD and DB_PROD return 0 (OKAY).
//   - wstrb selects the bytes of RW registers; CMD and DB_PROD take wdata whole; CQ_LOG2_SIZE and CQ_CTRL
//     are written only with wstrb[0]; DB_QUEUE keeps bits [23:0].
//   - A CMD write while CMD_STATUS.busy is ignored (software polls busy first). A doorbell write's B is
//     sent once lookup has taken the doorbell.
// Counters are cleared by reset, as the RTL's.
#pragma once

#include <systemc.h>

#include "rnic/hls/base.hpp"
#include "rnic/hw/hw.hpp"

namespace rnic::hls {

template <class C>
SC_MODULE(Regs) {
  sc_core::sc_in<bool> clk;
  sc_core::sc_in<bool> rst_n;

  // AXI4-Lite slave (s_axi_control).
  p2p_in<LiteAddr> aw;
  p2p_in<LiteW> w;
  p2p_out<LiteB> b;
  p2p_in<LiteAddr> ar;
  p2p_out<LiteR> r;

  // Commands to lookup, and their completion.
  p2p_out<CmdReq> cmd;
  sc_core::sc_in<bool> cmd_done, cmd_refused, fence_done;
  sc_core::sc_in<sc_dt::sc_uint<32>> cmd_result;

  // Doorbells to lookup.
  p2p_out<Doorbell> db;

  // Completion ring, toward deliver.
  sc_core::sc_out<sc_dt::sc_uint<64>> cq_base;
  sc_core::sc_out<sc_dt::sc_uint<5>> cq_log2;
  sc_core::sc_out<bool> cq_enable, cq_reset;
  sc_core::sc_out<sc_dt::sc_uint<32>> cq_cons;
  sc_core::sc_in<sc_dt::sc_uint<32>> cq_prod;
  sc_core::sc_in<bool> cq_busy;

  // Counter events: each high for exactly the cycles its event happens.
  sc_core::sc_in<bool> ev_seg, ev_bytes, ev_msg, ev_drop, ev_access, ev_dup, ev_write_err, ev_read_err, ev_error,
      ev_order;
  sc_core::sc_in<sc_dt::sc_uint<16>> ev_bytes_n;
  sc_core::sc_in<sc_dt::sc_uint<5>> ev_error_idx;

  SC_CTOR(Regs) {
    SC_CTHREAD(run, clk.pos());
    reset_signal_is(rst_n, false);
  }

  // Configuration-time init: every register this stage keeps is also cleared by reset.
  void power_on() {
    for (int k = 0; k < NUM_CNT; ++k) {
      cnt_[k] = 0;
      hi_[k] = 0;
    }
    for (int k = 0; k < NUM_ARGS; ++k) args_[k] = 0;
  }

 private:
  // ---- the map ------------------------------------------------------------------------------------------
  static constexpr int NUM_ARGS = static_cast<int>(rnic::hw::kCMD_ARGS);
  static constexpr int NUM_ARGS_OUT = 10;  // CmdReq carries CMD_ARG0..9
  static constexpr int NUM_ERRORS = static_cast<int>(hw::ddp_error::kRows);

  // Counter slots: the eight named counters in hw.def order, then one per error row.
  static constexpr int CNT_SEGMENTS = 0;
  static constexpr int CNT_BYTES = 1;
  static constexpr int CNT_MESSAGES = 2;
  static constexpr int CNT_DROPS = 3;
  static constexpr int CNT_ACCESS = 4;
  static constexpr int CNT_DUPLICATES = 5;
  static constexpr int CNT_WRITE_ERRORS = 6;
  static constexpr int CNT_READ_ERRORS = 7;
  static constexpr int CNT_ERROR0 = 8;
  static constexpr int NUM_CNT = CNT_ERROR0 + NUM_ERRORS;
  // Deliver's order errors (an untagged segment without its queue's expected MSN, found in DDP-SSN order)
  // are RFC 5041 7.2 type 2 code 3, "MSN range is not valid": they count in that row, as the data sink's.
  static constexpr int ORDER_SLOT = CNT_ERROR0 + static_cast<int>(hw::ddp_error::kUntaggedMsnRange);

  static constexpr std::uint32_t CNT_BASE = rnic::hw::kRegCNT_SEGMENTS_LO;
  static constexpr std::uint32_t CNT_END = CNT_BASE + 8u * NUM_CNT;  // one past the last counter word
  static constexpr std::uint32_t ARG_END = rnic::hw::kRegCMD_ARG0 + 4u * NUM_ARGS;

  // The counter block is decoded as one array of 8-byte slots: check the map lays it out so.
  static_assert(rnic::hw::kRegCNT_SEGMENTS_HI == CNT_BASE + 8 * CNT_SEGMENTS + 4, "counter map");
  static_assert(rnic::hw::kRegCNT_BYTES_LO == CNT_BASE + 8 * CNT_BYTES, "counter map");
  static_assert(rnic::hw::kRegCNT_MESSAGES_LO == CNT_BASE + 8 * CNT_MESSAGES, "counter map");
  static_assert(rnic::hw::kRegCNT_DROPS_LO == CNT_BASE + 8 * CNT_DROPS, "counter map");
  static_assert(rnic::hw::kRegCNT_ACCESS_LO == CNT_BASE + 8 * CNT_ACCESS, "counter map");
  static_assert(rnic::hw::kRegCNT_DUPLICATES_LO == CNT_BASE + 8 * CNT_DUPLICATES, "counter map");
  static_assert(rnic::hw::kRegCNT_WRITE_ERRORS_LO == CNT_BASE + 8 * CNT_WRITE_ERRORS, "counter map");
  static_assert(rnic::hw::kRegCNT_READ_ERRORS_LO == CNT_BASE + 8 * CNT_READ_ERRORS, "counter map");
  static_assert(rnic::hw::kRegCNT_ERROR0_LO == CNT_BASE + 8 * CNT_ERROR0, "counter map");
  static_assert(NUM_CNT <= 32, "ev_error_idx is 5 bits");
  static_assert(NUM_ARGS >= NUM_ARGS_OUT && NUM_ARGS <= 16, "CMD_ARGS must be 10..16");
  static_assert(C::NUM_QNS <= 256, "Doorbell.qn is 8 bits");

  static constexpr unsigned RESP_OKAY = 0;
  static constexpr unsigned RESP_SLVERR = 2;

  // ---- state ----------------------------------------------------------------------------------------------
  sc_dt::sc_uint<32> args_[NUM_ARGS];
  sc_dt::sc_uint<64> cnt_[NUM_CNT];
  sc_dt::sc_uint<32> hi_[NUM_CNT];  // _HI words latched by _LO reads (one latch per counter)

  // Bytes of old with the strobed bytes of d.
  static sc_dt::sc_uint<32> merge(sc_dt::sc_uint<32> old, sc_dt::sc_uint<32> d, sc_dt::sc_uint<4> s) {
    sc_dt::sc_uint<32> mask = 0;
    for (int i = 0; i < 4; ++i)
      if (s[i]) mask.range(8 * i + 7, 8 * i) = 0xFF;
    return (old & ~mask) | (d & mask);
  }

  void run() {
    // Write channel: the held AW and W, the pending B, the pending doorbell.
    bool aw_full = false, w_full = false, b_pend = false, db_pend = false;
    sc_dt::sc_uint<16> aw_addr = 0;
    sc_dt::sc_uint<32> w_data = 0;
    sc_dt::sc_uint<4> w_strb = 0;
    LiteB b_val;
    Doorbell db_val;
    // Read channel: the pending R.
    bool r_pend = false;
    LiteR r_val;
    // Command interface.
    bool cmd_pend = false, busy = false, refused = false;
    bool wait_done = false, wait_fence = false;  // the pulses the busy command still waits for
    CmdReq cmd_val;
    sc_dt::sc_uint<8> cmd_op = 0;
    sc_dt::sc_uint<32> result = 0;
    // Completion ring.
    sc_dt::sc_uint<64> cqb = 0;
    sc_dt::sc_uint<5> cql = 0;
    bool cqe = false;
    sc_dt::sc_uint<32> cqc = 0;
    // The doorbell's queue (DB_QUEUE).
    sc_dt::sc_uint<32> dbq = 0;

    for (int k = 0; k < NUM_ARGS; ++k) args_[k] = 0;
    for (int k = 0; k < NUM_CNT; ++k) {
      cnt_[k] = 0;
      hi_[k] = 0;
    }
    aw.reset();
    w.reset();
    b.reset();
    ar.reset();
    r.reset();
    cmd.reset();
    db.reset();
    cq_base.write(0);
    cq_log2.write(0);
    cq_enable.write(false);
    cq_reset.write(false);
    cq_cons.write(0);
    wait();

    while (true) {
      // ---- ready for the next edge: one held AW, one held W, one read in flight ----
      aw.ready(!aw_full);
      w.ready(!w_full);
      ar.ready(!r_pend);
      wait();

      // ---- counters: the events of the cycle just ended ----
      // (each ev_* is high for exactly the cycles its event happens, so one look per cycle counts it once)
      {
        bool ev[NUM_CNT];
        ev[CNT_SEGMENTS] = ev_seg.read();
        ev[CNT_BYTES] = false;  // added by its byte count below
        ev[CNT_MESSAGES] = ev_msg.read();
        ev[CNT_DROPS] = ev_drop.read();
        ev[CNT_ACCESS] = ev_access.read();
        ev[CNT_DUPLICATES] = ev_dup.read();
        ev[CNT_WRITE_ERRORS] = ev_write_err.read();
        ev[CNT_READ_ERRORS] = ev_read_err.read();
        const bool err = ev_error.read();
        const sc_dt::sc_uint<5> idx = ev_error_idx.read();  // a row outside the table counts nowhere
        for (int i = 0; i < NUM_ERRORS; ++i) ev[CNT_ERROR0 + i] = err && idx == static_cast<unsigned>(i);
        for (int k = 0; k < NUM_CNT; ++k)
          if (ev[k]) cnt_[k] = cnt_[k] + 1;
        // An order error may come in the same cycle as validate's MsnRange error: both count.
        if (ev_order.read()) cnt_[ORDER_SLOT] = cnt_[ORDER_SLOT] + 1;
        if (ev_bytes.read()) cnt_[CNT_BYTES] = cnt_[CNT_BYTES] + ev_bytes_n.read();
      }

      // ---- what moved at the edge just passed ----
      if (b.taken()) b_pend = false;
      if (r.taken()) r_pend = false;
      if (cmd.taken()) cmd_pend = false;
      if (db.taken()) {
        // The doorbell is lookup's: now the write is answered.
        db_pend = false;
        b_pend = true;
        b_val.resp = RESP_OKAY;
      }
      if (aw.fired()) {
        aw_full = true;
        aw_addr = aw.data().addr;
      }
      if (w.fired()) {
        w_full = true;
        w_data = w.data().data;
        w_strb = w.data().strb;
      }

      // ---- command completion (hw.def RNIC_CMD rows; RFC 5041 8.3.1 #6 for the fenced ones) ----
      // Lookup pulses cmd_done for NOP, STAG_WRITE, STREAM_ENABLE (after its echo), QUEUE_CONFIG (once
      // deliver echoed it and the queue table took it) and every refused command (with cmd_refused);
      // deliver pulses fence_done for STAG_INVALIDATE, STREAM_TEARDOWN and QUEUE_CONFIG once every write
      // and completion before their fence is acknowledged. A command is done once each pulse it waits for
      // has come (QUEUE_CONFIG: both), or at once when refused. Pulses while idle are ignored.
      const bool cq_idle = !cqe && !cq_busy.read();  // the ring is not the card's: it may be reconfigured
      bool cq_rst = false;
      if (busy && cmd_done.read() && cmd_refused.read()) {
        wait_done = wait_fence = false;
        refused = true;
        result = 0;
      } else if (busy) {
        if (cmd_done.read()) {
          wait_done = false;
          result = cmd_result.read();
        }
        if (fence_done.read()) wait_fence = false;
      }
      if (busy && !wait_done && !wait_fence) {
        busy = false;
        cmd_pend = false;  // (lookup takes a command before it answers it; kept as the RTL)
      }

      // ---- the held write, once both halves are here and the previous response is gone ----
      if (aw_full && w_full && !b_pend && !db_pend) {
        const std::uint32_t wa = aw_addr.to_uint() & ~3u;
        const std::uint32_t db_stream = rnic::hw::kDB_QUEUE_STREAM.get(dbq.to_uint()),
                            db_qn = rnic::hw::kDB_QUEUE_QN.get(dbq.to_uint());
        const bool db_ok =
            db_stream < static_cast<std::uint32_t>(C::NUM_STREAMS) && db_qn < static_cast<std::uint32_t>(C::NUM_QNS);
        bool hit = true;
        aw_full = false;
        w_full = false;
        if (wa == rnic::hw::kRegDB_PROD && db_ok) {
          // RQ doorbell of the queue DB_QUEUE names; the value is the MSN of the last buffer posted
          // (RFC 5041 5.3: buffers are consumed in MSN order).
          db_val.stream = db_stream;
          db_val.qn = db_qn;
          db_val.prod = w_data;
          db_pend = true;
        } else {
          switch (wa) {
            case rnic::hw::kRegID:
            case rnic::hw::kRegVERSION:
            case rnic::hw::kRegBUILD_ID:
            case rnic::hw::kRegCAP_DATA_WIDTH:
            case rnic::hw::kRegCAP_STAGS:
            case rnic::hw::kRegCAP_STREAMS:
            case rnic::hw::kRegCAP_QNS:
            case rnic::hw::kRegCAP_SSN_WINDOW:
            case rnic::hw::kRegCAP_MAX_SEG_BYTES:
            case rnic::hw::kRegCAP_NET_ASSOCS:
            case rnic::hw::kRegCAP_NET_MAX_PACKET:
            case rnic::hw::kRegCMD_STATUS:
            case rnic::hw::kRegCMD_RESULT:
            case rnic::hw::kRegCQ_PROD:
              break;  // read-only: ignored
            case rnic::hw::kRegCMD:
              if (!busy) {
                busy = true;
                refused = false;
                result = 0;
                cmd_op = rnic::hw::kCMD_OP.get(w_data.to_uint());
                {
                  const unsigned op = cmd_op.to_uint();
                  wait_fence = op == rnic::hw::kCmdSTAG_INVALIDATE || op == rnic::hw::kCmdSTREAM_TEARDOWN ||
                               op == rnic::hw::kCmdQUEUE_CONFIG;
                  wait_done = !wait_fence || op == rnic::hw::kCmdQUEUE_CONFIG;
                }
                cmd_val.op = cmd_op;
                for (int k = 0; k < NUM_ARGS_OUT; ++k) cmd_val.arg[k] = args_[k];
                cmd_pend = true;
              }
              break;
            case rnic::hw::kRegCQ_BASE_LO:
              if (cq_idle) cqb.range(31, 0) = merge(cqb.range(31, 0), w_data, w_strb);
              break;
            case rnic::hw::kRegCQ_BASE_HI:
              if (cq_idle) cqb.range(63, 32) = merge(cqb.range(63, 32), w_data, w_strb);
              break;
            case rnic::hw::kRegCQ_LOG2_SIZE: {
              const std::uint32_t v = rnic::hw::kCQ_LOG2_SIZE_LOG2.get(w_data.to_uint());
              if (cq_idle && w_strb[rnic::hw::kCQ_LOG2_SIZE_LOG2.lsb / 8] && v != 0 && v <= rnic::hw::kCQ_LOG2_MAX)
                cql = v;
              break;
            }
            case rnic::hw::kRegCQ_CTRL:
              if (w_strb[rnic::hw::kCQ_CTRL_ENABLE.lsb / 8]) {
                cqe = rnic::hw::kCQ_CTRL_ENABLE.get(w_data.to_uint()) != 0;
                if (cqe) {
                  // Enable: producer and consumer restart at 0, the phase at 1 (deliver, on cq_reset).
                  cq_rst = true;
                  cqc = 0;
                }
              }
              break;
            case rnic::hw::kRegCQ_CONS:
              cqc = merge(cqc, w_data, w_strb);
              break;
            case rnic::hw::kRegDB_QUEUE:
              dbq = merge(dbq, w_data, w_strb) & rnic::hw::kDbQueueBits;
              break;
            case rnic::hw::kRegDB_PROD:
              hit = false;  // DB_QUEUE names no queue: SLVERR, nothing rung
              break;
            default:
              if (wa >= rnic::hw::kRegCMD_ARG0 && wa < ARG_END) {
                const unsigned k = (wa - rnic::hw::kRegCMD_ARG0) >> 2;
                for (int i = 0; i < NUM_ARGS; ++i)
                  if (k == static_cast<unsigned>(i)) args_[i] = merge(args_[i], w_data, w_strb);
              } else if (wa >= CNT_BASE && wa < CNT_END) {
                // counters are read-only: ignored
              } else {
                hit = false;
              }
              break;
          }
          b_val.resp = hit ? RESP_OKAY : RESP_SLVERR;
          b_pend = true;
        }
      }

      // ---- a read: answered the cycle after its AR ----
      if (ar.fired()) {
        const std::uint32_t ra = ar.data().addr.to_uint() & ~3u;
        sc_dt::sc_uint<32> d = 0;
        bool hit = true;
        switch (ra) {
          case rnic::hw::kRegID:
            d = rnic::hw::kID_VALUE;
            break;
          case rnic::hw::kRegVERSION:
            d = rnic::hw::kVERSION_VALUE;
            break;
          case rnic::hw::kRegBUILD_ID:
            d = C::BUILD_ID;
            break;
          case rnic::hw::kRegCAP_DATA_WIDTH:
            d = C::DATA_WIDTH;
            break;
          case rnic::hw::kRegCAP_STAGS:
            d = C::STAG_ENTRIES;
            break;
          case rnic::hw::kRegCAP_STREAMS:
            d = C::NUM_STREAMS;
            break;
          case rnic::hw::kRegCAP_QNS:
            d = C::NUM_QNS;
            break;
          case rnic::hw::kRegCAP_SSN_WINDOW:
            d = C::SSN_WINDOW;
            break;
          case rnic::hw::kRegCAP_MAX_SEG_BYTES:
            d = C::MAX_SEG_BYTES;
            break;
          case rnic::hw::kRegCAP_NET_ASSOCS:
          case rnic::hw::kRegCAP_NET_MAX_PACKET:
            d = 0;  // no network side in this model
            break;
          case rnic::hw::kRegCMD:
            d = 0;  // write-only
            break;
          case rnic::hw::kRegCMD_STATUS:
            d = rnic::hw::kCMD_STATUS_OP.put(cmd_op.to_uint()) | rnic::hw::kCMD_STATUS_REFUSED.put(refused) |
                rnic::hw::kCMD_STATUS_BUSY.put(busy);
            break;
          case rnic::hw::kRegCMD_RESULT:
            d = result;
            break;
          case rnic::hw::kRegCQ_BASE_LO:
            d = cqb.range(31, 0);
            break;
          case rnic::hw::kRegCQ_BASE_HI:
            d = cqb.range(63, 32);
            break;
          case rnic::hw::kRegCQ_LOG2_SIZE:
            d = cql;
            break;
          case rnic::hw::kRegCQ_CTRL:
            d = rnic::hw::kCQ_CTRL_BUSY.put(cq_busy.read()) | rnic::hw::kCQ_CTRL_ENABLE.put(cqe);
            break;
          case rnic::hw::kRegCQ_PROD:
            d = cq_prod.read();
            break;
          case rnic::hw::kRegCQ_CONS:
            d = cqc;
            break;
          case rnic::hw::kRegDB_QUEUE:
            d = dbq;
            break;
          case rnic::hw::kRegDB_PROD:
            d = 0;  // write-only
            break;
          default:
            if (ra >= rnic::hw::kRegCMD_ARG0 && ra < ARG_END) {
              const unsigned k = (ra - rnic::hw::kRegCMD_ARG0) >> 2;
              for (int i = 0; i < NUM_ARGS; ++i)
                if (k == static_cast<unsigned>(i)) d = args_[i];
            } else if (ra >= CNT_BASE && ra < CNT_END) {
              // RC: the _LO word is the live count and latches the _HI word; _HI returns the latch.
              const unsigned k = (ra - CNT_BASE) >> 3;
              const bool hi_word = (ra & 4u) != 0;
              for (int i = 0; i < NUM_CNT; ++i) {
                if (k == static_cast<unsigned>(i)) {
                  if (hi_word) {
                    d = hi_[i];
                  } else {
                    d = cnt_[i].range(31, 0);
                    hi_[i] = cnt_[i].range(63, 32);
                  }
                }
              }
            } else {
              hit = false;  // outside the map: SLVERR, 0
            }
            break;
        }
        r_val.data = d;
        r_val.resp = hit ? RESP_OKAY : RESP_SLVERR;
        r_pend = true;
      }

      // ---- outputs for the next edge ----
      if (b_pend) {
        b.offer(b_val);
      } else {
        b.idle();
      }
      if (r_pend) {
        r.offer(r_val);
      } else {
        r.idle();
      }
      if (cmd_pend) {
        cmd.offer(cmd_val);
      } else {
        cmd.idle();
      }
      if (db_pend) {
        db.offer(db_val);
      } else {
        db.idle();
      }
      cq_base.write(cqb);
      cq_log2.write(cql);
      cq_enable.write(cqe);
      cq_reset.write(cq_rst);
      cq_cons.write(cqc);
    }
  }
};

}  // namespace rnic::hls
