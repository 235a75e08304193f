// Placeholder until the rnic-sim client lands (issue 4): every use says so.
#include "backend.hpp"

namespace rnic::detail {
std::unique_ptr<Backend> make_sim_backend(const std::string& socket_path, bool /*observer*/) {
  throw Error(Errc::kUnsupported, "sim backend not built yet (sim:" + socket_path + ")");
}
}  // namespace rnic::detail
