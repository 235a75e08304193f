// SPDX-License-Identifier: Apache-2.0
#include "rnic/model/data_sink.hpp"

#include <stdexcept>
#include <string>

namespace rnic::model {

using rnic::wire::ConstBytes;
using rnic::wire::DdpError;

void HostMemory::write(std::uint64_t addr, ConstBytes data) {
  if (addr > bytes_.size() || bytes_.size() - addr < data.size) {
    throw std::out_of_range("host memory write at " + std::to_string(addr) + " of " + std::to_string(data.size) +
                            " bytes");
  }
  std::copy(data.data, data.data + data.size, bytes_.begin() + static_cast<std::ptrdiff_t>(addr));
}

ConstBytes HostMemory::read(std::uint64_t addr, std::size_t len) const {
  if (addr > bytes_.size() || bytes_.size() - addr < len) {
    throw std::out_of_range("host memory read at " + std::to_string(addr));
  }
  return ConstBytes(bytes_.data() + addr, len);
}

DataSink::DataSink(HostMemory& mem, Config cfg)
    : mem_(mem), cfg_(cfg), stags_(cfg.num_stags), streams_(cfg.num_streams) {
  for (auto& s : streams_) {
    s.queues.resize(cfg.num_qns);
    s.head_msn.assign(cfg.num_qns, 1);
    s.owed.assign(cfg.num_qns, 0);
    s.configured.assign(cfg.num_qns, !cfg.queues_need_config);
  }
}

void DataSink::set_stag(std::uint32_t index, const StagEntry& e) { stags_.at(index) = e; }
void DataSink::invalidate_stag(std::uint32_t index) { stags_.at(index).reset(); }

void DataSink::enable_stream(std::uint32_t stream, std::uint32_t pd) {
  reset_stream(stream);
  streams_.at(stream).enabled = true;
  streams_.at(stream).pd = pd;
}

void DataSink::reset_stream(std::uint32_t stream) {
  Stream& s = streams_.at(stream);
  s.state = StreamState::kNormal;
  s.next_ssn = 0;  // RFC 5043 5.2.1: DDP-SSN starts at 0 for each session
  s.placed.clear();
  s.error_ssn.reset();
  for (auto& q : s.queues) q.clear();
  s.head_msn.assign(cfg_.num_qns, 1);
  s.owed.assign(cfg_.num_qns, 0);
  s.configured.assign(cfg_.num_qns, !cfg_.queues_need_config);
}

void DataSink::teardown_stream(std::uint32_t stream) {
  streams_.at(stream).state = StreamState::kTornDown;
  streams_.at(stream).enabled = false;
}

void DataSink::configure_queue(std::uint32_t stream, std::uint32_t qn, std::uint32_t first_msn) {
  Stream& s = streams_.at(stream);
  s.queues.at(qn).clear();
  s.head_msn.at(qn) = first_msn == 0 ? 1 : first_msn;
  s.owed.at(qn) = 0;
  s.configured.at(qn) = true;
}

void DataSink::post_buffer(std::uint32_t stream, std::uint32_t qn, std::uint64_t addr, std::uint32_t len) {
  Stream& s = streams_.at(stream);
  if (s.owed.at(qn) > 0) {  // its MSN was completed already
    --s.owed[qn];
    return;
  }
  s.queues.at(qn).push_back({addr, len});
}

std::optional<DdpError> DataSink::validate_tagged(const Stream& s, std::uint32_t stream,
                                                  const rnic::wire::TaggedHeader& h, std::uint64_t len,
                                                  std::uint64_t& addr) {
  if (len == 0) return std::nullopt;  // 5.2: STag and TO are not checked on a zero-length segment
  const std::uint32_t idx = stag_index(h.stag);
  if (idx >= stags_.size() || !stags_[idx] || stags_[idx]->key != stag_key(h.stag)) {
    return DdpError::kTaggedInvalidStag;
  }
  const StagEntry& e = *stags_[idx];
  // 8.2: both the PD check and the optional stream binding.
  if (e.pd != s.pd || (e.bound_stream && *e.bound_stream != stream)) {
    return DdpError::kTaggedStagNotAssociated;
  }
  if (!e.remote_write) {  // no 7.2 code: reported as Invalid STag, as Linux siw does
    ++counters_.access_violations;
    return DdpError::kTaggedInvalidStag;
  }
  // 7.1 #5 before #3/#4: once TO + len wraps, a bounds comparison in 64 bits is meaningless.
  if (h.to > UINT64_MAX - len) return DdpError::kTaggedToWrap;
  if (h.to < e.base_to || h.to - e.base_to > e.length || e.length - (h.to - e.base_to) < len) {
    return DdpError::kTaggedBaseBounds;
  }
  addr = e.host_addr + (h.to - e.base_to);
  return std::nullopt;
}

std::optional<DdpError> DataSink::validate_untagged(const Stream& s, const rnic::wire::UntaggedHeader& h,
                                                    std::uint64_t len, std::uint64_t& addr, RecvBuffer& buf) {
  if (h.qn >= cfg_.num_qns || !s.configured[h.qn]) return DdpError::kUntaggedInvalidQn;
  const auto& q = s.queues[h.qn];
  const std::uint32_t ahead = h.msn - s.head_msn[h.qn];          // modulo 2^32: MSN wraps (4.3)
  if (ahead >= 0x80000000u) return DdpError::kUntaggedMsnRange;  // before the first available buffer
  if (ahead >= q.size()) return DdpError::kUntaggedNoBuffer;     // no buffer posted for it yet
  buf = q[ahead];
  if (len > 0 ? h.mo >= buf.length : h.mo > buf.length) return DdpError::kUntaggedInvalidMo;
  if (std::uint64_t{h.mo} + len > buf.length) return DdpError::kUntaggedMessageTooLong;
  addr = buf.addr + h.mo;
  return std::nullopt;
}

DataSink::Outcome DataSink::fail(Stream& s, std::uint32_t stream, std::uint16_t ssn, DdpError e, ConstBytes segment,
                                 std::size_t header_len) {
  Completion c;
  c.stream = stream;
  c.is_error = true;
  c.ssn = ssn;
  c.error = e;
  c.segment_length = static_cast<std::uint32_t>(segment.size);
  c.header_bytes = segment.subview(0, header_len).to_vector();
  ++counters_.errors[e];
  if (static_cast<std::uint16_t>(ssn - s.next_ssn) >= cfg_.ssn_window) {  // no position: at once
    completions_.push_back(std::move(c));
    s.state = StreamState::kError;  // 7.1: every later segment is silently dropped
    return Outcome::kFailed;
  }
  // Waits at its DDP-SSN (replacing a segment placed there: the failing one is reported). A later
  // failing segment is taken only before it (receive()), so the first in DDP-SSN order is reported.
  s.placed[ssn] = Pending{false, false, std::move(c), true};
  s.error_ssn = ssn;
  deliver_in_order(s, stream);
  return Outcome::kFailed;
}

DataSink::Fate DataSink::net_fate(std::uint32_t stream, std::uint16_t ssn) const {
  const Stream& s = streams_.at(stream);
  // Dropped like any segment (a stream with an error waiting drops everything outside the window).
  if (!s.enabled || s.state != StreamState::kNormal || s.error_ssn) return Fate::kTaken;
  const auto dist = static_cast<std::uint16_t>(ssn - s.next_ssn);
  if (dist < cfg_.ssn_window) return Fate::kTaken;
  return dist >= 0x8000u ? Fate::kDuplicate : Fate::kDeclined;
}

DataSink::Fate DataSink::receive_net(std::uint32_t stream, std::uint16_t ssn, ConstBytes segment) {
  const Fate f = net_fate(stream, ssn);
  if (f == Fate::kTaken) {
    receive(stream, ssn, segment);
  } else {
    ++counters_.segments;
    ++(f == Fate::kDuplicate ? counters_.net_duplicates : counters_.net_declined);
  }
  return f;
}

DataSink::Outcome DataSink::receive(std::uint32_t stream, std::uint16_t ssn, ConstBytes segment) {
  ++counters_.segments;
  Stream& s = streams_.at(stream);
  if (!s.enabled || s.state != StreamState::kNormal) {
    ++counters_.drops;
    return Outcome::kDropped;
  }
  if (s.error_ssn) {  // only the segments in the window before the failing one are taken
    const auto ahead = static_cast<std::uint16_t>(ssn - s.next_ssn);
    const auto before = static_cast<std::uint16_t>(*s.error_ssn - ssn);
    if (ahead >= cfg_.ssn_window || before == 0 || before >= cfg_.ssn_window) {
      ++counters_.drops;
      return Outcome::kDropped;
    }
  }
  const auto decoded = rnic::wire::decode_segment(segment);
  if (!decoded) {  // shorter than its header: nothing to validate against
    return fail(s, stream, ssn, DdpError::kLocalCatastrophic, segment, segment.size);
  }
  if (cfg_.max_seg_bytes != 0 && segment.size > cfg_.max_seg_bytes) {  // longer than the sink takes
    return fail(s, stream, ssn, DdpError::kLocalCatastrophic, segment, rnic::wire::header_size(decoded->header));
  }
  const auto& hdr = decoded->header;
  const std::size_t hlen = rnic::wire::header_size(hdr);
  const std::uint16_t ahead = static_cast<std::uint16_t>(ssn - s.next_ssn);
  if (ahead >= cfg_.ssn_window) {  // RFC 5043 10: outside the reorder window
    return fail(s, stream, ssn, DdpError::kLlpError, segment, hlen);
  }
  if (auto e = rnic::wire::check_version(hdr)) {
    return fail(s, stream, ssn, *e, segment, hlen);
  }
  const ConstBytes payload = decoded->payload;
  std::uint64_t addr = 0;
  Pending p{rnic::wire::is_last(hdr), false, Completion{}};
  p.delivery.stream = stream;
  p.delivery.ssn = ssn;
  if (const auto* t = std::get_if<rnic::wire::TaggedHeader>(&hdr)) {
    if (auto e = validate_tagged(s, stream, *t, payload.size, addr)) return fail(s, stream, ssn, *e, segment, hlen);
    p.delivery.tagged = true;
    p.delivery.stag = t->stag;
    p.delivery.rsvd_ulp = t->rsvd_ulp;
  } else {
    const auto& u = std::get<rnic::wire::UntaggedHeader>(hdr);
    RecvBuffer buf{};
    if (auto e = validate_untagged(s, u, payload.size, addr, buf)) return fail(s, stream, ssn, *e, segment, hlen);
    p.untagged = true;
    p.delivery.qn = u.qn;
    p.delivery.msn = u.msn;
    p.delivery.length = static_cast<std::uint32_t>(u.mo + payload.size);
    p.delivery.rsvd_ulp = u.rsvd_ulp;
    p.delivery.buffer_addr = buf.addr;
  }
  if (payload.size > 0) {
    mem_.write(addr, payload);
    counters_.bytes_placed += payload.size;
  }
  if (!s.placed.emplace(ssn, std::move(p)).second) {
    ++counters_.duplicates;  // placed again (5.3); delivery state unchanged
    return Outcome::kPlaced;
  }
  deliver_in_order(s, stream);
  return Outcome::kPlaced;
}

void DataSink::deliver_in_order(Stream& s, std::uint32_t stream) {
  // 5.4: deliver a message only when its last segment and everything before it is placed, in order.
  for (auto it = s.placed.find(s.next_ssn); it != s.placed.end(); it = s.placed.find(s.next_ssn)) {
    const Completion& d = it->second.delivery;
    if (it->second.error) {  // the failing segment's position: report it, deliver nothing more
      completions_.push_back(std::move(it->second.delivery));
      s.state = StreamState::kError;
      s.placed.clear();
      s.error_ssn.reset();
      return;
    }
    if (it->second.untagged && d.msn != s.head_msn[d.qn]) {
      Completion c;
      c.stream = stream;
      c.is_error = true;
      c.order = true;
      c.error = DdpError::kUntaggedMsnRange;
      c.qn = d.qn;
      c.msn = d.msn;
      c.ssn = s.next_ssn;
      completions_.push_back(std::move(c));
      ++counters_.errors[DdpError::kUntaggedMsnRange];
      s.state = StreamState::kError;  // 7.1: nothing more is delivered on the stream
      s.placed.clear();
      s.error_ssn.reset();
      return;
    }
    if (it->second.last) {
      Completion c = std::move(it->second.delivery);
      if (!c.tagged) {
        if (s.queues[c.qn].empty()) {
          ++s.owed[c.qn];
        } else {
          s.queues[c.qn].pop_front();
        }
        ++s.head_msn[c.qn];
      }
      completions_.push_back(std::move(c));
      ++counters_.messages_delivered;
    }
    s.placed.erase(it);
    ++s.next_ssn;
  }
}

}  // namespace rnic::model
