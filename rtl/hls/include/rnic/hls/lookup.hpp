// SPDX-License-Identifier: Apache-2.0
// The SystemC-HLS model of rnic_rx_lookup (docs/rtl-architecture.md): the lookup stage and its tables.
// Per segment it reads what validate needs to apply the RFC 5041 7.1 checks and emits one Lookup item:
//   - the STag entry (index = STag[31:8], RFC 5041 4.4 / 5.2: the key STag[7:0] is compared by validate);
//   - the stream's state, PD and, PENDING, the DDP-SSN its error waits at (7.1: a stream in error
//     drops every later segment; docs/rtl-architecture.md "Errors in DDP-SSN order"), and its delivery
//     point (next DDP-SSN, RFC 5043 5.2.1 window) as deliver last reported it (SsnUpd);
//   - for an untagged segment the receive queue (stream, QN) (RFC 5041 4.3, 5.4): BAD_QN, MSN_RANGE
//     (7.1 untagged #5: MSN before the first available buffer), NO_BUF (not yet posted), or OK with
//     the buffer's descriptor (RQD) from the descriptor cache or a direct AXI read.
// It also executes the table commands of regs between segments (STAG_WRITE, STAG_INVALIDATE,
// STREAM_ENABLE, STREAM_TEARDOWN, QUEUE_CONFIG, NOP; the fenced ones travel in-band as FENCE /
// STREAM_RESET / QUEUE_SET items), applies doorbells and deliver's consume channel alongside segments,
// and prefetches posted descriptors ahead of use. The stream table is written by validate's StreamErr
// (the stream's new state: PENDING with the failing DDP-SSN, or ERROR), by deliver's kConsFail (ERROR:
// deliver reported an error of the stream), and by the commands. PENDING counts as live like NORMAL
// (an untagged segment of it still wants its descriptor: validate decides whether it is taken).
// The tables are units (classes owned by the stage's one thread):
//   LookupStagTable    the STag table and the key table (the key table survives reset)
//   LookupStreamTable  the stream table (state, PD, PENDING's DDP-SSN) and lookup's copy of deliver's
//                      next DDP-SSN
//   LookupRqTable      the receive queues: configuration, producer (doorbell), head MSN, last MSN read
//   LookupDescCache    per queue RQ_PREFETCH descriptors, the one of MSN m in slot (m - 1) mod
//                      RQ_PREFETCH, tagged with m (a slot never answers for another MSN), and per queue
//                      the last MSN landed (a slot answers only for an MSN landed since the queue's
//                      QUEUE_CONFIG, so no slot is ever cleared)
//   LookupPrefetch     the prefetch engine's state: hinted queues, the queue it visits
// After reset the stage first walks its tables, one index per cycle with every input but R not ready
// (as the RTL's C_INIT): the STag entries invalid, the streams torn down, the queues unconfigured. A
// block RAM can be written once per cycle and not in the reset state, so no table is cleared in one go.
// The module is named LookupStage (the item struct Lookup of structs.def owns the name).
#pragma once

#include <systemc.h>

#include "rnic/hls/base.hpp"
#include "rnic/hw/hw.hpp"

namespace rnic::hls {

// ---- the STag table and its key table ----------------------------------------------------------------
template <class C>
class LookupStagTable {
 public:
  // The FPGA's configuration-time state: every entry and every key zero.
  void power_on() {
    for (int i = 0; i < C::STAG_ENTRIES; ++i) {
      clear(i);
      key_[i] = 0;
    }
  }
  // The reset walk's write of entry i (< STAG_ENTRIES): no STag valid after reset. The keys are kept,
  // so an STag value is never issued twice in a row for an index across resets.
  void reset_entry(int i) { clear(i); }
  static bool in_range(const sc_dt::sc_uint<32>& index) { return index.to_uint() < unsigned(C::STAG_ENTRIES); }
  // The entry of STag `stag` into the item (index STag[31:8]; an index out of range never hits).
  void read(const sc_dt::sc_uint<32>& stag, Lookup& lk) const {
    const unsigned idx = stag.range(31, 8).to_uint();
    if (idx >= unsigned(C::STAG_ENTRIES)) {
      lk.stag_valid = 0;
      lk.stag_key = 0;
      lk.stag_pd = 0;
      lk.stag_bound = 0;
      lk.stag_stream = 0;
      lk.stag_remote_write = 0;
      lk.stag_base_to = 0;
      lk.stag_length = 0;
      lk.stag_addr = 0;
      return;
    }
    lk.stag_valid = valid_[idx];
    lk.stag_key = ekey_[idx];
    lk.stag_pd = pd_[idx];
    lk.stag_bound = bound_[idx];
    lk.stag_stream = stream_[idx];
    lk.stag_remote_write = rw_[idx];
    lk.stag_base_to = base_[idx];
    lk.stag_length = len_[idx];
    lk.stag_addr = addr_[idx];
  }
  // STAG_WRITE (index in range): the entry with the index's next key (key + 1 mod 256, so 0xFF is
  // followed by 0x00); returns the STag the card issued, index << 8 | key.
  sc_dt::sc_uint<32> write(unsigned idx, const sc_dt::sc_uint<32> (&a)[10]) {
    const sc_dt::sc_uint<8> key = key_[idx] + 1;
    key_[idx] = key;
    valid_[idx] = true;
    ekey_[idx] = key;
    rw_[idx] = a[1][8];
    bound_[idx] = a[1][10];
    pd_[idx] = a[2].range(15, 0);
    stream_[idx] = a[3].range(15, 0);
    base_[idx] = (sc_dt::sc_uint<64>(a[5]) << 32) | sc_dt::sc_uint<64>(a[4]);
    len_[idx] = (sc_dt::sc_uint<64>(a[7]) << 32) | sc_dt::sc_uint<64>(a[6]);
    addr_[idx] = (sc_dt::sc_uint<64>(a[9]) << 32) | sc_dt::sc_uint<64>(a[8]);
    sc_dt::sc_uint<32> stag = 0;
    stag.range(31, 8) = idx;
    stag.range(7, 0) = key;
    return stag;
  }
  // STAG_INVALIDATE (index in range): the entry cleared; its key stays in the key table.
  void invalidate(unsigned idx) { clear(static_cast<int>(idx)); }

