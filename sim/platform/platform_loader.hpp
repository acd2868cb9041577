// The one path from a platform argument to a checked SimGrid platform.
// Every command that takes a platform (run, sweep, platform check, validate)
// goes through here, so a file gets the same verdict everywhere:
//   - a preset or cluster TOML is read (topology/cluster_spec.hpp, whose
//     ranges are the contract's) and built as one flat Full zone
//     (flat_platform.hpp) from topology's PlatformPlan and routes;
//   - a SimGrid XML is first loaded and checked in a child process
//     (child_probe.hpp: SimGrid aborts become InputError), then loaded here;
//   - either way the result passes one contract check (npu_platform.hpp).
// The zoned platform of a cluster exists only as `epsim platform xml`'s
// export (topology/platform_xml.hpp); loading that file times like the flat build.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/platform/npu_platform.hpp"
#include "sim/platform/sim_engine.hpp"
#include "topology/cluster_spec.hpp"

namespace epsim::sim {

struct PlatformRequest {
  std::string platform;                // preset name, cluster TOML, or SimGrid XML (a name ending in .xml)
  std::vector<std::string> overrides;  // --set key=value for a cluster; a SimGrid XML takes none
  std::string stack = {};              // --stack: the software stack in place of the cluster's own; empty: its own
};

// True when `platform` names a SimGrid XML file (ends in ".xml").
bool is_platform_xml(const std::string& platform);

// What a check learns about a platform without simulating on it.
struct PlatformShape {
  std::string source;  // the file: the preset's TOML, the cluster TOML or the XML
  int nodes = 0;
  int npus_per_node = 0;
  std::optional<topology::ClusterSpec> cluster;  // for a preset or cluster TOML
};

// The platform verdict without an engine in this process (for `platform
// check` and sweep pre-checks): a cluster is read and checked; an XML is
// loaded and fully checked (every NPU route included) in a child process.
// Throws InputError, the same one open_platform would throw.
PlatformShape check_platform(const PlatformRequest& request);

// The platform open in this process's one engine.
struct OpenPlatform {
  std::unique_ptr<SimEngine> engine;
  LoadedPlatform loaded;  // NPU facts and hosts, checked
  PlatformShape shape;
};

// Checks the platform as check_platform does, then constructs the engine
// and builds (cluster) or loads (XML) the platform into it and runs the
// contract check. Once per process (one SimGrid engine). Throws InputError.
OpenPlatform open_platform(const PlatformRequest& request, const EngineOptions& options = {});

// The same for a cluster already read (e.g. checked for a command's own
// needs first). `flat` forces the build (tests); unset: uses_flat_platform.
OpenPlatform open_platform(const topology::ClusterSpec& cluster, const EngineOptions& options = {},
                           std::optional<bool> flat = std::nullopt);

// The same for a platform check_platform has already given its verdict on
// (an XML is then not probed a second time).
OpenPlatform open_platform(PlatformShape checked, const EngineOptions& options = {});

// Throws InputError when `ranks` at `ranks_per_node` do not fit `platform`.
// Too few nodes in a cluster is reported at node.count (where it was given)
// with the count needed; other misfits as place_ranks reports them.
void check_ranks_fit(const PlatformShape& platform, int ranks, int ranks_per_node);

// Up to kFlatPlatformMaxNpus NPUs a cluster is built flat (flat_platform.hpp:
// route lookups are table reads), beyond as its plan's zones
// (zoned_platform.hpp: routes grow with nodes). Same timings (tested).
inline constexpr long long kFlatPlatformMaxNpus = 1024;
bool uses_flat_platform(const topology::ClusterSpec& cluster);

// The flat build holds one route per ordered NPU pair (a Full zone), so its
// memory grows as NPUs^2: measured on a2 with tiny-moe, 86 MB at 512 NPUs
// and 782 MB at 2048, i.e. ~40 MB plus ~180 B per route. The zoned build
// holds the NPUs' own zones and the root zone's routes between node (or
// leaf) zones: measured on h800 with tiny-moe, 86 MB at 256 nodes and 370 MB
// at 1,024, i.e. ~13 kB per NPU and ~205 B per node pair (a2, whose root
// routes join leaves, 190 MB at 1,024 nodes): rounded up to 16 kB and 256 B.
// A node zone's own routes (one per NPU pair of the node) cost ~450 B each:
// what the links below leave of 2.84 GB for two nodes of 1,024 NPUs as full
// meshes (5.66 GB for one node of 2,048, predicted 5.6).
// Either way, each SimGrid link (a cable is two) costs ~600 B more with its
// facts, on top of the topology graph the build walks
// (topology/platform_size.hpp): a node of 1,024 NPUs as a full mesh (1.05
// million links) peaks at 1.14 GB.
inline constexpr double kPlatformBaseBytes = 40e6;
inline constexpr double kPlatformBytesPerRoute = 180;
inline constexpr double kZonedPlatformBytesPerNpu = 16e3;
inline constexpr double kZonedPlatformBytesPerNodePair = 256;
inline constexpr double kZonedPlatformBytesPerNodeRoute = 450;
inline constexpr double kPlatformBytesPerLink = 600;
double platform_memory_bytes(const topology::ClusterSpec& cluster);
// Refuses a platform whose estimate alone is above the memory limit, at
// node.count (or node.npus when a node's own links dominate: a full mesh).
void check_platform_memory(const topology::ClusterSpec& cluster);

}  // namespace epsim::sim
