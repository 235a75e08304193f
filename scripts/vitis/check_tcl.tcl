# SPDX-License-Identifier: Apache-2.0
# CTest CardFlow.TclScripts: the card flow's Tcl without Vivado.
#   tclsh check_tcl.tcl REPO_ROOT SCRATCH_DIR
# 1. Every Tcl file of the flow is complete Tcl (balanced braces, brackets, quotes).
# 2. The generated register map is consistent: unique names, 32-bit aligned, no overlap, inside the
#    registers' half of the MMIO window, the pointer registers CQ_BASE into m_axi_gmem and NET_RX_BASE,
#    NET_TX_BASE into m_axi_net.
# 3. scripts/package_xo.tcl runs against stand-in Vivado commands that record each call, and asks for
#    what docs/card-flow.md says: the RTL, top rnic_kernel, the chosen DATA_WIDTH and NET, an RTL kernel
#    with ap_ctrl_none, every register of the map at its offset, the MMIO range, the pointers into
#    m_axi_gmem and m_axi_net, the six bus interfaces on ap_clk, package_xo of rnic_kernel; bad arguments
#    and a kernel.xml that is not what the driver and the v++ configurations need fail.
# 4. constraints/rnic_kernel_pre_opt.tcl passes at 4 ns and fails at another period.
set root [file normalize [lindex $argv 0]]
set scratch [file normalize [lindex $argv 1]]
if {$root eq "" || $scratch eq ""} { puts stderr "usage: tclsh check_tcl.tcl REPO_ROOT SCRATCH_DIR"; exit 2 }
file delete -force $scratch
file mkdir $scratch
set fails 0
proc fail {msg} { incr ::fails; puts stderr "FAIL: $msg" }
proc slurp {path} { set f [open $path r]; set t [read $f]; close $f; return $t }

# ---- 1. complete Tcl -----------------------------------------------------------------------------------
set files [concat [list [file join $root scripts package_xo.tcl]] \
    [glob -nocomplain [file join $root scripts vitis *.tcl]] [glob -nocomplain [file join $root constraints *.tcl]]]
foreach f $files {
  if {![info complete [slurp $f]]} { fail "[file tail $f] is not complete Tcl" }
}
if {[llength $files] < 4} { fail "only [llength $files] Tcl files found" }

# ---- 2. the register map -------------------------------------------------------------------------------
set map [interp create]
$map eval [list source [file join $root scripts vitis rnic_regs.tcl]]
set regs [$map eval {set rnic_registers}]
set mmio [$map eval {set rnic_mmio_bytes}]
interp delete $map
set names {}
set pointers {}
set used {}
foreach row $regs {
  lassign $row name offset bits access desc busif
  if {[lsearch -exact $names $name] >= 0} { fail "register $name twice" }
  lappend names $name
  if {$offset % 4 != 0 || ($bits != 32 && $bits != 64)} { fail "register $name: offset $offset, $bits bits" }
  if {$offset + $bits / 8 > $mmio} { fail "register $name at $offset runs past the MMIO window ($mmio)" }
  if {[lsearch -exact {read-only read-write write-only} $access] < 0} { fail "register $name: access $access" }
  for {set b $offset} {$b < $offset + $bits / 8} {incr b 4} {
    if {[dict exists $used $b]} { fail "register $name overlaps [dict get $used $b] at $b" }
    dict set used $b $name
  }
  if {$busif ne ""} { lappend pointers "$name:$busif" }
}
foreach want {ID VERSION BUILD_ID CAP_DATA_WIDTH CMD CMD_ARG15 CQ_BASE CQ_CONS DB_QUEUE DB_PROD CNT_ERROR_LlpError_HI NET_ASSOC_ARG6
              NET_ASSOC_CMD NET_RX_BASE NET_TX_BASE NET_TX_PROD NET_CNT9} {
  if {[lsearch -exact $names $want] < 0} { fail "register $want missing from the map" }
}
if {$pointers ne {CQ_BASE:m_axi_gmem NET_RX_BASE:m_axi_net NET_TX_BASE:m_axi_net}} {
  fail "pointer registers: '$pointers', expected CQ_BASE:m_axi_gmem NET_RX_BASE:m_axi_net NET_TX_BASE:m_axi_net"
}
if {$mmio != 0x10000} { fail "MMIO $mmio, expected 0x10000 (XRT 2.13 maps 64 KiB of a compute unit)" }

