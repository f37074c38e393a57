// NCCL channels: rings per NIC rail on uniform and uneven node layouts.
#include <algorithm>
#include <cstddef>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "plan_helpers.hpp"

using namespace cs::work;
using namespace cs::work::test;

namespace {

// Ranks 500, 501, ... filling nodes 0, 1, ... with the given numbers of members.
GroupLayout uneven(const std::vector<int>& sizes, int channels) {
  GroupLayout g;
  g.channels = channels;
  int rank = 500;
  for (std::size_t node = 0; node < sizes.size(); ++node)
    for (int i = 0; i < sizes[node]; ++i) {
      g.ranks.push_back(rank++);
      g.node_of.push_back(static_cast<int>(node));
    }
  return g;
}

// The members of a closed ring in the order its edges walk them, from `start`; fails unless
// the edges are one cycle through every member of g.
std::vector<int> ring_order(const std::vector<Transfer>& edges, const GroupLayout& g, int start) {
  std::map<int, int> next;
  for (const Transfer& t : edges) REQUIRE(next.emplace(t.src, t.dst).second);
  REQUIRE(next.size() == g.ranks.size());
  std::vector<int> order{start};
  for (int at = next.at(start); at != start; at = next.at(at)) order.push_back(at);
  REQUIRE(order.size() == g.ranks.size());
  return order;
}

int32_t chains_in(const Stage& s) {
  int32_t most = -1;
  for (const Transfer& t : s.transfers) most = std::max(most, t.chain);
  return most + 1;
}

}  // namespace

TEST_CASE("Channels on uniform nodes: ring j of c enters node q at local member (j m / c - q) mod m") {
  for (auto [k, m] : {std::pair{2, 4}, {4, 8}, {3, 2}, {5, 8}, {2, 1}}) {
    for (int channels : {1, 2, 8, 16}) {
      CAPTURE(k, m, channels);
      GroupLayout g = nodes(k, m);
      g.channels = channels;
      const Stage s = plan_of(Op::all_reduce, Alg::ring, g).stages[0];
      const int c = channels <= 1 ? 1 : std::min(channels, m);
      REQUIRE(chains_in(s) == c);
      if (c == 1) {  // the group's order
        REQUIRE(ring_order(s.transfers, g, 500) == g.ranks);
        continue;
      }
      for (int j = 0; j < c; ++j) {
        std::vector<int> expected;  // the rings of the uniform construction, written out
        const int e0 = j * m / c;  // channels spread over the members (and their NICs)
        for (int q = 0; q < k; ++q)
          for (int i = 0; i < m; ++i) expected.push_back(500 + q * m + ((e0 - q) % m + m + i) % m);
        REQUIRE(ring_order(of_chain(s, j), g, expected[0]) == expected);
      }
    }
  }
}

TEST_CASE("Channels on uneven nodes: min(channels, most members) rings entering on the rail left") {
  // Ring j enters node q at e_q, leaves from x_q = (e_q - 1) mod m_q, and enters node q+1 at
  // x_q mod m_{q+1}; e_0 = j m_0 / c, the channels spread over node 0's members.
  for (const auto& [sizes, channels] : {std::pair{std::vector<int>{8, 4}, 8},
                                        {std::vector<int>{2, 6, 1}, 8},
                                        {std::vector<int>{3, 5}, 4},
                                        {std::vector<int>{1, 4, 4, 2}, 2}}) {
    CAPTURE(sizes, channels);
    const GroupLayout g = uneven(sizes, channels);
    const auto plan = plan_of(Op::all_reduce, Alg::ring, g);
    const Stage& s = plan.stages[0];
    int most = 0;
    for (int m : sizes) most = std::max(most, m);
    const int c = std::min(channels, most);
    REQUIRE(chains_in(s) == c);
    const double n = static_cast<double>(g.ranks.size());
    for (int r : g.ranks) REQUIRE(bytes_sent_share(plan, r) == Approx(2 * (n - 1) / n));
    for (int j = 0; j < c; ++j) {
      CAPTURE(j);
      std::vector<int> expected;
      int first = 500, enter = j * sizes[0] / c;
      for (int m : sizes) {
        enter %= m;
        for (int i = 0; i < m; ++i) expected.push_back(first + (enter + i) % m);
        enter = (enter + m - 1) % m;
        first += m;
      }
      REQUIRE(ring_order(of_chain(s, j), g, expected[0]) == expected);
    }
  }
}

