// Rank groups against Megatron-Core's documented examples, partitions and
// coordinates for every small layout, checks and layer splits.
#include <catch2/catch.hpp>

#include <set>

#include "workloads/parallel_layout.hpp"

using epsim::workloads::check_layout;
using epsim::workloads::check_stage_split;
using epsim::workloads::GroupKind;
using epsim::workloads::ParallelLayout;
using epsim::workloads::split_layers;
using Groups = std::vector<std::vector<int>>;

TEST_CASE("layout: Megatron's 16-GPU example (tp 2, pp 4, dp 2)", "[layout]") {
  // initialize_model_parallel's docstring: 8 TP groups [g0,g1],[g2,g3],...;
  // 8 DP groups [g0,g2],[g1,g3],[g4,g6],...; 4 PP groups [g0,g4,g8,g12],...
  const ParallelLayout l{2, 4, 2, 1, 1};
  REQUIRE(l.world() == 16);
  CHECK(l.groups(GroupKind::kTensor) ==
        Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}, {10, 11}, {12, 13}, {14, 15}});
  CHECK(l.groups(GroupKind::kData) ==
        Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}, {8, 10}, {9, 11}, {12, 14}, {13, 15}});
  CHECK(l.groups(GroupKind::kPipeline) == Groups{{0, 4, 8, 12}, {1, 5, 9, 13}, {2, 6, 10, 14}, {3, 7, 11, 15}});
}

TEST_CASE("layout: expert groups are carved from one pipeline stage", "[layout]") {
  // 16 ranks, tp 2, pp 2 (dp 4): a stage holds 8 ranks; ep 4 with etp 1
  // leaves edp 2. EP groups are consecutive ranks inside a stage.
  const ParallelLayout l{2, 2, 4, 4, 1};
  REQUIRE(l.edp() == 2);
  CHECK(l.groups(GroupKind::kExpert) == Groups{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10, 11}, {12, 13, 14, 15}});
  CHECK(l.groups(GroupKind::kExpertData) ==
        Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}, {8, 12}, {9, 13}, {10, 14}, {11, 15}});
  CHECK(l.groups(GroupKind::kExpertTensor).size() == 16);
  // The same PP groups in both decompositions.
  CHECK(l.groups(GroupKind::kPipeline) == Groups{{0, 8}, {1, 9}, {2, 10}, {3, 11}, {4, 12}, {5, 13}, {6, 14},
                                                 {7, 15}});
  // etp 2: EP members stride by etp.
  const ParallelLayout e{2, 1, 4, 2, 2};
  CHECK(e.groups(GroupKind::kExpert) == Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}});
  CHECK(e.groups(GroupKind::kExpertTensor) == Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}});
}

TEST_CASE("layout: DeepSeek-V3's production layout (PP16, EP64, DP128, no TP)", "[layout]") {
  const ParallelLayout l{1, 16, 128, 64, 1};
  REQUIRE(l.world() == 2048);
  REQUIRE(l.edp() == 2);
  const Groups ep = l.groups(GroupKind::kExpert);
  REQUIRE(ep.size() == 32);
  CHECK(ep[0].front() == 0);
  CHECK(ep[0].back() == 63);  // 8 nodes of 8 GPUs
  const Groups pp = l.groups(GroupKind::kPipeline);
  REQUIRE(pp.size() == 128);
  CHECK(pp[0] == std::vector<int>{0, 128, 256, 384, 512, 640, 768, 896, 1024, 1152, 1280, 1408, 1536, 1664, 1792,
                                  1920});
}

TEST_CASE("layout: groups partition the world and coordinates invert the numbering", "[layout]") {
  for (int tp : {1, 2, 4})
    for (int pp : {1, 2, 3})
      for (int dp : {1, 2, 4, 8})
        for (int ep : {1, 2, 4})
          for (int etp : {1, 2}) {
            const ParallelLayout l{tp, pp, dp, ep, etp};
            if (l.stage_ranks() % (ep * etp) != 0) continue;
            for (GroupKind k : {GroupKind::kTensor, GroupKind::kData, GroupKind::kPipeline, GroupKind::kExpert,
                                GroupKind::kExpertTensor, GroupKind::kExpertData}) {
              std::set<int> seen;
              for (const auto& g : l.groups(k))
                for (int r : g) CHECK(seen.insert(r).second);
              CHECK(static_cast<int>(seen.size()) == l.world());
            }
            for (int r = 0; r < l.world(); ++r) {
              const ParallelLayout::Coords c = l.coords(r);
              CHECK(l.dense_rank(c.tp, c.dp, c.pp) == r);
              CHECK(l.expert_rank(c.etp, c.ep, c.edp, c.pp) == r);
            }
          }
}

TEST_CASE("layout: checks name the key at fault", "[layout]") {
  CHECK_FALSE(check_layout({1, 16, 128, 64, 1}, 8, false));
  auto p = check_layout({2, 1, 3, 4, 1}, 8, false);  // a stage of 6 ranks cannot hold EP4
  REQUIRE(p);
  CHECK(p->key == "ep");
  CHECK(p->message == "etp x ep = 1 x 4 must divide the tp x dp = 2 x 3 ranks of a pipeline stage");
  p = check_layout({16, 1, 2, 1, 1}, 8, false);
  REQUIRE(p);
  CHECK(p->key == "tp");
  CHECK_FALSE(check_layout({16, 1, 2, 1, 1}, 8, true));
  p = check_layout({1, 0, 1, 1, 1}, 8, false);
  REQUIRE(p);
  CHECK(p->key == "pp");
}

TEST_CASE("layout: layers split over chunks, interleaved chunks round-robin over stages", "[layout]") {
  // DeepSeek-V3: 61 layers over PP16: 61 = 16 x 3 + 13, the remainder on the earliest chunks.
  auto s = split_layers(61, 16, 1);
  REQUIRE(s.chunk_layers.size() == 16);
  CHECK(s.chunk_layers[0] == 4);
  CHECK(s.chunk_layers[12] == 4);
  CHECK(s.chunk_layers[13] == 3);
  CHECK(s.chunk_first[15] == 58);
  // Megatron's interleaving example: 16 layers, pp 4, vpp 2: GPU 0 holds chunks 0 and 4 = layers [0,1] and [8,9].
  s = split_layers(16, 4, 2);
  CHECK(s.chunk_layers == std::vector<int>(8, 2));
  CHECK(s.stage_of_chunk(4, 4) == 0);
  CHECK(s.chunk_first[4] == 8);
  // First and last stage sizes fixed: the rest even.
  s = split_layers(61, 8, 1, 5, 6);
  CHECK(s.chunk_layers == std::vector<int>{5, 9, 9, 8, 8, 8, 8, 6});
  CHECK_FALSE(check_stage_split(61, 8, 1, 5, 6));
  auto p = check_stage_split(4, 4, 2, 0, 0);
  REQUIRE(p);
  CHECK(p->key == "pp");
  p = check_stage_split(8, 1, 1, 2, 0);
  REQUIRE(p);
  CHECK(p->key == "first_stage_layers");
}