 private:
  void clear(int i) {
    valid_[i] = false;
    ekey_[i] = 0;
    pd_[i] = 0;
    bound_[i] = false;
    stream_[i] = 0;
    rw_[i] = false;
    base_[i] = 0;
    len_[i] = 0;
    addr_[i] = 0;
  }
  bool valid_[C::STAG_ENTRIES];
  sc_dt::sc_uint<8> ekey_[C::STAG_ENTRIES];
  sc_dt::sc_uint<16> pd_[C::STAG_ENTRIES];
  bool bound_[C::STAG_ENTRIES];
  sc_dt::sc_uint<16> stream_[C::STAG_ENTRIES];
  bool rw_[C::STAG_ENTRIES];
  sc_dt::sc_uint<64> base_[C::STAG_ENTRIES];
  sc_dt::sc_uint<64> len_[C::STAG_ENTRIES];
  sc_dt::sc_uint<64> addr_[C::STAG_ENTRIES];
  sc_dt::sc_uint<8> key_[C::STAG_ENTRIES];  // the key table: last key issued per index
};

// ---- the stream table ----------------------------------------------------------------------------------
template <class C>
class LookupStreamTable {
 public:
  void power_on() {
    for (int i = 0; i < C::NUM_STREAMS; ++i) reset_entry(i);
  }
  // The reset walk's write of stream i (< NUM_STREAMS): torn down (never enabled), delivery point 0.
  void reset_entry(int i) {
    state_[i] = rnic::hw::kSTREAM_TORN_DOWN;
    pd_[i] = 0;
    essn_[i] = 0;
    next_ssn_[i] = 0;
  }
  static bool in_range(const sc_dt::sc_uint<32>& s) { return s.to_uint() < unsigned(C::NUM_STREAMS); }
  // The stream word (a stream out of range reads torn down) and the delivery point into the item.
  void read(const sc_dt::sc_uint<16>& s, Lookup& lk) const {
    const unsigned i = s.to_uint();
    if (i >= unsigned(C::NUM_STREAMS)) {
      lk.stream_state = rnic::hw::kSTREAM_TORN_DOWN;
      lk.stream_pd = 0;
      lk.stream_essn = 0;
      lk.next_ssn = 0;
      return;
    }
    lk.stream_state = state_[i];
    lk.stream_pd = pd_[i];
    lk.stream_essn = essn_[i];
    lk.next_ssn = next_ssn_[i];
  }
  // The stream word, written whole: state, PD and (PENDING) the DDP-SSN its error waits at.
  void write(const sc_dt::sc_uint<16>& s, unsigned state, const sc_dt::sc_uint<16>& pd,
             const sc_dt::sc_uint<16>& essn) {
    const unsigned i = s.to_uint();
    if (i >= unsigned(C::NUM_STREAMS)) return;
    state_[i] = state;
    pd_[i] = pd;
    essn_[i] = essn;
  }
  void set_next_ssn(const sc_dt::sc_uint<16>& s, const sc_dt::sc_uint<16>& v) {
    const unsigned i = s.to_uint();
    if (i < unsigned(C::NUM_STREAMS)) next_ssn_[i] = v;
  }

