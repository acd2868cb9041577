// Operator constructors and the per-operator backward rules.
#include "workloads/operators.hpp"

namespace epsim::workloads {

namespace {
double element_bytes(Dtype d) {
  switch (d) {
    case Dtype::kFp8:
    case Dtype::kInt8: return 1;
    case Dtype::kBf16: return 2;
    case Dtype::kFp32: return 4;
  }
  return 2;
}
constexpr double kOutputBytes = 2;  // GEMM outputs and gradients in BF16
}  // namespace

const char* to_string(OpClass c) {
  switch (c) {
    case OpClass::kGemm: return "gemm";
    case OpClass::kGroupedGemm: return "grouped_gemm";
    case OpClass::kAttention: return "attention";
    case OpClass::kAttentionBackward: return "attention_backward";
    case OpClass::kElementwise: return "elementwise";
    case OpClass::kNorm: return "norm";
    case OpClass::kActivation: return "activation";
    case OpClass::kGather: return "gather";
    case OpClass::kScatterAdd: return "scatter_add";
    case OpClass::kRouter: return "router";
    case OpClass::kLoss: return "loss";
    case OpClass::kOptimizer: return "optimizer";
  }
  return "?";
}

Operator gemm(double m, double n, double k, Dtype dtype, double groups) {
  Operator o;
  o.op_class = groups > 0 ? OpClass::kGroupedGemm : OpClass::kGemm;
  o.dtype = dtype;
  o.m = m;
  o.n = n;
  o.k = k;
  o.groups = groups > 0 ? groups : 1;
  o.flops = 2.0 * m * n * k * o.groups;
  o.bytes = o.groups * ((m * k + k * n) * element_bytes(dtype) + m * n * kOutputBytes);
  return o;
}

Operator attention_core(double tokens, double heads, double qk, double v, double context) {
  Operator o;
  o.op_class = OpClass::kAttention;
  o.flops = tokens * context * 2.0 * heads * (qk + v);
  o.bytes = tokens * heads * (2.0 * qk + 2.0 * v) * kOutputBytes;  // Q, K, V read once, O written once
  o.head_dim = qk;
  o.context = context;
  return o;
}

Operator memory_op(OpClass op_class, double bytes, int kernels, bool backward) {
  Operator o;
  o.op_class = op_class;
  o.bytes = bytes;
  o.kernels = kernels;
  o.backward = backward;
  return o;
}

Operator router_op(double bytes, bool backward) {
  return memory_op(OpClass::kRouter, bytes, kEagerRouterKernels, backward);
}

Operators gemm_backward(const Operator& f) {
  const double groups = f.op_class == OpClass::kGroupedGemm ? f.groups : 0;
  return {gemm(f.m, f.k, f.n, f.dtype, groups), gemm(f.n, f.k, f.m, f.dtype, groups)};
}

Operator attention_backward(const Operator& f) {
  Operator o = f;
  o.op_class = OpClass::kAttentionBackward;
  o.flops = 2.5 * f.flops;
  o.bytes = f.bytes * 2.0;
  return o;
}

double total_flops(const Operators& ops) {
  double s = 0;
  for (const Operator& o : ops) s += o.flops;
  return s;
}
double total_bytes(const Operators& ops) {
  double s = 0;
  for (const Operator& o : ops) s += o.bytes;
  return s;
}

}  // namespace epsim::workloads
