// Placeholder until the XRT backend lands (issue 4): every use says so.
#include "backend.hpp"

namespace rnic::detail {
std::unique_ptr<Backend> make_xrt_backend(unsigned index, const std::string& /*xclbin*/) {
  throw Error(Errc::kUnsupported, "xrt backend not built yet (xrt:" + std::to_string(index) + ")");
}
}  // namespace rnic::detail
