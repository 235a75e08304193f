// SPDX-License-Identifier: Apache-2.0
// rnic-peer as a separate process against a software receiver in this test: a listening
// rnic::sctp::Endpoint over its own UdpLink (SCTP in UDP, RFC 6951), answering each Initiate with the
// demo ULP's advertisement (host/ulp) and feeding every delivered DDP segment to the software Data Sink
// (driver/model, RFC 5041). At the end every byte of the receiver's memory (placed bytes and the guard
// bytes around them) and every completion (RFC 5041 5.4: tagged STag and RsvdULP, untagged QN, MSN,
// length and buffer, and the DDP-SSN of the last segment) are checked against the plan.
//
// Variants: clean path; the receiver dropping, duplicating and reordering datagrams both ways (seeded;
// RNIC_TEST_SEED=<n> replays, the seed is printed) where everything must still arrive and rnic-peer must
// report retransmissions; a receiver without the DDP Adaptation Layer Indication (RFC 5043 11.1); a
// receiver that rejects or advertises too little; no receiver; bad command lines.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <usrsctp.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "rnic/driver/rnic.hpp"
#include "rnic/model/data_sink.hpp"
#include "rnic/sctp/endpoint.hpp"
#include "rnic/sctp/udp_link.hpp"
#include "rnic/systest/child_process.hpp"
#include "rnic/tb/seed.hpp"
#include "rnic/ulp/demo_ulp.hpp"

#ifndef RNIC_PEER_BINARY
#error "RNIC_PEER_BINARY must name the rnic-peer executable"
#endif

namespace {

using namespace rnic::sctp;
using Clock = std::chrono::steady_clock;
using Json = nlohmann::json;
using rnic::wire::ConstBytes;

// rnic-peer as a child process, stdout / stderr in a private temporary directory.
struct PeerProcess : rnic::systest::ChildProcess {
  explicit PeerProcess(std::vector<std::string> args) : ChildProcess(RNIC_PEER_BINARY, std::move(args)) {}
};

struct Impairment {
  double drop = 0, duplicate = 0, reorder = 0;  // per datagram, each direction
};

enum class Answer { kAccept, kReject, kAdvertiseTooLittle };

// The software receiver: a listening Endpoint over a UdpLink, the demo ULP's receiver side, the Data Sink.
class Receiver {
 public:
  static constexpr std::uint8_t kFill = 0xA5;
  static constexpr std::uint32_t kQn = 1;
  static constexpr std::uint64_t kGuard = 64;  // untouched bytes around every buffer

  Receiver(bool indicate_ddp, Impairment imp, std::uint64_t seed, Answer answer = Answer::kAccept)
      : ep_(config(indicate_ddp), [this](ConstBytes p) { out(p); }), imp_(imp), rng_(seed), answer_(answer) {
    ep_.set_session_handler([this](const SessionNotice& n) { notices_.push_back(n); });
    ep_.set_segment_sink([this](std::uint16_t s, std::uint16_t ssn, ConstBytes seg) {
      // The model numbers a stream's segments from 0; the session's first segment is DDP-SSN 1.
      if (sink_) sink_->receive(s, static_cast<std::uint16_t>(ssn - 1), seg);
    });
    ep_.listen();
  }

  Ipv4Endpoint address() const { return link_.local(); }
  Endpoint& ep() { return ep_; }
  std::size_t initiates() const { return initiates_; }
  const std::vector<std::string>& failures() const { return failures_; }
  const std::optional<rnic::ulp::Plan>& plan() const { return plan_; }
  std::uint64_t impaired() const { return dropped_ + duplicated_ + reordered_; }
  std::string impairment_summary() const {
    return fmt::format("{} dropped, {} duplicated, {} reordered datagrams", dropped_, duplicated_, reordered_);
  }

