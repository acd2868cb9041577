// ptask_entries: fewer parallel-task entries with the same bytes on every
// link, or the transfers unchanged where routes do not allow it. Pure: no SimGrid.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "sim/replay/ptask_entries.hpp"
#include "sim_test_support.hpp"

namespace {

using namespace epsim::sim;

// n NPUs under one switch: route s -> d is hbm s, up s, switch, down d, hbm d.
PlatformFacts one_switch(int n) {
  PlatformFacts p = testing::hbm_facts(1, n);
  for (int i = 0; i < n; ++i) p.links.push_back({fmt::format("up{}", i), 1e11, 1e-6, true});
  for (int i = 0; i < n; ++i) p.links.push_back({fmt::format("down{}", i), 1e11, 1e-6, true});
  p.links.push_back({"switch", 1e13, 5e-7, false});
  p.routes = RouteTable(n);
  for (int s = 0; s < n; ++s)
    for (int d = 0; d < n; ++d) {
      if (s == d)
        p.routes.set(s, d, {s}, 0);
      else
        p.routes.set(s, d, {s, n + s, 3 * n, 2 * n + d, d}, 2.5e-6);
    }
  return p;
}

// n NPUs, a link of its own for every ordered pair: nothing can move.
PlatformFacts full_mesh(int n) {
  PlatformFacts p = one_switch(n);
  for (int s = 0; s < n; ++s)
    for (int d = 0; d < n; ++d)
      if (s != d) {
        p.links.push_back({fmt::format("{}-{}", s, d), 1e10, 1e-6, true});
        p.routes.set(s, d, {s, static_cast<int>(p.links.size()) - 1, d}, 1e-6);
      }
  return p;
}

std::vector<double> loads(const std::vector<Transfer>& transfers, const PlatformFacts& p) {
  std::vector<double> out(p.links.size(), 0.0);
  for (const Transfer& t : transfers) {
    auto [first, last] = p.routes.links(t.src_npu, t.dst_npu);
    for (const int* l = first; l != last; ++l) out[*l] += t.bytes;
  }
  return out;
}

void check_same_loads(const std::vector<Transfer>& a, const std::vector<Transfer>& b, const PlatformFacts& p) {
  const std::vector<double> la = loads(a, p), lb = loads(b, p);
  for (std::size_t l = 0; l < la.size(); ++l) {
    CAPTURE(l, la[l], lb[l]);
    CHECK(std::abs(la[l] - lb[l]) <= 1e-12 * la[l]);
    CHECK((la[l] > 0) == (lb[l] > 0));
  }
}

}  // namespace

TEST_CASE("one switch: an all-to-all of n NPUs becomes n entries with every link's bytes") {
  const int n = 16;
  const PlatformFacts p = one_switch(n);
  std::vector<Transfer> uniform, skewed;
  for (int s = 0; s < n; ++s)
    for (int d = 0; d < n; ++d)
      if (s != d) {
        uniform.push_back({s, d, 1e6});
        skewed.push_back({s, d, 1e3 * (1 + s) * (1 + (d * 7) % 5)});
      }
  const std::vector<Transfer> u = ptask_entries(uniform, p);
  CHECK(u.size() == static_cast<std::size_t>(n));  // each source to the NPU half-way round
  for (const Transfer& t : u) CHECK(t.bytes == 15e6);
  check_same_loads(uniform, u, p);
  const std::vector<Transfer> k = ptask_entries(skewed, p);
  CHECK(k.size() <= static_cast<std::size_t>(2 * n - 1));
  for (const Transfer& t : k) CHECK(t.src_npu != t.dst_npu);
  check_same_loads(skewed, k, p);
  CHECK(ptask_entries(skewed, p).size() == k.size());  // deterministic
}

TEST_CASE("links of their own per pair, or an NPU that would be paired with itself: transfers kept") {
  const int n = 6;
  const PlatformFacts mesh = full_mesh(n);
  std::vector<Transfer> all;
  for (int s = 0; s < n; ++s)
    for (int d = 0; d < n; ++d)
      if (s != d) all.push_back({s, d, 1e6 * (1 + s + d)});
  const std::vector<Transfer> kept = ptask_entries(all, mesh);
  REQUIRE(kept.size() == all.size());
  check_same_loads(all, kept, mesh);
  // One NPU sends nearly everything and receives nearly everything: any
  // re-pairing with the same sums would have it send to itself.
  const PlatformFacts sw = one_switch(3);
  const std::vector<Transfer> hub = {{0, 1, 100}, {1, 0, 100}, {0, 2, 100}, {2, 0, 100}, {1, 2, 1}};
  const std::vector<Transfer> h = ptask_entries(hub, sw);
  for (const Transfer& t : h) CHECK(t.src_npu != t.dst_npu);
  check_same_loads(hub, h, sw);
}
