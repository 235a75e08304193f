# SPDX-License-Identifier: Apache-2.0
# rnic_warnings: the warning set every project target builds clean under.
add_library(rnic_warnings INTERFACE)
target_compile_options(rnic_warnings INTERFACE -Wall -Wextra -Wshadow -Wnon-virtual-dtor
                       -Wold-style-cast -Wcast-align -Woverloaded-virtual -Wconversion
                       -Wsign-conversion -Wformat=2)
option(RNIC_WERROR "Treat warnings in project code as errors" ON)
if(RNIC_WERROR)
  target_compile_options(rnic_warnings INTERFACE -Werror)
endif()
