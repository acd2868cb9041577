// Reading cluster specs: presets load into the documented SI values, and
// --set overrides change them key by key.
#include <catch2/catch.hpp>

#include "core/error.hpp"
#include "topology/cluster_spec.hpp"
#include "topology/presets.hpp"
#include "topology/topology_graph.hpp"

using namespace epsim;
using namespace epsim::topology;

TEST_CASE("every preset loads", "[spec]") {
  std::vector<std::string> names = preset_names();
  CHECK(names.size() >= 5);
  for (const std::string& name : names) {
    CAPTURE(name);
    ClusterSpec spec = load_cluster_spec(name);
    CHECK(spec.npu_count() >= 1);
  }
}

TEST_CASE("a2 preset reads into SI values", "[spec]") {
  ClusterSpec s = load_cluster_spec("a2");
  CHECK(s.name == "atlas-800t-a2");
  CHECK(s.npu.flops_bf16 == 376e12);
  CHECK(s.npu.flops_fp8 == 0);
  CHECK(s.npu.flops_int8 == 752e12);
  CHECK(s.npu.hbm_bandwidth_Bps == 1.6e12);
  CHECK(s.npu.hbm_capacity_bytes == 64e9);
  CHECK(s.node.npus == 8);
  CHECK(s.node.count == 4);
  CHECK(s.node.fabric == NodeFabricKind::kMesh);
  CHECK(s.node.link_bandwidth_Bps == 56e9);
  CHECK(s.node.link_latency_s == Approx(1e-6));
  REQUIRE(s.scaleout);
  CHECK(s.scaleout->kind == ScaleoutKind::kLeafSpine);
  CHECK(s.scaleout->nic_per_npu);
  CHECK(s.scaleout->nic_bandwidth_Bps == 25e9);
  CHECK(s.scaleout->nodes_per_leaf == 4);
  CHECK(!s.supernode);
}

TEST_CASE("presets model what their files say", "[spec]") {
  ClusterSpec cm = load_cluster_spec("cloudmatrix384");
  CHECK(cm.npu_count() == 384);
  REQUIRE(cm.supernode);
  CHECK(cm.supernode->port_bandwidth_Bps == 392e9);
  ClusterSpec h = load_cluster_spec("h800");
  CHECK(h.node.fabric == NodeFabricKind::kSwitch);
  CHECK(h.node.link_bandwidth_Bps == 200e9);  // line rate; x 0.6806 calibrated on DeepEP EP8
  CHECK(h.node.link_efficiency == 0.6806);
  CHECK(h.scaleout->nic_efficiency == 0.9081);
  CHECK(h.scaleout->kind == ScaleoutKind::kRail);
  CHECK(h.scaleout->nic_bandwidth_Bps == 50e9);
  CHECK(h.npu.flops_fp8 == 1979e12);
  CHECK(load_cluster_spec("a2-spine-2to1").scaleout->oversubscription == 2.0);
  CHECK(load_cluster_spec("a2-nic400").scaleout->nic_bandwidth_Bps == 50e9);
}

