// SPDX-License-Identifier: Apache-2.0
#include "xrt_util.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "rnic/driver/rnic.hpp"
#include "rnic/hw/hw.hpp"

namespace rnic::detail {

void check_xrt_mmio_offset(std::uint32_t offset, const char* op) {
  if (offset % 4 != 0 || offset > hw::kMMIO_BYTES - 4)
    throw Error(Errc::kInvalidArgument,
                fmt::format("xrt {}: offset {:#x} is not a 32-bit register inside the {:#x}-byte MMIO space", op,
                            offset, hw::kMMIO_BYTES));
}

void check_xrt_alloc(std::size_t bytes, std::size_t align) {
  if (bytes == 0) throw Error(Errc::kInvalidArgument, "xrt alloc: bytes is 0");
  if (align < 64 || (align & (align - 1)) != 0)
    throw Error(Errc::kInvalidArgument, fmt::format("xrt alloc: align {} is not a power of two >= 64", align));
  if (align > kXrtPageBytes)
    throw Error(
        Errc::kInvalidArgument,
        fmt::format("xrt alloc: align {} exceeds the {}-byte page alignment of XRT buffers", align, kXrtPageBytes));
}

std::string xrt_state_path(unsigned index) {
  const char* dir = std::getenv("XDG_RUNTIME_DIR");
  const std::string base = dir != nullptr && *dir != '\0' ? dir : "/tmp";
  return fmt::format("{}/rnic-xrt{}.json", base, index);
}

void write_state_file(const std::string& path, const std::string& json) {
  std::string tmp = path + ".XXXXXX";
  const int fd = ::mkstemp(tmp.data());  // mode 0600
  if (fd < 0) throw Error(Errc::kBackend, fmt::format("xrt publish: cannot create {}: {}", tmp, std::strerror(errno)));
  const char* p = json.data();
  std::size_t left = json.size();
  int err = 0;
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      err = n < 0 ? errno : EIO;
      break;
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err == 0 && ::rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  if (err != 0) {
    ::unlink(tmp.c_str());
    throw Error(Errc::kBackend, fmt::format("xrt publish: writing {}: {}", path, std::strerror(err)));
  }
}

std::string read_state_file(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (status.type() == std::filesystem::file_type::not_found) return "";
  if (ec) throw Error(Errc::kBackend, fmt::format("xrt published_state: {}: {}", path, ec.message()));
  if (!std::filesystem::is_regular_file(status))
    throw Error(Errc::kBackend, fmt::format("xrt published_state: {} is not a regular file", path));
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(Errc::kBackend, fmt::format("xrt published_state: cannot open {}: {}", path, std::strerror(errno)));
  std::ostringstream out;
  out << in.rdbuf();
  if (in.bad()) throw Error(Errc::kBackend, fmt::format("xrt published_state: reading {} failed", path));
  return out.str();
}

}  // namespace rnic::detail
