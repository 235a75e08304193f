# SPDX-License-Identifier: Apache-2.0
# package_xo.tcl: packages rtl/*.sv (top rnic_kernel) as a free-running Vitis RTL kernel (.xo).
#
#   vivado -mode batch -nojournal -source scripts/package_xo.tcl -tclargs \
#       --xo OUT.xo --part PART [--data-width 512] [--build-id 0x0] [--net 0|1] [--work DIR]
#
# scripts/build_xclbin.sh runs it (docs/card-flow.md). What it builds:
# - an IP (IP-XACT component) of rtl/*.sv with top rnic_kernel and its parameters DATA_WIDTH, BUILD_ID,
#   NET (1: the network side, docs/network.md; needs DATA_WIDTH >= 128);
# - bus interfaces: ap_clk (clock, with ap_rst_n as its active-low reset), s_axi_control (AXI4-Lite
#   slave: the register map of scripts/vitis/rnic_regs.tcl, generated from hw.def), m_axi_gmem (AXI4
#   master, 64-bit addresses), s_axis_rx (AXI4-Stream slave, tuser = {net, DDP-SSN, stream}), and the
#   network side's m_axi_net (the packet rings), s_axis_net and m_axis_net (SCTP packets to and from
#   VNx's network layer). The kernel has these ports in both builds; with NET = 0 they are idle;
# - the Vitis kernel properties: sdx_kernel, sdx_kernel_type rtl, control protocol ap_ctrl_none (the
#   kernel runs from reset; nothing starts it; the driver uses xrt::ip, never xrt::kernel);
# - package_xo writes the .xo and its kernel.xml, which this script then checks (check_kernel_xml).
#
# Everything that talks to Vivado is in this file; scripts/vitis/check_tcl.tcl runs it under tclsh
# against stub Vivado commands to check what it asks for.

set rnic_here [file dirname [file normalize [info script]]]
set rnic_root [file dirname $rnic_here]
source [file join $rnic_here vitis rnic_regs.tcl]

proc rnic_fail {msg} {
  puts stderr "package_xo.tcl: $msg"
  exit 1
}

# --key value arguments into the array opts; each value checked.
proc rnic_parse_args {argv} {
  set opts(data-width) 512
  set opts(build-id) 0x0
  set opts(net) 0
  set opts(work) ""
  set opts(xo) ""
  set opts(part) ""
  if {[llength $argv] % 2 != 0} { rnic_fail "arguments come in pairs --key value (got: $argv)" }
  foreach {k v} $argv {
    set key [string range $k 2 end]
    if {[string range $k 0 1] ne "--" || ![info exists opts($key)]} {
      rnic_fail "unknown argument '$k' (known: --xo --part --data-width --build-id --net --work)"
    }
    set opts($key) $v
  }
  if {$opts(xo) eq "" || [file extension $opts(xo)] ne ".xo"} { rnic_fail "--xo must name a .xo file (got '$opts(xo)')" }
  if {$opts(part) eq ""} { rnic_fail "--part is required (the platform's FPGA part, e.g. xcu250-figd2104-2L-e)" }
  if {[lsearch -exact {64 128 256 512} $opts(data-width)] < 0} {
    rnic_fail "--data-width must be 64, 128, 256 or 512 (got '$opts(data-width)')"
  }
  if {![regexp {^0x[0-9a-fA-F]{1,8}$} $opts(build-id)]} {
    rnic_fail "--build-id must be 0x followed by 1..8 hex digits (got '$opts(build-id)')"
  }
  if {$opts(net) ne "0" && $opts(net) ne "1"} { rnic_fail "--net must be 0 or 1 (got '$opts(net)')" }
  if {$opts(net) eq "1" && $opts(data-width) < 128} {
    rnic_fail "--net 1 needs --data-width 128 or more (got $opts(data-width)): the network side's CRC and chunk walker"
  }
  if {$opts(work) eq ""} { set opts(work) [file join [file dirname [file normalize $opts(xo)]] rnic_kernel_pack] }
  return [array get opts]
}

