// The replay driver: one SimGrid actor that starts activities when a task's
// dependencies are done and its stream is free, and waits for the next
// completion. All scheduling state lives here; SimGrid only times activities.
#include "sim/replay/replay.hpp"

#include <algorithm>
#include <exception>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>
#include <simgrid/s4u/Activity.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>

#include "core/error.hpp"
#include "sim/replay/activities.hpp"
#include "sim/replay/compute_precision.hpp"
#include "sim/replay/replica_links.hpp"
#include "sim/replay/link_progress.hpp"
#include "sim/replay/replica_links.hpp"

namespace epsim::sim {

namespace s4u = simgrid::s4u;
using workloads::Task;
using workloads::TaskGraph;
using workloads::TaskId;
using workloads::TaskKind;

const char* to_string(Schedule s) { return s == Schedule::kSerial ? "serial" : "overlap"; }

namespace {

// The smallest bandwidth on the route src -> dst.
double bottleneck_Bps(const PlatformFacts& platform, int src, int dst) {
  double out = std::numeric_limits<double>::infinity();
  auto [first, last] = platform.routes.links(src, dst);
  for (const int* l = first; l != last; ++l) out = std::min(out, platform.links[*l].bandwidth_Bps);
  return out;
}

}  // namespace

AlltoallAlgorithm default_algorithm(const PlatformFacts& platform, const Placement& placement) {
  const auto& npu = placement.npu_of_rank;
  const int rpn = placement.ranks_per_node;
  const int ranks = static_cast<int>(npu.size());
  if (rpn < 2 || ranks <= rpn) return AlltoallAlgorithm::kDirect;
  const double intra_Bps = bottleneck_Bps(platform, npu[0], npu[1]);
  const double inter_Bps = bottleneck_Bps(platform, npu[0], npu[rpn]);
  return inter_Bps < intra_Bps ? AlltoallAlgorithm::kHierarchical : AlltoallAlgorithm::kDirect;
}

std::string per_flow_refusal(int ranks) {
  if (ranks <= kMaxPerFlowRanks) return "";
  return fmt::format("per-flow times every rank pair as its own activity ({} x {} per collective); beyond {} ranks "
                     "SimGrid's sharing solver takes minutes per step; use aggregated",
                     ranks, ranks - 1, kMaxPerFlowRanks);
}

ReplayOptions resolve(const ReplayOptions& options, const PlatformFacts& platform, const Placement& placement) {
  // A folded graph's defaults are its whole job's: the kept ranks stand for all.
  const int ranks = placement.ranks_and_phantoms();
  ReplayOptions out = options;
  const bool known = ranks > 0 && static_cast<std::size_t>(placement.npu_of_rank[0]) < platform.npus.size();
  if (!out.kernels) out.kernels = known ? platform.npus[placement.npu_of_rank[0]].kernels : KernelCosts{};
  if (!out.algorithm) {  // the stack's kernels decide, then the fabric
    switch (out.kernels->dispatch) {
      case topology::DispatchKernel::kAlltoall: out.algorithm = AlltoallAlgorithm::kDirect; break;
      case topology::DispatchKernel::kDeepEpLowLatency: out.algorithm = AlltoallAlgorithm::kLowLatency; break;
      case topology::DispatchKernel::kDeepEpNormal:
        out.algorithm = options.decode ? AlltoallAlgorithm::kLowLatency : default_algorithm(platform, placement);
        break;
    }
  }
  if (out.all_reduce == AllReduceAlgorithm::kHierarchical && node_fabric_is_mesh(platform, placement))
    out.all_reduce = AllReduceAlgorithm::kMesh;
  if (!out.fidelity) out.fidelity = ranks <= 8 ? Fidelity::kPerFlow : Fidelity::kAggregated;
  if (*out.fidelity == Fidelity::kPerFlow && ranks > kMaxPerFlowRanks)
    throw InputError({}, "fidelity", per_flow_refusal(ranks));
  if (out.pipeline_chunks < 1)
    throw InputError({}, "pipeline_chunks", fmt::format("expected >= 1, got {}", out.pipeline_chunks));
  if (!out.exact_ring_steps) out.exact_ring_steps = *out.fidelity == Fidelity::kPerFlow;
  if (!out.fuse_identical_compute) out.fuse_identical_compute = ranks > 8;
  if (!out.low_latency_nic_share)  // only the low-latency plan reads it
    out.low_latency_nic_share = known ? platform.npus[placement.npu_of_rank[0]].low_latency_nic_share : 1.0;
  if (!out.low_latency_node_share)
    out.low_latency_node_share = known ? platform.npus[placement.npu_of_rank[0]].low_latency_node_share : 1.0;
  return out;
}

AlltoallvOptions alltoallv_options(const ReplayOptions& resolved) {
  AlltoallvOptions o;
  o.algorithm = *resolved.algorithm;
  o.fidelity = *resolved.fidelity;
  o.pipeline_chunks = resolved.pipeline_chunks;
  o.low_latency_nic_share = resolved.low_latency_nic_share.value_or(1.0);
  o.low_latency_node_share = resolved.low_latency_node_share.value_or(1.0);
  o.kernels = resolved.kernels.value_or(KernelCosts{});
  return o;
}

namespace {

class Driver {
 public:
  Driver(const LoadedPlatform& platform, const Placement& placement, const TaskGraph& graph,
         const ReplayOptions& options, std::vector<double>* plan_bounds, const TaskGate& before_task)
      : platform_(platform.facts),
        hosts_(platform.hosts),
        placement_(placement),
        graph_(graph),
        options_(options),
        ranks_(graph.ranks),
        pending_(graph.tasks.size() * static_cast<std::size_t>(graph.ranks), 0),
        dependents_(graph.tasks.size()),
        order_(static_cast<std::size_t>(graph.ranks) * kStreams),
        next_(order_.size(), 0),
        busy_(order_.size(), false),
        compute_ready_(graph.ranks),
        entered_s_(graph.tasks.size()),
        in_worklist_(graph.ranks, false),
        plan_bounds_(plan_bounds),
        before_task_(before_task),
        opened_(before_task ? graph.tasks.size() : 0, 0) {
    if (plan_bounds_ != nullptr) plan_bounds_->assign(graph.tasks.size(), -1.0);
    timeline_.link_bytes.assign(platform_.links.size(), 0.0);
    is_hbm_link_.assign(platform_.links.size(), 0);
    npu_load_.assign(platform_.npus.size(), 0);
    kernel_on_.assign(platform_.npus.size(), nullptr);
    alone_on_.assign(platform_.npus.size(), std::nullopt);
    if (options_.alone_kernels) {
      // What SimGrid itself divides by: the host's speed and its HBM link's bandwidth.
      alone_caps_.resize(platform_.npus.size());
      for (std::size_t n = 0; n < platform_.npus.size(); ++n) {
        const int hbm = platform_.npus[n].hbm_link;
        alone_caps_[n] = {hosts_[n]->get_speed(),
                          hbm < 0 ? 0.0 : s4u::Link::by_name(platform_.links[static_cast<std::size_t>(hbm)].name)->get_bandwidth()};
      }
    }
    for (const NpuFacts& npu : platform_.npus)
      if (npu.hbm_link >= 0) is_hbm_link_[static_cast<std::size_t>(npu.hbm_link)] = 1;
    check_graph();
    for (const Task& t : graph_.tasks) {
      for (TaskId d : t.deps) dependents_[d].push_back(t.id);
      std::vector<bool> joins = t.is_collective() ? graph_.members(t) : std::vector<bool>();
      for (int r = 0; r < ranks_; ++r) {
        // A part rank r does not run waits for nothing and holds nothing up.
        int deps = 0;
        for (TaskId d : t.deps) deps += counts_for(graph_.tasks[d], r) ? 1 : 0;
        pending_[slot(t.id, r)] = deps;
        if (!t.is_collective()) {
          if (!graph_.runs(t, r))
            ++finished_;
          else if (options_.schedule == Schedule::kSerial)
            order(r, Stream::kCompute).push_back(t.id);
        } else if (joins[r] && !streamless(t)) {
          order(r, stream_of(t)).push_back(t.id);
        }
      }
      if (t.is_collective()) {
        members_[t.id] = static_cast<int>(std::count(joins.begin(), joins.end(), true));
        if (streamless(t)) streamless_members_[t.id] = std::move(joins);
      }
    }
    not_run_ = finished_;
  }