# ---- 3. package_xo.tcl against stand-in Vivado ---------------------------------------------------------
# Good kernel.xml: the shape package_xo writes for this kernel (as tb/system/xrt's xclbins carry it).
set good_xml {<?xml version="1.0" encoding="UTF-8"?>
<root versionMajor="1" versionMinor="6">
  <kernel name="rnic_kernel" language="ip_c" vlnv="rnic.org:rnic:rnic_kernel:1.0" hwControlProtocol="ap_ctrl_none">
    <port name="s_axi_control" mode="slave" range="0x10000" dataWidth="32" portType="addressable" base="0x0"/>
    <port name="m_axi_gmem" mode="master" range="0xFFFFFFFFFFFFFFFF" dataWidth="512" portType="addressable" base="0x0"/>
    <port name="s_axis_rx" mode="read_only" dataWidth="512" portType="stream"/>
    <port name="m_axi_net" mode="master" range="0xFFFFFFFFFFFFFFFF" dataWidth="512" portType="addressable" base="0x0"/>
    <port name="s_axis_net" mode="read_only" dataWidth="512" portType="stream"/>
    <port name="m_axis_net" mode="write_only" dataWidth="512" portType="stream"/>
    <arg name="CQ_BASE" addressQualifier="1" id="0" port="m_axi_gmem" size="0x8" offset="0x100" type="void*"/>
    <arg name="NET_RX_BASE" addressQualifier="1" id="1" port="m_axi_net" size="0x8" offset="0x440" type="void*"/>
    <arg name="NET_TX_BASE" addressQualifier="1" id="2" port="m_axi_net" size="0x8" offset="0x460" type="void*"/>
  </kernel>
</root>}

# Runs package_xo.tcl in a fresh interpreter with stand-ins; returns {exit-code calls stderr}.
proc run_package {args_list kernel_xml} {
  set i [interp create]
  $i eval {
    set ::calls {}
    set ::stderr_text ""
    rename exit ::real_exit
    proc exit {{code 0}} { return -code error -errorcode [list EXIT $code] "exit $code" }
    rename puts ::real_puts
    proc puts {args} {
      if {[llength $args] == 2 && [lindex $args 0] eq "stderr"} { append ::stderr_text [lindex $args 1] \n }
    }
    # Every Vivado command: recorded; returns a handle named after it.
    proc unknown {args} { lappend ::calls $args; return "obj:[lindex $args 0]:[llength $::calls]" }
    namespace eval ipx {}
    proc ipx::check_integrity {args} { lappend ::calls [concat ipx::check_integrity $args]; return 1 }
    proc ipx::get_bus_parameters {args} { lappend ::calls [concat ipx::get_bus_parameters $args]; return "" }
    proc get_files {args} { lappend ::calls [concat get_files $args]; return files }
  }
  $i eval [list set ::stub_kernel_xml $kernel_xml]
  $i eval {
    proc package_xo {args} {
      lappend ::calls [concat package_xo $args]
      set xo [lindex $args [expr {[lsearch -exact $args -xo_path] + 1}]]
      set xml [lindex $args [expr {[lsearch -exact $args -output_kernel_xml] + 1}]]
      close [open $xo w]
      set f [open $xml w]; ::real_puts -nonewline $f $::stub_kernel_xml; close $f
    }
  }
  $i eval [list set argv $args_list]
  set code 0
  if {[catch {$i eval [list source [file join $::root scripts package_xo.tcl]]} msg opts]} {
    set ec [dict get $opts -errorcode]
    set code [expr {[lindex $ec 0] eq "EXIT" ? [lindex $ec 1] : "error: $msg"}]
  }
  set result [list $code [$i eval {set ::calls}] [$i eval {set ::stderr_text}]]
  interp delete $i
  return $result
}
proc called {calls pattern} {
  foreach c $calls { if {[string match $pattern $c]} { return 1 } }
  return 0
}