# The kernel.xml package_xo wrote must describe what the driver and the v++ configurations expect:
# a free-running kernel, the whole MMIO window, m_axi_gmem and m_axi_net each with a pointer argument
# (so --connectivity.sp can bind them to HOST[0]) and the streams s_axis_rx, s_axis_net and m_axis_net.
# Returns "" or the first problem.
proc rnic_check_kernel_xml {text mmio_bytes} {
  if {![regexp {<kernel\s[^>]*name="rnic_kernel"[^>]*>} $text kernel]} { return "no <kernel name=\"rnic_kernel\">" }
  if {![regexp {hwControlProtocol="ap_ctrl_none"} $kernel]} { return "the kernel is not hwControlProtocol=\"ap_ctrl_none\"" }
  if {![regexp {<port\s[^>]*name="s_axi_control"[^>]*>} $text port]} { return "no s_axi_control port" }
  if {![regexp {range="(0x[0-9A-Fa-f]+|[0-9]+)"} $port -> range] || $range < $mmio_bytes} {
    return "s_axi_control range is not [format 0x%X $mmio_bytes]: $port"
  }
  foreach master {m_axi_gmem m_axi_net} {
    if {![regexp "<port\\s\[^>\]*name=\"$master\"\[^>\]*>" $text port]} { return "no $master port" }
    if {![regexp "<arg\\s\[^>\]*port=\"$master\"\[^>\]*>" $text arg] || ![regexp {addressQualifier="1"} $arg]} {
      return "no pointer argument (addressQualifier 1) on $master"
    }
  }
  foreach stream {s_axis_rx s_axis_net m_axis_net} {
    if {![regexp "<port\\s\[^>\]*name=\"$stream\"\[^>\]*>" $text port] || ![regexp {portType="stream"} $port]} {
      return "no $stream stream port"
    }
  }
  return ""
}

array set opts [rnic_parse_args $argv]
set dw $opts(data-width)
set work [file normalize $opts(work)]
set xo [file normalize $opts(xo)]
puts "package_xo.tcl: rnic_kernel DATA_WIDTH=$dw BUILD_ID=$opts(build-id) NET=$opts(net) part $opts(part) -> $xo"
file delete -force $work
file mkdir $work

