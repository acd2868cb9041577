// One kernel pair (dispatch, then combine) timed the two ways the project
// times it: as `epsim validate` does (time_deepep_kernels) and as `epsim
// run` does (simulate() with an algorithm), each in its own child process.
// The tests that check validate and run agree share it.
#pragma once

#include <cstdio>
#include <string>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "sim/platform/platform_loader.hpp"
#include "sim/simulate.hpp"
#include "sim/validation/deepep_kernels.hpp"
#include "sim_test_support.hpp"

namespace epsim::sim::testing {

struct KernelTimings {
  double validate_dispatch_s = 0, validate_combine_s = 0;
  double run_dispatch_s = 0, run_combine_s = 0;
};

inline KernelTimings validate_and_run(const PlatformRequest& platform, const workloads::TrafficMatrix& traffic,
                                      const DeepEpTokenBytes& bytes, int chunks, DeepEpKernel kernel, bool flat,
                                      AlltoallAlgorithm algorithm) {
  const std::string validate = in_child([&] {
    OpenPlatform open = open_platform(platform);
    const DeepEpTimes t = time_deepep_kernels(*open.engine, open.loaded, traffic, bytes, chunks, kernel, flat);
    return fmt::format("{:.17g} {:.17g}", t.dispatch_s, t.combine_s);
  });
  const std::string run = in_child([&] {
    ReplayOptions o;
    o.algorithm = algorithm;
    const Simulation s = simulate(platform, deepep_kernel_graph(traffic, bytes), o);
    std::string out;
    for (const CollectiveSpan& c : s.timeline.collectives) out += fmt::format(" {:.17g}", c.end_s - c.start_s);
    return out;
  });
  INFO("validate: " << validate << "; run: " << run);
  KernelTimings t;
  REQUIRE(std::sscanf(validate.c_str(), "%lf %lf", &t.validate_dispatch_s, &t.validate_combine_s) == 2);
  REQUIRE(std::sscanf(run.c_str(), "%lf %lf", &t.run_dispatch_s, &t.run_combine_s) == 2);
  return t;
}

}  // namespace epsim::sim::testing
