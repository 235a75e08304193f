# SPDX-License-Identifier: Apache-2.0
# FindXRT: the Xilinx Runtime as Debian 12 ships it (libxrt-dev 2.13: headers in /usr/include/xrt,
# libxrt_coreutil), which has no CMake package. Defines XRT::XRT (xrt_coreutil + uuid) and XRT_FOUND.
find_path(XRT_INCLUDE_DIR NAMES xrt/xrt_device.h experimental/xrt_ip.h
          PATHS /usr/include/xrt /opt/xilinx/xrt/include PATH_SUFFIXES include)
find_library(XRT_COREUTIL_LIBRARY NAMES xrt_coreutil PATHS /opt/xilinx/xrt/lib)
find_library(XRT_UUID_LIBRARY NAMES uuid)
# The PCIe driver shim XRT dlopen()s at run time from $XILINX_XRT/lib/libxrt_core.so.2 (optional: not
# linked; the XRT tests point XILINX_XRT at a tree holding it to reach XRT's real "no card" path).
find_library(XRT_CORE_LIBRARY NAMES libxrt_core.so.2 xrt_core PATHS /opt/xilinx/xrt/lib)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(XRT REQUIRED_VARS XRT_INCLUDE_DIR XRT_COREUTIL_LIBRARY XRT_UUID_LIBRARY)
if(XRT_FOUND AND NOT TARGET XRT::XRT)
  add_library(XRT::XRT INTERFACE IMPORTED GLOBAL)
  # SYSTEM: XRT's headers are not ours; the project warning set must not apply to them.
  set_target_properties(XRT::XRT PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${XRT_INCLUDE_DIR}"
    INTERFACE_SYSTEM_INCLUDE_DIRECTORIES "${XRT_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "${XRT_COREUTIL_LIBRARY};${XRT_UUID_LIBRARY}")
endif()
mark_as_advanced(XRT_INCLUDE_DIR XRT_COREUTIL_LIBRARY XRT_UUID_LIBRARY XRT_CORE_LIBRARY)
