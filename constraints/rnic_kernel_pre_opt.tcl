# SPDX-License-Identifier: Apache-2.0
# rnic_kernel_pre_opt.tcl: a Vivado hook of the v++ link, run in the implementation run before
# opt_design on the whole linked design (scripts/build_xclbin.sh passes it as
#   --vivado.prop run.impl_1.STEPS.OPT_DESIGN.TCL.PRE=<absolute path of this file>).
# It adds no constraint; it checks the ones that matter and says why there are no others:
#
# - Clock: the kernel has one clock, ap_clk, and every interface runs on it. v++ drives it from the
#   platform's kernel clock at [clock] freqHz of the link configuration (250 MHz: 512 bits x 250 MHz
#   = 128 Gbit/s, above 100G line rate with headroom for headers and idle cycles). The platform
#   constrains that clock; a create_clock here would override it. The check below fails the run when
#   the kernel did not get 250 MHz (a link configuration without the [clock] line), before hours of
#   placement and routing are spent on the wrong target.
# - Timing exceptions: none. Single clock domain, every flip-flop clocked by ap_clk with ap_rst_n
#   sampled synchronously (no asynchronous reset anywhere in rtl/), no
#   multicycle paths in the RTL. The clock crossings are outside the kernel: the CMAC kernel crosses
#   its transceiver clocks into its own ap_clk, and v++ inserts the clock converters between the
#   kernel and the host bridge. A set_false_path here would only hide a real violation.
# - Placement: the SLR is chosen by [connectivity] slr= in the link configuration, which v++ turns
#   into the SLR assignment itself; a pblock here would fight it. This hook reports where it went.
set rnic_expected_period_ns 4.000
set rnic_cells [get_cells -quiet -hierarchical -filter {REF_NAME == rnic_kernel || ORIG_REF_NAME == rnic_kernel}]
if {[llength $rnic_cells] == 0} {
  puts "CRITICAL WARNING: rnic_kernel_pre_opt.tcl: no cell of rnic_kernel found; clock not checked"
}
foreach rnic_cell $rnic_cells {
  set rnic_clocks [get_clocks -quiet -of_objects [get_pins -quiet $rnic_cell/ap_clk]]
  if {[llength $rnic_clocks] != 1} {
    error "rnic_kernel_pre_opt.tcl: $rnic_cell/ap_clk has [llength $rnic_clocks] clocks ($rnic_clocks), expected one"
  }
  set rnic_period [get_property PERIOD $rnic_clocks]
  if {abs($rnic_period - $rnic_expected_period_ns) > 0.01} {
    error "rnic_kernel_pre_opt.tcl: $rnic_cell runs on $rnic_clocks with period $rnic_period ns,\
           expected $rnic_expected_period_ns ns (250 MHz): check \[clock\] freqHz in the link configuration"
  }
  puts "INFO: rnic_kernel_pre_opt.tcl: $rnic_cell on $rnic_clocks ($rnic_period ns),\
        pblock '[get_pblocks -quiet -of_objects $rnic_cell]'"
}
