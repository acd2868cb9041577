// JSON serialisation of the task graph.
#include "workloads/task_graph_json.hpp"

#include <nlohmann/json.hpp>

namespace epsim::workloads {

void write_task_graph_json(std::ostream& out, const TaskGraph& graph) {
  using nlohmann::json;
  json tasks = json::array();
  for (const Task& t : graph.tasks) {
    json j = {{"id", t.id},           {"kind", to_string(t.kind)}, {"phase", to_string(t.phase)},
              {"layer", t.layer},     {"micro_batch", t.micro_batch}, {"deps", t.deps}};
    if (t.is_collective()) {
      if (t.kind == TaskKind::kGradAllReduce || t.kind == TaskKind::kTpAllReduce) {
        j["groups"] = t.groups;
        j["bytes"] = t.bytes;
        if (t.kind == TaskKind::kGradAllReduce) j["op"] = to_string(t.group_op);
      } else {
        j["traffic"] = t.traffic;
        j["transpose"] = t.transpose;
        j["bytes_per_token"] = t.bytes_per_token;
        if (!t.groups.empty()) j["ranks"] = t.groups[0];  // the traffic's ranks (a stage, or two for p2p)
      }
    } else {
      if (t.stage >= 0) j["stage"] = t.stage;
      j["dtype"] = to_string(t.dtype);
      j["flops"] = t.flops;
      j["hbm_bytes"] = t.hbm_bytes;
      // Its operators as a stack prices them (docs/operators.md): what
      // tools/profiling/profile_ops.py measures for a stack's tables.
      json ops = json::array();
      for (const Operator& o : t.ops) {
        json op = {{"op", to_string(o.op_class)}, {"dtype", to_string(o.dtype)}, {"kernels", o.kernels}};
        if (o.op_class == OpClass::kGemm || o.op_class == OpClass::kGroupedGemm) {
          op["m"] = o.m, op["n"] = o.n, op["k"] = o.k;
          if (o.op_class == OpClass::kGroupedGemm) op["groups"] = o.groups;
        } else if (o.op_class == OpClass::kAttention || o.op_class == OpClass::kAttentionBackward) {
          op["head_dim"] = o.head_dim, op["context"] = o.context, op["flops"] = o.flops;
        } else {
          op["bytes"] = o.bytes;
          op["backward"] = o.backward;
        }
        ops.push_back(std::move(op));
      }
      j["ops"] = std::move(ops);
    }
    tasks.push_back(std::move(j));
  }
  json traffic = json::array();
  for (const TrafficMatrix& m : graph.traffic) {
    traffic.push_back({{"ranks", m.ranks},
                       {"ranks_per_node", m.ranks_per_node},
                       {"tokens", m.tokens},
                       {"node_tokens", m.node_tokens}});
  }
  json root = {{"ranks", graph.ranks}, {"ranks_per_node", graph.ranks_per_node}, {"tasks", tasks}, {"traffic", traffic}};
  if (graph.stages > 1) {
    root["stages"] = graph.stages;
    root["stage_ranks"] = graph.stage_ranks;
  }
  out << root.dump() << "\n";
}

}  // namespace epsim::workloads
