// SPDX-License-Identifier: Apache-2.0
#include "rnic/sctp/reorder.hpp"

#include <stdexcept>
#include <utility>

namespace rnic::sctp {

SsnReorderBuffer::Insert SsnReorderBuffer::insert(std::uint16_t ssn, ReceivedChunk chunk) {
  const auto ahead = static_cast<std::uint16_t>(ssn - next_);  // modulo 2^16
  if (ahead >= kMaxInFlight) return Insert::kImplausible;      // behind, or a gap no flight explains
  if (held_.count(ssn) != 0) return Insert::kDuplicate;
  if (ahead != 0) ++out_of_order_;
  held_.emplace(ssn, std::move(chunk));
  return Insert::kAccepted;
}

ReceivedChunk SsnReorderBuffer::pop() {
  auto it = held_.find(next_);
  if (it == held_.end()) throw std::logic_error("SsnReorderBuffer::pop: delivery point not held");
  ReceivedChunk c = std::move(it->second);
  held_.erase(it);
  next_ = static_cast<std::uint16_t>(next_ + 1);
  return c;
}

void SsnReorderBuffer::reset() {
  next_ = 0;
  held_.clear();
}

}  // namespace rnic::sctp