  void step(int wait_ms) {
    for (int n = 0; n < 512; ++n) {
      auto d = link_.receive(n == 0 ? wait_ms : 0);
      if (!d) break;
      if (!peer_) peer_ = d->from;  // the first datagram names the peer (RFC 6951: its source port)
      if (d->from != *peer_) continue;
      if (impair_now()) {
        const double r = uni_(rng_);
        if (r < imp_.drop) {
          ++dropped_;
          continue;
        }
        if (r < imp_.drop + imp_.duplicate) {
          ++duplicated_;
          ep_.input(ConstBytes(d->bytes));
        } else if (r < imp_.drop + imp_.duplicate + imp_.reorder) {
          ++reordered_;
          held_in_.push_back(std::move(d->bytes));  // delivered after the next one
          continue;
        }
      }
      ep_.input(ConstBytes(d->bytes));
      while (!held_in_.empty()) {
        ep_.input(ConstBytes(held_in_.front()));
        held_in_.pop_front();
      }
    }
    ep_.pump();
    handle_notices();
    if (timers_.advance()) {
      ep_.pump();
      handle_notices();
    }
    for (auto& p : held_out_) send(p);  // held back for one step: later than what was sent since
    held_out_.clear();
  }

  bool all_terminated() const {
    return plan_ && std::all_of(terminated_.begin(), terminated_.end(), [](bool t) { return t; });
  }

  // Every completion and every byte against the plan. Returns the first few differences.
  std::vector<std::string> verify() {
    std::vector<std::string> bad;
    const auto add = [&](std::string s) {
      if (bad.size() < 20) bad.push_back(std::move(s));
    };
    if (!plan_ || !sink_) return {"no plan: the sessions never came up"};
    const auto& plan = *plan_;
    // Completions, in order per stream (RFC 5041 5.4; the Data Sink delivers in DDP-SSN order).
    std::vector<std::deque<rnic::model::Completion>> got(plan.initiate.streams);
    for (auto& c : sink_->completions()) {
      if (c.stream >= got.size()) {
        add(fmt::format("completion on stream {}", c.stream));
        continue;
      }
      got[c.stream].push_back(c);
    }
    std::vector<std::size_t> next(plan.initiate.streams, 0);
    for (const auto& m : plan.messages) {
      auto& q = got[m.stream];
      const std::size_t k = next[m.stream]++;
      if (k >= q.size()) {
        add(fmt::format("message {} (stream {}): no completion", m.index, m.stream));
        continue;
      }
      const auto& c = q[k];
      const std::uint16_t ssn = static_cast<std::uint16_t>(m.last_ddp_ssn - 1);
      bool ok = !c.is_error && c.tagged == m.tagged && c.rsvd_ulp == m.rsvd_ulp && c.ssn == ssn;
      if (m.tagged) {
        ok = ok && c.stag == m.stag;
      } else {
        ok = ok && c.qn == m.qn && c.msn == m.msn && c.length == m.length &&
             c.buffer_addr == posted_addr_[m.stream][m.msn - 1];
      }
      if (!ok)
        add(
            fmt::format("message {} (stream {}, {}): completion error={} tagged={} stag=0x{:x} qn={} msn={} len={} "
                        "rsvd=0x{:x} ssn={} buf=0x{:x}; want stag=0x{:x} qn={} msn={} len={} rsvd=0x{:x} ssn={}",
                        m.index, m.stream, m.tagged ? "tagged" : "untagged", c.is_error, c.tagged, c.stag, c.qn, c.msn,
                        c.length, c.rsvd_ulp, c.ssn, c.buffer_addr, m.stag, m.qn, m.msn, m.length, m.rsvd_ulp, ssn));
    }
    for (std::size_t s = 0; s < got.size(); ++s) {
      if (got[s].size() != next[s])
        add(fmt::format("stream {}: {} completions, the plan has {}", s, got[s].size(), next[s]));
    }
    // Memory: the fill everywhere, the plan's bytes where its messages go.
    std::vector<std::uint8_t> want(mem_->size(), kFill);
    for (const auto& m : plan.messages) {
      const std::uint64_t at =
          m.tagged ? tagged_host_[m.stream][m.buffer] + m.offset_in_buffer : posted_addr_[m.stream][m.msn - 1];
      rnic::ulp::fill_message(plan.initiate.seed, m.index, want.data() + at, m.length);
    }
    const ConstBytes have = mem_->read(0, mem_->size());
    std::uint64_t wrong = 0;
    for (std::size_t i = 0; i < want.size(); ++i) {
      if (have.data[i] == want[i]) continue;
      if (wrong++ == 0)
        add(fmt::format("memory: first wrong byte at 0x{:x}: 0x{:02x}, want 0x{:02x}", i, have.data[i], want[i]));
    }
    if (wrong != 0) add(fmt::format("memory: {} of {} bytes wrong", wrong, want.size()));
    const auto& sc = sink_->counters();
    if (!sc.errors.empty()) add(fmt::format("Data Sink reported {} kinds of RFC 5041 errors", sc.errors.size()));
    if (sc.drops != 0 || sc.duplicates != 0)
      add(fmt::format("Data Sink: {} drops, {} duplicates", sc.drops, sc.duplicates));
    if (ep_.counters().violations != 0) add(fmt::format("{} session violations", ep_.counters().violations));
    for (const auto& f : failures_) add("receiver: " + f);
    return bad;
  }
  std::uint64_t bytes_in_memory() const { return mem_ ? mem_->size() : 0; }
  // For failure messages: where the receiver's side stands.
  std::string describe() const {
    const auto& c = ep_.counters();
    return fmt::format(
        "receiver: association {}, {} Initiates, {} accepted; controls sent {} received {}, segments {}, stale {}, "
        "malformed {}, not-DDP dropped {}, violations {}; {} datagrams in, {} out; {}",
        association_state_name(ep_.state()), initiates_, accepted_, c.controls_sent, c.controls_received,
        c.segments_delivered, c.stale, c.malformed, c.not_ddp_dropped, c.violations, link_.counters().received,
        link_.counters().sent, impairment_summary());
  }

