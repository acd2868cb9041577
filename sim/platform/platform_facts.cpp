// The flat, lazily filled route table of PlatformFacts.
#include "sim/platform/platform_facts.hpp"

#include <stdexcept>

namespace epsim::sim {

RouteTable::RouteTable(int npus, Resolver resolver)
    : npus_(npus), dense_(npus <= kDenseRouteIndexNpus), resolver_(std::move(resolver)) {
  if (dense_) slot_.assign(static_cast<std::size_t>(npus) * npus, -1);
}

std::int32_t RouteTable::add(int src, int dst, const std::vector<int>& links, double latency_s) {
  const auto i = static_cast<std::int32_t>(entries_.size());
  entries_.push_back({static_cast<std::int64_t>(links_.size()), static_cast<std::int32_t>(links.size()), latency_s});
  links_.insert(links_.end(), links.begin(), links.end());
  if (dense_)
    slot_[key(src, dst)] = i;
  else
    map_[key(src, dst)] = i;
  return i;
}

void RouteTable::set(int src, int dst, const std::vector<int>& links, double latency_s) {
  add(src, dst, links, latency_s);
}

std::int32_t RouteTable::find(int src, int dst) const {
  const auto it = map_.find(key(src, dst));
  return it == map_.end() ? -1 : it->second;
}

std::int32_t RouteTable::resolve(int src, int dst) const {
  if (!resolver_) throw std::logic_error("RouteTable: route not set and no resolver");
  scratch_.clear();
  double latency_s = 0;
  resolver_(src, dst, scratch_, latency_s);
  return const_cast<RouteTable*>(this)->add(src, dst, scratch_, latency_s);
}

}  // namespace epsim::sim
