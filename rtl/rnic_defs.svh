// SPDX-License-Identifier: Apache-2.0
// Types and functions shared by the rnic_kernel stages (their constants are the contract's, rnic_hw.svh). $unit-scope, include-guarded (Yosys 0.23
// rejects packages with imports; see ../shared/docs/toolchain-notes.md). The packed types the stages
// hand each other (rnic_seg_t, rnic_lookup_t, rnic_verdict_t, rnic_dlv_t, their enums and the
// consume-channel kinds) are generated into rnic_structs.svh from hw/include/rnic/hw/structs.def,
// the source the testbenches' C++ packing is expanded from too: change them there, not here.
`ifndef RNIC_DEFS_SVH
`define RNIC_DEFS_SVH

`include "rnic_hw.svh"
`include "rnic_structs.svh"

// A stream whose segments are still taken and checked: NORMAL, or PENDING (those before its failing
// segment, docs/rtl-architecture.md "Errors in DDP-SSN order").
function automatic logic rnic_stream_live(input logic [1:0] state);
  rnic_stream_live = state == 2'(RNIC_STREAM_NORMAL) || state == 2'(RNIC_STREAM_PENDING);
endfunction

`endif  // RNIC_DEFS_SVH