  void run() {
    t0_s_ = s4u::Engine::get_clock();
    for (const Task& t : graph_.tasks)
      for (int r = 0; r < ranks_; ++r)
        if (pending_[slot(t.id, r)] == 0 && active(t, r)) became_ready(t.id, r);
    for (int r = 0; r < ranks_; ++r) touch(r);
    drain();
    while (!running_.empty() || !delayed_.empty() || !alone_.empty()) {
      // Kernels alone that are due end first (a round starting at that
      // instant finds their NPUs free), then activities whose latency has
      // passed start; the wait ends at the next completion, the next such
      // start or the next kernel alone's end, whichever comes first.
      if (!alone_.empty() && alone_.begin()->first.first <= now_s()) {
        finish_alone(now_s());
        drain();
        continue;
      }
      if (!delayed_.empty() && delayed_.front().at_s <= now_s()) {
        start_due(false);
        continue;
      }
      const double wake_s = next_wake_s();
      if (running_.empty()) {
        s4u::this_actor::sleep_until(t0_s_ + wake_s);
        sample_progress(meta_.size(), now_s());
        woke(wake_s);
        continue;
      }
      const ssize_t i = wake_s == kNever ? s4u::Activity::wait_any(running_)
                                         : s4u::Activity::wait_any_for(running_, wake_s - now_s());
      if (i < 0 || static_cast<std::size_t>(i) >= running_.size()) {
        sample_progress(meta_.size(), now_s());
        woke(wake_s);
        continue;
      }
      const double now = now_s();
      sample_progress(static_cast<std::size_t>(i), now);
      Running done = std::move(meta_[i]);
      std::swap(running_[i], running_.back());
      std::swap(meta_[i], meta_.back());
      running_.pop_back();
      meta_.pop_back();
      for (int npu : done.loads) {
        --npu_load_[static_cast<std::size_t>(npu)];
        if (done.kernel) kernel_on_[static_cast<std::size_t>(npu)] = nullptr;
      }
      // Kernels alone ending at this very instant end before what it starts.
      if (!alone_.empty() && alone_.begin()->first.first <= now) finish_alone(now);
      if (done.rank >= 0) {
        for (int r : done.group) finish_compute(done.task, r, done.start_s, now);
      } else
        step_done(done.task, done.step);
      drain();
      // A round that ended may leave kernels alone on its NPUs (unless
      // what just started shares them).
      if (done.rank < 0)
        for (int npu : done.loads) unshare_kernel(npu);
      if (options_.on_progress && ++ended_ % kProgressEvery == 0)
        options_.on_progress(now, static_cast<double>(finished_ - not_run_) /
                                      (graph_.tasks.size() * static_cast<double>(ranks_) - not_run_));
    }
    if (finished_ != graph_.tasks.size() * static_cast<std::size_t>(ranks_))
      throw InternalError(fmt::format("replay stalled with {} of {} (task, rank) pairs unfinished",
                                           graph_.tasks.size() * ranks_ - finished_, graph_.tasks.size() * ranks_));
    timeline_.step_s = now_s();
  }

  Timeline take() { return std::move(timeline_); }

 private:
  // A compute part's whole work as a SimGrid activity, and how long it
  // takes alone: the fair-bottleneck solver gives an activity alone on its
  // resources the largest rate they allow, min over them of capacity /
  // amount, and a fused group one rate, the smallest of its parts'.
  struct KernelWork {
    std::vector<s4u::Host*> hosts;
    std::vector<double> flops;  // at host-speed scale, per host
    double hbm_bytes = 0;       // per host
    double duration_s = 0;      // alone; 0: not known (the solver times it)
  };

