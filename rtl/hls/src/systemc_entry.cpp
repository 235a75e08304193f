// SPDX-License-Identifier: Apache-2.0
// Programs that run the SystemC model (the kernel tests, rnic-sim, the bench) have their own main() and
// drive the simulation with sc_start() from it. libsystemc.so still carries a main() that calls
// sc_main() and so needs the symbol at link time; it is never called.
#include <cstdio>
#include <cstdlib>

extern "C" int sc_main(int, char**) {
  std::fprintf(stderr, "rnic: sc_main is not an entry point of this program\n");
  return EXIT_FAILURE;
}