TEST_CASE("Channels spread over the NICs when GPUs outnumber them") {
  // 4 nodes of 8 GPUs (ranks 500 + 8q + i) with 4 NICs (GPU i uses NIC i / 2): 4 channels enter and
  // leave every node on 4 different NICs, where entering at members 0..3 used NICs 0 and 1.
  GroupLayout g = nodes(4, 8);
  g.channels = 4;
  const Stage s = plan_of(Op::all_reduce, Alg::ring, g).stages[0];
  REQUIRE(chains_in(s) == 4);
  for (int q = 0; q < 4; ++q) {
    std::multiset<int> leaving_nics;
    for (const Transfer& t : s.transfers)
      if ((t.src - 500) / 8 == q && (t.dst - 500) / 8 != q) leaving_nics.insert((t.src - 500) % 8 / 2);
    CHECK(leaving_nics == std::multiset<int>{0, 1, 2, 3});
  }
}

TEST_CASE("Channels on 8 + 4 members: every member sends off its node, none more than twice") {
  // 12 ranks on two 8-GPU nodes with 8 NICs: the 8 rings leave node 0 once from each member
  // (each NIC rail once) and node 1 twice from each of its 4, where one ring used to leave
  // each node from one member.
  const GroupLayout g = uneven({8, 4}, 8);
  const Stage s = plan_of(Op::all_reduce, Alg::ring, g).stages[0];
  std::map<int, int> leaves;
  for (const Transfer& t : s.transfers)
    if ((t.src < 508) != (t.dst < 508)) ++leaves[t.src];
  REQUIRE(leaves.size() == 12);
  for (const auto& [r, count] : leaves) REQUIRE(count == (r < 508 ? 1 : 2));
}

TEST_CASE("One ring in the group's order on one node, without node_of, or with one channel") {
  GroupLayout one_node = uneven({8}, 8);
  GroupLayout unknown = flat(8);
  unknown.channels = 8;
  GroupLayout single = uneven({8, 4}, 1);
  for (const GroupLayout& g : {one_node, unknown, single}) {
    const Stage s = plan_of(Op::all_reduce, Alg::ring, g).stages[0];
    REQUIRE(chains_in(s) == 1);
    REQUIRE(ring_order(s.transfers, g, g.ranks[0]) == g.ranks);
  }
}

TEST_CASE("Ring broadcast and reduce: each channel's ring opened at the root, 1/c of S each") {
  for (const GroupLayout& base : {nodes(4, 8), uneven({8, 4}, 8), uneven({2, 6, 1}, 8)}) {
    GroupLayout g = base;
    g.channels = 8;
    const int n = static_cast<int>(g.ranks.size()), root = g.ranks[0];
    CAPTURE(n);
    const Stage ring = plan_of(Op::all_reduce, Alg::ring, g).stages[0];
    const Stage bc = plan_of(Op::broadcast, Alg::ring, g).stages[0];
    const Stage rd = plan_of(Op::reduce, Alg::ring, g).stages[0];
    const int32_t c = chains_in(ring);
    REQUIRE(chains_in(bc) == c);
    REQUIRE(chains_in(rd) == c);
    REQUIRE(bc.steps == n - 1);
    REQUIRE(rd.steps == n - 1);
    for (int32_t j = 0; j < c; ++j) {
      CAPTURE(j);
      // Broadcast chain j: ring j from the root, n-1 edges; with the edge back to the root it
      // is ring j. Reduce runs the same chain towards the root.
      const std::vector<Transfer> down = of_chain(bc, j);
      REQUIRE(down.size() == static_cast<std::size_t>(n - 1));
      std::set<std::pair<int, int>> closed, ring_edges, up;
      std::map<int, int> in_degree;
      for (const Transfer& t : down) {
        REQUIRE(t.share == Approx(1.0 / c));
        closed.emplace(t.src, t.dst);
        ++in_degree[t.dst];
      }
      REQUIRE(in_degree.count(root) == 0);
      REQUIRE(levels(down, root) == n);  // one path through all n
      std::set<int> senders;
      for (const Transfer& t : down) senders.insert(t.src);
      std::vector<int> last;  // the end of the chain: the one member that sends nothing
      for (int r : g.ranks)
        if (senders.count(r) == 0) last.push_back(r);
      REQUIRE(last.size() == 1);
      closed.emplace(last[0], root);
      for (const Transfer& t : of_chain(ring, j)) ring_edges.emplace(t.src, t.dst);
      REQUIRE(closed == ring_edges);
      for (const Transfer& t : reversed(of_chain(rd, j))) up.emplace(t.src, t.dst);
      closed.erase({last[0], root});
      REQUIRE(up == closed);
    }
    // The root sends S in all (S/c down each chain); nobody sends more.
    const auto plan = make_plan(Op::broadcast, Alg::ring, g);
    REQUIRE(bytes_sent_share(plan, root) == Approx(1.0));
    for (int r : g.ranks) REQUIRE(bytes_sent_share(plan, r) <= 1.0 + 1e-12);
  }
}