 private:
  static EndpointConfig config(bool indicate_ddp) {
    EndpointConfig c;
    c.port = rnic::ulp::kReceiverSctpPort;
    if (!indicate_ddp) c.adaptation_indication.reset();
    return c;
  }
  bool impair_now() const { return plan_.has_value(); }  // from the data phase on (see the README)

  void out(ConstBytes p) {  // from inside usrsctp: never throws
    if (!peer_) return;
    std::vector<std::uint8_t> v = p.to_vector();
    if (impair_now()) {
      const double r = uni_(rng_);
      if (r < imp_.drop) {
        ++dropped_;
        return;
      }
      if (r < imp_.drop + imp_.duplicate) {
        ++duplicated_;
        send(v);
      } else if (r < imp_.drop + imp_.duplicate + imp_.reorder) {
        ++reordered_;
        held_out_.push_back(std::move(v));
        return;
      }
    }
    send(v);
  }
  void send(const std::vector<std::uint8_t>& v) {
    try {
      link_.send_to(*peer_, ConstBytes(v));
    } catch (const rnic::Error& e) {
      failures_.push_back(std::string("send: ") + e.what());
    }
  }

  void handle_notices() {
    std::vector<SessionNotice> ns;
    ns.swap(notices_);
    for (const auto& n : ns) {
      switch (n.kind) {
        case NoticeKind::kInitiate:
          ++initiates_;
          on_initiate(n);
          break;
        case NoticeKind::kTerminated:
          if (n.stream < terminated_.size()) terminated_[n.stream] = true;
          break;
        default:
          failures_.push_back(fmt::format("stream {}: {} {}", n.stream, notice_kind_name(n.kind), n.detail));
      }
    }
  }