set xo [file join $scratch out rnic_kernel.xo]
file mkdir [file dirname $xo]
lassign [run_package [list --xo $xo --part xcu280-fsvh2892-2L-e --data-width 256 --build-id 0x12ab] $good_xml] \
    code calls err
if {$code != 0} { fail "package_xo.tcl failed with good arguments: $code $err" }
foreach pattern [list \
    "create_project -force rnic_kernel_pack * -part xcu280-fsvh2892-2L-e" \
    "add_files -norecurse *rnic_kernel.sv*" \
    "set_property top rnic_kernel *" \
    "set_property generic {DATA_WIDTH=256 BUILD_ID=32'h12ab NET=0} *" \
    "set_property value 0 obj:ipx::get_hdl_parameters*" \
    "set_property value 256 obj:ipx::get_hdl_parameters*" \
    "ipx::package_project *" \
    "set_property sdx_kernel true *" \
    "set_property sdx_kernel_type rtl *" \
    "set_property vitis_drc {ctrl_protocol ap_ctrl_none} *" \
    "ipx::associate_bus_interfaces -busif s_axi_control -clock ap_clk *" \
    "ipx::associate_bus_interfaces -busif m_axi_gmem -clock ap_clk *" \
    "ipx::associate_bus_interfaces -busif s_axis_rx -clock ap_clk *" \
    "ipx::associate_bus_interfaces -busif m_axi_net -clock ap_clk *" \
    "ipx::associate_bus_interfaces -busif s_axis_net -clock ap_clk *" \
    "ipx::associate_bus_interfaces -busif m_axis_net -clock ap_clk *" \
    "ipx::associate_bus_interfaces -clock ap_clk -reset ap_rst_n *" \
    "set_property range 0x10000 *" \
    "set_property value m_axi_gmem obj:ipx::add_register_parameter*" \
    "set_property value m_axi_net obj:ipx::add_register_parameter*" \
    "set_property slave_memory_map_ref s_axi_control *" \
    "ipx::check_integrity -kernel *" \
    "package_xo -force -xo_path $xo -kernel_name rnic_kernel -ctrl_protocol ap_ctrl_none *"] {
  if {![called $calls $pattern]} { fail "package_xo.tcl never called: $pattern" }
}
# Every register of the map, in order, at its offset.
set offsets {}
set added {}
foreach c $calls {
  if {[lindex $c 0] eq "ipx::add_register"} { lappend added [lindex $c 2] }
  if {[lrange $c 0 1] eq {set_property address_offset}} { lappend offsets [lindex $c 2] }
}
set want_names {}
set want_offsets {}
foreach row $regs { lappend want_names [lindex $row 0]; lappend want_offsets [lindex $row 1] }
if {$added ne $want_names} { fail "registers added: $added" }
if {$offsets ne $want_offsets} { fail "register offsets set: $offsets" }

# --net 1: the kernel with its network side (what build_xclbin.sh --net vnx asks for).
lassign [run_package [list --xo $xo --part xcu250-figd2104-2L-e --net 1] $good_xml] code calls err
if {$code != 0} { fail "package_xo.tcl --net 1 failed: $code $err" }
foreach pattern [list "set_property generic {DATA_WIDTH=512 BUILD_ID=32'h0 NET=1} *" \
                      "set_property value 1 obj:ipx::get_user_parameters*" \
                      "set_property value 1 obj:ipx::get_hdl_parameters*"] {
  if {![called $calls $pattern]} { fail "package_xo.tcl --net 1 never called: $pattern" }
}

