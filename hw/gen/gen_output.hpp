// SPDX-License-Identifier: Apache-2.0
// The generators' common end: the text goes to the file named by the first argument, or to stdout.
#pragma once

#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>

namespace rnic::hw {

// v as 0x followed by `digits` upper-case hex digits.
inline std::string hex0x(unsigned long long v, int digits) {
  char b[32];
  std::snprintf(b, sizeof b, "0x%0*llX", digits, v);
  return b;
}

// Exit status of a generator: 0 when the text was written, 1 when the file could not be.
inline int write_generated(int argc, char** argv, const std::string& text) {
  if (argc > 1) {
    std::ofstream f(argv[1]);
    f << text;
    if (f) return 0;
    std::cerr << argv[0] << ": cannot write " << argv[1] << "\n";
    return 1;
  }
  std::cout << text;
  return 0;
}

}  // namespace rnic::hw