# ---- the RTL as a Vivado project ----------------------------------------------------------------------
create_project -force rnic_kernel_pack [file join $work prj] -part $opts(part)
add_files -norecurse [lsort [glob [file join $rnic_root rtl *.sv]]]
add_files -norecurse [lsort [glob [file join $rnic_root rtl *.svh]]]
set_property file_type {Verilog Header} [get_files *.svh]
set_property include_dirs [list [file join $rnic_root rtl]] [current_fileset]
set_property top rnic_kernel [current_fileset]
# Elaborate at the chosen width so the packaged port widths match it.
set_property generic [list DATA_WIDTH=$dw BUILD_ID=32'h[string range $opts(build-id) 2 end] NET=$opts(net)] \
    [current_fileset]
update_compile_order -fileset sources_1

# ---- the IP -----------------------------------------------------------------------------------------
ipx::package_project -root_dir [file join $work ip] -vendor rnic.org -library rnic -taxonomy /KernelIP \
    -import_files -set_current true
set core [ipx::current_core]
set_property name rnic_kernel $core
set_property display_name "rnic_kernel: DDP (RFC 5041) receive offload, NET=$opts(net)" $core
set_property version 1.0 $core
# The parameters the kernel is built with (the IP keeps them; Vitis instantiates it with these values).
set_property value $dw [ipx::get_user_parameters DATA_WIDTH -of_objects $core]
set_property value $dw [ipx::get_hdl_parameters DATA_WIDTH -of_objects $core]
set_property value $opts(build-id) [ipx::get_user_parameters BUILD_ID -of_objects $core]
set_property value $opts(build-id) [ipx::get_hdl_parameters BUILD_ID -of_objects $core]
set_property value $opts(net) [ipx::get_user_parameters NET -of_objects $core]
set_property value $opts(net) [ipx::get_hdl_parameters NET -of_objects $core]

# Vitis kernel: RTL, free-running. ignore_freq_hz: v++ sets the clock frequency at link time.
set_property sdx_kernel true $core
set_property sdx_kernel_type rtl $core
set_property vitis_drc {ctrl_protocol ap_ctrl_none} $core
set_property ipi_drc {ignore_freq_hz true} $core

# Clock and reset. Every interface runs on ap_clk (the kernel has one clock domain); ap_rst_n is its
# synchronous active-low reset. FREQ_HZ is removed so v++ links the platform clock it chooses.
ipx::infer_bus_interface ap_clk xilinx.com:signal:clock_rtl:1.0 $core
ipx::infer_bus_interface ap_rst_n xilinx.com:signal:reset_rtl:1.0 $core
foreach busif {s_axi_control m_axi_gmem s_axis_rx m_axi_net s_axis_net m_axis_net} {
  if {[ipx::get_bus_interfaces $busif -of_objects $core] eq ""} {
    rnic_fail "Vivado did not infer the $busif bus interface from the ports of rtl/rnic_kernel.sv"
  }
  ipx::associate_bus_interfaces -busif $busif -clock ap_clk $core
}
ipx::associate_bus_interfaces -clock ap_clk -reset ap_rst_n $core
ipx::remove_bus_parameter -quiet FREQ_HZ [ipx::get_bus_interfaces ap_clk -of_objects $core]
set rst_if [ipx::get_bus_interfaces ap_rst_n -of_objects $core]
set polarity [ipx::get_bus_parameters -quiet POLARITY -of_objects $rst_if]
if {$polarity eq ""} { set polarity [ipx::add_bus_parameter POLARITY $rst_if] }
set_property value ACTIVE_LOW $polarity

# s_axi_control: the register map (generated from hw.def). The address block spans the whole MMIO
# window, which becomes the control range XRT gives xrt::ip.
set mmap [ipx::add_memory_map -quiet s_axi_control $core]
set block [ipx::add_address_block -quiet reg0 $mmap]
set_property range $rnic_mmio_bytes $block
set_property width 32 $block
foreach row $rnic_registers {
  lassign $row name offset bits access desc busif
  set reg [ipx::add_register -quiet $name $block]
  set_property address_offset $offset $reg
  set_property size $bits $reg
  set_property description $desc $reg
  set field [ipx::add_field -quiet VALUE $reg]
  set_property bit_offset 0 $field
  set_property bit_width $bits $field
  set_property access $access $field
  if {$busif ne ""} {
    # A pointer into the memory behind this AXI master: what makes v++ --connectivity.sp apply to it.
    set_property value $busif [ipx::add_register_parameter -quiet ASSOCIATED_BUSIF $reg]
  }
}
set_property slave_memory_map_ref s_axi_control [ipx::get_bus_interfaces s_axi_control -of_objects $core]

ipx::create_xgui_files $core
ipx::update_checksums $core
if {![ipx::check_integrity -kernel $core]} { rnic_fail "ipx::check_integrity -kernel failed (see above)" }
ipx::save_core $core
close_project

# ---- the .xo ----------------------------------------------------------------------------------------
set kernel_xml [file join $work kernel.xml]
package_xo -force -xo_path $xo -kernel_name rnic_kernel -ctrl_protocol ap_ctrl_none \
    -ip_directory [file join $work ip] -output_kernel_xml $kernel_xml
if {![file exists $xo]} { rnic_fail "package_xo wrote no $xo" }
set f [open $kernel_xml r]
set problem [rnic_check_kernel_xml [read $f] $rnic_mmio_bytes]
close $f
if {$problem ne ""} { rnic_fail "$kernel_xml: $problem" }
puts "package_xo.tcl: wrote $xo (kernel metadata: $kernel_xml)"
