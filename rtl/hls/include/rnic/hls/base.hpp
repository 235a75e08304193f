// SPDX-License-Identifier: Apache-2.0
// The SystemC-HLS model of rnic_kernel: what every stage shares.
//   - Config: the kernel's parameters as compile-time constants (the RTL's module parameters);
//   - the items the stages hand each other, expanded from hw/include/rnic/hw/structs.def (the one
//     source of their members) into bit-accurate sc_uint / sc_biguint structs;
//   - the side channels and the kernel-boundary bundles (AXI4-Lite, AXI4, AXI-Stream);
//   - p2p_in / p2p_out: a valid/ready point-to-point channel (the Stratus p2p / Catapult Connections
//     style). Its semantics are those of AXI: an item moves at a rising edge where valid and ready were
//     both high; every signal is written by one clocked thread and read at the next edge.
// Synthesizable subset only (rtl/hls/README.md): SC_CTHREADs, sc_uint/sc_biguint/sc_bv, fixed-size
// arrays, fixed-bound loops, no dynamic allocation, no recursion, no library calls in modelled logic.
#pragma once

#include <systemc.h>

#include <cstdint>
#include <ostream>

#include "rnic/hw/hw.hpp"

namespace rnic::hls {

// ---- parameters --------------------------------------------------------------------------------------
// The defaults are the card's default build (hw.def DEFAULT_*, MAX_SEG_BYTES).
template <int DATA_WIDTH_ = static_cast<int>(rnic::hw::kDEFAULT_DATA_WIDTH),
          int STAG_ENTRIES_ = static_cast<int>(rnic::hw::kDEFAULT_STAGS),
          int NUM_STREAMS_ = static_cast<int>(rnic::hw::kDEFAULT_STREAMS),
          int NUM_QNS_ = static_cast<int>(rnic::hw::kDEFAULT_QNS),
          int SSN_WINDOW_ = static_cast<int>(rnic::hw::kDEFAULT_SSN_WINDOW),
          int MAX_SEG_BYTES_ = static_cast<int>(rnic::hw::kMAX_SEG_BYTES),
          int RQ_PREFETCH_ = static_cast<int>(rnic::hw::kDEFAULT_RQ_PREFETCH), std::uint32_t BUILD_ID_ = 0>
struct Config {
  static constexpr int DATA_WIDTH = DATA_WIDTH_;
  static constexpr int BYTES = DATA_WIDTH_ / 8;
  static constexpr int STAG_ENTRIES = STAG_ENTRIES_;
  static constexpr int NUM_STREAMS = NUM_STREAMS_;
  static constexpr int NUM_QNS = NUM_QNS_;
  static constexpr int SSN_WINDOW = SSN_WINDOW_;
  static constexpr int MAX_SEG_BYTES = MAX_SEG_BYTES_;
  static constexpr int RQ_PREFETCH = RQ_PREFETCH_;
  static constexpr std::uint32_t BUILD_ID = BUILD_ID_;
  // Beats of a packet parse keeps: ceil(MAX_SEG_BYTES / BYTES) + 1 (the last one marked last).
  static constexpr int MAX_SEG_BEATS = (MAX_SEG_BYTES_ + BYTES - 1) / BYTES + 1;
  static_assert(DATA_WIDTH_ == 64 || DATA_WIDTH_ == 128 || DATA_WIDTH_ == 256 || DATA_WIDTH_ == 512,
                "DATA_WIDTH must be 64, 128, 256 or 512");
  static_assert(STAG_ENTRIES_ >= 2 && STAG_ENTRIES_ <= 65536, "STAG_ENTRIES must be 2..65536");
  static_assert(NUM_STREAMS_ >= 1 && NUM_STREAMS_ <= 65536, "NUM_STREAMS must be 1..65536");
  static_assert(NUM_QNS_ >= 1 && NUM_QNS_ <= 256 && (NUM_QNS_ & (NUM_QNS_ - 1)) == 0,
                "NUM_QNS must be a power of two in 1..256");
  static_assert(SSN_WINDOW_ >= 2 && SSN_WINDOW_ <= 4096 && (SSN_WINDOW_ & (SSN_WINDOW_ - 1)) == 0,
                "SSN_WINDOW must be a power of two in 2..4096");
  static_assert(MAX_SEG_BYTES_ >= 64 && MAX_SEG_BYTES_ <= 65535, "MAX_SEG_BYTES must be 64..65535");
  static_assert(RQ_PREFETCH_ >= 1 && (RQ_PREFETCH_ & (RQ_PREFETCH_ - 1)) == 0, "RQ_PREFETCH must be a power of two");
};

// ---- bit-accurate types ------------------------------------------------------------------------------
template <int N, bool Big = (N > 64)>
struct bits_type {
  using type = sc_dt::sc_uint<N>;
};
template <int N>
struct bits_type<N, true> {
  using type = sc_dt::sc_biguint<N>;
};
template <int N>
using bits = typename bits_type<N>::type;

// ---- the items of structs.def ------------------------------------------------------------------------
// Enum codes: constexpr unsigned, named as in C++ (kSeg, kPlace, ...), in a namespace per set.
#define RNIC_ENUM(type, cpp, nbits, typed, desc) namespace cpp {
#define RNIC_ENUM_VALUE(type, name, cpp, value, desc) constexpr unsigned cpp = value;
#define RNIC_ENUM_END(type) }
#include "rnic/hw/structs.def"

// Widths of the enum sets (the members typed by them).
#define RNIC_ENUM(type, cpp, nbits, typed, desc) constexpr int type##_bits = nbits;
#include "rnic/hw/structs.def"

// Structs: a member of n bits is bits<n>; an enum member its set's width; a struct member the struct.
#define RNIC_STRUCT(type, cpp, desc) struct cpp {
#define RNIC_MEMBER(type, field, nbits, desc) bits<nbits> field{};
#define RNIC_MEMBER_T(st, field, member_type, desc) typename member_t<member_type##_tag>::type field{};
#define RNIC_STRUCT_END(type) \
  }                           \
  ;
