// Operators priced by kernels measured on the NPU (a stack's [tables]
// compute, docs/stacks.md "Measured tables"): the model's time times the
// measured / modelled ratio of the nearest measured rows of the same kind,
// by shape in log space (inverse squared distance over the four nearest;
// on a measured shape, its rows' geometric mean: a shape measured twice
// lands between its two times). The model carries the
// trend between and beyond the rows; the rows carry what the model misses
// at their shapes.
//
// Kinds: GEMMs by dtype (M, N, K), grouped GEMMs by dtype (rows per
// expert, N, K, experts), the attention core's forward (head width,
// context, FLOPs) and backward (forward_backward rows, less the forward row of
// the same shape when measured), each memory-bound class's forward kernel
// by bytes. Anything else (FP32 GEMMs, a memory-bound backward) keeps the
// model's price.
#pragma once

#include <functional>
#include <optional>

#include "sim/platform/platform_facts.hpp"
#include "topology/measured_kernels.hpp"
#include "topology/stack_spec.hpp"
#include "workloads/operators.hpp"

namespace epsim::sim {

// The operators a measured row stands for, as validate prices it: a GEMM,
// a grouped GEMM, the attention core (and its backward for a
// forward_backward row), a memory-bound kernel (after its scores GEMM for a
// router row).
workloads::Operators measured_operators(const topology::MeasuredKernel& row);

// The modelled time of one operator (the stack's closed forms alone).
using ModelTime = std::function<double(const workloads::Operator&)>;

// The factor the stack's measured rows put on `op`'s modelled time; 1 when
// the stack has no row of its kind. `dtype` is the dtype it runs in.
double measured_factor(const workloads::Operator& op, workloads::Dtype dtype, const topology::StackSpec& stack,
                       const NpuFacts& npu, const ModelTime& model);

}  // namespace epsim::sim
