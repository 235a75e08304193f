// SPDX-License-Identifier: Apache-2.0
// The one instantiation of the SystemC-HLS model at the test parameters for this data width
// (kernel_model.hpp).
#include "kernel_model.hpp"

template class rnic::bus::ScKernel<rnic::tb::test::ModelConfig>;
