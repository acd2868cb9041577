// The routing stream and the graph filled from it as the replay asks: the
// same sample and the same graph as drawing everything first, whatever the
// order jobs are asked for and the number of threads drawing them.
#include <numeric>

#include <catch2/catch.hpp>

#include "workloads/routing_stream.hpp"
#include "workloads/task_graph_builder.hpp"
#include "workloads/workload_loader.hpp"
#include "workload_text.hpp"

using namespace epsim::workloads;

namespace {

void check_same_layer(const LayerRouting& a, const LayerRouting& b) {
  CHECK(a.layer == b.layer);
  CHECK(a.micro_batch == b.micro_batch);
  CHECK(a.traffic.tokens == b.traffic.tokens);
  CHECK(a.traffic.node_tokens == b.traffic.node_tokens);
  CHECK(a.expert_tokens == b.expert_tokens);
  CHECK(a.max_nodes_per_token == b.max_nodes_per_token);
}

// Node-limited (by pattern and by skewed draws), with and without stages.
std::vector<WorkloadSpec> shapes() {
  testing::Knobs limited;
  limited.ep = 32;
  limited.ranks_per_node = 4;
  limited.experts = 64;
  limited.top_k = 6;
  limited.node_limit = 3;
  limited.micro_batches = 3;
  limited.tokens = 256;
  testing::Knobs zipf = limited;
  zipf.routing = "kind = \"zipf\"\nzipf_s = 1.0";
  return {testing::workload(limited), testing::workload(zipf),
          load_workload("tiny-moe", {"parallel.pp=2", "parallel.micro_batches=4"})};
}

}  // namespace

TEST_CASE("a routing stream's jobs, taken in any order on any threads, are sample_routing's", "[routing][stream]") {
  for (const WorkloadSpec& w : shapes()) {
    const RoutingSample all = sample_routing(w, 1);
    REQUIRE(all.layers.size() > 2);
    for (int threads : {1, 2, 4}) {
      RoutingStream stream(w, threads);
      REQUIRE(stream.jobs() == static_cast<int>(all.layers.size()));
      // Last first: the caller draws what it needs while workers go in order.
      for (int job = stream.jobs() - 1; job >= 0; --job)
        check_same_layer(stream.take(job), all.layers[static_cast<std::size_t>(job)]);
    }
    const RoutingSample again = RoutingStream(w, 3).take();
    for (std::size_t i = 0; i < all.layers.size(); ++i) check_same_layer(again.layers[i], all.layers[i]);
  }
}

TEST_CASE("a stream's placeholder has every layer's shape and no counts", "[routing][stream]") {
  const WorkloadSpec w = shapes().front();
  RoutingStream stream(w, 2);
  const RoutingSample& shape = stream.placeholder();
  const RoutingSample all = stream.take();
  CHECK(shape.ranks == all.ranks);
  CHECK(shape.micro_batches == all.micro_batches);
  CHECK(shape.experts_per_rank == all.experts_per_rank);
  REQUIRE(shape.layers.size() == all.layers.size());
  for (std::size_t i = 0; i < shape.layers.size(); ++i) {
    CHECK(shape.layers[i].layer == all.layers[i].layer);
    CHECK(shape.layers[i].traffic.ranks == all.layers[i].traffic.ranks);
    CHECK(shape.layers[i].traffic.tokens_per_rank == all.layers[i].traffic.tokens_per_rank);
    CHECK(shape.layers[i].traffic.tokens.empty());
    CHECK(shape.layers[i].expert_tokens.empty());
  }
}

