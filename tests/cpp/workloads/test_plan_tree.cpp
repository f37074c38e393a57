// Tree plans: the double binary tree over ranks with no layout (shape, complementarity, per-rank
// bytes), rooted broadcast and reduce, NCCL's chain on one node, and the multi-node tree (chains
// in nodes, trees between heads).
#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "plan_helpers.hpp"

using namespace cs::work;
using namespace cs::work::test;

TEST_CASE("Tree all_reduce: two binary spanning trees, each edge both ways with half the data") {
  for (int n : {2, 3, 4, 5, 6, 7, 8, 9, 16, 33}) {
    CAPTURE(n);
    const auto plan = plan_of(Op::all_reduce, Alg::tree, flat(n));
    REQUIRE(plan.stages.size() == 1);
    const Stage& s = plan.stages[0];
    // Two trees of n-1 edges, each edge up and down with 1/2: 2(n-1) in all.
    REQUIRE(total_share(plan) == Approx(2.0 * (n - 1)));
    REQUIRE(s.steps == 2 * (tree_levels(n) - 1));
    for (int32_t tree : {0, 1}) {
      CAPTURE(tree);
      const std::vector<Transfer> edges = of_chain(s, tree);
      REQUIRE(edges.size() == static_cast<std::size_t>(2 * (n - 1)));
      std::set<std::pair<int, int>> directed;
      for (const Transfer& t : edges) {
        REQUIRE(t.share == 0.5);
        REQUIRE(directed.emplace(t.src, t.dst).second);
      }
      for (const auto& [a, b] : directed) REQUIRE(directed.count({b, a}) == 1);
      // n-1 undirected edges reaching all n members: a spanning tree; binary: degree <= 3.
      const auto adj = neighbours(edges);
      REQUIRE(adj.size() == static_cast<std::size_t>(n));
      for (const auto& [r, next] : adj) REQUIRE(next.size() <= 3);
      std::set<int> seen{plan.ranks[0]};
      std::vector<int> todo{plan.ranks[0]};
      while (!todo.empty()) {
        const int r = todo.back();
        todo.pop_back();
        for (int x : adj.at(r))
          if (seen.insert(x).second) todo.push_back(x);
      }
      REQUIRE(seen.size() == static_cast<std::size_t>(n));
    }
  }
}

TEST_CASE("Tree all_reduce: NCCL's bit-based shape, mirrored for even n, shifted for odd n") {
  // Positions: p > 0 with lowest set bit b hangs under p + b or p - b, whichever has lowest set
  // bit 2b (p - b when p + b is out of range); 0 is the root with one child.
  const auto positions = [](int n, int32_t tree) {
    const GroupLayout g = flat(n);
    const Stage s = plan_of(Op::all_reduce, Alg::tree, g).stages[0];
    // Tree B holds member n-1-p (n even) or p+1 (n odd) at position p.
    const auto member_at = [&](int p) {
      const int i = tree == 0 ? p : n % 2 == 0 ? n - 1 - p : (p + 1) % n;
      return g.ranks[static_cast<std::size_t>(i)];
    };
    std::map<int, int> position_of;
    for (int p = 0; p < n; ++p) position_of[member_at(p)] = p;
    std::map<int, int> out;  // position -> parent position
    for (const auto& [child, parent] : parents_from(of_chain(s, tree), member_at(0)))
      out[position_of[child]] = parent < 0 ? -1 : position_of[parent];
    return out;
  };
  for (int32_t tree : {0, 1}) {
    CAPTURE(tree);
    REQUIRE(positions(8, tree) ==
            std::map<int, int>{{0, -1}, {1, 2}, {2, 4}, {3, 2}, {4, 0}, {5, 6}, {6, 4}, {7, 6}});
    REQUIRE(positions(6, tree) == std::map<int, int>{{0, -1}, {1, 2}, {2, 4}, {3, 2}, {4, 0}, {5, 4}});
    REQUIRE(positions(7, tree) ==
            std::map<int, int>{{0, -1}, {1, 2}, {2, 4}, {3, 2}, {4, 0}, {5, 6}, {6, 4}});
    REQUIRE(positions(3, tree) == std::map<int, int>{{0, -1}, {1, 2}, {2, 0}});
  }
}

