// SPDX-License-Identifier: Apache-2.0
// The hardware/software contract of rnic_kernel (rows in hw.def), for the driver and testbenches.
#pragma once

#include <cstdint>

namespace rnic::hw {

#define RNIC_CONST(name, value, desc) inline constexpr std::uint32_t k##name = value;
#define RNIC_REG(name, offset, access, desc) inline constexpr std::uint32_t kReg##name = offset;
#define RNIC_CMD(name, opcode, desc) inline constexpr std::uint32_t kCmd##name = opcode;
#define RNIC_FIELD(rec, name, offset, bits, desc)                   \
  inline constexpr std::uint32_t k##rec##_##name##_OFFSET = offset; \
  inline constexpr std::uint32_t k##rec##_##name##_BITS = bits;
#include "rnic/hw/hw.def"
#undef RNIC_CONST
#undef RNIC_REG
#undef RNIC_CMD
#undef RNIC_FIELD

inline constexpr std::uint32_t kCqeFlagPhase = 1u << 0;
inline constexpr std::uint32_t kCqeFlagError = 1u << 1;
inline constexpr std::uint32_t kCqeFlagTagged = 1u << 2;
inline constexpr std::uint32_t kCqeFlagOrder = 1u << 3;  // error found in DDP-SSN order at delivery
inline constexpr std::uint32_t kStagArgRemoteWrite = 1u << 8;
inline constexpr std::uint32_t kStagArgRemoteRead = 1u << 9;
inline constexpr std::uint32_t kStagArgBound = 1u << 10;

constexpr std::uint32_t reg_cmd_arg(unsigned i) { return kRegCMD_ARG0 + 4 * i; }
constexpr std::uint32_t reg_error_counter_lo(unsigned row) { return kRegCNT_ERROR0_LO + 8 * row; }
constexpr std::uint32_t reg_net_assoc_arg(unsigned i) { return kRegNET_ASSOC_ARG0 + 4 * i; }
constexpr std::uint32_t reg_net_counter(unsigned i) { return kRegNET_CNT0 + 4 * i; }
// DB_QUEUE's fields: [15:0] stream, [23:16] QN; the bits it keeps; the value naming (stream, qn).
inline constexpr std::uint32_t kDbQueueBits = 0x00FFFFFFu;
constexpr std::uint32_t db_queue_stream(std::uint32_t v) { return v & 0xFFFFu; }
constexpr std::uint32_t db_queue_qn(std::uint32_t v) { return (v >> 16) & 0xFFu; }
constexpr std::uint32_t db_queue(std::uint32_t stream, std::uint32_t qn) {
  return (qn & 0xFFu) << 16 | (stream & 0xFFFFu);
}

}  // namespace rnic::hw