  struct Running {
    TaskId task = 0;
    int rank = -1;  // -1: a collective round
    double start_s = 0;
    std::vector<std::pair<int, double>> link_bytes;  // (link, bytes) to record as link spans
    std::vector<int> group;                          // compute: the ranks running it
    std::size_t step = 0;                            // collective: the plan step of the round
    s4u::ExecPtr exec;                               // set when it starts, if link spans are recorded
    LinkProgress progress;
    bool stand_ins = false;  // a dispatch/combine round carrying solver stand-ins (solver_transfers)
    double left_scale = 1;   // share of the round's work `exec` started with (less once replaced)
    std::vector<int> loads;  // the NPUs whose compute or HBM it uses while it runs (none: a timer)
    // A compute part: its whole work (ReplayOptions::alone_kernels).
    std::shared_ptr<const KernelWork> kernel;
  };
  static constexpr double kNever = std::numeric_limits<double>::infinity();

  // An activity waiting for its latency to pass (see PendingExec).
  struct Delayed {
    double at_s = 0;
    std::size_t seq = 0;  // ties start in launch order
    s4u::ExecPtr exec;
    Running run;
  };
  static bool later(const Delayed& a, const Delayed& b) { return std::tie(a.at_s, a.seq) > std::tie(b.at_s, b.seq); }

  // A collective runs the steps of its plan (plan_steps()); per step,
  // whether it started and the activities still running.
  struct CollectiveRun {
    CollectivePlan plan;
    std::optional<RoundCosts> costs;  // of `plan`, each phase priced once
    std::vector<PlanStep> steps;
    std::vector<std::optional<RoundLinkBytes>> link_loads;  // per phase, once it has started
    std::vector<bool> started;
    std::vector<int> outstanding;
    // Dispatch/combine, aggregated: per phase, the links of the plan's
    // other phases (they run side by side), and what its parallel tasks
    // carry when nothing else loads its links (solver_transfers, computed
    // once); empty otherwise.
    std::vector<std::vector<bool>> own_phases;    // per phase: the links it loads
    std::vector<std::vector<bool>> other_phases;
    std::vector<std::optional<std::vector<Transfer>>> alone;
    std::size_t done = 0;
    double first_ready_s = 0;
    double start_s = 0;
  };

  double now_s() const { return s4u::Engine::get_clock() - t0_s_; }

  std::size_t slot(TaskId t, int r) const { return static_cast<std::size_t>(t) * ranks_ + r; }
  std::vector<TaskId>& order(int r, Stream s) { return order_[static_cast<std::size_t>(r) * kStreams + static_cast<int>(s)]; }
  std::size_t stream_slot(int r, Stream s) const { return static_cast<std::size_t>(r) * kStreams + static_cast<int>(s); }

  Stream stream_of(const Task& t) const {
    if (options_.schedule == Schedule::kSerial || !t.is_collective()) return Stream::kCompute;
    return t.kind == TaskKind::kGradAllReduce ? Stream::kDpComm : Stream::kEpComm;
  }

  // Pipeline transfers hold no stream: one starts when its sender is done,
  // whatever else the ranks' streams run (their order on a rank need not
  // follow task ids, and an in-order stream could deadlock on it).
  static bool streamless(const Task& t) { return t.kind == TaskKind::kPipelineP2p; }

  // Whether rank r's part of dependency d holds up r's dependents: a
  // collective's end does for every rank; a compute part only when r runs it.
  bool counts_for(const Task& d, int r) const { return d.is_collective() || graph_.runs(d, r); }

  // Whether rank r has something to do for t: run its compute part or join the collective.
  bool active(const Task& t, int r) const {
    if (!t.is_collective()) return graph_.runs(t, r);
    const auto it = streamless_members_.find(t.id);
    return it == streamless_members_.end() || it->second[r];
  }

  void check_graph() const {
    auto fail = [](const Task& t, const std::string& problem) {
      throw InternalError(fmt::format("task graph: task {} {}", t.id, problem));
    };
    if (static_cast<int>(placement_.npu_of_rank.size()) != ranks_)
      throw InternalError(fmt::format("task graph has {} ranks, placement {}", ranks_, placement_.npu_of_rank.size()));
    for (std::size_t i = 0; i < graph_.tasks.size(); ++i) {
      const Task& t = graph_.tasks[i];
      if (t.id != static_cast<TaskId>(i)) fail(t, fmt::format("has id {} at position {}", t.id, i));
      for (TaskId d : t.deps)
        if (d < 0 || d >= t.id) fail(t, fmt::format("depends on {}, which is not an earlier task", d));
      if (!t.is_collective() && (t.flops.size() != static_cast<std::size_t>(ranks_) ||
                                 t.hbm_bytes.size() != static_cast<std::size_t>(ranks_)))
        fail(t, fmt::format("needs flops and hbm_bytes for each of {} ranks", ranks_));
      if (t.uses_traffic() && (t.traffic < 0 || t.traffic >= static_cast<int>(graph_.traffic.size())))
        fail(t, fmt::format("traffic index {} outside [0, {})", t.traffic, graph_.traffic.size()));
      if (t.uses_traffic() && !t.groups.empty() &&
          static_cast<int>(t.groups[0].size()) != graph_.traffic[static_cast<std::size_t>(t.traffic)].ranks)
        fail(t, fmt::format("maps {} ranks onto a traffic matrix of {}", t.groups[0].size(),
                            graph_.traffic[static_cast<std::size_t>(t.traffic)].ranks));
      // Only gradient collectives span EP groups, and so name phantom ranks.
      const int named = t.kind == TaskKind::kGradAllReduce ? placement_.ranks_and_phantoms() : ranks_;
      for (const auto& g : t.groups)
        for (int r : g)
          if (r < 0 || r >= named) fail(t, fmt::format("names rank {} outside [0, {})", r, named));
      if (!t.is_collective() && t.stage >= 0 && (graph_.stage_ranks < 1 || t.stage >= graph_.stages))
        fail(t, fmt::format("runs on stage {} of {} (stage_ranks {})", t.stage, graph_.stages, graph_.stage_ranks));
    }
  }

