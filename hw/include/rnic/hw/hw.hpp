// SPDX-License-Identifier: Apache-2.0
// The hardware/software contract of rnic_kernel (rows in hw.def), for the driver and testbenches.
#pragma once

#include <cstdint>

namespace rnic::hw {

// Bits [lsb +: bits] of a 32-bit word (a register, a command argument, a record field), and the value
// they hold after reset (registers).
struct Field {
  std::uint32_t lsb;
  std::uint32_t bits;
  std::uint32_t reset;
  constexpr std::uint32_t mask() const { return (bits >= 32 ? 0xFFFFFFFFu : (1u << bits) - 1u) << lsb; }
  constexpr std::uint32_t get(std::uint32_t word) const { return (word & mask()) >> lsb; }
  constexpr std::uint32_t put(std::uint32_t value) const { return (value << lsb) & mask(); }
  // `value` fits the field.
  constexpr bool holds(std::uint64_t value) const { return bits >= 32 || value < (std::uint64_t{1} << bits); }
};
// An argument of a command: a Field of CMD_ARG<word>.
struct ArgField : Field {
  std::uint32_t word;
};

// kNAME (RNIC_CONST), kRegNAME (register offsets), kREG_FIELD (register fields), kCmdNAME (opcodes),
// kArgCMD_NAME (command arguments), kREC_FIELD_OFFSET / _BITS (record fields, bytes and bits),
// kREC_FIELD_NAME (bits of a record field).
#define RNIC_CONST(name, value, desc) inline constexpr std::uint32_t k##name = value;
#define RNIC_REG(name, offset, access, desc) inline constexpr std::uint32_t kReg##name = offset;
#define RNIC_BITS(reg, name, lsb, bits, access, reset, desc) inline constexpr Field k##reg##_##name{lsb, bits, reset};
#define RNIC_CMD(name, opcode, desc) inline constexpr std::uint32_t kCmd##name = opcode;
#define RNIC_ARG(cmd, name, word, lsb, bits, desc) inline constexpr ArgField kArg##cmd##_##name{{lsb, bits, 0}, word};
#define RNIC_FIELD(rec, name, offset, bits, desc)                   \
  inline constexpr std::uint32_t k##rec##_##name##_OFFSET = offset; \
  inline constexpr std::uint32_t k##rec##_##name##_BITS = bits;
#define RNIC_SUBFIELD(rec, field, name, lsb, bits, desc) inline constexpr Field k##rec##_##field##_##name{lsb, bits, 0};
#include "rnic/hw/hw.def"

// VERSION as the card reads it: its fields' values.
inline constexpr std::uint32_t kVERSION_VALUE =
    kVERSION_MAJOR.put(kVERSION_MAJOR.reset) | kVERSION_MINOR.put(kVERSION_MINOR.reset);

// RFC 5041 7.2 (ddp_errors.def): the row of each error (the order of the table, its per-error counter
// index: CNT_ERROR0_LO + 8 * row), its 4-bit type and its 8-bit code; the RTL's RNIC_ERR_IDX_, RNIC_ET_
// and RNIC_EC_ localparams. rnic/wire/ddp_errors.hpp names them for the driver.
namespace ddp_error {
enum Row : unsigned {
#define RNIC_DDP_ERROR(name, type, code, desc) k##name,
#include "rnic/hw/ddp_errors.def"
#undef RNIC_DDP_ERROR
  kRows
};
inline constexpr std::uint8_t kType[kRows] = {
#define RNIC_DDP_ERROR(name, type, code, desc) type,
#include "rnic/hw/ddp_errors.def"
#undef RNIC_DDP_ERROR
};
inline constexpr std::uint8_t kCode[kRows] = {
#define RNIC_DDP_ERROR(name, type, code, desc) code,
#include "rnic/hw/ddp_errors.def"
#undef RNIC_DDP_ERROR
};
}  // namespace ddp_error

constexpr std::uint32_t reg_cmd_arg(unsigned i) { return kRegCMD_ARG0 + 4 * i; }
constexpr std::uint32_t reg_error_counter_lo(unsigned row) { return kRegCNT_ERROR0_LO + 8 * row; }
constexpr std::uint32_t reg_net_assoc_arg(unsigned i) { return kRegNET_ASSOC_ARG0 + 4 * i; }
constexpr std::uint32_t reg_net_counter(unsigned i) { return kRegNET_CNT0 + 4 * i; }
// The DB_QUEUE value naming queue (stream, qn).
constexpr std::uint32_t db_queue(std::uint32_t stream, std::uint32_t qn) {
  return kDB_QUEUE_STREAM.put(stream) | kDB_QUEUE_QN.put(qn);
}
// The bits of DB_QUEUE the card keeps.
inline constexpr std::uint32_t kDbQueueBits = kDB_QUEUE_STREAM.mask() | kDB_QUEUE_QN.mask();

}  // namespace rnic::hw