// Blackwell: vendor figures per GPU (docs/sources.md, "DGX B200 and GB200
// NVL72"); the efficiencies are the h800 preset's (no Blackwell table found).
TEST_CASE("b200 preset: DGX B200 nodes of 8 on NVLink 5, a ConnectX-7 per GPU", "[spec][preset]") {
  const ClusterSpec b = load_cluster_spec("b200");
  CHECK(b.npu.flops_bf16 == 2250e12);
  CHECK(b.npu.flops_fp8 == 4500e12);
  CHECK(b.npu.hbm_bandwidth_Bps == 8e12);
  CHECK(b.npu.hbm_capacity_bytes == 180e9);
  CHECK(b.node.npus == 8);
  CHECK(b.npu_count() == 64);
  CHECK(b.node.fabric == NodeFabricKind::kSwitch);
  CHECK(b.node.link_bandwidth_Bps == 900e9);  // 14.4 TB/s aggregate over 8 GPUs, per direction
  REQUIRE(b.scaleout);
  CHECK(b.scaleout->kind == ScaleoutKind::kRail);
  CHECK(b.scaleout->nic_per_npu);
  CHECK(b.scaleout->nic_bandwidth_Bps == 50e9);  // 400 Gb/s
  CHECK(!b.supernode);
  const ClusterSpec h = load_cluster_spec("h800");
  CHECK(b.node.link_efficiency == h.node.link_efficiency);
  CHECK(b.scaleout->nic_efficiency == h.scaleout->nic_efficiency);
  // No Blackwell kernel table: its stack says so, with hopper-megatron's shares.
  CHECK(b.stack.name == "blackwell-megatron");
  CHECK(b.stack.gemm_bf16.max == load_cluster_spec("h100").stack.gemm_bf16.max);
  // hopper-megatron takes hopper-eager's GEMM libraries (base), with their fixed
  // time and cuBLASLt's host time per FP8 call, and lays its own kernels over them.
  const StackSpec& m = load_cluster_spec("h100").stack;
  CHECK(m.gemm_bf16.max == 0.772);
  CHECK(m.gemm_fixed_s == Approx(5.58e-6));
  CHECK(m.grouped_fixed_s == Approx(5.58e-6));
  CHECK(m.gemm_memory == 0.838);
  CHECK(m.host_per_fp8_gemm_s == Approx(31.92e-6));
  CHECK(m.memory[static_cast<int>(MemoryClass::kNorm)] == 0.564);
  CHECK(m.dispatch == DispatchKernel::kAlltoall);
  CHECK(load_cluster_spec("h800").stack.dispatch == DispatchKernel::kDeepEpNormal);
  // DeepEP's 20 of 132 SMs: the stack's share replaces the NPU's; NCCL's holds none.
  CHECK(load_cluster_spec("h800").npu.comm_compute_share == 0.1515);
  CHECK(load_cluster_spec("h100").npu.comm_compute_share == 0);
  CHECK(load_cluster_spec("h800", {"stack.dispatch.compute_share=0"}).npu.comm_compute_share == 0);
  // The NVLink domain is one node: 8 GPUs at 900 GB/s x 0.6806, then the NICs.
  const TopologyGraph topo(b);
  CHECK(topo.route(0, 7).bottleneck_Bps == Approx(900e9 * 0.6806));
  CHECK(topo.route(0, 8).bottleneck_Bps == Approx(50e9 * 0.9081));
}

TEST_CASE("gb200-nvl72 preset: 72 GPUs in one NVLink domain (a supernode of 18 trays of 4)", "[spec][preset]") {
  const ClusterSpec g = load_cluster_spec("gb200-nvl72");
  CHECK(g.npu.flops_bf16 == 2500e12);
  CHECK(g.npu.flops_fp8 == 5000e12);
  CHECK(g.npu.hbm_bandwidth_Bps == 8e12);
  CHECK(g.npu.hbm_capacity_bytes == 186e9);
  CHECK(g.node.npus == 4);
  CHECK(g.node.count == 18);
  CHECK(g.npu_count() == 72);
  REQUIRE(g.supernode);
  CHECK(!g.scaleout);
  CHECK(g.supernode->port_bandwidth_Bps == 900e9);
  CHECK(g.supernode->port_efficiency == load_cluster_spec("h800").node.link_efficiency);
  // Any two of the 72, in one tray or two, meet at the same NVLink rate.
  const TopologyGraph topo(g);
  CHECK(topo.route(0, 1).bottleneck_Bps == Approx(900e9 * 0.6806));
  CHECK(topo.route(0, 71).bottleneck_Bps == Approx(900e9 * 0.6806));
  CHECK(topo.route(0, 71).latency_s == topo.route(0, 1).latency_s);
}

TEST_CASE("overrides from --set change a preset key by key", "[spec]") {
  ClusterSpec s = load_cluster_spec(
      "a2", {"node.count=32", "scaleout.nic_bandwidth=400Gbps", "npu.comm_compute_share=0.2"});
  CHECK(s.node.count == 32);
  CHECK(s.npu_count() == 256);
  CHECK(s.scaleout->nic_bandwidth_Bps == 50e9);
  CHECK(s.npu.comm_compute_share == 0.2);
}

TEST_CASE("efficiencies scale every link built from a line rate", "[spec]") {
  // Default 1: the line rate. Set, the ports, the NVSwitch backplane and
  // the NICs (and the rails built from them) run at line rate x efficiency.
  const ClusterSpec line = load_cluster_spec("h800", {"node.link_efficiency=1", "scaleout.nic_efficiency=1"});
  CHECK(line.node.effective_link_bandwidth_Bps() == 200e9);
  const ClusterSpec half = load_cluster_spec("h800", {"node.link_efficiency=0.5", "scaleout.nic_efficiency=0.25"});
  CHECK(half.node.effective_link_bandwidth_Bps() == 100e9);
  CHECK(half.scaleout->effective_nic_bandwidth_Bps() == 12.5e9);
  const TopologyGraph topo(half);
  CHECK(topo.route(0, 1).bottleneck_Bps == 100e9);
  CHECK(topo.route(0, 8).bottleneck_Bps == 12.5e9);
  CHECK(load_cluster_spec("a2").node.link_efficiency == 1);
}

