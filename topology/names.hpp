// The naming contract of epsim platforms (docs/platform.md): structured host,
// link and zone names, so a trace reads without a lookup table.
#pragma once

#include <string>

namespace epsim::topology::names {

inline std::string node(int n) { return "node" + std::to_string(n); }
// NPU host: "node3.npu5". The simulator orders ranks by (node, local).
inline std::string npu(int n, int i) { return node(n) + ".npu" + std::to_string(i); }
inline std::string hbm(int n, int i) { return npu(n, i) + ".hbm"; }
// HCCS link between two NPUs of a node, lower index first: "node3.npu5-npu6".
inline std::string pair(int n, int i, int j) { return npu(n, i) + "-npu" + std::to_string(j); }
// An NPU's port into a switch (NVSwitch, UB): "node3.npu5.port".
inline std::string port(int n, int i) { return npu(n, i) + ".port"; }
inline std::string node_switch(int n) { return node(n) + ".switch"; }
inline std::string nic(int n, int i) { return npu(n, i) + ".nic"; }
inline std::string node_nic(int n) { return node(n) + ".nic"; }
// A node zone's gateway router.
inline std::string node_gateway(int n) { return node(n) + ".gw"; }
inline std::string leaf(int x) { return "leaf" + std::to_string(x); }
inline std::string leaf_router(int x) { return leaf(x) + ".router"; }
inline std::string leaf_switch_zone(int x) { return leaf(x) + ".switch"; }
inline std::string spine_leaf(int x) { return "spine-" + leaf(x); }
inline const char* kSpine = "spine";
inline const char* kFabric = "fabric";
inline const char* kRails = "rails";
inline const char* kSupernode = "supernode";
inline const char* kClusterZone = "cluster";

}  // namespace epsim::topology::names
