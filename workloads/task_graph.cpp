// Names of the task graph's enumerations, as they appear in JSON and reports.
#include "workloads/task_graph.hpp"

namespace epsim::workloads {

namespace {

// Both names of every task kind, in one table.
struct KindNames {
  const char* id;
  const char* label;
};

KindNames names_of(TaskKind kind) {
  switch (kind) {
    case TaskKind::kAttention: return {"attention", "attention"};
    case TaskKind::kGate: return {"gate", "gate"};
    case TaskKind::kDenseFfn: return {"dense_ffn", "dense FFN"};
    case TaskKind::kSharedExpert: return {"shared_expert", "shared expert"};
    case TaskKind::kExpertGemm: return {"expert_gemm", "expert GEMM"};
    case TaskKind::kDispatch: return {"dispatch", "dispatch"};
    case TaskKind::kCombine: return {"combine", "combine"};
    case TaskKind::kGradAllReduce: return {"grad_all_reduce", "gradient sync"};
    case TaskKind::kOptimizer: return {"optimizer", "optimizer"};
    case TaskKind::kPipelineP2p: return {"pipeline_p2p", "pipeline p2p"};
    case TaskKind::kTpAllReduce: return {"tp_all_reduce", "TP all-reduce"};
  }
  return {"unknown", "?"};
}

}  // namespace

const char* to_string(TaskKind kind) { return names_of(kind).id; }

const char* task_kind_label(TaskKind kind) { return names_of(kind).label; }

const char* to_string(Phase phase) {
  switch (phase) {
    case Phase::kForward: return "forward";
    case Phase::kRecompute: return "recompute";
    case Phase::kBackward: return "backward";
    case Phase::kGradSync: return "grad_sync";
    case Phase::kOptimizer: return "optimizer";
  }
  return "unknown";
}

const char* to_string(GroupCollective op) {
  switch (op) {
    case GroupCollective::kAllReduce: return "allreduce";
    case GroupCollective::kReduceScatter: return "reducescatter";
    case GroupCollective::kAllGather: return "allgather";
  }
  return "unknown";
}

const char* to_string(Dtype dtype) {
  switch (dtype) {
    case Dtype::kBf16: return "bf16";
    case Dtype::kFp8: return "fp8";
    case Dtype::kInt8: return "int8";
    case Dtype::kFp32: return "fp32";
  }
  return "unknown";
}

}  // namespace epsim::workloads