  // Lets before_task_ fill in task t before its amounts are first read.
  void open(TaskId t) {
    if (!before_task_ || opened_[static_cast<std::size_t>(t)]) return;
    opened_[static_cast<std::size_t>(t)] = 1;
    before_task_(t);
  }

  void became_ready(TaskId t, int r) {
    const Task& task = graph_.tasks[t];
    if (!task.is_collective() && options_.schedule == Schedule::kOverlap) compute_ready_[r].push(t);
    if (streamless(task) && active(task, r)) enter_collective(t, r);
    touch(r);
  }

  void touch(int r) {
    if (!in_worklist_[r]) {
      in_worklist_[r] = true;
      worklist_.push_back(r);
    }
  }

  // Starts everything startable at this instant. Compute starts are
  // collected first so that identical kernels of several ranks can fuse.
  void drain() {
    while (!worklist_.empty() || !starting_.empty()) {
      while (!worklist_.empty()) {
        int r = worklist_.back();
        worklist_.pop_back();
        in_worklist_[r] = false;
        try_start(r);
      }
      launch_compute();
    }
  }

  // Starts what rank r's free streams can start now.
  void try_start(int r) {
    if (options_.schedule == Schedule::kOverlap) {
      const std::size_t cs = stream_slot(r, Stream::kCompute);
      if (!busy_[cs] && !compute_ready_[r].empty()) {
        TaskId t = compute_ready_[r].top();
        compute_ready_[r].pop();
        busy_[cs] = true;
        start_compute(t, r);
      }
    }
    for (Stream s : {Stream::kCompute, Stream::kEpComm, Stream::kDpComm}) {
      const std::size_t ss = stream_slot(r, s);
      const std::vector<TaskId>& list = order_[ss];
      if (busy_[ss] || next_[ss] >= list.size()) continue;
      TaskId t = list[next_[ss]];
      if (pending_[slot(t, r)] != 0) continue;
      ++next_[ss];
      busy_[ss] = true;
      if (graph_.tasks[t].is_collective())
        enter_collective(t, r);
      else
        start_compute(t, r);
    }
  }

  // Queues rank r's part of compute task t (or finishes it when it has no work).
  void start_compute(TaskId t, int r) {
    open(t);
    const Task& task = graph_.tasks[t];
    if (!(task.flops[r] > 0) && !(task.hbm_bytes[r] > 0)) {
      const double now = now_s();
      finish_compute(t, r, now, now);
      return;
    }
    starting_.emplace_back(t, r);
  }

  // Launches the queued compute parts: one roofline execution per rank, or
  // with fusion one parallel task per group of ranks running the same task
  // with identical amounts (they share one rate: see docs/simulator.md).
  void launch_compute() {
    std::sort(starting_.begin(), starting_.end(), [this](const auto& a, const auto& b) {
      const Task& ta = graph_.tasks[a.first];
      const Task& tb = graph_.tasks[b.first];
      return std::make_tuple(a.first, ta.flops[a.second], ta.hbm_bytes[a.second], a.second) <
             std::make_tuple(b.first, tb.flops[b.second], tb.hbm_bytes[b.second], b.second);
    });
    const double now = now_s();
    std::size_t i = 0;
    while (i < starting_.size()) {
      const auto [t, r] = starting_[i];
      const Task& task = graph_.tasks[t];
      std::size_t j = i + 1;
      if (*options_.fuse_identical_compute) {
        while (j < starting_.size() && starting_[j].first == t && task.flops[starting_[j].second] == task.flops[r] &&
               task.hbm_bytes[starting_[j].second] == task.hbm_bytes[r])
          ++j;
      }
      Running run{t, r, now, {}, {}, 0, {}, {}, false, 1, {}, {}};
      std::vector<s4u::Host*> hosts;
      std::vector<double> flops;
      for (std::size_t k = i; k < j; ++k) {
        const int rank = starting_[k].second;
        const int npu = placement_.npu_of_rank[rank];
        const NpuFacts& facts = platform_.npus[npu];
        run.group.push_back(rank);
        hosts.push_back(hosts_[npu]);
        const workloads::Dtype dtype = effective_dtype(facts, task.dtype, options_.compute_fallback);
        flops.push_back(task.flops[rank] * facts.flops_bf16_per_s / peak_flops_per_s(facts, dtype));
        const double bytes = task.hbm_bytes[rank];
        if (bytes > 0) {
          timeline_.link_bytes[facts.hbm_link] += bytes;
          if (options_.record_link_spans) run.link_bytes.emplace_back(facts.hbm_link, bytes);
        }
      }
      for (int rank : run.group) run.loads.push_back(placement_.npu_of_rank[rank]);
      if (options_.alone_kernels) {
        run.kernel = kernel_work(run.loads, std::move(hosts), std::move(flops), task.hbm_bytes[r]);
        if (run.kernel->duration_s > 0 && quiet(run.loads)) {
          ++timeline_.activities;
          go_alone(std::move(run), 1.0);
        } else {
          const s4u::ExecPtr exec = kernel_exec(*run.kernel, 1.0);
          launch(exec, std::move(run), 0.0);
        }
      } else {
        // HBM loopback routes have no latency (discover_platform checks it).
        launch(kernel_exec(KernelWork{hosts, flops, task.hbm_bytes[r], 0}, 1.0), std::move(run), 0.0);
      }
      i = j;
    }
    starting_.clear();
  }

  // Starts `exec` once `latency_s` has passed.
  void launch(const s4u::ExecPtr& exec, Running run, double latency_s) {
    ++timeline_.activities;
    if (latency_s > 0) {
      delayed_.push_back({now_s() + latency_s, delayed_seq_++, exec, std::move(run)});
      std::push_heap(delayed_.begin(), delayed_.end(), later);
      return;
    }
    begin(exec, run);
    running_.push_back(exec);
    meta_.push_back(std::move(run));
  }