TEST_CASE("Tree all_reduce: no rank relays in both trees; every rank sends and receives <= 2S") {
  // A rank relays in a tree when it has a parent and a child (more than one neighbour): it
  // receives and forwards there. Odd positions are leaves and the root has one child, so tree
  // A's relays are the even positions 2, 4, ...; tree B puts odd positions, or (n odd) the
  // positions shifted by one, on them. A rank with children in both trees is unavoidable for
  // n odd: each tree has (n+1)/2 ranks with children (the even positions, the root included),
  // n+1 in all. It is ranks[0], A's root, at B's last position; one child in each tree.
  for (int n = 2; n <= 64; ++n) {
    CAPTURE(n);
    const GroupLayout g = flat(n);
    const auto plan = plan_of(Op::all_reduce, Alg::tree, g);
    const Stage& s = plan.stages[0];
    const int root_b = g.ranks[n % 2 == 0 ? static_cast<std::size_t>(n - 1) : 1];
    std::map<int, int> relays, with_children;
    for (const auto& [tree, root] : {std::pair{0, g.ranks[0]}, std::pair{1, root_b}}) {
      for (const auto& [r, next] : neighbours(of_chain(s, tree))) relays[r] += next.size() > 1;
      std::map<int, int> children;
      for (const auto& [child, parent] : parents_from(of_chain(s, tree), root))
        if (parent >= 0) ++children[parent];
      REQUIRE(children[root] == 1);  // NCCL's root has a single child
      for (const auto& [r, count] : children) with_children[r] += 1;
    }
    for (const auto& [r, count] : relays) REQUIRE(count <= 1);
    std::set<int> in_both;
    for (const auto& [r, count] : with_children)
      if (count == 2) in_both.insert(r);
    REQUIRE(in_both == (n % 2 == 0 ? std::set<int>{} : std::set<int>{g.ranks[0]}));
    std::map<int, double> received;
    for (const Transfer& t : s.transfers) received[t.dst] += t.share;
    for (int r : g.ranks) {
      REQUIRE(bytes_sent_share(plan, r) <= 2.0);
      REQUIRE(received[r] <= 2.0);
    }
    // Some rank has two children in a tree (n >= 4): it sends S/2 up and S down there, and
    // S/2 up in the other tree as a leaf, 2S; the busiest port carries 2S.
    double most = 0;
    for (int r : g.ranks) most = std::max(most, bytes_sent_share(plan, r));
    REQUIRE(most == (n >= 4 ? 2.0 : n == 3 ? 1.5 : 1.0));
  }
}

TEST_CASE("Tree broadcast and reduce: tree A rooted at ranks[0], ceil(log2 n) + 1 levels") {
  for (int n : {2, 3, 4, 7, 8, 16, 33}) {
    CAPTURE(n);
    const GroupLayout g = flat(n);
    const int root = g.ranks[0];
    const auto bc = plan_of(Op::broadcast, Alg::tree, g);
    const auto rd = plan_of(Op::reduce, Alg::tree, g);
    const std::vector<Transfer>& down = bc.stages.at(0).transfers;
    REQUIRE(down.size() == static_cast<std::size_t>(n - 1));
    std::map<int, int> parents;  // every member but the root receives exactly once
    for (const Transfer& t : down) {
      REQUIRE(t.share == 1);
      REQUIRE(t.chain == 0);
      ++parents[t.dst];
    }
    REQUIRE(parents.count(root) == 0);
    for (const auto& [r, count] : parents) REQUIRE(count == 1);
    const int depth = levels(down, root);
    REQUIRE(depth == tree_levels(n));
    REQUIRE(bc.stages[0].steps == depth - 1);
    // reduce is the same tree, edges towards the root.
    REQUIRE(rd.stages[0].steps == depth - 1);
    const auto up = reversed(rd.stages[0].transfers);
    std::set<std::pair<int, int>> a, b;
    for (const Transfer& t : down) a.emplace(t.src, t.dst);
    for (const Transfer& t : up) b.emplace(t.src, t.dst);
    REQUIRE(a == b);
  }
}

TEST_CASE("tree all_reduce on one node: NCCL's chain through its ranks, both trees", "[plan]") {
  // NCCL's tree inside a node is a chain (src/graph/connect.cc, ncclTopoPreset), duplicated for
  // its two trees: 2 pipelines of 1/2, each the n-1 chain edges up and down; 2(n-1) steps, none
  // across nodes. Every rank sends at most 2S, as in the double binary tree.
  for (int n : {2, 3, 4, 8}) {
    CAPTURE(n);
    const auto plan = plan_of(Op::all_reduce, Alg::tree, nodes(1, n));
    REQUIRE(plan.stages.size() == 1);
    const Stage& s = plan.stages[0];
    CHECK(s.steps == 2 * (n - 1));
    CHECK(s.inter_node_steps == 0);
    for (int32_t chain : {0, 1}) {
      const std::vector<Transfer> edges = of_chain(s, chain);
      REQUIRE(edges.size() == static_cast<std::size_t>(2 * (n - 1)));
      for (const Transfer& t : edges) {
        CHECK(t.share == 0.5);
        CHECK(std::abs(t.src - t.dst) == 1);  // neighbours in the node's order
      }
    }
    for (int r = 500; r < 500 + n; ++r) CHECK(bytes_sent_share(plan, r) <= 2.0 + 1e-12);
  }
}