// member_t maps a structs.def type name to the C++ member type.
template <class Tag>
struct member_t;
struct rnic_item_e_tag {};
struct rnic_rq_status_e_tag {};
struct rnic_action_e_tag {};
struct rnic_dlv_kind_e_tag {};
struct rnic_seg_t_tag {};
template <>
struct member_t<rnic_item_e_tag> {
  using type = bits<rnic_item_e_bits>;
};
template <>
struct member_t<rnic_rq_status_e_tag> {
  using type = bits<rnic_rq_status_e_bits>;
};
template <>
struct member_t<rnic_action_e_tag> {
  using type = bits<rnic_action_e_bits>;
};
template <>
struct member_t<rnic_dlv_kind_e_tag> {
  using type = bits<rnic_dlv_kind_e_bits>;
};
struct Seg;
template <>
struct member_t<rnic_seg_t_tag> {
  using type = Seg;
};
#include "rnic/hw/structs.def"

// What sc_signal<T> needs of a struct: ==, << and sc_trace (member by member, from the same rows).
#define RNIC_STRUCT(type, cpp, desc)                   \
  inline bool operator==(const cpp& a, const cpp& b) { \
    return true
#define RNIC_MEMBER(type, field, nbits, desc) &&a.field == b.field
#define RNIC_MEMBER_T(type, field, member_type, desc) &&a.field == b.field
#define RNIC_STRUCT_END(type) \
  ;                           \
  }
#include "rnic/hw/structs.def"
#define RNIC_STRUCT(type, cpp, desc)                                \
  inline std::ostream& operator<<(std::ostream& os, const cpp& v) { \
    os << #cpp "{"
#define RNIC_MEMBER(type, field, nbits, desc) << " " #field "=" << v.field
#define RNIC_MEMBER_T(type, field, member_type, desc) << " " #field "=" << v.field
#define RNIC_STRUCT_END(type) \
  << " }";                    \
  return os;                  \
  }