TEST_CASE("a graph built from the placeholder and filled job by job is the graph of the whole sample",
          "[task_graph][stream]") {
  for (const WorkloadSpec& w : shapes()) {
    const TaskGraph whole = build_task_graph(w, sample_routing(w, 2));
    RoutingStream stream(w, 2);
    TaskGraph filled = build_task_graph(w, stream.placeholder());
    REQUIRE(filled.tasks.size() == whole.tasks.size());
    int routed = 0;
    for (const Task& t : filled.tasks) {
      if (t.kind == TaskKind::kExpertGemm) {
        CHECK(std::accumulate(t.flops.begin(), t.flops.end(), 0.0) == 0.0);  // nothing drawn yet
        CHECK(t.routing >= 0);
      }
      if (t.kind == TaskKind::kDispatch || t.kind == TaskKind::kCombine) CHECK(t.routing == t.traffic);
      routed += t.routing >= 0 ? 1 : 0;
    }
    CHECK(routed > 0);
    for (int job = stream.jobs() - 1; job >= 0; --job) fill_routing(filled, w, job, stream.take(job));
    for (std::size_t i = 0; i < whole.tasks.size(); ++i) {
      const Task& a = filled.tasks[i];
      const Task& b = whole.tasks[i];
      CHECK(a.routing == b.routing);
      CHECK(a.flops == b.flops);
      CHECK(a.hbm_bytes == b.hbm_bytes);
      CHECK(a.ops.size() == b.ops.size());
    }
    REQUIRE(filled.traffic.size() == whole.traffic.size());
    for (std::size_t i = 0; i < whole.traffic.size(); ++i) {
      CHECK(filled.traffic[i].tokens == whole.traffic[i].tokens);
      CHECK(filled.traffic[i].node_tokens == whole.traffic[i].node_tokens);
    }
  }
}

TEST_CASE("a stream of more micro-batches takes the layers an earlier stream kept, and gives the same sample",
          "[routing][stream]") {
  for (WorkloadSpec w : shapes()) {
    WorkloadSpec longer = w;
    longer.parallel.micro_batches = w.parallel.micro_batches + 2;
    const RoutingSample fresh = sample_routing(longer, 2);
    KeptRouting kept;
    {
      RoutingStream first(w, 2, nullptr, &kept);
      for (int job = 0; job < first.jobs(); ++job) first.take(job);
    }
    const std::size_t kept_bytes = kept.bytes();
    CHECK(kept_bytes > 0);
    RoutingStream second(longer, 2, &kept, &kept);
    REQUIRE(second.jobs() == static_cast<int>(fresh.layers.size()));
    for (int job = 0; job < second.jobs(); ++job)
      check_same_layer(second.take(job), fresh.layers[static_cast<std::size_t>(job)]);
    // The longer stream's own layers are kept too: every layer's counts are the same size.
    CHECK(kept.bytes() * static_cast<std::size_t>(w.parallel.micro_batches) ==
          kept_bytes * static_cast<std::size_t>(longer.parallel.micro_batches));
  }
}

TEST_CASE("a kept layer of another shape is drawn again", "[routing][stream]") {
  const WorkloadSpec w = shapes().front();
  WorkloadSpec fewer_tokens = w;
  fewer_tokens.parallel.tokens_per_micro_batch /= 2;
  KeptRouting kept;
  RoutingStream(fewer_tokens, 1, nullptr, &kept).take();
  const RoutingSample fresh = sample_routing(w, 1);
  const RoutingSample again = RoutingStream(w, 1, &kept).take();
  for (std::size_t i = 0; i < fresh.layers.size(); ++i) check_same_layer(again.layers[i], fresh.layers[i]);
}

TEST_CASE("a kept layer is taken, not drawn again", "[routing][stream]") {
  const WorkloadSpec w = shapes().front();
  RoutingSample marked = sample_routing(w, 1);
  LayerRouting& second_layer = marked.layers[1];
  second_layer.expert_tokens[0] += 1000;  // no draw gives this
  KeptRouting kept;
  kept.keep(second_layer);
  RoutingStream stream(w, 2, &kept);
  CHECK(stream.take(1).expert_tokens[0] == second_layer.expert_tokens[0]);
  check_same_layer(stream.take(0), marked.layers[0]);
}