TEST_CASE("[stack]: a platform names its software stack; its keys set one by one; default the plain roofline",
          "[spec]") {
  const ClusterSpec h = load_cluster_spec("h800");
  CHECK(h.stack.name == "hopper-deepseek");
  CHECK(h.stack.gemm_fp8.max == 0.816);
  CHECK(h.stack.gemm_fp8.half_rows == 140);
  CHECK(h.stack.gemm_fp8.half_n == 694);
  CHECK(h.stack.gemm_fp8.half_k == 797);
  CHECK(h.stack.grouped_fp8.max == 0.866);
  CHECK(h.stack.attention.max == 0.806);
  CHECK(h.stack.attention.half_dim == 66);
  CHECK(h.stack.launch_s == Approx(4e-6));
  CHECK(load_cluster_spec("h100").stack.name == "hopper-megatron");
  CHECK(load_cluster_spec("a2").stack.gemm_bf16.half_n == 0);  // no table of the 910B: no N dependence
  const ClusterSpec s = load_cluster_spec(
      "h800", {"stack.name=hopper-eager", "stack.grouped_gemm.fp8.max=0.5", "stack.framework.launch=\"0us\""});
  CHECK(s.stack.name == "hopper-eager");
  CHECK(s.stack.grouped_fp8.max == 0.5);
  CHECK(s.stack.launch_s == 0);
  CHECK(s.stack.host_per_kernel_s == Approx(11.6e-6));
  const StackSpec plain;
  CHECK(plain.gemm_bf16.at(1, 1, 1) == 1);
  CHECK(plain.memory[0] == 1);
  CHECK_THROWS_WITH(load_cluster_spec("h800", {"stack.gemm.fp8.max=1.5"}),
                    Catch::Contains("gemm.fp8.max: expected a share of the peak in [0.001, 1], got 1.5"));
  CHECK_THROWS_WITH(load_cluster_spec("h800", {"stack.memory.gemmm=0.5"}), Catch::Contains("unknown key"));
  CHECK_THROWS_WITH(load_cluster_spec("h800", {"compute.dense_gemm=0.5"}),
                    Catch::Contains("compute: kernel efficiencies belong to a software stack now"));
  CHECK_THROWS_WITH(load_cluster_spec("a2", {"stack.name=hopper-megatron"}),
                    Catch::Contains("stack \"hopper-megatron\" has no tables for NPU \"Ascend 910B\""));
}

TEST_CASE("[kernels]: dispatch/combine mechanisms, default nothing beyond the bytes", "[spec]") {
  const KernelSpec none = load_cluster_spec("h800").kernels;
  CHECK(none.launch_s == 0);
  CHECK(none.dispatch_copy_Bps == 0);  // unlimited: the links bind
  CHECK_FALSE(none.per_selection);
  CHECK(none.package_npus == 1);
  const KernelSpec k = load_cluster_spec(
      "cloudmatrix384", {"npu.rank=\"die\"", "kernels.launch=\"20us\"", "kernels.dispatch_peer_cost=\"33.6us\"",
                         "kernels.combine_copy_rate=\"105GBps\"", "kernels.messages=\"selection\"",
                         "kernels.low_latency_launch=\"124us\""})
                           .kernels;
  CHECK(k.launch_s == Approx(20e-6));
  CHECK(k.dispatch_peer_cost_s == Approx(33.6e-6));
  CHECK(k.combine_copy_Bps == Approx(105e9));
  CHECK(k.per_selection);
  CHECK(k.package_npus == 2);
  CHECK(k.low_latency_launch_s == Approx(124e-6));
  // Ranges as the other keys': times 0 .. 1 s, rates 1 kB/s .. 1 PB/s.
  CHECK_THROWS_WITH(load_cluster_spec("h800", {"kernels.launch=\"2s\""}),
                    Catch::Contains("kernels.launch: 2 s is outside the physical range"));
  CHECK_THROWS_WITH(load_cluster_spec("h800", {"kernels.dispatch_copy_rate=\"1Bps\""}),
                    Catch::Contains("kernels.dispatch_copy_rate:"));
  CHECK_THROWS_WITH(load_cluster_spec("h800", {"kernels.package_npus=2"}),
                    Catch::Contains("kernels.package_npus: unknown key"));  // npu.rank = "die" says it
  CHECK_THROWS_WITH(load_cluster_spec("h800", {"kernels.messages=\"token\""}), Catch::Contains("kernels.messages:"));
  CHECK_THROWS_WITH(load_cluster_spec("h800", {"kernels.peer_cost=\"1us\""}),
                    Catch::Contains("kernels.peer_cost: unknown key"));
  // The low-latency kernel's share of each fabric's line rate: default the fabric's own efficiency.
  CHECK(load_cluster_spec("h800").node.low_latency_efficiency == load_cluster_spec("h800").node.link_efficiency);
  CHECK(load_cluster_spec("cloudmatrix384", {"supernode.low_latency_efficiency=0.5"}).supernode->low_latency_efficiency ==
        0.5);
}

