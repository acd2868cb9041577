// The flat route table of PlatformFacts.
#include "sim/platform_facts.hpp"

namespace epsim::sim {

RouteTable::RouteTable(int npus)
    : npus_(npus),
      begin_(static_cast<std::size_t>(npus) * npus, 0),
      end_(static_cast<std::size_t>(npus) * npus, 0),
      latency_s_(static_cast<std::size_t>(npus) * npus, 0.0) {}

void RouteTable::set(int src, int dst, const std::vector<int>& links, double latency_s) {
  std::size_t i = index(src, dst);
  begin_[i] = static_cast<std::int64_t>(links_.size());
  links_.insert(links_.end(), links.begin(), links.end());
  end_[i] = static_cast<std::int64_t>(links_.size());
  latency_s_[i] = latency_s;
}

std::pair<const int*, const int*> RouteTable::links(int src, int dst) const {
  std::size_t i = index(src, dst);
  return {links_.data() + begin_[i], links_.data() + end_[i]};
}

}  // namespace epsim::sim
