-- SPDX-License-Identifier: Apache-2.0
-- Registers Wireshark's own iWARP DDP/RDMAP dissector for DDP over SCTP (RFC 5043).
-- A DDP Segment Chunk (PPID 16, 5.2.2) is a 16-bit DDP-SSN followed by one DDP segment: this
-- wrapper shows the DDP-SSN and hands the DDP segment to "iwarp_ddp_rdmap" unchanged. (Registering
-- iwarp_ddp_rdmap on PPID 16 directly would decode the DDP-SSN as the DDP control field.)
-- A DDP Stream Session Control message (PPID 17, 5.2.3) is decoded here: DDP-SSN, function code,
-- private data. Use: tshark -X lua_script:ddp_sctp.lua -r capture.pcap
local seg = Proto("ddp_sctp", "DDP Segment Chunk (RFC 5043)")
local f_ssn = ProtoField.uint16("ddp_sctp.ssn", "DDP-SSN", base.DEC)
-- Generated, one of each per DDP Segment Chunk (so fields of one chunk line up in tshark -T fields): the
-- SCTP stream of its DATA chunk, and its payload length (the DDP segment less its 14 / 18-byte header,
-- RFC 5041 4.2 / 4.3, by the T bit).
local f_sid = ProtoField.uint16("ddp_sctp.sid", "SCTP stream", base.DEC)
local f_plen_seg = ProtoField.uint32("ddp_sctp.payload_length", "DDP payload length", base.DEC)
seg.fields = { f_ssn, f_sid, f_plen_seg }
local iwarp = Dissector.get("iwarp_ddp_rdmap")
local data_sid = Field.new("sctp.data_sid")

function seg.dissector(tvb, pinfo, tree)
  if tvb:len() < 2 then return 0 end
  local t = tree:add(seg, tvb(0, 2))
  t:add(f_ssn, tvb(0, 2))
  local sids = { data_sid() }
  if #sids > 0 then t:add(f_sid, sids[#sids].value):set_generated() end
  if tvb:len() > 2 then
    local header = (tvb(2, 1):uint() >= 0x80) and 14 or 18
    if tvb:len() >= 2 + header then t:add(f_plen_seg, tvb:len() - 2 - header):set_generated() end
    iwarp:call(tvb(2):tvb(), pinfo, tree)
  end
  return tvb:len()
end

local ssc = Proto("ddp_ssc", "DDP Stream Session Control (RFC 5043)")
local functions = { [1] = "Initiate", [2] = "Accept", [3] = "Reject", [4] = "Terminate" }
local f_cssn = ProtoField.uint16("ddp_ssc.ssn", "DDP-SSN", base.DEC)
local f_func = ProtoField.uint16("ddp_ssc.function", "Function code", base.HEX, functions)
local f_plen = ProtoField.uint16("ddp_ssc.private_length", "Private data length", base.DEC)
local f_priv = ProtoField.bytes("ddp_ssc.private_data", "Private data")
ssc.fields = { f_cssn, f_func, f_plen, f_priv }

function ssc.dissector(tvb, pinfo, tree)
  if tvb:len() < 4 then return 0 end
  pinfo.cols.protocol = "DDP-SSC"
  local t = tree:add(ssc, tvb())
  t:add(f_cssn, tvb(0, 2))
  t:add(f_func, tvb(2, 2))
  t:add(f_plen, tvb:len() - 4)
  if tvb:len() > 4 then t:add(f_priv, tvb(4)) end
  return tvb:len()
end

local ppi = DissectorTable.get("sctp.ppi")
ppi:add(16, seg)
ppi:add(17, ssc)