  // `share` of a kernel's work as one SimGrid activity.
  static s4u::ExecPtr kernel_exec(const KernelWork& work, double share) {
    if (work.hosts.size() == 1) return roofline_exec(work.hosts[0], work.flops[0] * share, work.hbm_bytes * share);
    std::vector<double> flops = work.flops;
    for (double& f : flops) f *= share;
    return fused_roofline_exec(work.hosts, flops, work.hbm_bytes * share);
  }

  std::shared_ptr<const KernelWork> kernel_work(const std::vector<int>& npus, std::vector<s4u::Host*> hosts,
                                                std::vector<double> flops, double hbm_bytes) const {
    double rate = kNever;
    for (std::size_t k = 0; k < hosts.size(); ++k) {
      const auto [speed, hbm_Bps] = alone_caps_[static_cast<std::size_t>(npus[k])];
      if (flops[k] > 0) rate = std::min(rate, speed / flops[k]);
      if (hbm_bytes > 0) rate = std::min(rate, hbm_Bps / hbm_bytes);
    }
    // No finite positive rate (an NPU without an HBM link): the solver times it.
    const double duration_s = rate > 0 && rate < kNever ? 1.0 / rate : 0.0;
    return std::make_shared<const KernelWork>(KernelWork{std::move(hosts), std::move(flops), hbm_bytes, duration_s});
  }

  // Whether nothing uses `npus`' compute or HBM: no SimGrid activity, no kernel alone.
  bool quiet(const std::vector<int>& npus) const {
    return std::all_of(npus.begin(), npus.end(), [this](int npu) {
      return npu_load_[static_cast<std::size_t>(npu)] == 0 && !alone_on_[static_cast<std::size_t>(npu)];
    });
  }

  // Starts `exec`; its link bytes are recorded from now on. A kernel alone
  // on one of the NPUs it loads goes on as a SimGrid activity first.
  void begin(const s4u::ExecPtr& exec, Running& run) {
    for (int npu : run.loads) {
      if (alone_on_[static_cast<std::size_t>(npu)]) share_alone(npu);
      ++npu_load_[static_cast<std::size_t>(npu)];
      if (run.kernel) kernel_on_[static_cast<std::size_t>(npu)] = exec.get();
    }
    exec->start();
    if (!options_.record_link_spans) return;
    run.exec = exec;
    if (run.progress.empty()) run.progress = LinkProgress(std::move(run.link_bytes), now_s());
  }

  // Runs the `left` share of a compute part's work alone, outside the solver.
  void go_alone(Running run, double left) {
    const double now = now_s();
    if (options_.record_link_spans && run.progress.empty()) run.progress = LinkProgress(std::move(run.link_bytes), now);
    const std::pair<double, std::size_t> key{now + left * run.kernel->duration_s, alone_seq_++};
    for (int npu : run.loads) alone_on_[static_cast<std::size_t>(npu)] = key;
    alone_.emplace(key, std::move(run));
  }

  // Something starts to share NPU `npu` with the kernel alone on it: the
  // kernel goes on as a SimGrid activity with the work it has left (the
  // kernels alone that were due have ended, so some is left).
  void share_alone(int npu) {
    auto node = alone_.extract(*alone_on_[static_cast<std::size_t>(npu)]);
    Running& run = node.mapped();
    for (int n : run.loads) alone_on_[static_cast<std::size_t>(n)].reset();
    const double now = now_s();
    const double left = (node.key().first - now) / run.kernel->duration_s;
    if (!run.progress.empty()) run.progress.sample(now, left, timeline_.link_spans);
    const s4u::ExecPtr exec = kernel_exec(*run.kernel, left);
    run.left_scale = left;
    begin(exec, run);
    running_.push_back(exec);
    meta_.push_back(std::move(run));
  }

  // NPU `npu`'s SimGrid kernel may be alone again now that what shared it
  // has ended: if nothing else uses its NPUs, it goes on outside the solver
  // with the work it has left.
  void unshare_kernel(int npu) {
    const s4u::Exec* kernel = kernel_on_[static_cast<std::size_t>(npu)];
    if (kernel == nullptr || npu_load_[static_cast<std::size_t>(npu)] != 1) return;
    const auto k = static_cast<std::size_t>(
        std::find_if(running_.begin(), running_.end(), [kernel](const s4u::ActivityPtr& a) { return a.get() == kernel; }) -
        running_.begin());
    if (k == running_.size()) throw InternalError("replay: a kernel on an NPU is not among the running activities");
    const Running& run = meta_[k];
    if (!(run.kernel->duration_s > 0)) return;
    for (int n : run.loads)
      if (npu_load_[static_cast<std::size_t>(n)] != 1) return;
    auto* exec = static_cast<s4u::Exec*>(running_[k].get());
    const double left = meta_[k].left_scale * exec->get_remaining_ratio();
    if (!(left > 0)) return;  // ending now: let SimGrid end it
    exec->cancel();
    std::swap(running_[k], running_.back());
    std::swap(meta_[k], meta_.back());
    running_.pop_back();
    Running moved = std::move(meta_.back());
    meta_.pop_back();
    for (int n : moved.loads) {
      --npu_load_[static_cast<std::size_t>(n)];
      kernel_on_[static_cast<std::size_t>(n)] = nullptr;
    }
    if (!moved.progress.empty()) moved.progress.sample(now_s(), left, timeline_.link_spans);
    moved.exec = nullptr;
    go_alone(std::move(moved), left);
  }

