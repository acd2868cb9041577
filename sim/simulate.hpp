// The simulator's front door: load a platform, place ranks, replay a task
// graph, bound it and report. One call per process (one SimGrid engine).
#pragma once

#include <string>

#include "sim/platform/placement.hpp"
#include "sim/platform/platform_facts.hpp"
#include "sim/replay/replay.hpp"
#include "sim/report/report.hpp"
#include "sim/platform/sim_engine.hpp"
#include "sim/replay/step_bounds.hpp"
#include "sim/replay/timeline.hpp"
#include "workloads/task_graph.hpp"

namespace epsim::sim {

struct Simulation {
  PlatformFacts platform;
  Placement placement;
  ReplayOptions options;  // resolved
  Timeline timeline;
  StepBounds bounds;
  Report report;
};

// Throws InputError for a platform that breaks the contract or a graph that
// does not fit it; std::runtime_error for a SimGrid failure mid-run.
Simulation simulate(const std::string& platform_path, const workloads::TaskGraph& graph,
                    const ReplayOptions& options = {}, const EngineOptions& engine_options = {});

// The same on a platform built in C++ (see SimEngine); `source` names it in messages.
Simulation simulate(const std::string& source, const PlatformBuilder& build, const workloads::TaskGraph& graph,
                    const ReplayOptions& options = {}, const EngineOptions& engine_options = {});

}  // namespace epsim::sim
