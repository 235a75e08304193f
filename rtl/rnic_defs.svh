// Types shared by the rnic_kernel stages. $unit-scope, include-guarded (Yosys 0.23 rejects packages
// with imports; see ../shared/docs/toolchain-notes.md). Only packed structs of plain fields here:
// never put these in memories or packed arrays (Yosys miscompiles those); store tables as flat vectors.
`ifndef RNIC_DEFS_SVH
`define RNIC_DEFS_SVH

`include "rnic_hw.svh"

localparam int RNIC_HDR_BYTES = 18;         // longest DDP header (untagged, RFC 5041 4.3)
localparam int RNIC_TAGGED_HDR_BYTES = 14;  // tagged header (4.2)
// deliver -> lookup events (the consume channel)
localparam logic [1:0] RNIC_CONS_CONSUME = 2'd0;  // an untagged message of (stream, qn) completed: head + 1
localparam logic [1:0] RNIC_CONS_RESET   = 2'd1;  // STREAM_RESET reached deliver (STREAM_ENABLE echo)
localparam logic [1:0] RNIC_CONS_QSET    = 2'd2;  // QUEUE_SET reached deliver (QUEUE_CONFIG echo)
localparam logic [1:0] RNIC_CONS_FAIL    = 2'd3;  // delivery found the stream out of order: error state

// parse -> lookup: one per AXI-Stream packet, i.e. one DDP segment as the LLP handed it over.
typedef struct packed {
  logic [15:0]  stream;     // tuser[15:0] of the first beat
  logic [15:0]  ssn;        // tuser[31:16] of the first beat: DDP-SSN (RFC 5043 5.2.1)
  logic [15:0]  seg_bytes;  // header + payload bytes in the packet (valid when !oversize)
  logic         oversize;   // packet longer than MAX_SEG_BYTES: its payload was not kept
  logic         is_tagged;  // control field T
  logic         last;       // control field L
  logic [1:0]   dv;         // control field DV
  logic [39:0]  rsvd_ulp;   // tagged: [7:0] = byte 1; untagged: bytes 1..5, byte 1 in [39:32]
  logic [31:0]  stag;       // tagged: bytes 2..5
  logic [63:0]  to;         // tagged: bytes 6..13
  logic [31:0]  qn;         // untagged: bytes 6..9
  logic [31:0]  msn;        // untagged: bytes 10..13
  logic [31:0]  mo;         // untagged: bytes 14..17
  logic [143:0] hdr_raw;    // packet bytes 0..17, byte i at [8*i +: 8]; zero past the packet end
} rnic_seg_t;

// Items flowing lookup -> validate -> place -> deliver, in order. Commands that change what later
// segments see travel in-band, so ordering needs no drain logic.
typedef enum logic [1:0] {
  RNIC_ITEM_SEG          = 2'd0,  // a DDP segment
  RNIC_ITEM_FENCE        = 2'd1,  // STAG_INVALIDATE / STREAM_TEARDOWN fence: done in deliver when every
                                  // earlier write and every earlier completion is acknowledged
  RNIC_ITEM_STREAM_RESET = 2'd2,  // STREAM_ENABLE: deliver clears the stream's DDP-SSN state
  RNIC_ITEM_QUEUE_SET    = 2'd3   // QUEUE_CONFIG: deliver sets the queue's expected MSN (seg.qn,
                                  // seg.msn), echoes, and completes it as a fence
} rnic_item_e;

typedef enum logic [1:0] {
  RNIC_RQ_OK        = 2'd0,  // a receive buffer is posted for (stream, QN, MSN)
  RNIC_RQ_BAD_QN    = 2'd1,  // QN >= NUM_QNS or the queue is not configured
  RNIC_RQ_NO_BUF    = 2'd2,  // MSN not yet posted
  RNIC_RQ_MSN_RANGE = 2'd3   // MSN before the first available buffer (already delivered)
} rnic_rq_status_e;

// lookup -> validate
typedef struct packed {
  rnic_item_e      kind;
  logic [15:0]     arg;             // FENCE: command tag; STREAM_RESET: stream
  rnic_seg_t       seg;
  logic [1:0]      stream_state;    // RNIC_STREAM_NORMAL / _ERROR / _TORN_DOWN (torn down if out of range)
  logic [15:0]     stream_pd;
  logic [15:0]     next_ssn;        // the stream's delivery point (from deliver)
  logic            stag_valid;      // index in range and entry valid
  logic [7:0]      stag_key;
  logic [15:0]     stag_pd;
  logic            stag_bound;
  logic [15:0]     stag_stream;
  logic            stag_remote_write;
  logic [63:0]     stag_base_to;
  logic [63:0]     stag_length;
  logic [63:0]     stag_addr;
  rnic_rq_status_e rq_status;       // untagged only
  logic [63:0]     rq_addr;
  logic [31:0]     rq_length;
  logic            local_fault;     // the descriptor read failed (AXI error response)
} rnic_lookup_t;

typedef enum logic [1:0] {
  RNIC_ACT_PLACE = 2'd0,  // place pay_bytes at addr (zero-length included), then deliver
  RNIC_ACT_DROP  = 2'd1,  // discard silently (stream not normal); counted as a drop
  RNIC_ACT_ERROR = 2'd2,  // discard and report err_type/err_code
  RNIC_ACT_TOKEN = 2'd3   // a FENCE or STREAM_RESET item: no packet beats
} rnic_action_e;

// validate -> place
typedef struct packed {
  rnic_action_e action;
  rnic_item_e   kind;
  logic [15:0]  arg;
  rnic_seg_t    seg;
  logic [63:0]  addr;       // PLACE: host address of the first payload byte
  logic [15:0]  pay_bytes;  // PLACE: payload bytes
  logic [4:0]   hdr_bytes;  // packet byte where the payload starts (14 or 18)
  logic [31:0]  msg_len;    // untagged PLACE: MO + pay_bytes (RFC 5041 5.4)
  logic [3:0]   err_type;   // ERROR: RFC 5041 7.2 type / code / counter index
  logic [7:0]   err_code;
  logic [4:0]   err_idx;
} rnic_verdict_t;

typedef enum logic [2:0] {
  RNIC_DLV_PLACED       = 3'd0,  // a segment whose writes have all been issued (or, untagged, that
                                 // place found stale and did not write)
  RNIC_DLV_ERROR        = 3'd1,  // report an error completion
  RNIC_DLV_STREAM_RESET = 3'd2,  // clear the stream's DDP-SSN state (next SSN 0)
  RNIC_DLV_FENCE        = 3'd3,  // complete a fence once everything before it is acknowledged
  RNIC_DLV_QUEUE_SET    = 3'd4   // stag_qn = QN, msn = first MSN: the queue's expected MSN; a fence
} rnic_dlv_kind_e;

// place -> deliver
typedef struct packed {
  rnic_dlv_kind_e kind;
  logic [15:0]    stream;
  logic [15:0]    ssn;
  logic           last;
  logic           is_tagged;
  logic [31:0]    stag_qn;   // tagged: STag; untagged: QN
  logic [31:0]    msn;
  logic [31:0]    length;    // untagged PLACED: message length; ERROR: segment bytes
  logic [39:0]    rsvd_ulp;
  logic [3:0]     err_type;
  logic [7:0]     err_code;
  logic [143:0]   hdr_raw;
} rnic_dlv_t;

`endif  // RNIC_DEFS_SVH