#include "rnic/hw/structs.def"
#define RNIC_STRUCT(type, cpp, desc) \
  inline void sc_trace(sc_core::sc_trace_file* tf, const cpp& v, const std::string& n) {
#define RNIC_MEMBER(type, field, nbits, desc) sc_core::sc_trace(tf, v.field, n + "." #field);
#define RNIC_MEMBER_T(type, field, member_type, desc) sc_trace(tf, v.field, n + "." #field);
#define RNIC_STRUCT_END(type) }
#include "rnic/hw/structs.def"

// Structs not in structs.def (side channels, bus bundles): declared with RNIC_HLS_STRUCT(Name, (members))
// plus one RNIC_HLS_OPS(Name, field list) line giving ==, << and sc_trace.
#define RNIC_HLS_EQ_(f) &&a.f == b.f
#define RNIC_HLS_OUT_(f) << " " #f "=" << v.f
#define RNIC_HLS_TR_(f) sc_core::sc_trace(tf, v.f, n + "." #f);

// ---- side channels between stages ---------------------------------------------------------------------
// regs -> lookup: a command (opcode and CMD_ARG0..9).
struct CmdReq {
  sc_dt::sc_uint<8> op;
  sc_dt::sc_uint<32> arg[10];
};
inline bool operator==(const CmdReq& a, const CmdReq& b) {
  for (int i = 0; i < 10; ++i)
    if (a.arg[i] != b.arg[i]) return false;
  return a.op == b.op;
}
inline std::ostream& operator<<(std::ostream& os, const CmdReq& v) { return os << "CmdReq{op=" << v.op << "}"; }
inline void sc_trace(sc_core::sc_trace_file* tf, const CmdReq& v, const std::string& n) {
  sc_core::sc_trace(tf, v.op, n + ".op");
}

// regs -> lookup: a doorbell write (the queue's producer: MSN of the last posted buffer).
struct Doorbell {
  sc_dt::sc_uint<16> stream;
  sc_dt::sc_uint<8> qn;
  sc_dt::sc_uint<32> prod;
};
// A stream whose segments are still taken and checked: NORMAL, or PENDING (those before its failing
// segment, docs/rtl-architecture.md "Errors in DDP-SSN order"); rtl/rnic_defs.svh rnic_stream_live.
inline bool stream_live(unsigned state) {
  return state == rnic::hw::kSTREAM_NORMAL || state == rnic::hw::kSTREAM_PENDING;
}
// validate -> lookup: a segment of `stream` failed 7.1: the stream's new state (the word written whole
// with its PD): PENDING with the failing segment's DDP-SSN (essn: its error waits for that position,
// docs/rtl-architecture.md "Errors in DDP-SSN order"), or ERROR (an error with no position: at once).
struct StreamErr {
  sc_dt::sc_uint<16> stream;
  sc_dt::sc_uint<16> pd;
  sc_dt::sc_uint<2> state;  // rnic::hw::kSTREAM_PENDING or kSTREAM_ERROR
  sc_dt::sc_uint<16> essn;  // PENDING: the failing segment's DDP-SSN
};
// deliver -> lookup: the consume channel (structs.def rnic_cons_kind: kConsConsume / kConsReset /
// kConsQset / kConsFail).
struct Cons {
  sc_dt::sc_uint<2> kind;
  sc_dt::sc_uint<16> stream;
  sc_dt::sc_uint<8> qn;
};
// deliver -> lookup: the stream's delivery point moved (next DDP-SSN to deliver); lookup keeps a copy
// for the items it emits (Lookup::next_ssn).
struct SsnUpd {
  sc_dt::sc_uint<16> stream;
  sc_dt::sc_uint<16> next_ssn;
};
// deliver -> place: the expected MSN of (stream, qn) changed (a completion, QUEUE_SET, STREAM_RESET with
// set = 0: the queue expects nothing until its QUEUE_SET). Place keeps a copy for its stale check.
struct ExpUpd {
  sc_dt::sc_uint<16> stream;
  sc_dt::sc_uint<8> qn;
  sc_dt::sc_uint<32> msn;
  bool set;
};
// AXI4 write address toward the write mux: one burst (INCR, awsize = log2(BYTES)); seg_last marks the
// last burst of a place segment (the mux counts b_segs by it).
struct WrAw {
  sc_dt::sc_uint<64> addr;
  sc_dt::sc_uint<8> len;
  bool seg_last;
};
struct AxiB {
  sc_dt::sc_uint<2> resp;
};
struct AxiAr {
  sc_dt::sc_uint<64> addr;
  sc_dt::sc_uint<8> len;
};
// AXI4-Lite bundles (s_axi_control).
struct LiteAddr {
  sc_dt::sc_uint<16> addr;
};
struct LiteW {
  sc_dt::sc_uint<32> data;
  sc_dt::sc_uint<4> strb;
};
struct LiteB {
  sc_dt::sc_uint<2> resp;
};
struct LiteR {
  sc_dt::sc_uint<32> data;
  sc_dt::sc_uint<2> resp;
};

#define RNIC_HLS_OPS1(T, a1)                                                                                       \
  inline bool operator==(const T& a, const T& b) { return true RNIC_HLS_EQ_(a1); }                                 \
  inline std::ostream& operator<<(std::ostream& os, const T& v) { return os << #T "{" RNIC_HLS_OUT_(a1) << " }"; } \
  inline void sc_trace(sc_core::sc_trace_file* tf, const T& v, const std::string& n) { RNIC_HLS_TR_(a1) }
#define RNIC_HLS_OPS2(T, a1, a2)                                                                    \
  inline bool operator==(const T& a, const T& b) { return true RNIC_HLS_EQ_(a1) RNIC_HLS_EQ_(a2); } \
  inline std::ostream& operator<<(std::ostream& os, const T& v) {                                   \
    return os << #T "{" RNIC_HLS_OUT_(a1) RNIC_HLS_OUT_(a2) << " }";                                \
  }                                                                                                 \
  inline void sc_trace(sc_core::sc_trace_file* tf, const T& v, const std::string& n) {              \
    RNIC_HLS_TR_(a1) RNIC_HLS_TR_(a2)                                                               \
  }
#define RNIC_HLS_OPS3(T, a1, a2, a3)                                                                                 \
  inline bool operator==(const T& a, const T& b) { return true RNIC_HLS_EQ_(a1) RNIC_HLS_EQ_(a2) RNIC_HLS_EQ_(a3); } \
  inline std::ostream& operator<<(std::ostream& os, const T& v) {                                                    \
    return os << #T "{" RNIC_HLS_OUT_(a1) RNIC_HLS_OUT_(a2) RNIC_HLS_OUT_(a3) << " }";                               \
  }                                                                                                                  \
  inline void sc_trace(sc_core::sc_trace_file* tf, const T& v, const std::string& n) {                               \
    RNIC_HLS_TR_(a1) RNIC_HLS_TR_(a2) RNIC_HLS_TR_(a3)                                                               \
  }
#define RNIC_HLS_OPS4(T, a1, a2, a3, a4)                                                                 \
  inline bool operator==(const T& a, const T& b) {                                                       \
    return true RNIC_HLS_EQ_(a1) RNIC_HLS_EQ_(a2) RNIC_HLS_EQ_(a3) RNIC_HLS_EQ_(a4);                     \
  }                                                                                                      \
  inline std::ostream& operator<<(std::ostream& os, const T& v) {                                        \
    return os << #T "{" RNIC_HLS_OUT_(a1) RNIC_HLS_OUT_(a2) RNIC_HLS_OUT_(a3) RNIC_HLS_OUT_(a4) << " }"; \
  }                                                                                                      \
  inline void sc_trace(sc_core::sc_trace_file* tf, const T& v, const std::string& n) {                   \
    RNIC_HLS_TR_(a1) RNIC_HLS_TR_(a2) RNIC_HLS_TR_(a3) RNIC_HLS_TR_(a4)                                  \
  }
RNIC_HLS_OPS3(Doorbell, stream, qn, prod)
RNIC_HLS_OPS4(StreamErr, stream, pd, state, essn)
RNIC_HLS_OPS3(Cons, kind, stream, qn)
RNIC_HLS_OPS2(SsnUpd, stream, next_ssn)
RNIC_HLS_OPS4(ExpUpd, stream, qn, msn, set)
RNIC_HLS_OPS3(WrAw, addr, len, seg_last)
RNIC_HLS_OPS1(AxiB, resp)
RNIC_HLS_OPS2(AxiAr, addr, len)
RNIC_HLS_OPS1(LiteAddr, addr)
RNIC_HLS_OPS2(LiteW, data, strb)
RNIC_HLS_OPS1(LiteB, resp)
RNIC_HLS_OPS2(LiteR, data, resp)

// Data-width dependent bundles.
// AXI-Stream beat into parse: tuser = {net, DDP-SSN, stream} on the first beat of a packet.
template <int W>
struct AxisBeat {
  sc_dt::sc_biguint<W> data;
  sc_dt::sc_uint<W / 8> keep;
  bool last = false;
  sc_dt::sc_uint<33> user;
};
// A packet beat parse -> data FIFO -> place (every beat of a packet, at most MAX_SEG_BEATS kept).
template <int W>
struct DataBeat {
  sc_dt::sc_biguint<W> data;
  bool last = false;
};
// AXI4 write data and read data.
template <int W>
struct AxiW {
  sc_dt::sc_biguint<W> data;
  sc_dt::sc_uint<W / 8> strb;
  bool last = false;
};
template <int W>
struct AxiR {
  sc_dt::sc_biguint<W> data;
  sc_dt::sc_uint<2> resp;
  bool last = false;
};
template <int W>
inline bool operator==(const AxisBeat<W>& a, const AxisBeat<W>& b) {
  return a.data == b.data && a.keep == b.keep && a.last == b.last && a.user == b.user;
}
template <int W>
inline bool operator==(const DataBeat<W>& a, const DataBeat<W>& b) {
  return a.data == b.data && a.last == b.last;
}
template <int W>
inline bool operator==(const AxiW<W>& a, const AxiW<W>& b) {
  return a.data == b.data && a.strb == b.strb && a.last == b.last;
}
template <int W>
inline bool operator==(const AxiR<W>& a, const AxiR<W>& b) {
  return a.data == b.data && a.resp == b.resp && a.last == b.last;
}
template <int W>
inline std::ostream& operator<<(std::ostream& os, const AxisBeat<W>& v) {
  return os << "AxisBeat{last=" << v.last << " user=" << v.user << "}";
}
template <int W>
inline std::ostream& operator<<(std::ostream& os, const DataBeat<W>& v) {
  return os << "DataBeat{last=" << v.last << "}";
}
template <int W>
inline std::ostream& operator<<(std::ostream& os, const AxiW<W>& v) {
  return os << "AxiW{strb=" << v.strb << " last=" << v.last << "}";
}
template <int W>
inline std::ostream& operator<<(std::ostream& os, const AxiR<W>& v) {
  return os << "AxiR{resp=" << v.resp << " last=" << v.last << "}";
}
template <int W>
inline void sc_trace(sc_core::sc_trace_file* tf, const AxisBeat<W>& v, const std::string& n) {
  sc_core::sc_trace(tf, v.last, n + ".last");
}
template <int W>
inline void sc_trace(sc_core::sc_trace_file* tf, const DataBeat<W>& v, const std::string& n) {
  sc_core::sc_trace(tf, v.last, n + ".last");
}
template <int W>
inline void sc_trace(sc_core::sc_trace_file* tf, const AxiW<W>& v, const std::string& n) {
  sc_core::sc_trace(tf, v.last, n + ".last");
}
template <int W>
inline void sc_trace(sc_core::sc_trace_file* tf, const AxiR<W>& v, const std::string& n) {
  sc_core::sc_trace(tf, v.last, n + ".last");
}

// ---- the valid/ready channel ------------------------------------------------------------------------
// One channel = three signals. The producer's thread owns vld and dat, the consumer's thread owns rdy.
// Inside an SC_CTHREAD, after wait() every read sees the values written before that edge, so:
//   - out.taken() / in.fired(): an item moved at the edge just passed (vld && rdy as they were at it);
//   - a write of vld / dat / rdy now takes effect at the next edge.
template <class T>
struct p2p {
  sc_core::sc_signal<bool> vld;
  sc_core::sc_signal<bool> rdy;
  sc_core::sc_signal<T> dat;
  explicit p2p(const char* name)
      : vld((std::string(name) + "_vld").c_str()),
        rdy((std::string(name) + "_rdy").c_str()),
        dat((std::string(name) + "_dat").c_str()) {}
};

template <class T>
struct p2p_out {
  sc_core::sc_out<bool> vld;
  sc_core::sc_in<bool> rdy;
  sc_core::sc_out<T> dat;
  void bind(p2p<T>& c) {
    vld(c.vld);
    rdy(c.rdy);
    dat(c.dat);
  }
  // In the reset section of the thread.
  void reset() { vld.write(false); }
  // After wait(): the item offered before the last edge was taken at it.
  bool taken() const { return vld.read() && rdy.read(); }
  // Offer an item from the next edge on (hold it until taken(): AXI-Stream 2.2.1).
  void offer(const T& v) {
    dat.write(v);
    vld.write(true);
  }
  void idle() { vld.write(false); }
  // Blocking: returns after the edge at which v was taken (one item per cycle back to back).
  void put(const T& v) {
    offer(v);
    do {
      sc_core::wait();
    } while (!rdy.read());
    vld.write(false);
  }
};

template <class T>
struct p2p_in {
  sc_core::sc_in<bool> vld;
  sc_core::sc_out<bool> rdy;
  sc_core::sc_in<T> dat;
  void bind(p2p<T>& c) {
    vld(c.vld);
    rdy(c.rdy);
    dat(c.dat);
  }
  void reset() { rdy.write(false); }
  // After wait(): an item moved at the edge just passed; it is data().
  bool fired() const { return vld.read() && rdy.read(); }
  T data() const { return dat.read(); }
  // Ready (or not) from the next edge on.
  void ready(bool r) { rdy.write(r); }
  // Blocking: returns the item, after the edge at which it moved.
  T get() {
    rdy.write(true);
    do {
      sc_core::wait();
    } while (!vld.read());
    rdy.write(false);
    return dat.read();
  }
};

// ---- a first-word-fall-through FIFO: the boundary buffers (segment FIFO, data FIFO) ------------------
// One item in and one out per cycle; DEPTH a power of two; a fixed array, registered handshakes.
template <class T, int DEPTH>
SC_MODULE(Fifo) {
  sc_core::sc_in<bool> clk;
  sc_core::sc_in<bool> rst_n;
  p2p_in<T> in;
  p2p_out<T> out;

  SC_CTOR(Fifo) {
    SC_CTHREAD(run, clk.pos());
    reset_signal_is(rst_n, false);
  }

 private:
  static_assert(DEPTH >= 2 && (DEPTH & (DEPTH - 1)) == 0, "DEPTH must be a power of two");
  T mem_[static_cast<std::size_t>(DEPTH)];

  void run() {
    sc_dt::sc_uint<32> rd = 0, wr = 0;  // free-running; count = wr - rd
    in.reset();
    out.reset();
    wait();
    while (true) {
      in.ready(true);
      while (true) {
        sc_dt::sc_uint<32> count = wr - rd;
        // The edge just passed: what moved.
        if (out.taken()) {
          ++rd;
          count = wr - rd;
        }
        if (in.fired()) {
          mem_[wr.to_uint() % DEPTH] = in.data();
          ++wr;
          count = wr - rd;
        }
        // Offer the head; ready while there is room for the item that may come at the next edge.
        if (count != 0) {
          out.offer(mem_[rd.to_uint() % DEPTH]);
        } else {
          out.idle();
        }
        in.ready(count < DEPTH);
        wait();
      }
    }
  }
};

}  // namespace rnic::hls
