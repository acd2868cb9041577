// Probes two SimGrid 3.32 scaling claims (docs/simgrid-model.md, findings 7
// and 8): N concurrent flows crossing one FATPIPE vs one SHARED link, sent
// through mailboxes or with Comm::sendto_async. Prints the wall time of
// Engine::run(), one case per process (one engine per process).
//   probe_solver fatpipe|shared mailbox|sendto N [alltoall]
// With "alltoall", every host sends to every other one (N x (N-1) flows).
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

#include "sim/platform/sim_engine.hpp"

namespace sg4 = simgrid::s4u;

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    std::fprintf(stderr, "usage: probe_solver fatpipe|shared mailbox|sendto N [alltoall]\n");
    return 2;
  }
  const bool fatpipe = std::string(argv[1]) == "fatpipe";
  const bool mailbox = std::string(argv[2]) == "mailbox";
  const int n = std::stoi(argv[3]);
  const bool alltoall = argc == 5 && std::string(argv[4]) == "alltoall";
  epsim::sim::SimEngine sim_engine("probe_solver");
  sg4::Engine& engine = sim_engine.engine();

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
  // In all-to-all mode flow (i, d) for distance d = 1..N-1 goes to host i+d.
  const int distances = alltoall ? n - 1 : 1;
  const int flows = n * distances;
  auto bytes_of = [flows](int f) {
    return static_cast<uint64_t>(1e9 * (1.0 + static_cast<double>(f) / flows));
  };
  if (mailbox) {
    for (int i = 0; i < n; ++i) {
      for (int d = 1; d <= distances; ++d) {
        const int f = i * distances + d - 1;
        const std::string box = "m" + std::to_string(f);
        sg4::Actor::create("send", hosts[i], [box, f, bytes_of] {
          sg4::Mailbox::by_name(box)->put(new int(f), bytes_of(f));
        });
        sg4::Actor::create("recv", hosts[(i + d) % n],
                           [box] { delete sg4::Mailbox::by_name(box)->get<int>(); });
      }
    }
  } else {
    sg4::Actor::create("sender", hosts[0], [&hosts, n, distances, bytes_of] {
      std::vector<sg4::CommPtr> comms;
      for (int i = 0; i < n; ++i) {
        for (int d = 1; d <= distances; ++d) {
          const int f = i * distances + d - 1;
          comms.push_back(sg4::Comm::sendto_async(hosts[i], hosts[(i + d) % n], bytes_of(f)));
        }
      }
      for (auto& c : comms) c->wait();
    });
  }
  auto start = std::chrono::steady_clock::now();
  engine.run();
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("link=%s comm=%s hosts=%d flows=%d wall_s=%.4f simulated_s=%.6f\n", argv[1], argv[2], n, flows, wall,
              sg4::Engine::get_clock());
  return 0;
}
