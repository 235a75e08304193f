// SPDX-License-Identifier: Apache-2.0
// The command handshake of hw.def's CMD registers: the one implementation every MMIO client runs (the
// driver core, rnic-sim's cleanup of a vanished owner, the testbenches' kernel driver).
//
//   1. CMD_ARG0.. take the arguments (the card reads them when the opcode is written);
//   2. a write of CMD starts the command: the card decodes CMD[7:0] and ignores the write while busy;
//   3. CMD_STATUS bit 0 (busy) clears when it is done; bit 1 says it was refused; [15:8] is its opcode;
//      CMD_RESULT holds its result from then on.
// A client that gave up waiting must wait for busy to clear before writing arguments again: they
// would otherwise change under a command still running.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>

#include "rnic/hw/hw.hpp"

namespace rnic::hw {

struct CmdStatus {
  std::uint32_t raw = 0;
  bool busy() const { return kCMD_STATUS_BUSY.get(raw) != 0; }
  bool refused() const { return kCMD_STATUS_REFUSED.get(raw) != 0; }
  std::uint32_t last_op() const { return kCMD_STATUS_OP.get(raw); }
};

// The opcode the card decodes from a value written to CMD.
constexpr std::uint32_t cmd_opcode(std::uint32_t cmd_write) { return kCMD_OP.get(cmd_write); }

// The CMD_ARG words of one command, filled argument by argument (hw.def RNIC_ARG rows): the words
// and bits each argument takes are the contract's, not the caller's.
class CmdArgs {
 public:
  CmdArgs& set(const ArgField& f, std::uint32_t value) {
    words_[f.word] = (words_[f.word] & ~f.mask()) | f.put(value);
    if (f.word + 1 > n_) n_ = f.word + 1;
    return *this;
  }
  const std::uint32_t* data() const { return words_; }
  std::size_t size() const { return n_; }

 private:
  std::uint32_t words_[kCMD_ARGS] = {};
  std::size_t n_ = 0;
};

// Reads CMD_STATUS until busy clears. `again()` runs between two reads (tick a clock, drain the completion
// ring: a fenced command finishes only after the completions decided before it are written) and returns
// false to give up. The status that ended the wait, or nullopt when `again` gave up.
template <class Read, class Again>
std::optional<CmdStatus> wait_cmd_idle(Read&& read, Again&& again) {
  for (;;) {
    const CmdStatus st{read(kRegCMD_STATUS)};
    if (!st.busy()) return st;
    if (!again()) return std::nullopt;
  }
}

// Steps 1 to 3 for opcode `op` with `n` argument words; `read`/`write` are the client's 32-bit MMIO.
// The caller has seen CMD_STATUS not busy since its last command gave up, if one did.
template <class Read, class Write, class Again>
std::optional<CmdStatus> run_command(Read&& read, Write&& write, Again&& again, std::uint32_t op,
                                     const std::uint32_t* args, std::size_t n) {
  if (n > kCMD_ARGS) throw std::logic_error("more command arguments than CMD_ARG registers");
  for (std::size_t i = 0; i < n; ++i) write(reg_cmd_arg(static_cast<unsigned>(i)), args[i]);
  write(kRegCMD, op);
  return wait_cmd_idle(read, again);
}

}  // namespace rnic::hw
