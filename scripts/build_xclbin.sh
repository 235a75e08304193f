#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds rnic.xclbin for an Alveo card: packages rtl/ as a Vitis RTL kernel (scripts/package_xo.tcl),
# then links it with v++ for the platform. Needs Vivado and Vitis (2022.2 or later) and XRT.
#
#   scripts/build_xclbin.sh --platform u250|u280|u55c [options]
#     --platform-name NAME   platform to link for (default per card: see below), or a .xpfm path
#     --data-width N         DATA_WIDTH of the kernel: 64, 128, 256 or 512 (default 512; 100G needs 512)
#     --build-id 0xHEX       REG_BUILD_ID (default: the git commit, 8 hex digits, or 0x0)
#     --net none|vnx         none (default): rnic_kernel built with NET = 0, its streams unconnected
#                            (MMIO and host memory work, no traffic); vnx: the kernel built with NET = 1
#                            (the network side, docs/network.md) joined to VNx by
#                            scripts/vitis/<card>_vnx.cfg; needs --net-xo and a width of 128 or more
#     --net-xo FILE.xo       a network kernel to link (repeat: cmac_0.xo, networklayer.xo from VNx)
#     --target hw|hw_emu     (default hw)
#     --out DIR              (default build/card/<card>); the result is DIR/rnic.xclbin
#     --jobs N               v++ --jobs (default: nproc)
#     --dry-run              print the commands and exit 0 without running them (no tools needed)
#
# Default platforms: u250 xilinx_u250_gen3x16_xdma_4_1_202210_1, u280 xilinx_u280_gen3x16_xdma_1_202211_1,
# u55c xilinx_u55c_gen3x16_xdma_3_202210_1. docs/card-flow.md explains each step.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
me=build_xclbin.sh

die() { echo "$me: $*" >&2; exit 2; }

card="" platform="" data_width=512 build_id="" net=none target=hw out="" jobs="" dry_run=0
net_xos=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --platform|--platform-name|--data-width|--build-id|--net|--net-xo|--target|--out|--jobs)
      [[ $# -ge 2 ]] || die "$1 needs a value"
      case "$1" in
        --platform) card=$2 ;;
        --platform-name) platform=$2 ;;
        --data-width) data_width=$2 ;;
        --build-id) build_id=$2 ;;
        --net) net=$2 ;;
        --net-xo) net_xos+=("$2") ;;
        --target) target=$2 ;;
        --out) out=$2 ;;
        --jobs) jobs=$2 ;;
      esac
      shift 2 ;;
    --dry-run) dry_run=1; shift ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done

# ---- arguments --------------------------------------------------------------------------------------
case "$card" in
  u250) part=xcu250-figd2104-2L-e; default_platform=xilinx_u250_gen3x16_xdma_4_1_202210_1 ;;
  u280) part=xcu280-fsvh2892-2L-e; default_platform=xilinx_u280_gen3x16_xdma_1_202211_1 ;;
  u55c) part=xcu55c-fsvh2892-2L-e; default_platform=xilinx_u55c_gen3x16_xdma_3_202210_1 ;;
  "") die "--platform is required: u250, u280 or u55c" ;;
  *) die "--platform must be u250, u280 or u55c (got '$card')" ;;
esac
platform=${platform:-$default_platform}
case "$data_width" in 64|128|256|512) ;; *) die "--data-width must be 64, 128, 256 or 512 (got '$data_width')" ;; esac
if [[ -z "$build_id" ]]; then
  build_id=0x$(git -C "$root" rev-parse --short=8 HEAD 2>/dev/null || echo 0)