TEST_CASE("stacks without host time: the serving stacks a host-bound default is measured against, per NPU",
          "[spec][stack]") {
  // Eager issue and the dispatcher's sync are a training framework's loop; DeepSeek's stacks and CANN's spend none.
  CHECK(issues_from_host(load_cluster_spec("h100").stack));
  CHECK(issues_from_host(load_cluster_spec("b200").stack));
  CHECK_FALSE(issues_from_host(load_cluster_spec("h800").stack));
  CHECK(stacks_without_host_time("H100 SXM") == std::vector<std::string>{"hopper-deepseek"});
  CHECK(stacks_without_host_time("B200 (GB200 NVL72)") == std::vector<std::string>{"blackwell-deepseek"});
  CHECK(stacks_without_host_time("Ascend 910B") == std::vector<std::string>{"ascend-cann"});
  CHECK(stacks_without_host_time("an NPU no stack measured").empty());  // the roofline (any NPU) is no framework
}

TEST_CASE("a preset can be named by path", "[spec]") {
  ClusterSpec s = load_cluster_spec(std::string(EPSIM_SOURCE_DIR) + "/platforms/h800.toml");
  CHECK(s.name == "h800-rail");
}

TEST_CASE("atlas950 preset: 8192 Ascend 950DT cards, 2 TB/s UB per card as 1 TB/s each direction", "[spec]") {
  ClusterSpec s = load_cluster_spec("atlas950");
  CHECK(s.npu_count() == 256);  // 4 of the SuperPoD's 128 cabinets
  CHECK(s.npu.flops_fp8 == 1e15);
  CHECK(s.npu.hbm_bandwidth_Bps == 4e12);
  CHECK(s.npu.hbm_capacity_bytes == 144e9);
  REQUIRE(s.supernode);
  CHECK(!s.scaleout);
  CHECK(2 * s.supernode->port_bandwidth_Bps == 2e12);
}

TEST_CASE("one key says whether a rank is a 910C package or a die", "[spec][dies]") {
  const ClusterSpec package = load_cluster_spec("cloudmatrix384");
  const ClusterSpec die = load_cluster_spec("cloudmatrix384", {"npu.rank=die"});
  CHECK(package.npu.dies == 2);
  CHECK_FALSE(package.npu.rank_per_die);
  CHECK(die.npu.rank_per_die);
  // Every per-package figure split over the 2 dies, twice the ranks: the package's totals kept.
  CHECK(die.npu.flops_bf16 == package.npu.flops_bf16 / 2);
  CHECK(die.npu.flops_int8 == package.npu.flops_int8 / 2);
  CHECK(die.npu.hbm_bandwidth_Bps == package.npu.hbm_bandwidth_Bps / 2);
  CHECK(die.npu.hbm_capacity_bytes == 64e9);
  CHECK(die.supernode->port_bandwidth_Bps == 196e9);
  CHECK(die.node.npus == 16);
  CHECK(die.npu_count() == 768);
  CHECK(die.npu_count() * die.npu.flops_bf16 == package.npu_count() * package.npu.flops_bf16);
  CHECK(npu_description(die.npu) == "Ascend 910C, a rank per die (2 per package)");
  CHECK(npu_description(package.npu) == "Ascend 910C");
  // A switched node splits its port too (h800 as if its GPUs had 2 dies).
  const ClusterSpec h800 = load_cluster_spec("h800", {"npu.dies=2", "npu.rank=die"});
  CHECK(h800.node.npus == 16);
  CHECK(h800.node.link_bandwidth_Bps == load_cluster_spec("h800").node.link_bandwidth_Bps / 2);
  CHECK(h800.scaleout->nic_bandwidth_Bps == load_cluster_spec("h800").scaleout->nic_bandwidth_Bps / 2);
  CHECK_THROWS_WITH(load_cluster_spec("a2", {"npu.rank=die"}),
                    "--set npu.rank=die: error: npu.rank: \"die\" needs npu.dies >= 2 (the dies of one package)");
}
