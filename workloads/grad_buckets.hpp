// Gradient buckets: consecutive gradients, in the order backward produces
// them, grouped into buckets of at least a set size, each reduced as soon
// as its last gradient is ready (Megatron-Core's DDP buckets). Plain
// arithmetic, no task graph.
#pragma once

#include <cstddef>
#include <vector>

namespace epsim::workloads {

// Megatron-Core's default bucket (DistributedDataParallelConfig.bucket_size
// None -> max(40,000,000, 1,000,000 x DP size) parameters,
// distributed_data_parallel.py) at BF16 gradients: 40M x 2 B. epsim keeps
// the 40M floor and does not grow it with DP.
constexpr double kDefaultGradBucketBytes = 80e6;

// Items [first, last] of the backward order in one bucket (`last` its last
// item holding bytes), with their bytes.
struct GradBucket {
  std::size_t first = 0;
  std::size_t last = 0;
  double bytes = 0;
};

// The buckets of `item_bytes` (gradient bytes per item, in the order the
// backward pass finishes them): items are added to the open bucket until
// it holds at least `bucket_bytes`, which closes it (an item larger than a
// bucket fills one alone, as Megatron never splits a parameter); the rest
// forms a last, smaller bucket. Items of 0 bytes join whatever bucket is
// open without becoming its `last` (a bucket is ready with its last
// gradient); buckets of 0 bytes are not returned. bucket_bytes <= 0: one
// bucket of everything.
std::vector<GradBucket> bucket_gradients(const std::vector<double>& item_bytes, double bucket_bytes);

}  // namespace epsim::workloads
