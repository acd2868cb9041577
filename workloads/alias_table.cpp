// Vose's construction of the alias table, over the positive items only so
// that a zero weight can never be drawn through rounding.
#include "workloads/alias_table.hpp"

#include <cmath>

namespace epsim::workloads {

AliasTable::AliasTable(const std::vector<double>& weights) {
  double total = 0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    if (weights[i] > 0) {
      item_.push_back(static_cast<int>(i));
      total += weights[i];
    }
  }
  const std::size_t n = item_.size();
  columns_ = n;
  alias_ = item_;
  threshold_.assign(n, std::uint64_t{1} << 32);
  std::vector<double> scaled(n);
  std::vector<std::size_t> small, large;
  for (std::size_t c = 0; c < n; ++c) {
    scaled[c] = weights[static_cast<std::size_t>(item_[c])] * static_cast<double>(n) / total;
    (scaled[c] < 1.0 ? small : large).push_back(c);
  }
  while (!small.empty() && !large.empty()) {
    const std::size_t s = small.back();
    small.pop_back();
    const std::size_t l = large.back();
    threshold_[s] = static_cast<std::uint64_t>(std::llround(scaled[s] * 4294967296.0));
    alias_[s] = item_[l];
    scaled[l] -= 1.0 - scaled[s];
    if (scaled[l] < 1.0) {
      large.pop_back();
      small.push_back(l);
    }
  }
  // Leftovers are 1 up to rounding: they keep their own item always.
}

}  // namespace epsim::workloads