  // Ends the kernels alone due by `due_s` (the earliest first).
  void finish_alone(double due_s) {
    const double now = now_s();
    while (!alone_.empty() && alone_.begin()->first.first <= due_s) {
      auto node = alone_.extract(alone_.begin());
      Running& run = node.mapped();
      for (int n : run.loads) alone_on_[static_cast<std::size_t>(n)].reset();
      if (!run.progress.empty()) run.progress.finish(now, timeline_.link_spans);
      for (int r : run.group) finish_compute(run.task, r, run.start_s, now);
      ++ended_;
    }
  }

  // When the replay next has something to do besides completions: a
  // delayed activity's start or a kernel alone's end; kNever for none.
  double next_wake_s() const {
    double at = delayed_.empty() ? kNever : delayed_.front().at_s;
    if (!alone_.empty()) at = std::min(at, alone_.begin()->first.first);
    return at;
  }

  // The engine woke up for `wake_s` (to the clock's rounding): what was due
  // then happens now, kernels alone ending before activities starting.
  void woke(double wake_s) {
    if (!alone_.empty() && alone_.begin()->first.first <= wake_s) {
      finish_alone(std::max(wake_s, now_s()));
      drain();
    } else {
      start_due(true);
    }
  }

  // Starts the delayed activities that are due (with `first`, at least the
  // earliest: the engine woke up for it, to the clock's rounding).
  void start_due(bool first) {
    const double now = now_s();
    while (!delayed_.empty() && (first || delayed_.front().at_s <= now)) {
      first = false;
      std::pop_heap(delayed_.begin(), delayed_.end(), later);
      Delayed d = std::move(delayed_.back());
      delayed_.pop_back();
      begin(d.exec, d.run);
      running_.push_back(d.exec);
      meta_.push_back(std::move(d.run));
    }
  }

  void finish_compute(TaskId t, int r, double start_s, double end_s) {
    timeline_.intervals.push_back({r, Stream::kCompute, t, start_s, start_s, end_s});
    busy_[stream_slot(r, Stream::kCompute)] = false;
    ++finished_;
    for (TaskId u : dependents_[t]) {
      if (--pending_[slot(u, r)] == 0 && active(graph_.tasks[u], r)) became_ready(u, r);
    }
    touch(r);
  }

  void enter_collective(TaskId t, int r) {
    open(t);
    const double now = now_s();
    entered_s_[t].emplace_back(r, now);
    if (static_cast<int>(entered_s_[t].size()) < members_[t]) return;
    CollectiveRun& run = collectives_[t];
    run.first_ready_s = now;
    for (const auto& e : entered_s_[t]) run.first_ready_s = std::min(run.first_ready_s, e.second);
    run.start_s = now;
    const Task& task = graph_.tasks[t];
    run.plan = plan_collective(task, graph_, placement_, options_.all_reduce, *options_.exact_ring_steps,
                               alltoallv_options(options_));
    if (task.kind == TaskKind::kGradAllReduce && !placement_.phantom_npus.empty()) {
      if (kept_links_.empty()) kept_links_ = kept_links(platform_, placement_, graph_, options_.all_reduce);
      drop_phantom_transfers(run.plan, placement_, platform_, kept_links_);
    }
    run.costs.emplace(run.plan, platform_);
    run.steps = plan_steps(run.plan, *run.costs);
    run.link_loads.resize(run.plan.phases.size());
    if (plan_bounds_ != nullptr) (*plan_bounds_)[static_cast<std::size_t>(t)] = plan_bound_s(run.steps, *run.costs);
    if (options_.solver_stand_ins && is_alltoallv(task) && *options_.fidelity == Fidelity::kAggregated) {
      const std::size_t phases = run.plan.phases.size();
      run.own_phases.assign(phases, std::vector<bool>(platform_.links.size(), false));
      run.other_phases = run.own_phases;
      // Per phase, the links the other phases load: the pipelined stages run side by side.
      for (std::size_t p = 0; p < phases; ++p) {
        const RoundLinkBytes& links = link_load(run, p);
        mark_links(links, run.own_phases[p]);
        for (std::size_t q = 0; q < phases; ++q)
          if (q != p) mark_links(links, run.other_phases[q]);
      }
      run.alone.resize(run.plan.phases.size());
    }
    run.started.assign(run.steps.size(), false);
    run.outstanding.assign(run.steps.size(), 0);
    advance(t);
  }

  // Starts every step of collective t whose predecessors have ended, or finishes it.
  void advance(TaskId t) {
    CollectiveRun& run = collectives_[t];
    if (run.done == run.steps.size()) {
      finish_collective(t);
      return;
    }
    for (std::size_t i = 0; i < run.steps.size(); ++i) {
      if (run.started[i]) continue;
      bool ready = true;
      for (std::size_t j : run.steps[i].after) ready &= run.started[j] && run.outstanding[j] == 0;
      if (ready) start_step(run, t, i);
    }
  }

  void start_step(CollectiveRun& run, TaskId t, std::size_t i) {
    const PlanStep& step = run.steps[i];
    const CollectivePhase& phase = run.plan.phases[step.phase];
    const double now = now_s();
    const RoundLinkBytes& load = link_load(run, step.phase);
    for (std::size_t k = 0; k < load.links.size(); ++k)
      timeline_.link_bytes[static_cast<std::size_t>(load.links[k])] += load.bytes[k] * step.share;
    drop_stand_ins(load, t);
    const std::vector<Transfer>* carried = run.other_phases.empty() ? nullptr : carried_now(run, t, step.phase);
    std::vector<PendingExec> execs = round_execs(phase, platform_, hosts_, step.share, step.latency,
                                                 run.costs->at(step.phase, step.share, true), carried);
    run.started[i] = true;
    run.outstanding[i] = static_cast<int>(execs.size());
    collective_activities_ += static_cast<int>(execs.size());
    for (std::size_t k = 0; k < execs.size(); ++k) {
      Running r{t, -1, now, {}, {}, i, {}, {}, false, 1, std::move(execs[k].npus), {}};
      r.stand_ins = !execs[k].timer && carried != nullptr && !phase.per_transfer &&
                    !same_transfers(*carried, phase.transfers);
      if (options_.record_link_spans && !execs[k].timer) {
        // Each activity's own bytes: one transfer's route, or the whole round for one parallel task.
        if (phase.per_transfer) {
          const Transfer& tr = phase.transfers[k];
          const double scale = step.share * (phase.per_step ? 1.0 : static_cast<double>(phase.steps));
          auto [first, last] = platform_.routes.links(tr.src_npu, tr.dst_npu);
          for (const int* l = first; l != last; ++l) r.link_bytes.emplace_back(*l, tr.bytes * scale);
        } else {
          for (std::size_t m = 0; m < load.links.size(); ++m)
            if (load.bytes[m] > 0) r.link_bytes.emplace_back(load.links[m], load.bytes[m] * step.share);
        }
      }
      launch(execs[k].exec, std::move(r), step.delay_s + execs[k].latency_s);
    }
  }

