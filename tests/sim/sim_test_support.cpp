// Child-process runner and hand-built task graphs for simulator tests.
#include "sim_test_support.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <exception>
#include <stdexcept>

#include <catch2/catch.hpp>
#include <fmt/format.h>

namespace epsim::sim::testing {

using workloads::Task;
using workloads::TaskGraph;
using workloads::TaskKind;
using workloads::TrafficMatrix;

std::string platform_path(const std::string& name) {
  return std::string(EPSIM_SOURCE_DIR) + "/tests/sim/platforms/" + name + ".xml";
}

std::string in_child(const std::function<std::string()>& body) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    std::string out;
    int code = 0;
    try {
      out = body();
    } catch (const std::exception& e) {
      out = std::string("ERROR: ") + e.what();
    }
    const char* p = out.data();
    std::size_t left = out.size();
    while (left > 0) {
      ssize_t n = write(fds[1], p, left);
      if (n <= 0) {
        code = 4;
        break;
      }
      p += n;
      left -= static_cast<std::size_t>(n);
    }
    close(fds[1]);
    _exit(code);
  }
  close(fds[1]);
  std::string out;
  char buf[65536];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  INFO("child output: " << out.substr(0, 2000));
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  return out;
}

namespace {

TrafficMatrix traffic(int ranks, int rpn, std::vector<std::int32_t> tokens) {
  TrafficMatrix m;
  m.ranks = ranks;
  m.ranks_per_node = rpn;
  m.tokens = std::move(tokens);
  const int nodes = ranks / rpn;
  m.node_tokens.assign(static_cast<std::size_t>(ranks) * nodes, 0);
  for (int s = 0; s < ranks; ++s)
    for (int d = 0; d < ranks; ++d) m.node_tokens[static_cast<std::size_t>(s) * nodes + d / rpn] += m.tokens[static_cast<std::size_t>(s) * ranks + d];
  return m;
}

Task compute(TaskGraph& g, TaskKind kind, int layer, int mb, std::vector<workloads::TaskId> deps, std::vector<double> flops,
             std::vector<double> bytes) {
  Task t;
  t.id = static_cast<workloads::TaskId>(g.tasks.size());
  t.kind = kind;
  t.layer = layer;
  t.micro_batch = mb;
  t.deps = std::move(deps);
  t.flops = std::move(flops);
  t.hbm_bytes = std::move(bytes);
  return t;
}

}  // namespace

TaskGraph moe_graph(const MoeShape& s) {
  TaskGraph g;
  g.ranks = s.ranks;
  g.ranks_per_node = s.ranks_per_node;
  std::vector<double> w = s.weights;
  if (w.empty()) w.assign(s.ranks, 1.0 / s.ranks);
  // Tokens each source sends to each destination (the same for every source).
  std::vector<std::int32_t> tokens(static_cast<std::size_t>(s.ranks) * s.ranks);
  std::vector<double> received(s.ranks, 0.0);
  for (int src = 0; src < s.ranks; ++src)
    for (int dst = 0; dst < s.ranks; ++dst) {
      auto n = static_cast<std::int32_t>(std::lround(s.tokens_per_rank * w[dst]));
      tokens[static_cast<std::size_t>(src) * s.ranks + dst] = n;
      received[dst] += n;
    }
  std::vector<double> expert_flops(s.ranks), expert_bytes(s.ranks);
  for (int r = 0; r < s.ranks; ++r) {
    expert_flops[r] = received[r] * s.expert_flops_per_token;
    expert_bytes[r] = s.expert_hbm_bytes + 2 * received[r] * s.bytes_per_token;
  }
  const std::vector<double> attn_f(s.ranks, s.attention_flops), attn_b(s.ranks, s.attention_hbm_bytes);
  const std::vector<double> gate_f(s.ranks, s.attention_flops / 50), gate_b(s.ranks, s.attention_hbm_bytes / 50);
  std::vector<workloads::TaskId> last(s.micro_batches, -1);
  for (int layer = 0; layer < s.layers; ++layer) {
    for (int mb = 0; mb < s.micro_batches; ++mb) {
      std::vector<workloads::TaskId> deps;
      if (last[mb] >= 0) deps.push_back(last[mb]);
      Task attn = compute(g, TaskKind::kAttention, layer, mb, deps, attn_f, attn_b);
      g.tasks.push_back(attn);
      Task gate = compute(g, TaskKind::kGate, layer, mb, {attn.id}, gate_f, gate_b);
      g.tasks.push_back(gate);
      g.traffic.push_back(traffic(s.ranks, s.ranks_per_node, tokens));
      Task dispatch;
      dispatch.id = static_cast<workloads::TaskId>(g.tasks.size());
      dispatch.kind = TaskKind::kDispatch;
      dispatch.layer = layer;
      dispatch.micro_batch = mb;
      dispatch.deps = {gate.id};
      dispatch.traffic = static_cast<int>(g.traffic.size()) - 1;
      dispatch.bytes_per_token = s.bytes_per_token;
      g.tasks.push_back(dispatch);
      Task expert = compute(g, TaskKind::kExpertGemm, layer, mb, {dispatch.id}, expert_flops, expert_bytes);
      g.tasks.push_back(expert);
      Task combine = dispatch;
      combine.id = static_cast<workloads::TaskId>(g.tasks.size());
      combine.kind = TaskKind::kCombine;
      combine.deps = {expert.id};
      combine.transpose = true;
      g.tasks.push_back(combine);
      last[mb] = combine.id;
    }
  }
  if (s.grad_all_reduce) {
    Task ar;
    ar.id = static_cast<workloads::TaskId>(g.tasks.size());
    ar.kind = TaskKind::kGradAllReduce;
    ar.phase = workloads::Phase::kGradSync;
    for (auto t : last) ar.deps.push_back(t);
    ar.groups.emplace_back();
    for (int r = 0; r < s.ranks; ++r) ar.groups.back().push_back(r);
    ar.bytes = 1e9;
    g.tasks.push_back(ar);
  }
  return g;
}

