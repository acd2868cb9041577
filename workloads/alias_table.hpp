// Walker's alias method: O(1) draws from a fixed discrete distribution, the
// inner loop of the routing sampler.
#pragma once

#include <cstdint>
#include <vector>

namespace epsim::workloads {

class AliasTable {
 public:
  AliasTable() = default;
  // `weights` >= 0 with at least one > 0; items of weight 0 are never drawn.
  explicit AliasTable(const std::vector<double>& weights);

  // An item drawn from one 64-bit random word: the high 32 bits pick a
  // column (multiply-shift; its bias is below columns / 2^32), the low 32
  // bits decide between the column's item and its alias.
  int draw(std::uint64_t random) const {
    const auto column = static_cast<std::size_t>(((random >> 32) * columns_) >> 32);
    return (random & 0xffffffffULL) < threshold_[column] ? item_[column] : alias_[column];
  }

  // The same from 32 random bits: the high part of random x columns picks
  // the column and its low 32 bits, uniform up to a step of columns / 2^32,
  // decide between item and alias. Lets one 64-bit word serve two draws.
  int draw32(std::uint32_t random) const {
    const std::uint64_t m = std::uint64_t{random} * columns_;
    const auto column = static_cast<std::size_t>(m >> 32);
    return (m & 0xffffffffULL) < threshold_[column] ? item_[column] : alias_[column];
  }

  // The table's columns, for callers that pack several tables into one array.
  int columns() const { return static_cast<int>(columns_); }
  std::uint64_t threshold(int column) const { return threshold_[static_cast<std::size_t>(column)]; }
  int item(int column) const { return item_[static_cast<std::size_t>(column)]; }
  int alias(int column) const { return alias_[static_cast<std::size_t>(column)]; }

 private:
  std::uint64_t columns_ = 0;
  std::vector<std::uint64_t> threshold_;  // in [0, 2^32]
  std::vector<int> item_;
  std::vector<int> alias_;
};

}  // namespace epsim::workloads