  // The links phase p of `run` crosses and their bytes, found once.
  const RoundLinkBytes& link_load(CollectiveRun& run, std::size_t p) const {
    std::optional<RoundLinkBytes>& load = run.link_loads[p];
    if (!load) load = round_link_bytes(run.plan.phases[p], platform_);
    return *load;
  }

  // Marks every link a phase crosses.
  static void mark_links(const RoundLinkBytes& load, std::vector<bool>& marks) {
    for (int l : load.links) marks[static_cast<std::size_t>(l)] = true;
  }

  static bool is_alltoallv(const Task& t) { return t.kind == TaskKind::kDispatch || t.kind == TaskKind::kCombine; }

  static bool same_transfers(const std::vector<Transfer>& a, const std::vector<Transfer>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const Transfer& x, const Transfer& y) {
      return x.src_npu == y.src_npu && x.dst_npu == y.dst_npu && x.bytes == y.bytes;
    });
  }

  // The phase of the collective round `run` runs.
  const CollectivePhase& phase_of(const Running& run) const {
    const CollectiveRun& c = collectives_.at(run.task);
    return c.plan.phases[c.steps[run.step].phase];
  }

  // What a round of dispatch/combine `t`'s phase p carries now: its
  // stand-ins against the links of its other phases and of every other
  // collective's rounds launched and not ended (gradient and TP
  // collectives; other stages' dispatches, combines and pipeline
  // transfers). A round launched later drops the stand-ins of this one
  // (drop_stand_ins), so they stay exact. Marking costs a pass over the
  // rounds running, less than the solver saves even with pipeline stages
  // (whose rounds run beside others' most of the time): on 2,048 H800 with
  // 16 stages, x0.87 CPU for the whole run (docs/performance.md).
  const std::vector<Transfer>* carried_now(CollectiveRun& run, TaskId t, std::size_t p) {
    int own = 0;
    for (int n : run.outstanding) own += n;
    if (collective_activities_ == own) {
      if (!run.alone[p]) run.alone[p] = solver_transfers(run.plan.phases[p], platform_, run.other_phases[p]);
      return &*run.alone[p];
    }
    contended_scratch_ = run.other_phases[p];
    auto mark = [&](const Running& other) {
      if (other.rank < 0 && other.task != t) {
        CollectiveRun& c = collectives_.at(other.task);
        mark_links(link_load(c, c.steps[other.step].phase), contended_scratch_);
      }
    };
    for (const Running& other : meta_) mark(other);
    for (const Delayed& d : delayed_) mark(d.run);
    carried_scratch_ = solver_transfers(run.plan.phases[p], platform_, contended_scratch_);
    return &carried_scratch_;
  }

  // A round of collective t's `phase` is about to start: every other
  // collective's round carrying stand-ins over links it loads goes on with
  // its own transfers instead, from where it is. One parallel task
  // progresses at one rate, so its remaining work is the same share of
  // every transfer: the replacement carries that share and pays no latency.
  void drop_stand_ins(const RoundLinkBytes& phase_links, TaskId t) {
    auto crosses = [&](const Running& run) {
      if (!run.stand_ins || run.task == t) return false;
      const CollectiveRun& c = collectives_.at(run.task);
      const std::vector<bool>& spared = c.own_phases[c.steps[run.step].phase];
      // Stand-ins keep every HBM's load: only the links between HBMs count.
      return std::any_of(phase_links.links.begin(), phase_links.links.end(), [&](int l) {
        return spared[static_cast<std::size_t>(l)] && !is_hbm_link_[static_cast<std::size_t>(l)];
      });
    };
    auto full = [&](const Running& run, double share) {
      const CollectiveRun& c = collectives_.at(run.task);
      const PlanStep& step = c.steps[run.step];
      const double left = step.share * share;
      return round_transfer_execs(phase_of(run), platform_, hosts_, left, false, c.costs->at(step.phase, left, true))
          .front()
          .exec;
    };
    for (Delayed& d : delayed_) {
      if (!crosses(d.run)) continue;
      d.exec = full(d.run, 1.0);
      d.run.stand_ins = false;
      ++timeline_.activities;
    }
    for (std::size_t k = 0; k < meta_.size(); ++k) {
      Running& run = meta_[k];
      if (!crosses(run)) continue;
      auto* exec = static_cast<s4u::Exec*>(running_[k].get());
      const double left = exec->get_remaining_ratio();
      exec->cancel();
      s4u::ExecPtr replacement = full(run, left);
      replacement->start();
      ++timeline_.activities;
      running_[k] = replacement;
      if (run.exec) run.exec = replacement;
      run.left_scale *= left;
      run.stand_ins = false;
    }
  }

  void step_done(TaskId t, std::size_t step) {
    CollectiveRun& run = collectives_[t];
    --collective_activities_;
    if (--run.outstanding[step] > 0) return;
    ++run.done;
    advance(t);
  }