 private:
  sc_dt::sc_uint<2> state_[C::NUM_STREAMS];
  sc_dt::sc_uint<16> pd_[C::NUM_STREAMS];
  sc_dt::sc_uint<16> essn_[C::NUM_STREAMS];  // PENDING: the failing segment's DDP-SSN
  sc_dt::sc_uint<16> next_ssn_[C::NUM_STREAMS];
};

// ---- the receive queues ----------------------------------------------------------------------------------
// A queue is (stream, QN), index stream * NUM_QNS + QN. Free-running 32-bit MSNs (RFC 5041 4.3):
//   prod  MSN of the last posted buffer (doorbell);  head  next MSN to deliver (cons = head - 1);
//   req   MSN of the last descriptor the prefetch engine read.
template <class C>
class LookupRqTable {
 public:
  static constexpr int NQ = C::NUM_STREAMS * C::NUM_QNS;
  void power_on() {
    for (int q = 0; q < NQ; ++q) {
      cfg_[q] = false;
      base_[q] = 0;
      log2_[q] = 0;
      prod_[q] = 0;
      head_[q] = 0;
      req_[q] = 0;
    }
  }
  // The reset walk (and STREAM_ENABLE) unconfigures queues one per cycle with unconfigure(); a queue's
  // MSN state is written by its QUEUE_CONFIG (start) before use.
  // The queue index of (stream, qn), or -1 out of range.
  static int index(const sc_dt::sc_uint<32>& stream, const sc_dt::sc_uint<32>& qn) {
    if (stream.to_uint() >= unsigned(C::NUM_STREAMS) || qn.to_uint() >= unsigned(C::NUM_QNS)) return -1;
    return int(stream.to_uint()) * C::NUM_QNS + int(qn.to_uint());
  }
  bool configured(int q) const { return cfg_[q]; }
  // The receive-queue lookup of MSN msn (RFC 5041 7.1 untagged #4, #5): ahead = msn - head;
  // before the head -> MSN_RANGE; at or past min(posted, ring size) -> NO_BUF (a producer beyond the
  // ring is not believed); else OK. ahead_out: the distance from the head.
  unsigned status(int q, const sc_dt::sc_uint<32>& msn, sc_dt::sc_uint<32>& ahead_out) const {
    if (q < 0 || !cfg_[q]) return RqStatus::kRqBadQn;
    const sc_dt::sc_uint<32> ahead = msn - head_[q];
    ahead_out = ahead;
    if (ahead[31]) return RqStatus::kRqMsnRange;
    const sc_dt::sc_uint<32> posted = prod_[q] - (head_[q] - 1);
    const sc_dt::sc_uint<32> size = sc_dt::sc_uint<32>(1) << log2_[q].to_uint();
    if (ahead >= size || ahead >= posted) return RqStatus::kRqNoBuf;
    return RqStatus::kRqOk;
  }
  // The host address of MSN msn's descriptor: ring_base + 16 * ((msn - 1) mod 2^log2).
  sc_dt::sc_uint<64> desc_addr(int q, const sc_dt::sc_uint<32>& msn) const {
    const sc_dt::sc_uint<32> mask = (sc_dt::sc_uint<32>(1) << log2_[q].to_uint()) - 1;
    const sc_dt::sc_uint<32> slot = (msn - 1) & mask;
    return base_[q] + (sc_dt::sc_uint<64>(slot) << 4);
  }
  // QUEUE_CONFIG's start (when deliver echoes the QUEUE_SET): configured, empty at MSN first.
  void start(int q, const sc_dt::sc_uint<64>& base, const sc_dt::sc_uint<5>& log2, const sc_dt::sc_uint<32>& first) {
    cfg_[q] = true;
    base_[q] = base;
    log2_[q] = log2;
    prod_[q] = first - 1;
    head_[q] = first;
    req_[q] = first - 1;
  }
  void unconfigure(int q) { cfg_[q] = false; }
  void doorbell(int q, const sc_dt::sc_uint<32>& prod) { prod_[q] = prod; }
  void consume(int q) { head_[q] = head_[q] + 1; }
  // The prefetch window: the MSNs [first, last] posted, not yet read, and within RQ_PREFETCH (and the
  // ring) of the head. False when there is none.
  bool window(int q, sc_dt::sc_uint<32>& first, sc_dt::sc_uint<32>& last) const {
    if (!cfg_[q]) return false;
    const sc_dt::sc_uint<32> cons = head_[q] - 1;
    sc_dt::sc_uint<32> f = req_[q] + 1;
    if (sc_dt::sc_uint<32>(head_[q] - f)[31] == 0 && head_[q] != f) f = head_[q];  // read ones consumed
    const sc_dt::sc_uint<32> size = sc_dt::sc_uint<32>(1) << log2_[q].to_uint();
    const sc_dt::sc_uint<32> span =
        size < sc_dt::sc_uint<32>(C::RQ_PREFETCH) ? size : sc_dt::sc_uint<32>(C::RQ_PREFETCH);
    const sc_dt::sc_uint<32> lim = cons + span;
    sc_dt::sc_uint<32> l = prod_[q];
    if (sc_dt::sc_uint<32>(lim - l)[31]) l = lim;
    if (sc_dt::sc_uint<32>(l - f)[31]) return false;
    first = f;
    last = l;
    return true;
  }
  // The MSN was read ahead (the engine's requests are in MSN order per queue).
  void requested(int q, const sc_dt::sc_uint<32>& msn) { req_[q] = msn; }
  // msn was requested already (landed or in flight).
  bool was_requested(int q, const sc_dt::sc_uint<32>& msn) const { return sc_dt::sc_uint<32>(req_[q] - msn)[31] == 0; }

