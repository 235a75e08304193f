// SPDX-License-Identifier: Apache-2.0
// A card reached through one backend, its simulated wire through another: rnic-sim started by XRT's
// hardware-emulation shim (rnic-sim --xrt) is owned through the XRT backend, and its own socket is
// the wire, as a peer or a network tap would be (OpenOptions::sim_wire; docs/xrt-backend.md).
#include <utility>

#include "backend.hpp"

namespace rnic::detail {
namespace {

class WiredBackend final : public Backend {
 public:
  WiredBackend(std::unique_ptr<Backend> card, std::unique_ptr<Backend> wire)
      : card_(std::move(card)), wire_(std::move(wire)) {}

  std::string name() const override { return card_->name(); }
  std::uint32_t read32(std::uint32_t offset) override { return card_->read32(offset); }
  void write32(std::uint32_t offset, std::uint32_t value) override { card_->write32(offset, value); }
  DmaRegion alloc(std::size_t bytes, std::size_t align) override { return card_->alloc(bytes, align); }
  void free(const DmaRegion& region) override { card_->free(region); }
  void to_device(const DmaRegion& region, std::size_t offset, std::size_t bytes) override {
    card_->to_device(region, offset, bytes);
  }
  void from_device(const DmaRegion& region, std::size_t offset, std::size_t bytes) override {
    card_->from_device(region, offset, bytes);
  }
  void publish(const std::string& json) override { card_->publish(json); }
  std::string published_state() override { return card_->published_state(); }
  SimPort* sim() override { return wire_->sim(); }

 private:
  std::unique_ptr<Backend> card_;
  std::unique_ptr<Backend> wire_;  // an observer of the simulator: its ingress, clock and network port
};

}  // namespace

std::unique_ptr<Backend> make_wired_backend(std::unique_ptr<Backend> card, std::unique_ptr<Backend> wire) {
  return std::make_unique<WiredBackend>(std::move(card), std::move(wire));
}

}  // namespace rnic::detail