  void on_initiate(const SessionNotice& n) {
    // An Initiate read in the same round as the association's end (the peer's ABORT) has no one to
    // answer.
    if (ep_.state() != AssociationState::kReady) return;
    auto ini = rnic::ulp::decode_initiate(ConstBytes(n.private_data));
    if (!ini) {
      failures_.push_back("Initiate: " + ini.error().message());
      ep_.reject(n.stream);
      return;
    }
    if (!initiate_) layout(*ini);
    if (!(*ini == *initiate_) || n.stream >= initiate_->streams || answer_ == Answer::kReject) {
      ep_.reject(n.stream);
      return;
    }
    auto pd = rnic::ulp::encode_accept(adverts_[n.stream]);
    if (!pd) {
      failures_.push_back("Accept: " + pd.error().message());
      ep_.reject(n.stream);
      return;
    }
    ep_.accept(n.stream, ConstBytes(*pd));
    if (++accepted_ == initiate_->streams && answer_ == Answer::kAccept) {
      auto plan = rnic::ulp::make_plan(*initiate_, adverts_);
      if (!plan) {
        failures_.push_back("plan: " + plan.error().message());
        return;
      }
      plan_ = std::move(plan).value();
    }
  }

  // Sizes and registers what the run needs (host/ulp stream_demand, tagged_buffer_sizes): per stream up
  // to 3 tagged buffers (STags bound to the stream, TOs above 2^32) and the untagged queue's buffers.
  void layout(const rnic::ulp::Initiate& ini) {
    initiate_ = ini;
    const auto demand = rnic::ulp::stream_demand(ini);
    struct Stag {
      std::uint32_t index;
      rnic::model::StagEntry e;
      std::uint16_t stream;
    };
    std::vector<Stag> stags;
    std::uint64_t cursor = kGuard;
    std::uint32_t next_index = 1;
    adverts_.assign(ini.streams, {});
    tagged_host_.assign(ini.streams, {});
    posted_addr_.assign(ini.streams, {});
    terminated_.assign(ini.streams, false);
    for (std::uint16_t s = 0; s < ini.streams; ++s) {
      auto& a = adverts_[s];
      a.qn = kQn;
      std::uint64_t to = 0x0000123400000000ull + (std::uint64_t{s} << 36);
      for (std::uint64_t len : rnic::ulp::tagged_buffer_sizes(ini, s, 3)) {
        const std::uint32_t index = next_index++;
        const auto key = static_cast<std::uint8_t>(0x40 + index);
        const std::uint32_t stag = rnic::model::make_stag(index, key);
        stags.push_back(Stag{index, rnic::model::StagEntry{key, 1, s, true, to, len, cursor}, s});
        a.tagged.push_back(rnic::ulp::TaggedBuffer{stag, to, len});
        tagged_host_[s].push_back(cursor);
        cursor += len + kGuard;
        to += len + 0x10000;
      }
      a.posted = demand[s].untagged_messages;
      a.buffer_size = std::max<std::uint32_t>(demand[s].untagged_max_length, 1);
      if (answer_ == Answer::kAdvertiseTooLittle && a.posted > 0) --a.posted;
      for (std::uint32_t j = 0; j < a.posted; ++j) {
        posted_addr_[s].push_back(cursor);
        cursor += a.buffer_size + kGuard;
      }
    }
    if (cursor > (512u << 20)) {
      failures_.push_back(fmt::format("the run needs {} bytes of memory, more than this receiver has", cursor));
      return;
    }
    mem_ = std::make_unique<rnic::model::HostMemory>(cursor, kFill);
    sink_ = std::make_unique<rnic::model::DataSink>(*mem_, rnic::model::DataSink::Config{});
    for (std::uint16_t s = 0; s < ini.streams; ++s) sink_->enable_stream(s, 1);
    for (const auto& t : stags) sink_->set_stag(t.index, t.e);
    for (std::uint16_t s = 0; s < ini.streams; ++s) {
      for (std::uint64_t addr : posted_addr_[s]) sink_->post_buffer(s, kQn, addr, adverts_[s].buffer_size);
    }
  }