  void finish_collective(TaskId t) {
    const double now = now_s();
    const CollectiveRun& run = collectives_[t];
    const Task& task = graph_.tasks[t];
    timeline_.collectives.push_back({t, run.first_ready_s, run.start_s, now});
    const Stream s = stream_of(task);
    for (const auto& [r, ready_s] : entered_s_[t]) {
      timeline_.intervals.push_back({r, s, t, ready_s, run.start_s, now});
      if (!streamless(task)) busy_[stream_slot(r, s)] = false;
    }
    for (int r = 0; r < ranks_; ++r) {
      ++finished_;
      touch(r);
      for (TaskId u : dependents_[t])
        if (--pending_[slot(u, r)] == 0 && active(graph_.tasks[u], r)) became_ready(u, r);
    }
    entered_s_[t].clear();
    entered_s_[t].shrink_to_fit();
    collectives_.erase(t);
  }

  // Samples every running activity's progress at `now`; `done` (an index
  // of running_, or running_.size() for none) has just ended.
  void sample_progress(std::size_t done, double now) {
    if (!options_.record_link_spans) return;
    for (std::size_t k = 0; k < meta_.size(); ++k) {
      Running& run = meta_[k];
      if (run.progress.empty()) continue;
      if (k == done)
        run.progress.finish(now, timeline_.link_spans);
      else
        run.progress.sample(now, run.left_scale * run.exec->get_remaining_ratio(), timeline_.link_spans);
    }
  }

  const PlatformFacts& platform_;
  const std::vector<s4u::Host*>& hosts_;
  const Placement& placement_;
  const TaskGraph& graph_;
  const ReplayOptions options_;
  const int ranks_;

  std::vector<int> pending_;                   // [task * ranks + rank]: unfinished dependencies
  std::vector<std::vector<TaskId>> dependents_;
  std::vector<std::vector<TaskId>> order_;     // [rank * kStreams + stream]: in-order task lists
  std::vector<std::size_t> next_;
  std::vector<bool> busy_;
  std::vector<std::priority_queue<TaskId, std::vector<TaskId>, std::greater<TaskId>>> compute_ready_;
  std::map<TaskId, int> members_;              // collective -> participating ranks
  std::map<TaskId, std::vector<bool>> streamless_members_;  // pipeline transfers -> who takes part
  std::vector<std::vector<std::pair<int, double>>> entered_s_;  // collective -> (rank, time entered)
  std::map<TaskId, CollectiveRun> collectives_;
  int collective_activities_ = 0;           // collective rounds' activities launched and not ended
  std::vector<bool> contended_scratch_;     // carried_now's working memory
  std::vector<char> is_hbm_link_;           // per link: an NPU's HBM
  std::vector<char> kept_links_;            // folded graphs: links the kept ranks can load (replica_links.hpp)
  std::vector<Transfer> carried_scratch_;   // what carried_now returns beside other collectives
  std::vector<int> worklist_;
  std::vector<std::pair<TaskId, int>> starting_;  // compute parts to launch at this instant
  std::vector<bool> in_worklist_;
  std::vector<s4u::ActivityPtr> running_;
  std::vector<Running> meta_;
  std::vector<Delayed> delayed_;  // a heap by (at_s, seq)
  std::map<std::pair<double, std::size_t>, Running> alone_;  // kernels alone by (end, seq)
  std::size_t alone_seq_ = 0;
  std::vector<std::optional<std::pair<double, std::size_t>>> alone_on_;  // per NPU: the kernel alone on it
  std::vector<int> npu_load_;  // per NPU: SimGrid activities running that use its compute or HBM
  std::vector<const s4u::Exec*> kernel_on_;  // per NPU: the SimGrid kernel running on it, if any
  std::vector<std::pair<double, double>> alone_caps_;  // per NPU: host speed (FLOP/s), HBM bandwidth (B/s)
  std::size_t delayed_seq_ = 0;
  double t0_s_ = 0;               // engine clock when the replay began
  std::size_t finished_ = 0;
  std::size_t not_run_ = 0;  // (task, rank) parts a rank does not run, finished from the start
  std::size_t ended_ = 0;    // activities ended, for on_progress
  static constexpr std::size_t kProgressEvery = 4096;
  std::vector<double>* plan_bounds_;  // optional: per task, its plan's bound
  const TaskGate& before_task_;
  std::vector<char> opened_;  // per task: before_task_ called (with before_task_ only)
  Timeline timeline_;
};

}  // namespace

namespace {

// Sets every link's SimGrid latency to 0 for its lifetime (the replay pays
// route latencies itself, from PlatformFacts), then restores them.
class ZeroLinkLatencies {
 public:
  explicit ZeroLinkLatencies(const s4u::Engine& engine) {
    for (s4u::Link* l : engine.get_all_links()) {
      if (l->get_latency() == 0) continue;
      saved_.emplace_back(l, l->get_latency());
      l->set_latency(0);
    }
  }
  ~ZeroLinkLatencies() {
    for (const auto& [link, latency_s] : saved_) link->set_latency(latency_s);
  }
  ZeroLinkLatencies(const ZeroLinkLatencies&) = delete;
  ZeroLinkLatencies& operator=(const ZeroLinkLatencies&) = delete;

 private:
  std::vector<std::pair<s4u::Link*, double>> saved_;
};

}  // namespace

Timeline replay(SimEngine& engine, const LoadedPlatform& platform, const Placement& placement,
                const TaskGraph& graph, const ReplayOptions& options, std::vector<double>* plan_bounds,
                const TaskGate& before_task) {
  const ReplayOptions resolved = resolve(options, platform.facts, placement);
  Driver driver(platform, placement, graph, resolved, plan_bounds, before_task);
  const ZeroLinkLatencies zero_latencies(engine.engine());
  std::exception_ptr failure;
  s4u::Actor::create("epsim-replay", platform.hosts.front(), [&driver, &failure] {
    try {
      driver.run();
    } catch (...) {
      failure = std::current_exception();
    }
  });
  try {
    engine.engine().run();
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("SimGrid failed during the replay: ") + e.what());
  }
  if (failure) std::rethrow_exception(failure);
  Timeline timeline = driver.take();
  canonicalize(timeline);
  return timeline;
}

}  // namespace epsim::sim