TEST_CASE("tree all_reduce across nodes: chains inside nodes, trees between heads, per channel",
          "[plan]") {
  // 4 nodes x 8 GPUs: per pipeline, a chain of 7 edges per node and a 3-edge tree between the
  // 4 heads, each both ways; c channels -> 2c pipelines of 1/(2c): NCCL duplicates each
  // channel, one copy per tree, both on the channel's rail.
  GroupLayout g = nodes(4, 8);
  for (int channels : {1, 8}) {
    g.channels = channels;
    const auto plan = make_plan(Op::all_reduce, Alg::tree, g);
    REQUIRE(plan.stages.size() == 1);
    const std::size_t pipelines = 2 * static_cast<std::size_t>(channels);
    CHECK(plan.stages[0].transfers.size() == pipelines * 2 * (4 * 7 + 3));
    CHECK(plan.stages[0].steps == 2 * (7 + 3 - 1));  // tree over 4 heads: 3 levels
    std::map<int32_t, std::size_t> per_chain;
    for (const auto& t : plan.stages[0].transfers) {
      ++per_chain[t.chain];
      CHECK(t.share == Approx(1.0 / static_cast<double>(pipelines)));
    }
    CHECK(per_chain.size() == pipelines);
    // Heads differ between channels: each channel leaves its nodes on its own rail, where it
    // runs both trees (pipelines 2r and 2r+1 on rail r).
    std::map<int, std::set<int32_t>> rail_pipelines;
    for (const auto& t : plan.stages[0].transfers)
      if ((t.src - 500) / 8 != (t.dst - 500) / 8) rail_pipelines[(t.src - 500) % 8].insert(t.chain);
    CHECK(rail_pipelines.size() == static_cast<std::size_t>(channels));
    for (const auto& [rail, chains] : rail_pipelines)
      CHECK(chains == std::set<int32_t>{2 * rail, 2 * rail + 1});
  }
}

TEST_CASE("tree all_reduce across nodes: no NIC rail sends more than S/(2c) x 4", "[plan]") {
  // Per rail both trees: a head that relays in one (S/(2c) up, 2 x S/(2c) down) is a leaf in
  // the other (S/(2c) up), so a rail's NIC sends at most 4 x S/(2c) = 2S/c off its node.
  for (int k : {2, 3, 4, 5, 8}) {
    for (int channels : {1, 4, 8}) {
      CAPTURE(k, channels);
      GroupLayout g = nodes(k, 8);
      g.channels = channels;
      const auto plan = plan_of(Op::all_reduce, Alg::tree, g);
      std::map<int, double> off_node;
      for (const auto& t : plan.stages[0].transfers)
        if ((t.src - 500) / 8 != (t.dst - 500) / 8) off_node[t.src] += t.share;
      double most = 0;
      for (const auto& [r, share] : off_node) most = std::max(most, share);
      CHECK(most <= 2.0 / channels + 1e-12);
      if (k >= 4) CHECK(most == Approx(2.0 / channels));  // some head has two children
    }
  }
}

TEST_CASE("tree all_reduce across nodes: the trees between heads are complementary", "[plan]") {
  // One channel: two pipelines, tree A and tree B over the nodes' heads (their first ranks).
  // A node head relays (has a parent and a child among the heads) in one tree at most.
  for (int k : {2, 3, 4, 5, 8, 9}) {
    CAPTURE(k);
    const auto plan = plan_of(Op::all_reduce, Alg::tree, nodes(k, 4));
    CHECK(plan.stages[0].steps == 2 * (3 + tree_levels(k) - 1));
    std::map<int, int> relays;
    for (int32_t tree : {0, 1}) {
      std::vector<Transfer> between;
      for (const Transfer& t : of_chain(plan.stages[0], tree))
        if ((t.src - 500) / 4 != (t.dst - 500) / 4) between.push_back(t);
      REQUIRE(between.size() == static_cast<std::size_t>(2 * (k - 1)));
      for (const auto& [head, next] : neighbours(between)) {
        CHECK((head - 500) % 4 == 0);
        relays[head] += next.size() > 1;
      }
    }
    for (const auto& [head, count] : relays) CHECK(count <= 1);
  }
}

TEST_CASE("tree all_reduce across uneven nodes: a chain per node of its size", "[plan]") {
  // Nodes of 8 and 4 members, 8 channels: 16 pipelines of 1/16 (two per channel, one per
  // tree); node 1's chains start on its rails 0..3, each for two channels, so four pipelines;
  // the 8-member chain and the 2-level tree set the steps.
  GroupLayout g = nodes(1, 8);
  for (int i = 0; i < 4; ++i) {
    g.ranks.push_back(508 + i);
    g.node_of.push_back(1);
  }
  g.channels = 8;
  const auto plan = plan_of(Op::all_reduce, Alg::tree, g);
  const Stage& s = plan.stages.at(0);
  CHECK(s.steps == 2 * (7 + tree_levels(2) - 1));
  CHECK(s.transfers.size() == 16u * 2 * (7 + 3 + 1));
  std::map<int, int> heads;  // node 1's member -> pipelines it heads (sends off the node)
  for (const Transfer& t : s.transfers) {
    CHECK(t.share == Approx(1.0 / 16));
    if (t.src >= 508 && t.dst < 508) ++heads[t.src];
  }
  CHECK(heads == std::map<int, int>{{508, 4}, {509, 4}, {510, 4}, {511, 4}});
}