  UdpLink link_;  // before ep_: the Endpoint sends through it until it is gone
  std::optional<Ipv4Endpoint> peer_;
  Endpoint ep_;
  Impairment imp_;
  std::mt19937_64 rng_;
  std::uniform_real_distribution<double> uni_{0.0, 1.0};
  Answer answer_;
  std::deque<std::vector<std::uint8_t>> held_in_;
  std::vector<std::vector<std::uint8_t>> held_out_;
  std::uint64_t dropped_ = 0, duplicated_ = 0, reordered_ = 0;
  rnic::sctp::WallClockTimers timers_;
  std::vector<SessionNotice> notices_;
  std::size_t initiates_ = 0, accepted_ = 0;
  std::vector<std::string> failures_;
  std::optional<rnic::ulp::Initiate> initiate_;
  std::vector<rnic::ulp::Advertisement> adverts_;
  std::vector<std::vector<std::uint64_t>> tagged_host_, posted_addr_;
  std::vector<bool> terminated_;
  std::optional<rnic::ulp::Plan> plan_;
  std::unique_ptr<rnic::model::HostMemory> mem_;
  std::unique_ptr<rnic::model::DataSink> sink_;
};

// Runs the receiver until rnic-peer exits (and a little after, so what SCTP acknowledged is read).
int run_against(Receiver& rx, PeerProcess& peer, std::chrono::seconds limit = std::chrono::seconds(25)) {
  const auto end = Clock::now() + limit;
  std::optional<int> code;
  while (!(code = peer.poll())) {
    if (Clock::now() > end) return peer.wait(std::chrono::milliseconds(0));
    rx.step(2);
  }
  for (int i = 0; i < 20; ++i) rx.step(1);
  return *code;
}

std::vector<std::string> peer_args(const Receiver& rx, std::uint64_t seed, std::uint32_t messages,
                                   std::uint32_t max_message, std::uint16_t streams, std::uint32_t timeout_ms = 20000) {
  return {"--connect",  to_string(rx.address()),  "--seed",        std::to_string(seed),
          "--messages", std::to_string(messages), "--max-message", std::to_string(max_message),
          "--streams",  std::to_string(streams),  "--timeout-ms",  std::to_string(timeout_ms)};
}

void print_figures(const char* what, const Json& r) {
  const Json& s = r["sctp"];
  std::printf(
      "[  FIGURES ] %s: %llu messages, %llu bytes, %llu segments in %.3f s: %.0f messages/s, %.0f bytes/s; "
      "SCTP: %llu DATA chunks, %llu retransmitted (%llu fast), %llu T3 timeouts, %llu duplicate TSNs received\n",
      what, r["messages"].get<unsigned long long>(), r["bytes"].get<unsigned long long>(),
      r["segments"].get<unsigned long long>(), r["elapsed_s"].get<double>(), r["messages_per_s"].get<double>(),
      r["bytes_per_s"].get<double>(), s["data_chunks_sent"].get<unsigned long long>(),
      s["retransmitted_chunks"].get<unsigned long long>(), s["fast_retransmitted_chunks"].get<unsigned long long>(),
      s["t3_timeouts"].get<unsigned long long>(), s["duplicate_tsns_received"].get<unsigned long long>());
  std::fflush(stdout);
}

std::uint64_t receiver_duplicate_tsns() {
  sctpstat st{};
  usrsctp_get_stat(&st);
  return st.sctps_recvdupdata;
}

void run_and_check(const char* name, Impairment imp, std::uint32_t messages, std::uint32_t max_message,
                   std::uint16_t streams, bool expect_retransmissions) {
  const std::uint64_t seed = rnic::tb::random_test_seed(0x5EED0001);
  Receiver rx(true, imp, seed);
  auto args = peer_args(rx, seed, messages, max_message, streams);
  {
    char tmpl[] = "/tmp/rnic-peer-json.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    const std::string json = std::string(tmpl) + "/report.json";
    args.insert(args.end(), {"--json", json});
    PeerProcess p(args);
    const auto dup0 = receiver_duplicate_tsns();
    const int code = run_against(rx, p);
    const std::string out = p.out(), err = p.err(), report = rnic::systest::slurp(json);
    std::filesystem::remove_all(tmpl);
    std::printf("%s", out.c_str());
    ASSERT_EQ(code, 0) << "stderr: " << err << "seed " << seed << "\n" << rx.describe();
    Json r = Json::parse(report);
    print_figures(name, r);
    std::printf("[  FIGURES ] %s: receiver: %s; %llu duplicate TSNs received by the receiver's SCTP\n", name,
                rx.impairment_summary().c_str(), static_cast<unsigned long long>(receiver_duplicate_tsns() - dup0));
    ASSERT_TRUE(rx.plan().has_value());
    EXPECT_TRUE(rx.all_terminated()) << "RFC 5043 6.2: every session ends with the peer's Terminate";
    EXPECT_EQ(rx.ep().state(), AssociationState::kLost) << "the peer shut the association down";
    const auto bad = rx.verify();
    for (const auto& b : bad) ADD_FAILURE() << b << " (seed " << seed << ")";
    if (!bad.empty()) ADD_FAILURE() << rx.describe();
    EXPECT_EQ(r["status"], "ok");
    EXPECT_EQ(r["messages"].get<std::uint64_t>(), messages);
    EXPECT_EQ(r["bytes"].get<std::uint64_t>(), rx.plan()->total_bytes);
    EXPECT_EQ(r["segments"].get<std::uint64_t>(), rx.plan()->total_segments);
    if (expect_retransmissions) {
      EXPECT_GT(rx.impaired(), 0u);
      EXPECT_GT(r["sctp"]["retransmitted_chunks"].get<std::uint64_t>(), 0u)
          << "datagrams were dropped: SCTP must have retransmitted (seed " << seed << ")";
    }
  }
}

TEST(RnicPeer, CleanPathEveryByteAndCompletion) { run_and_check("clean", Impairment{}, 600, 9000, 3, false); }

// Loss, duplication and reordering on the receiver's side, both directions: SCTP (usrsctp on both
// sides) recovers; the DDP-SSN reorder buffer and the Data Sink see each segment once, in order.
TEST(RnicPeer, LossyPathStillDeliversEveryByte) {
  run_and_check("lossy", Impairment{0.03, 0.02, 0.05}, 300, 6000, 2, true);
}

// RFC 5043 11.1: a receiver whose INIT-ACK has no DDP Adaptation Layer Indication carries no DDP.
TEST(RnicPeer, ReceiverWithoutDdpIndicationIsRefused) {
  Receiver rx(false, Impairment{}, 1);
  PeerProcess p(peer_args(rx, 1, 10, 100, 1, 5000));
  const int code = run_against(rx, p, std::chrono::seconds(10));
  EXPECT_EQ(code, 1) << p.err();
  EXPECT_NE(p.err().find("RFC 5043 11.1"), std::string::npos) << p.err();
  EXPECT_NE(p.err().find("association refused"), std::string::npos) << p.err();
  EXPECT_EQ(rx.initiates(), 0u);
  std::printf("rnic-peer stderr: %s", p.err().c_str());
}

// RFC 5043 6.3: a rejected session ends the run with a failure naming it.
TEST(RnicPeer, RejectedSessionFails) {
  Receiver rx(true, Impairment{}, 1, Answer::kReject);
  PeerProcess p(peer_args(rx, 1, 10, 100, 2, 5000));
  EXPECT_EQ(run_against(rx, p, std::chrono::seconds(10)), 1);
  EXPECT_NE(p.err().find("Rejected"), std::string::npos) << p.err();
  std::printf("rnic-peer stderr: %s", p.err().c_str());
}

// An advertisement with one posted buffer too few: the peer refuses the plan and terminates.
TEST(RnicPeer, AdvertisementTooSmallFails) {
  Receiver rx(true, Impairment{}, 1, Answer::kAdvertiseTooLittle);
  PeerProcess p(peer_args(rx, 3, 50, 100, 1, 5000));
  EXPECT_EQ(run_against(rx, p, std::chrono::seconds(10)), 1);
  EXPECT_NE(p.err().find("does not fit the run"), std::string::npos) << p.err() << rx.describe();
  EXPECT_NE(p.err().find("buffers are posted on QN 1"), std::string::npos) << p.err();
  EXPECT_EQ(rx.ep().session_state(0), SessionState::kIdle) << "the peer terminates the session (RFC 5043 6.2)";
  std::printf("rnic-peer stderr: %s", p.err().c_str());
}

// Issue 37: a run that fails with the association up ABORTs it (RFC 9260 9.1), so the receiver does not
// wait out its timeout. Here the receiver offers 8 DDP streams and the peer wants 16 (RFC 5043 8).
TEST(RnicPeer, FailedRunAbortsTheAssociation) {
  Receiver rx(true, Impairment{}, 1);
  PeerProcess p(peer_args(rx, 1, 10, 100, 16, 5000));
  EXPECT_EQ(run_against(rx, p, std::chrono::seconds(10)), 1);
  EXPECT_NE(p.err().find("the receiver offers 8 DDP streams, 16 asked for"), std::string::npos) << p.err();
  EXPECT_EQ(rx.ep().state(), AssociationState::kLost) << rx.describe();
  EXPECT_NE(rx.ep().loss_reason().find("ABORT"), std::string::npos) << rx.ep().loss_reason();
  std::printf("rnic-peer stderr: %s; receiver: %s\n", p.err().c_str(), rx.ep().loss_reason().c_str());
}

TEST(RnicPeer, NoReceiverTimesOut) {
  std::uint16_t closed = 0;
  {
    UdpLink gone;
    closed = gone.local().port;
  }
  PeerProcess p({"--connect", fmt::format("127.0.0.1:{}", closed), "--timeout-ms", "300"});
  EXPECT_EQ(p.wait(std::chrono::seconds(10)), 1);
  EXPECT_NE(p.err().find("timed out waiting for the SCTP association"), std::string::npos) << p.err();
  std::printf("rnic-peer stderr: %s", p.err().c_str());
}

TEST(RnicPeer, BadArgumentsExit2) {
  const std::vector<std::vector<std::string>> bad = {{"--connect", "localhost:9899"},
                                                     {"--connect", "127.0.0.1"},
                                                     {"--connect", "127.0.0.1:0"},
                                                     {"--streams", "0"},
                                                     {"--streams", "257"},
                                                     {"--messages", "-1"},
                                                     {"--messages", "1000001"},
                                                     {"--max-message", "16777217"},
                                                     {"--timeout-ms", "0"},
                                                     {"--local-port", "65536"},
                                                     {"--local-ip", "::1"},
                                                     {"--bogus"},
                                                     {"--seed", "x"},
                                                     {"unexpected"}};
  for (const auto& args : bad) {
    PeerProcess p(args);
    EXPECT_EQ(p.wait(std::chrono::seconds(10)), 2) << args[0] << " " << (args.size() > 1 ? args[1] : "");
    EXPECT_FALSE(p.err().empty()) << args[0];
  }
  PeerProcess help({"--help"});
  EXPECT_EQ(help.wait(std::chrono::seconds(10)), 0);
  EXPECT_NE(help.out().find("--connect"), std::string::npos);
}

}  // namespace