fi
[[ "$build_id" =~ ^0x[0-9a-fA-F]{1,8}$ ]] || die "--build-id must be 0x followed by 1..8 hex digits (got '$build_id')"
case "$target" in hw|hw_emu) ;; *) die "--target must be hw or hw_emu (got '$target')" ;; esac
case "$net" in
  none) [[ ${#net_xos[@]} -eq 0 ]] || die "--net-xo needs --net vnx" ;;
  vnx) [[ ${#net_xos[@]} -gt 0 ]] || die "--net vnx needs the network kernels: --net-xo cmac_0.xo --net-xo networklayer.xo"
       [[ $data_width -ge 128 ]] || die "--net vnx needs --data-width 128 or more (got '$data_width'; 100G needs 512)" ;;
  *) die "--net must be none or vnx (got '$net')" ;;
esac
jobs=${jobs:-$(nproc 2>/dev/null || echo 4)}
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || die "--jobs must be a positive number (got '$jobs')"
out=${out:-$root/build/card/$card}
mkdir_out="$out"
xo=$out/rnic_kernel.xo
xclbin=$out/rnic.xclbin

# ---- the commands -----------------------------------------------------------------------------------
package_cmd=(vivado -mode batch -nojournal -log "$out/package_xo.log" -source "$root/scripts/package_xo.tcl"
             -tclargs --xo "$xo" --part "$part" --data-width "$data_width" --build-id "$build_id"
             --net "$([[ $net == vnx ]] && echo 1 || echo 0)" --work "$out/rnic_kernel_pack")
link_cmd=(v++ --link --target "$target" --platform "$platform" --save-temps --temp_dir "$out/_x"
          --report_dir "$out/reports" --log_dir "$out/logs" --jobs "$jobs"
          --config "$root/scripts/vitis/$card.cfg")
if [[ "$net" == vnx ]]; then link_cmd+=(--config "$root/scripts/vitis/${card}_vnx.cfg"); fi
link_cmd+=(--vivado.prop "run.impl_1.STEPS.OPT_DESIGN.TCL.PRE=$root/constraints/rnic_kernel_pre_opt.tcl"
           --output "$xclbin" "$xo")
for x in "${net_xos[@]}"; do link_cmd+=("$x"); done

print_cmd() { printf '%q ' "$@" | sed 's/ $//'; echo; }
if [[ $dry_run -eq 1 ]]; then
  echo "# $me: $card ($platform), DATA_WIDTH $data_width, BUILD_ID $build_id, net $net"
  print_cmd mkdir -p "$mkdir_out"
  print_cmd "${package_cmd[@]}"
  print_cmd "${link_cmd[@]}"
  exit 0
fi

# ---- the tools, before anything runs ----------------------------------------------------------------
missing=()
command -v vivado >/dev/null 2>&1 || missing+=("vivado not found in PATH (source <Vivado install>/settings64.sh)")
command -v v++ >/dev/null 2>&1 || missing+=("v++ not found in PATH (source <Vitis install>/settings64.sh)")
[[ -n "${XILINX_XRT:-}" ]] || missing+=("XILINX_XRT is not set (source /opt/xilinx/xrt/setup.sh)")
if [[ "$platform" == */* || "$platform" == *.xpfm ]]; then
  [[ -f "$platform" ]] || missing+=("platform file $platform does not exist")
else
  found=0
  IFS=: read -r -a repos <<< "${PLATFORM_REPO_PATHS:-}:/opt/xilinx/platforms"
  for d in "${repos[@]}"; do
    [[ -n "$d" && -f "$d/$platform/$platform.xpfm" ]] && found=1
  done
  [[ $found -eq 1 ]] || missing+=("platform $platform not found in PLATFORM_REPO_PATHS or /opt/xilinx/platforms (install it, or give --platform-name <path>.xpfm)")
fi
for x in "${net_xos[@]}"; do [[ -f "$x" ]] || missing+=("network kernel $x does not exist"); done
if [[ ${#missing[@]} -gt 0 ]]; then
  for m in "${missing[@]}"; do echo "$me: $m" >&2; done
  echo "$me: nothing was built; --dry-run prints the commands" >&2
  exit 1
fi

mkdir -p "$mkdir_out"
echo "$me: packaging rnic_kernel -> $xo"
"${package_cmd[@]}"
echo "$me: linking for $platform -> $xclbin (hours)"
"${link_cmd[@]}"
echo "$me: done: $xclbin"
echo "$me: load it with RNIC_DEVICE=xrt:0 RNIC_XCLBIN=$xclbin (docs/building.md, For a card)"
