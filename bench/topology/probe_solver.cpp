// Probes two SimGrid 3.32 scaling claims (docs/simgrid-model.md, findings 7
// and 8): N concurrent flows crossing one FATPIPE vs one SHARED link, sent
// through mailboxes or with Comm::sendto_async. Prints the wall time of
// Engine::run(), one case per process (one engine per process).
//   probe_solver fatpipe|shared mailbox|sendto N
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Mailbox.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include "topology/simgrid_platform.hpp"

namespace sg4 = simgrid::s4u;

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: probe_solver fatpipe|shared mailbox|sendto N\n");
    return 2;
  }
  const bool fatpipe = std::string(argv[1]) == "fatpipe";
  const bool mailbox = std::string(argv[2]) == "mailbox";
  const int n = std::stoi(argv[3]);
  int sg_argc = 1;
  sg4::Engine engine(&sg_argc, argv);
  epsim::topology::configure_engine();

  // A star: host i -- private link i -- center -- private link j -- host j.
  auto* zone = sg4::create_star_zone("star");
  const sg4::Link* center = zone->create_link("center", 1e12)
                                ->set_sharing_policy(fatpipe ? sg4::Link::SharingPolicy::FATPIPE
                                                             : sg4::Link::SharingPolicy::SHARED)
                                ->seal();
  std::vector<sg4::Host*> hosts;
  for (int i = 0; i < n; ++i) {
    sg4::Host* h = zone->create_host("h" + std::to_string(i), 1e12)->seal();
    const sg4::Link* own = zone->create_split_duplex_link("l" + std::to_string(i), 25e9)->seal();
    zone->add_route(h->get_netpoint(), nullptr, nullptr, nullptr,
                    {sg4::LinkInRoute(own, sg4::LinkInRoute::Direction::UP), sg4::LinkInRoute(center)}, true);
    hosts.push_back(h);
  }
  zone->seal();

  // Flow i goes from host i to host i+1, all at once, with uneven sizes
  // (1 to 2 GB) so that every completion makes the solver run again.
  auto bytes_of = [n](int i) { return static_cast<uint64_t>(1e9 * (1.0 + static_cast<double>(i) / n)); };
  if (mailbox) {
    for (int i = 0; i < n; ++i) {
      sg4::Actor::create("send" + std::to_string(i), hosts[i], [i, bytes_of] {
        sg4::Mailbox::by_name("m" + std::to_string(i))->put(new int(i), bytes_of(i));
      });
      sg4::Actor::create("recv" + std::to_string(i), hosts[(i + 1) % n], [i] {
        delete sg4::Mailbox::by_name("m" + std::to_string(i))->get<int>();
      });
    }
  } else {
    sg4::Actor::create("sender", hosts[0], [&hosts, n, bytes_of] {
      std::vector<sg4::CommPtr> comms;
      for (int i = 0; i < n; ++i) {
        comms.push_back(sg4::Comm::sendto_async(hosts[i], hosts[(i + 1) % n], bytes_of(i)));
      }
      for (auto& c : comms) c->wait();
    });
  }
  auto start = std::chrono::steady_clock::now();
  engine.run();
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("link=%s comm=%s flows=%d wall_s=%.4f simulated_s=%.6f\n", argv[1], argv[2], n, wall,
              sg4::Engine::get_clock());
  return 0;
}