 private:
  bool cfg_[static_cast<std::size_t>(NQ)];
  sc_dt::sc_uint<64> base_[static_cast<std::size_t>(NQ)];
  sc_dt::sc_uint<5> log2_[static_cast<std::size_t>(NQ)];
  sc_dt::sc_uint<32> prod_[static_cast<std::size_t>(NQ)];
  sc_dt::sc_uint<32> head_[static_cast<std::size_t>(NQ)];
  sc_dt::sc_uint<32> req_[static_cast<std::size_t>(NQ)];
};

// ---- the descriptor cache ----------------------------------------------------------------------------------
template <class C>
class LookupDescCache {
 public:
  static constexpr int NQ = C::NUM_STREAMS * C::NUM_QNS;
  static constexpr int P = C::RQ_PREFETCH;
  // Nothing here is cleared by reset or by a new configuration: a slot answers for MSN m only if it
  // is tagged m and m was landed since the queue's QUEUE_CONFIG (landed_ >= m). The engine requests a
  // queue's MSNs in increasing order, each once per configuration, from its first MSN on (skipping
  // only consumed ones), and the reads are answered in order, so the landings of a configuration are
  // increasing too: an MSN m >= head with landed_ >= m was landed in this configuration into slot
  // (m - 1) mod P, and a slot still tagged m holds that landing (the RTL's landed scheme). A slot of an
  // earlier configuration, or of before a reset (the queue unconfigured until its QUEUE_CONFIG), with
  // the same tag never answers.
  void power_on() {
    for (int i = 0; i < NQ * P; ++i) {
      msn_[i] = 0;
      addr_[i] = 0;
      len_[i] = 0;
      err_[i] = false;
    }
    for (int q = 0; q < NQ; ++q) landed_[q] = 0;
  }
  // QUEUE_CONFIG's start of queue q at MSN first: nothing landed yet (one write).
  void restart(int q, const sc_dt::sc_uint<32>& first) { landed_[q] = first - 1; }
  static int slot(int q, const sc_dt::sc_uint<32>& msn) {
    return q * P + int(sc_dt::sc_uint<32>(msn - 1).to_uint() & unsigned(P - 1));
  }
  // msn at or past the queue's head (the caller's status is OK), so landed_ - msn is within 2^31.
  bool lookup(int q, const sc_dt::sc_uint<32>& msn, Lookup& lk) const {
    const int i = slot(q, msn);
    const bool landed = sc_dt::sc_uint<32>(landed_[q] - msn)[31] == 0;  // landed_ >= msn
    if (!landed || msn_[i] != msn) return false;
    lk.rq_addr = addr_[i];
    lk.rq_length = len_[i];
    lk.local_fault = err_[i];
    return true;
  }
  void land(int q, const sc_dt::sc_uint<32>& msn, const sc_dt::sc_uint<64>& addr, const sc_dt::sc_uint<32>& len,
            bool err) {
    const int i = slot(q, msn);
    landed_[q] = msn;
    msn_[i] = msn;
    addr_[i] = addr;
    len_[i] = len;
    err_[i] = err;
  }

 private:
  sc_dt::sc_uint<32> landed_[static_cast<std::size_t>(NQ)];  // MSN of the queue's last landing
  sc_dt::sc_uint<32> msn_[static_cast<std::size_t>(NQ * P)];
  sc_dt::sc_uint<64> addr_[static_cast<std::size_t>(NQ * P)];
  sc_dt::sc_uint<32> len_[static_cast<std::size_t>(NQ * P)];
  bool err_[static_cast<std::size_t>(NQ * P)];
};

// ---- the prefetch engine's state ---------------------------------------------------------------------------
// Queues to visit arrive as hints (a doorbell, a consume: the window moved) into a small ring (a full
// ring drops the hint: it only delays a fetch, and a segment waiting for its descriptor names its queue
// in `prio`, visited first). A visit reads the queue's window one descriptor per cycle.
template <class C>
class LookupPrefetch {
 public:
  static constexpr int HINTS = 8;
  void reset() {
    hrd_ = 0;
    hwr_ = 0;
    prio_v = false;
    prio_q = 0;
    active = false;
    q = 0;
    next = 0;
    last = 0;
  }
  void power_on() {
    for (int i = 0; i < HINTS; ++i) hint_[i] = 0;
    reset();
  }
  void hint(int queue) {
    const sc_dt::sc_uint<4> n = hwr_ - hrd_;
    if (n != 0 && hint_[(hwr_.to_uint() - 1) % HINTS] == queue) return;  // just hinted
    if (n.to_uint() >= unsigned(HINTS)) return;
    hint_[hwr_.to_uint() % HINTS] = queue;
    hwr_ = hwr_ + 1;
  }
  bool pop(int& queue) {
    if (hwr_ == hrd_) return false;
    queue = hint_[hrd_.to_uint() % HINTS];
    hrd_ = hrd_ + 1;
    return true;
  }
  // A command: the visit in progress and the waiting segment's queue are re-decided from the new
  // tables (the hints are only queue names, checked against the tables when visited).
  void cancel() {
    prio_v = false;
    active = false;
  }

  bool prio_v;  // a waiting segment's queue: visited before the hints
  int prio_q;
  bool active;  // a visit: reads MSNs next..last of queue q
  int q;
  sc_dt::sc_uint<32> next, last;

