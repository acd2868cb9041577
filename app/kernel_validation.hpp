// A kernel table (a measurement file's dispatch/combine rows, DeepEP's H800
// table by default) as `epsim validate` asks for it: a typed request, its
// flags checked against the file (a calibration row must be measured and on
// the right fabric, the shape must be the file's), then every row replayed
// on the file's platform through run's collective model
// (sim/validation/deepep_validation.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/validation/deepep_validation.hpp"

namespace epsim::app {

struct KernelValidationRequest {
  std::string file;  // empty: the shipped DeepEP H800 file
  std::string platform;  // empty: the file's
  std::vector<std::string> overrides;  // platform keys, after the file's
  std::uint64_t seed = 1;
  int tokens_per_rank = 0;  // 0: the file's (no other is measured)
  int pipeline_chunks = sim::AlltoallvOptions{}.pipeline_chunks;
  int nvlink_row = 0;  // EP of the row calibrating NVLink; 0: the file's
  int rdma_row = 0;    // EP of the row calibrating RDMA; 0: the file's
};

// The file's validation options with the request's flags on top. Throws
// InputError naming the flag (--nvlink-row, --rdma-row, --tokens, --chunks)
// the file's rows refuse.
sim::DeepEpValidationOptions kernel_validation_options(const KernelValidationRequest& request);

// Calibrates on the named rows and predicts the others.
sim::DeepEpValidation validate_kernels(const KernelValidationRequest& request);

}  // namespace epsim::app