# Bad arguments and a bad kernel.xml: exit 1 with the reason.
foreach {case args_list xml pattern} [list \
    "no --part" [list --xo $xo] $good_xml "--part is required" \
    "bad width" [list --xo $xo --part p --data-width 100] $good_xml "--data-width must be 64, 128, 256 or 512" \
    "bad build id" [list --xo $xo --part p --build-id 12] $good_xml "--build-id must be 0x" \
    "not .xo" [list --xo out.zip --part p] $good_xml "--xo must name a .xo file" \
    "unknown" [list --xo $xo --part p --speed 9] $good_xml "unknown argument '--speed'" \
    "bad net" [list --xo $xo --part p --net 2] $good_xml "--net must be 0 or 1 (got '2')" \
    "net at 64 bits" [list --xo $xo --part p --net 1 --data-width 64] $good_xml "--net 1 needs --data-width 128" \
    "no net pointer" [list --xo $xo --part p] [string map {port="m_axi_net" port="m_axi_gmem"} $good_xml] \
        "no pointer argument (addressQualifier 1) on m_axi_net" \
    "no net master" [list --xo $xo --part p] [string map {name="m_axi_net" name="m_axi_x"} $good_xml] "no m_axi_net port" \
    "no net in" [list --xo $xo --part p] [string map {s_axis_net s_axis_udp} $good_xml] "no s_axis_net stream port" \
    "no net out" [list --xo $xo --part p] [string map {"m_axis_net\" mode=\"write_only\" dataWidth=\"512\" portType=\"stream" "m_axis_net\" mode=\"write_only\" dataWidth=\"512\" portType=\"addressable"} $good_xml] "no m_axis_net stream port" \
    "ap_ctrl_hs" [list --xo $xo --part p] [string map {ap_ctrl_none ap_ctrl_hs} $good_xml] "ap_ctrl_none" \
    "small range" [list --xo $xo --part p] [string map {range="0x10000" range="0x1000"} $good_xml] "s_axi_control range" \
    "no pointer" [list --xo $xo --part p] [string map {addressQualifier="1" addressQualifier="0"} $good_xml] "no pointer argument" \
    "no stream" [list --xo $xo --part p] [string map {s_axis_rx s_axis_in} $good_xml] "no s_axis_rx stream port"] {
  lassign [run_package $args_list $xml] code calls err
  if {$code != 1} { fail "$case: exit '$code', expected 1" }
  if {[string first $pattern $err] < 0} { fail "$case: stderr '$err' lacks '$pattern'" }
}

# ---- 4. the pre-opt hook -------------------------------------------------------------------------------
proc run_hook {cells period} {
  set i [interp create]
  $i eval [list set ::cells $cells]
  $i eval [list set ::period $period]
  $i eval {
    rename puts ::real_puts
    proc puts {args} {}
    proc get_cells {args} { return $::cells }
    proc get_pins {args} { return [lindex $args end] }
    proc get_clocks {args} { return clk_kernel_00 }
    proc get_pblocks {args} { return pblock_dynamic_SLR2 }
    proc get_property {prop obj} { return $::period }
  }
  set code [catch {$i eval [list source [file join $::root constraints rnic_kernel_pre_opt.tcl]]} msg]
  interp delete $i
  return [list $code $msg]
}
lassign [run_hook level0_i/ulp/rnic_kernel_1/inst 4.000] code msg
if {$code != 0} { fail "pre-opt hook at 4 ns: $msg" }
lassign [run_hook level0_i/ulp/rnic_kernel_1/inst 3.333] code msg
if {$code == 0 || [string first "expected 4.000 ns" $msg] < 0} { fail "pre-opt hook at 3.333 ns passed: $msg" }
lassign [run_hook {} 4.0] code msg
if {$code != 0} { fail "pre-opt hook without the cell should warn, not fail: $msg" }

if {$fails > 0} { puts stderr "check_tcl.tcl: $fails failure(s)"; exit 1 }
puts "check_tcl.tcl: ok ([llength $files] files, [llength $regs] registers)"
