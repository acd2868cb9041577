#include "app/kernel_validation.hpp"

#include <utility>

#include "core/error.hpp"
#include "app/measurement_file.hpp"

namespace epsim::app {

sim::DeepEpValidationOptions kernel_validation_options(const KernelValidationRequest& r) {
  sim::DeepEpValidationOptions o =
      validation_options(load_measurement_file(r.file.empty() ? default_measurement_file() : r.file));
  if (!r.platform.empty()) o.platform = r.platform;
  o.overrides.insert(o.overrides.end(), r.overrides.begin(), r.overrides.end());
  o.seed = r.seed;
  o.pipeline_chunks = r.pipeline_chunks;
  auto measured = [&](const char* flag, int ep) {
    if (!sim::find_measurement(o.measurements, ep))
      throw option_error(flag, "the measured rows are " + sim::measured_eps(o.measurements) + "; got " +
                                   std::to_string(ep));
  };
  const std::pair<const char*, int> rows[] = {{"--nvlink-row", r.nvlink_row}, {"--rdma-row", r.rdma_row}};
  if (o.kernel == sim::DeepEpKernel::kLowLatency)
    for (const auto& [flag, row] : rows)
      if (row != 0)
        throw option_error(flag, "the file's rows are low-latency kernels: they calibrate "
                                 "scaleout.low_latency_efficiency only (its row is the file's)");
  // A flat platform's file calibrates neither NVLink nor RDMA (its own efficiency, or kernels.* only).
  if (o.flat_calibration_ep != 0 || (o.nvlink_calibration_ep == 0 && o.rdma_calibration_ep == 0))
    for (const auto& [flag, row] : rows)
      if (row != 0)
        throw option_error(flag, "the file's platform is flat (a supernode or no [scaleout]): its rows calibrate "
                                 "one parameter, on the file's row");
  if (r.nvlink_row != 0) {
    measured("--nvlink-row", r.nvlink_row);
    if (r.nvlink_row > sim::kDeepEpGpusPerNode)
      throw option_error("--nvlink-row", "NVLink calibrates on an intranode row (EP <= 8)");
    o.nvlink_calibration_ep = r.nvlink_row;
  }
  if (r.rdma_row != 0) {
    measured("--rdma-row", r.rdma_row);
    if (r.rdma_row <= sim::kDeepEpGpusPerNode)
      throw option_error("--rdma-row", "RDMA calibrates on an internode row (EP > 8)");
    o.rdma_calibration_ep = r.rdma_row;
  }
  if (r.tokens_per_rank != 0 && r.tokens_per_rank != o.measured_tokens_per_rank)
    throw option_error("--tokens", "the rows were measured at " + std::to_string(o.measured_tokens_per_rank) +
                                       " tokens per rank; other shapes have no measurement to compare with");
  if (o.pipeline_chunks < 1) throw option_error("--chunks", "expected >= 1, got " + std::to_string(o.pipeline_chunks));
  return o;
}

sim::DeepEpValidation validate_kernels(const KernelValidationRequest& r) {
  return sim::run_deepep_validation(kernel_validation_options(r));
}

}  // namespace epsim::app
