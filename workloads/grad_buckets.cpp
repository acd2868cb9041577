// Gradient buckets in backward order (see grad_buckets.hpp).
#include "workloads/grad_buckets.hpp"

namespace epsim::workloads {

std::vector<GradBucket> bucket_gradients(const std::vector<double>& item_bytes, double bucket_bytes) {
  std::vector<GradBucket> out;
  GradBucket open;
  bool any = false;  // the open bucket holds an item
  for (std::size_t i = 0; i < item_bytes.size(); ++i) {
    if (!any) open = GradBucket{i, i, 0};
    any = true;
    if (item_bytes[i] > 0) open.last = i;  // ready with its last gradient, not with empty items after it
    open.bytes += item_bytes[i];
    if (bucket_bytes > 0 && open.bytes >= bucket_bytes) {
      out.push_back(open);
      any = false;
    }
  }
  if (any && open.bytes > 0) out.push_back(open);
  return out;
}

}  // namespace epsim::workloads
