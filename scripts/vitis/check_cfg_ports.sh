#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# CTest CardFlow.CfgPortsInRtl: every rnic_kernel port the v++ link configurations
# (scripts/vitis/*.cfg), the packaging script and the constraints name exists in rtl/rnic_kernel.sv,
# as a port (ap_clk) or as the prefix of an interface's ports (m_axi_gmem -> m_axi_gmem_awaddr, ...);
# both AXI masters go to HOST[0]; every *_vnx.cfg joins s_axis_net and m_axis_net to the network layer.
#   check_cfg_ports.sh REPO_ROOT
set -uo pipefail
root=${1:?usage: check_cfg_ports.sh REPO_ROOT}
rtl=$root/rtl/rnic_kernel.sv
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

# The port list of module rnic_kernel: identifiers declared input/output up to the closing ");".
ports=$(sed -n '/^module rnic_kernel/,/^);/p' "$rtl" |
        sed -nE 's/^\s*(input|output)\s+logic\s*(\[[^]]*\])?\s*([A-Za-z_][A-Za-z0-9_]*).*/\3/p')
[[ $(wc -l <<< "$ports") -ge 40 ]] || fail "could not read the ports of rnic_kernel from $rtl"
has_port() { grep -qxF "$1" <<< "$ports" || grep -q "^$1_" <<< "$ports"; }

checked=0
check() {  # check PORT WHERE
  checked=$((checked + 1))
  has_port "$1" || fail "$2 names rnic_kernel port '$1', which rtl/rnic_kernel.sv does not have"
}
# v++ configurations: <cu>.<port> where <cu> is an instance of rnic_kernel (nk=rnic_kernel:N:cu1.cu2).
shopt -s nullglob
cfgs=("$root"/scripts/vitis/*.cfg)
[[ ${#cfgs[@]} -ge 2 ]] || fail "no scripts/vitis/*.cfg"
cus=$(sed -nE 's/^nk=rnic_kernel:[0-9]+:(.*)$/\1/p' "${cfgs[@]}" | tr '.' '\n' | sort -u)
[[ -n "$cus" ]] || fail "no cfg declares an rnic_kernel compute unit (nk=rnic_kernel:...)"
for cfg in "${cfgs[@]}"; do
  while IFS= read -r line; do
    for cu in $cus; do
      for port in $(grep -oE "(^|[=:])$cu\.[A-Za-z_][A-Za-z0-9_]*" <<< "$line" | sed -E "s/^[=:]?$cu\.//"); do
        check "$port" "$(basename "$cfg"): '$line'"
      done
    done
  done < <(grep -vE '^\s*#' "$cfg")
  for master in m_axi_gmem m_axi_net; do
    grep -qE '^nk=rnic_kernel:' "$cfg" && ! grep -qE "^sp=.*\.$master:HOST\[0\]\$" "$cfg" &&
      fail "$(basename "$cfg") declares rnic_kernel but does not bind $master to HOST[0]"
  done
done
# scripts/package_xo.tcl: the bus interfaces it packages and associates.
for port in $(sed -nE 's/^foreach busif \{([^}]*)\}.*/\1/p' "$root/scripts/package_xo.tcl") \
            $(grep -oE 'infer_bus_interface [a-z_]+' "$root/scripts/package_xo.tcl" | cut -d' ' -f2); do
  check "$port" "scripts/package_xo.tcl"
done
# Constraints: pins of the kernel cell ($cell/<pin>).
for f in "$root"/constraints/*.tcl "$root"/constraints/*.xdc; do
  for port in $(grep -vE '^\s*#' "$f" | grep -oE '_cell/[A-Za-z_][A-Za-z0-9_]*' | cut -d/ -f2); do
    check "$port" "constraints/$(basename "$f")"
  done
done
# Every network configuration joins the network layer to the kernel's network side, both ways.
for cfg in "$root"/scripts/vitis/*_vnx.cfg; do
  grep -qE '^stream_connect=.*:rnic_kernel_1\.s_axis_net$' "$cfg" ||
    fail "$(basename "$cfg") connects no stream into rnic_kernel_1.s_axis_net"
  grep -qE '^stream_connect=rnic_kernel_1\.m_axis_net:' "$cfg" ||
    fail "$(basename "$cfg") connects rnic_kernel_1.m_axis_net to nothing"
done

[[ $checked -ge 10 ]] || fail "only $checked port references found: the check read nothing"
[[ $fails -eq 0 ]] || { echo "check_cfg_ports.sh: $fails failure(s)" >&2; exit 1; }
echo "check_cfg_ports.sh: ok ($checked port references)"
