// Names of the task graph's enumerations, as they appear in JSON and reports.
#include "workloads/task_graph.hpp"

namespace epsim::workloads {

const char* to_string(TaskKind kind) {
  switch (kind) {
    case TaskKind::kAttention: return "attention";
    case TaskKind::kGate: return "gate";
    case TaskKind::kDenseFfn: return "dense_ffn";
    case TaskKind::kSharedExpert: return "shared_expert";
    case TaskKind::kExpertGemm: return "expert_gemm";
    case TaskKind::kDispatch: return "dispatch";
    case TaskKind::kCombine: return "combine";
    case TaskKind::kGradAllReduce: return "grad_all_reduce";
    case TaskKind::kOptimizer: return "optimizer";
  }
  return "unknown";
}

const char* to_string(Phase phase) {
  switch (phase) {
    case Phase::kForward: return "forward";
    case Phase::kBackward: return "backward";
    case Phase::kGradSync: return "grad_sync";
    case Phase::kOptimizer: return "optimizer";
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
