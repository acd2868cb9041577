// The flat, lazily filled route table of PlatformFacts.
#include "sim/platform/platform_facts.hpp"

#include <stdexcept>

namespace epsim::sim {

RouteTable::RouteTable(int npus, Resolver resolver)
    : npus_(npus),
      resolver_(std::move(resolver)),
      begin_(static_cast<std::size_t>(npus) * npus, -1),
      end_(static_cast<std::size_t>(npus) * npus, -1),
      latency_s_(static_cast<std::size_t>(npus) * npus, 0.0) {}

void RouteTable::set(int src, int dst, const std::vector<int>& links, double latency_s) {
  std::size_t i = index(src, dst);
  begin_[i] = static_cast<std::int64_t>(links_.size());
  links_.insert(links_.end(), links.begin(), links.end());
  end_[i] = static_cast<std::int64_t>(links_.size());
  latency_s_[i] = latency_s;
}

void RouteTable::resolve(int src, int dst) const {
  if (begin_[index(src, dst)] >= 0) return;
  if (!resolver_) throw std::logic_error("RouteTable: route not set and no resolver");
  scratch_.clear();
  double latency_s = 0;
  resolver_(src, dst, scratch_, latency_s);
  const_cast<RouteTable*>(this)->set(src, dst, scratch_, latency_s);
}

double RouteTable::latency_s(int src, int dst) const {
  resolve(src, dst);
  return latency_s_[index(src, dst)];
}

}  // namespace epsim::sim
