// The operators of a training step, each with what bounds it: a GEMM by its
// shape, the attention core by its head width and context, and every
// memory-bound kernel by its access pattern (docs/operators.md). Plain data:
// workloads/ says what an operator does, sim/ prices it with a software
// stack (stacks/) on a chip.
#pragma once

#include <vector>

namespace epsim::workloads {

enum class Dtype { kBf16, kFp8, kInt8, kFp32 };

// What bounds an operator, and so which of the stack's rates prices it.
enum class OpClass {
  kGemm,               // a dense GEMM, M x N x K
  kGroupedGemm,        // one GEMM per local expert, `groups` of them, M rows each on average
  kAttention,          // the flash attention core, forward
  kAttentionBackward,  // its backward (recomputes the scores: its own kernel and rate)
  kElementwise,        // streaming, one read and one write per element: residual adds, RoPE, casts, fused activations
  kNorm,               // a reduction over each row, then a scaled write: RMSNorm
  kActivation,         // SwiGLU as two eager kernels over a row's strided halves
  kGather,             // rows copied in index order: the permutation, its backward's gathers
  kScatterAdd,         // rows added at indices with atomics: the weighted un-permutation, the permutation's backward
  kRouter,             // the router's score function and top-k: small per-token reductions
  kLoss,               // cross-entropy over the vocabulary (FP32 softmax and its gradient)
  kOptimizer,          // the fused AdamW update
};
inline constexpr int kOpClasses = 12;
const char* to_string(OpClass c);  // "gemm", "grouped_gemm", ..., as stacks and measurement files name them

// One operator of a pass: a kernel (or `kernels` back-to-back kernels of
// the same class) with its work on one rank. GEMMs: FLOPs 2 M N K x groups,
// bytes their operands and output. Attention: FLOPs of QK^T and PV (x 2.5
// in the backward), `head_dim` the query/key channels, `context` the mean
// keys a query attends to. Memory-bound classes: bytes read + written.
struct Operator {
  OpClass op_class = OpClass::kElementwise;
  Dtype dtype = Dtype::kBf16;
  double flops = 0;
  double bytes = 0;
  double m = 0, n = 0, k = 0;  // GEMMs: rows (per group), output columns, reduction depth
  double groups = 1;           // grouped GEMMs
  double head_dim = 0;         // attention
  double context = 0;          // attention: keys per query
  int kernels = 1;
  // A memory-bound backward kernel of its class (a norm's, an activation's,
  // the router's, the loss's gradient): the stack's backward rate prices it.
  bool backward = false;
  // An activation a stack may fuse into one streaming kernel (the plain
  // SwiGLU; stack key framework.fused_swiglu); otherwise its eager kernels.
  bool fusable = false;
  // The attention core of a decode step: a few queries per sequence over
  // its cache (the stack's decode-attention kernel prices it).
  bool decode = false;
};

using Operators = std::vector<Operator>;

// A GEMM of M x N x K, its inputs in `dtype` and its output in BF16; with
// `groups` >= 1, a grouped GEMM over that many experts of M rows each.
Operator gemm(double m, double n, double k, Dtype dtype, double groups = 0);
// The attention core over `tokens` queries of `heads` heads, each
// attending to `context` keys on average: QK^T (qk channels) and PV (v).
Operator attention_core(double tokens, double heads, double qk, double v, double context);
// A memory-bound kernel of `op_class` moving `bytes` (a backward kernel of
// its class when `backward`).
Operator memory_op(OpClass op_class, double bytes, int kernels = 1, bool backward = false);

// The router after its scores GEMM as eager PyTorch runs it: the cast to
// FP32, the score function, top-k, the sum and the division that normalise
// the k weights, the cast back (a fusing stack runs one kernel: stack key
// framework.fused_router). Its backward is assumed to take as many.
inline constexpr int kEagerRouterKernels = 6;
// The router's score function and top-k over `bytes` (its backward when `backward`).
Operator router_op(double bytes, bool backward = false);

// Backward operators, per operator (never 2x the forward):
// a GEMM's dgrad (M x K x N) and wgrad (N x K, reduced over M);
Operators gemm_backward(const Operator& forward);
// the attention core's: dQ, dK, dV and the recomputed scores, 2.5x the
// forward's FLOPs (FlashAttention-2's five GEMMs to its two), reading Q,
// K, V, O and dO and writing dQ, dK, dV.
Operator attention_backward(const Operator& forward);

// Sums over a list.
double total_flops(const Operators& ops);
double total_bytes(const Operators& ops);

}  // namespace epsim::workloads