 private:
  int hint_[static_cast<std::size_t>(HINTS)];
  sc_dt::sc_uint<4> hrd_, hwr_;
};

// ---- the stage ---------------------------------------------------------------------------------------------
template <class C>
SC_MODULE(LookupStage) {
  sc_core::sc_in<bool> clk;
  sc_core::sc_in<bool> rst_n;
  p2p_in<Seg> seg;
  p2p_out<Lookup> out;
  p2p_in<CmdReq> cmd;
  sc_core::sc_out<bool> cmd_done, cmd_refused;
  sc_core::sc_out<sc_dt::sc_uint<32>> cmd_result;
  p2p_in<Doorbell> db;
  p2p_in<StreamErr> err;
  p2p_in<Cons> cons;
  p2p_in<SsnUpd> ssn;
  p2p_out<AxiAr> ar;
  p2p_in<AxiR<C::DATA_WIDTH>> r;
  sc_core::sc_in<bool> validate_busy;
  sc_core::sc_out<bool> ev_read_err;

  SC_CTOR(LookupStage) {
    SC_CTHREAD(run, clk.pos());
    reset_signal_is(rst_n, false);
    power_on();
  }

  // The FPGA's configuration-time state (the key table included).
  void power_on() {
    stag_.power_on();
    streams_.power_on();
    rq_.power_on();
    cache_.power_on();
    pf_.power_on();
    for (int i = 0; i < MAX_READS; ++i) {
      rec_dir_[i] = false;
      rec_q_[i] = 0;
      rec_msn_[i] = 0;
      rec_off_[i] = 0;
    }
  }

 private:
  static constexpr int MAX_READS = 32;  // descriptor reads in flight (one ID: answers in order)
  static constexpr int DESC_BEATS = C::BYTES >= 16 ? 1 : 16 / C::BYTES;
  enum CmdState { kIdle, kEcho, kQclr, kQecho };  // a command waiting for deliver's echo, or finishing
  static constexpr int NQ = LookupRqTable<C>::NQ;
  // The reset walk's length: the largest table it clears.
  static constexpr int WALK_STAG_STREAMS = C::STAG_ENTRIES > C::NUM_STREAMS ? C::STAG_ENTRIES : C::NUM_STREAMS;
  static constexpr int WALK = WALK_STAG_STREAMS > NQ ? WALK_STAG_STREAMS : NQ;
  enum DirState { kDirNone, kDirWant, kDirWait, kDirDone };

  LookupStagTable<C> stag_;
  LookupStreamTable<C> streams_;
  LookupRqTable<C> rq_;
  LookupDescCache<C> cache_;
  LookupPrefetch<C> pf_;
  // The in-order record of descriptor reads in flight: {direct, queue, MSN, byte offset in the beat}.
  bool rec_dir_[static_cast<std::size_t>(MAX_READS)];
  int rec_q_[static_cast<std::size_t>(MAX_READS)];
  sc_dt::sc_uint<32> rec_msn_[static_cast<std::size_t>(MAX_READS)];
  sc_dt::sc_uint<6> rec_off_[static_cast<std::size_t>(MAX_READS)];

  // The item of segment s from the tables as they are now. need: an untagged segment that can be
  // placed (stream NORMAL or PENDING, queue OK) and wants its descriptor; then q, near (within the
  // cache's reach of the head), hit (the cache answered into lk).
  void build(const Seg& s, Lookup& lk, bool& need, int& q, bool& near, bool& hit) const {
    lk = Lookup();
    lk.kind = ItemKind::kSeg;
    lk.seg = s;
    streams_.read(s.stream, lk);
    stag_.read(s.stag, lk);
    q = LookupRqTable<C>::index(s.stream, s.qn);
    sc_dt::sc_uint<32> ahead = 0;
    const unsigned st = rq_.status(q, s.msn, ahead);
    lk.rq_status = st;
    need = !s.is_tagged && stream_live(lk.stream_state.to_uint()) && st == RqStatus::kRqOk;
    near = ahead.to_uint() < unsigned(C::RQ_PREFETCH);
    hit = need && near && cache_.lookup(q, s.msn, lk);
  }

  void run() {
    // ---- reset: every output idle, every input not ready; the tables are cleared by the walk below.
    seg.reset();
    out.reset();
    cmd.reset();
    db.reset();
    err.reset();
    cons.reset();
    ssn.reset();
    ar.reset();
    r.reset();
    cmd_done.write(false);
    cmd_refused.write(false);
    cmd_result.write(0);
    ev_read_err.write(false);
    pf_.reset();  // registers

    Seg cur;  // the segment being looked up
    bool cur_v = false;
    DirState dir = kDirNone;  // its direct descriptor read
    Lookup dir_lk;            //   the item decided when it was asked for
    sc_dt::sc_uint<64> dir_addr = 0;
    Lookup out_lk;  // the output register
    bool out_v = false;
    int quiet = 0;  // cycles `out` has offered nothing
    AxiAr ar_d;     // the AR register
    bool ar_v = false;
    sc_dt::sc_uint<6> rd_rd = 0, rd_wr = 0;  // the read record (count = wr - rd)
    sc_dt::sc_uint<64> r_lo = 0, r_hi = 0;   // the descriptor gathered from R beats
    bool r_err = false;
    sc_dt::sc_uint<8> r_beat = 0;
    CmdState cst = kIdle;
    sc_dt::sc_uint<16> cmd_stream = 0, cmd_pd = 0;  // STREAM_ENABLE
    int qclr = 0;                                   //   its queue being unconfigured (kQclr)
    int cfg_q = 0;                                  // QUEUE_CONFIG
    sc_dt::sc_uint<64> cfg_base = 0;
    sc_dt::sc_uint<5> cfg_log2 = 0;
    sc_dt::sc_uint<32> cfg_first = 0;
    bool seg_rdy = false, cmd_rdy = false;
    // The stream table has one write port (a block RAM). A delivery failure (kConsFail) that meets
    // another writer waits here and is written in a later cycle no other writer uses; while it waits
    // the consume channel is not ready (an echo behind it could write in its cycle) and no command
    // runs (as the RTL's fail_q, docs/rtl-architecture.md "Error state").
    bool fail_v = false;
    sc_dt::sc_uint<16> fail_stream = 0;
    wait();

    // ---- the reset walk (the RTL's C_INIT): in cycle i, entry i of every table that must start
    // cleared (no STag valid, every stream torn down with delivery point 0, no queue configured), for
    // as many cycles as the largest has entries. The key table is not cleared (it survives reset), nor
    // the descriptor cache (see LookupDescCache), nor the queues' MSN state (written by QUEUE_CONFIG).
    // No segment, command, doorbell, consume or update is taken meanwhile (their senders wait); read
    // data is, as in the RTL (a read answered from before the reset: counted, not used, no read is in
    // flight).
    for (int i = 0; i < WALK; ++i) {
      if (i < C::STAG_ENTRIES) stag_.reset_entry(i);
      if (i < C::NUM_STREAMS) streams_.reset_entry(i);
      if (i < NQ) rq_.unconfigure(i);
      ev_read_err.write(r.fired() && r.data().resp != 0);
      r.ready(true);
      wait();
    }

    while (true) {
      bool done = false, refused = false;
      sc_dt::sc_uint<32> result = 0;
      // This cycle's stream-table write (at most one), applied before the segment reads the table.
      bool sw = false;
      sc_dt::sc_uint<16> sw_stream = 0, sw_pd = 0, sw_essn = 0;
      unsigned sw_state = rnic::hw::kSTREAM_ERROR;

      // ---- what moved at the edge just passed
      if (out.taken()) out_v = false;
      if (ar.taken()) ar_v = false;

      // Side channels, taken every cycle (deliver and validate never wait on lookup's pipeline).
      if (err.fired()) {  // 7.1: a segment of the stream failed: PENDING at its DDP-SSN, or ERROR
        const StreamErr e = err.data();
        sw = true;
        sw_stream = e.stream;
        sw_state = e.state.to_uint();
        sw_pd = e.pd;
        sw_essn = e.essn;
      }
      if (ssn.fired()) {
        const SsnUpd u = ssn.data();
        streams_.set_next_ssn(u.stream, u.next_ssn);
      }
      if (db.fired()) {  // the producer: MSN of the last posted buffer (out of range: ignored)
        const Doorbell d = db.data();
        const int q = LookupRqTable<C>::index(d.stream, d.qn);
        if (q >= 0) {
          rq_.doorbell(q, d.prod);
          if (rq_.configured(q)) pf_.hint(q);
        }
      }
      if (cons.fired()) {
        const Cons c = cons.data();
        const int q = LookupRqTable<C>::index(c.stream, c.qn);
        if (c.kind == ConsKind::kConsConsume) {  // a message completed: the head moves (4.3)
          if (q >= 0) {
            rq_.consume(q);
            pf_.hint(q);
          }
        } else if (c.kind == ConsKind::kConsFail) {  // deliver reported an error of the stream: parked
          fail_v = true;                             // (cons is not ready while one waits: none is)
          fail_stream = c.stream;
        } else if (c.kind == ConsKind::kConsReset && cst == kEcho) {
          // STREAM_ENABLE: every earlier item of the stream is through deliver: NORMAL with its PD,
          // and every queue of it unconfigured, one per cycle from this one (kQclr below; no segment
          // is taken before the command is done).
          // (validate is idle while a command runs: no StreamErr meets this write.)
          sw = true;
          sw_stream = cmd_stream;
          sw_state = rnic::hw::kSTREAM_NORMAL;
          sw_pd = cmd_pd;
          qclr = 0;
          cst = kQclr;
        } else if (c.kind == ConsKind::kConsQset && cst == kQecho) {
          // QUEUE_CONFIG: deliver set the queue's expected MSN; the queue starts empty at its first
          // MSN, nothing landed (no read was in flight: the command ran drained; no slot of an earlier
          // configuration answers).
          rq_.start(cfg_q, cfg_base, cfg_log2, cfg_first);
          cache_.restart(cfg_q, cfg_first);
          done = true;
          cst = kIdle;
        }
      }

      if (cst == kQclr) {  // STREAM_ENABLE's queues (the stream is in range: the command checked it)
        rq_.unconfigure(int(cmd_stream.to_uint()) * C::NUM_QNS + qclr);
        if (qclr == C::NUM_QNS - 1) {
          done = true;
          cst = kIdle;
        }
        qclr = qclr + 1;
      }

      // Descriptor read data (little-endian RQD: ADDR at byte 0, LENGTH at byte 8).
      // A beat with no read in flight (one issued before a reset) is counted, not used.
      const bool rd_error = r.fired() && r.data().resp != 0;
      if (r.fired() && rd_wr != rd_rd) {
        const AxiR<C::DATA_WIDTH> b = r.data();
        const int h = int(rd_rd.to_uint() % MAX_READS);
        if (DESC_BEATS == 1) {
          const unsigned off = rec_off_[h].to_uint() & unsigned(C::BYTES - 1);
          const sc_dt::sc_biguint<C::DATA_WIDTH> sh = b.data >> (8 * off);
          r_lo = sh.range(63, 0).to_uint64();
          r_hi = sc_dt::sc_biguint<C::DATA_WIDTH>(sh >> 64).range(63, 0).to_uint64();
        } else if (r_beat == 0) {
          r_lo = b.data.range(63, 0).to_uint64();
        } else {
          r_hi = b.data.range(63, 0).to_uint64();
        }
        const bool e = r_err || rd_error;
        if (b.last) {
          const sc_dt::sc_uint<64> addr = r_lo;
          const sc_dt::sc_uint<32> len = r_hi.range(31, 0);
          if (rec_dir_[h]) {
            dir_lk.rq_addr = addr;
            dir_lk.rq_length = len;
            dir_lk.local_fault = e;
            dir = kDirDone;
          } else {
            cache_.land(rec_q_[h], rec_msn_[h], addr, len, e);
          }
          rd_rd = rd_rd + 1;
          r_beat = 0;
          r_err = false;
        } else {
          r_beat = r_beat + 1;
          r_err = e;
        }
      }

      if (seg.fired()) {
        cur = seg.data();
        cur_v = true;
        dir = kDirNone;
      }

      // ---- a command (taken only drained: no segment, out quiet, no read in flight, validate idle)
      if (cmd.fired()) {
        const CmdReq c = cmd.data();
        const unsigned op = c.op.to_uint();
        const unsigned a0 = c.arg[0].to_uint();
        pf_.cancel();
        Lookup lk;
        lk.seg = Seg();
        bool emit = false;
        if (op == rnic::hw::kCmdNOP) {
          done = true;
        } else if (op == rnic::hw::kCmdSTAG_WRITE) {
          if (LookupStagTable<C>::in_range(c.arg[0])) {
            result = stag_.write(a0, c.arg);
            done = true;
          } else {
            done = refused = true;
          }
        } else if (op == rnic::hw::kCmdSTAG_INVALIDATE) {
          // No lookup after this can hit the entry; the FENCE completes the command in deliver once
          // every earlier placement write is acknowledged (RFC 5041 8.3.1 #6).
          if (LookupStagTable<C>::in_range(c.arg[0])) {
            stag_.invalidate(a0);
            lk.kind = ItemKind::kFence;
            lk.arg = c.arg[0].range(15, 0);
            emit = true;
          } else {
            done = refused = true;
          }
        } else if (op == rnic::hw::kCmdSTREAM_ENABLE) {
          // Deliver resets the stream's DDP-SSN state in order; the tables change on its echo.
          if (LookupStreamTable<C>::in_range(c.arg[0])) {
            lk.kind = ItemKind::kStreamReset;
            lk.arg = c.arg[0].range(15, 0);
            emit = true;
            cmd_stream = c.arg[0].range(15, 0);
            cmd_pd = c.arg[1].range(15, 0);
            cst = kEcho;
          } else {
            done = refused = true;
          }
        } else if (op == rnic::hw::kCmdSTREAM_TEARDOWN) {
          // No lookup after this places for the stream; the FENCE completes it in deliver.
          if (LookupStreamTable<C>::in_range(c.arg[0])) {
            // (Taken drained with validate idle: no StreamErr meets this write; a failure taken at the
            // same edge waits and is written after it, as in the RTL.)
            sw = true;
            sw_stream = c.arg[0].range(15, 0);
            sw_state = rnic::hw::kSTREAM_TORN_DOWN;
            sw_pd = 0;
            lk.kind = ItemKind::kFence;
            lk.arg = c.arg[0].range(15, 0);
            emit = true;
          } else {
            done = refused = true;
          }
        } else if (op == rnic::hw::kCmdQUEUE_CONFIG) {
          // One configuration per queue and stream session: a configured queue is refused.
          const int q = LookupRqTable<C>::index(c.arg[0], c.arg[1]);
          if (q < 0 || c.arg[4].to_uint() > 16 || rq_.configured(q)) {
            done = refused = true;
          } else {
            cfg_q = q;
            cfg_base = (sc_dt::sc_uint<64>(c.arg[3]) << 32) | sc_dt::sc_uint<64>(c.arg[2]);
            cfg_log2 = c.arg[4].range(4, 0);
            cfg_first = c.arg[5] == 0 ? sc_dt::sc_uint<32>(1) : c.arg[5];
            lk.kind = ItemKind::kQueueSet;
            lk.arg = c.arg[0].range(15, 0);
            lk.seg.stream = c.arg[0].range(15, 0);
            lk.seg.qn = c.arg[1];
            lk.seg.msn = cfg_first;
            emit = true;
            cst = kQecho;
          }
        } else {
          done = refused = true;  // unknown opcode
        }
        if (emit) {
          out_lk = lk;
          out_v = true;
        }
      }

      // ---- the stream table's one write: the writer of this cycle, else the parked delivery failure
      if (sw) {
        streams_.write(sw_stream, sw_state, sw_pd, sw_essn);
      } else if (fail_v) {
        streams_.write(fail_stream, rnic::hw::kSTREAM_ERROR, 0, 0);
        fail_v = false;
      }

      // ---- the segment: decided from the tables as they are now (re-read every cycle while it waits)
      bool want_prio = false;
      int prio_q = 0;
      if (cur_v && dir == kDirDone) {
        if (!out_v) {
          Lookup lk = dir_lk;
          streams_.read(cur.stream, lk);  // the stream word kept current
          lk.next_ssn = dir_lk.next_ssn;
          out_lk = lk;
          out_v = true;
          cur_v = false;
          dir = kDirNone;
        }
      } else if (cur_v && dir == kDirNone) {
        Lookup lk;
        bool need = false, near = false, hit = false;
        int q = -1;
        build(cur, lk, need, q, near, hit);
        if (!need || hit) {
          if (!out_v) {
            out_lk = lk;
            out_v = true;
            cur_v = false;
          }
        } else if (near) {
          // A miss within the cache's reach: the engine reads it (first, if not yet asked for).
          if (!rq_.was_requested(q, cur.msn)) {
            want_prio = true;
            prio_q = q;
          }
        } else {
          // Further ahead than the cache reaches: read it directly.
          dir = kDirWant;
          dir_lk = lk;
          dir_addr = rq_.desc_addr(q, cur.msn);
        }
      }
      if (want_prio && !(pf_.active && pf_.q == prio_q)) {
        pf_.prio_v = true;
        pf_.prio_q = prio_q;
      }

      // ---- the AR register: the direct read first, then the engine
      const bool cmd_wait = cst != kIdle || (cmd.vld.read() && !cur_v);  // no new reads for a command
      const bool rec_room = sc_dt::sc_uint<6>(rd_wr - rd_rd).to_uint() < unsigned(MAX_READS);
      if (!ar_v && rec_room) {
        bool issue = false, is_dir = false;
        int iq = 0;
        sc_dt::sc_uint<32> imsn = 0;
        sc_dt::sc_uint<64> iaddr = 0;
        if (dir == kDirWant) {
          issue = is_dir = true;
          iaddr = dir_addr;
          imsn = cur.msn;
          dir = kDirWait;
        } else if (!cmd_wait) {
          if (!pf_.active) {
            int vq = 0;
            bool visit = false;
            if (pf_.prio_v) {
              vq = pf_.prio_q;
              pf_.prio_v = false;
              visit = true;
            } else {
              visit = pf_.pop(vq);
            }
            sc_dt::sc_uint<32> f = 0, l = 0;
            if (visit && rq_.window(vq, f, l)) {
              pf_.active = true;
              pf_.q = vq;
              pf_.next = f;
              pf_.last = l;
            }
          }
          if (pf_.active) {
            issue = true;
            iq = pf_.q;
            imsn = pf_.next;
            iaddr = rq_.desc_addr(iq, imsn);
            rq_.requested(iq, imsn);
            if (pf_.next == pf_.last) pf_.active = false;
            pf_.next = pf_.next + 1;
          }
        }
        if (issue) {
          const int t = int(rd_wr.to_uint() % MAX_READS);
          rec_dir_[t] = is_dir;
          rec_q_[t] = iq;
          rec_msn_[t] = imsn;
          rec_off_[t] = iaddr.range(5, 0);
          rd_wr = rd_wr + 1;
          // One burst covering the 16-byte descriptor (16-byte aligned: within one beat at >= 128
          // bits, two beats at 64).
          ar_d.addr = DESC_BEATS == 1 ? sc_dt::sc_uint<64>(iaddr & ~sc_dt::sc_uint<64>(C::BYTES - 1)) : iaddr;
          ar_d.len = DESC_BEATS - 1;
          ar_v = true;
        }
      }

      // ---- a command may be taken when lookup is drained (contract: commands only between segments)
      const bool reads_idle = !ar_v && rd_wr == rd_rd && dir == kDirNone;
      quiet = out_v ? 0 : (quiet < 3 ? quiet + 1 : quiet);
      // Ready only for a command already waiting (cmd.vld): the segment input is then closed, so a
      // command and a segment never move at the same edge.
      cmd_rdy = cst == kIdle && cmd.vld.read() && !cur_v && !seg_rdy && !seg.fired() && !out_v && quiet >= 3 &&
                reads_idle && !validate_busy.read() && !cmd.fired() && !fail_v;
      seg_rdy = cst == kIdle && !cur_v && !cmd.vld.read() && !cmd.fired();

      // ---- outputs
      if (out_v)
        out.offer(out_lk);
      else
        out.idle();
      if (ar_v)
        ar.offer(ar_d);
      else
        ar.idle();
      seg.ready(seg_rdy);
      cmd.ready(cmd_rdy);
      db.ready(true);
      err.ready(true);
      cons.ready(!fail_v);
      ssn.ready(true);
      r.ready(true);
      cmd_done.write(done);
      cmd_refused.write(refused);
      cmd_result.write(result);
      ev_read_err.write(rd_error);
      wait();
    }
  }
};

}  // namespace rnic::hls