TaskGraph one_compute_task(int ranks, int ranks_per_node, workloads::Dtype dtype, std::vector<double> flops,
                           std::vector<double> hbm_bytes) {
  TaskGraph g;
  g.ranks = ranks;
  g.ranks_per_node = ranks_per_node;
  Task t = compute(g, TaskKind::kExpertGemm, 0, 0, {}, std::move(flops), std::move(hbm_bytes));
  t.dtype = dtype;
  g.tasks.push_back(t);
  return g;
}

TaskGraph one_dispatch(int ranks, int ranks_per_node, std::vector<std::int32_t> tokens, double bytes_per_token) {
  TaskGraph g;
  g.ranks = ranks;
  g.ranks_per_node = ranks_per_node;
  g.traffic.push_back(traffic(ranks, ranks_per_node, std::move(tokens)));
  Task t;
  t.kind = TaskKind::kDispatch;
  t.layer = 0;
  t.micro_batch = 0;
  t.traffic = 0;
  t.bytes_per_token = bytes_per_token;
  g.tasks.push_back(t);
  return g;
}

MoeShape sixteen_ranks(int hot, double hot_share) {
  MoeShape s;
  s.ranks = 16;
  s.ranks_per_node = 4;
  s.layers = 2;
  s.attention_flops = 2e11;
  s.attention_hbm_bytes = 4e8;
  s.expert_flops_per_token = 2e7;
  s.expert_hbm_bytes = 2e8;
  if (hot >= 0) {
    s.weights.assign(16, (1 - hot_share) / 15);
    s.weights[hot] = hot_share;
  }
  return s;
}

PlatformFacts bare_facts(int nodes, int npus_per_node) {
  PlatformFacts p;
  p.nodes = nodes;
  p.npus_per_node = npus_per_node;
  p.npus.resize(static_cast<std::size_t>(nodes) * static_cast<std::size_t>(npus_per_node));
  return p;
}

PlatformFacts hbm_facts(int nodes, int npus_per_node) {
  PlatformFacts p;
  p.nodes = nodes;
  p.npus_per_node = npus_per_node;
  for (int i = 0; i < nodes * npus_per_node; ++i) {
    p.npus.push_back({fmt::format("node{}.npu{}", i / npus_per_node, i % npus_per_node), i / npus_per_node,
                      i % npus_per_node, 1e14, 2e14, 1e14, 1e12, 0, 0, i});
    p.links.push_back({p.npus.back().name + ".hbm", 1e12, 0, true});
  }
  return p;
}

workloads::Task dispatch_task(double bytes_per_token) {
  workloads::Task t;
  t.kind = workloads::TaskKind::kDispatch;
  t.traffic = 0;
  t.bytes_per_token = bytes_per_token;
  return t;
}

}  // namespace epsim::sim::testing
