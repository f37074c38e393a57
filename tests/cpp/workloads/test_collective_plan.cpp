// Collective plans: well-formed for every op and algorithm, per-rank bytes in closed form,
// the shapes of exchanges, data flow of all_gather, and the errors (trees: test_plan_tree.cpp).
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "plan_helpers.hpp"

using namespace cs::work;
using namespace cs::work::test;

namespace {

// Follows an all_gather plan piece by piece: member i starts with piece i of n, each 1/n of S.
// An independent transfer carries everything its source held when the stage began; a chain
// must be a pipelined ring over members holding disjoint, equally many pieces, and leaves
// each of them with the union. Every piece must arrive once and the shares must match.
void check_all_gather_flow(const CollectivePlan& plan) {
  const double n = static_cast<double>(plan.ranks.size());
  std::map<int, std::set<int>> held;
  for (std::size_t i = 0; i < plan.ranks.size(); ++i) held[plan.ranks[i]] = {static_cast<int>(i)};
  for (const Stage& s : plan.stages) {
    CAPTURE(s.name);
    std::map<int, std::set<int>> next = held;
    std::map<int32_t, std::map<int, int>> rings;  // chain -> src -> dst
    s.for_each([&](const Transfer& t) {
      if (t.chain >= 0) {
        REQUIRE(rings[t.chain].emplace(t.src, t.dst).second);
        return;
      }
      REQUIRE(t.share == Approx(static_cast<double>(held[t.src].size()) / n));
      for (int piece : held[t.src]) REQUIRE(next[t.dst].insert(piece).second);
    });
    for (const auto& [chain, succ] : rings) {
      const std::size_t len = succ.size();
      const std::size_t each = held[succ.begin()->first].size();
      std::set<int> all;
      int at = succ.begin()->first;
      for (std::size_t i = 0; i < len; ++i) {  // one cycle through every member
        REQUIRE(held[at].size() == each);
        all.insert(held[at].begin(), held[at].end());
        at = succ.at(at);
      }
      REQUIRE(at == succ.begin()->first);
      REQUIRE(all.size() == len * each);
      const double share = (static_cast<double>(len) - 1) * static_cast<double>(each) / n;
      for (const Transfer& t : of_chain(s, chain)) REQUIRE(t.share == Approx(share));
      for (const auto& [member, to] : succ)
        for (int piece : all)
          if (held[member].count(piece) == 0) REQUIRE(next[member].insert(piece).second);
    }
    held = next;
  }
  for (const auto& [rank, pieces] : held) REQUIRE(pieces.size() == plan.ranks.size());
}

}  // namespace

TEST_CASE("algorithms_for lists the planned algorithms in enum order") {
  const std::vector<Alg> all{Alg::ring, Alg::tree, Alg::halving_doubling, Alg::direct,
                             Alg::hierarchical};
  REQUIRE(algorithms_for(Op::all_reduce) == all);
  REQUIRE(algorithms_for(Op::reduce_scatter) ==
          std::vector<Alg>{Alg::ring, Alg::halving_doubling, Alg::direct, Alg::hierarchical});
  REQUIRE(algorithms_for(Op::all_gather) == algorithms_for(Op::reduce_scatter));
  REQUIRE(algorithms_for(Op::all_to_all) == std::vector<Alg>{Alg::direct});
  REQUIRE(algorithms_for(Op::broadcast) ==
          std::vector<Alg>{Alg::ring, Alg::tree, Alg::direct, Alg::hierarchical});
  REQUIRE(algorithms_for(Op::reduce) == algorithms_for(Op::broadcast));
  REQUIRE(algorithms_for(Op::send_recv) == std::vector<Alg>{Alg::direct});
}

TEST_CASE("Every plan is well formed over several group sizes and layouts") {
  int plans = 0;
  for (Op op : kOps) {
    for (Alg alg : algorithms_for(op)) {
      if (alg == Alg::hierarchical) {
        for (auto [k, m] : {std::pair{2, 4}, {4, 8}, {3, 1}}) {
          plan_of(op, alg, nodes(k, m));
          ++plans;
        }
        continue;
      }
      for (int n : {2, 3, 4, 7, 8, 16}) {
        if (op == Op::send_recv && n != 2) continue;
        const bool fits =
            !(alg == Alg::halving_doubling && op != Op::all_reduce) || power_of_two(n);
        if (!fits) {
          REQUIRE_THROWS_AS(make_plan(op, alg, flat(n)), PlanError);
          continue;
        }
        plan_of(op, alg, flat(n));
        ++plans;
      }
    }
  }
  // Guards against the loops silently skipping plans. Flat groups: all_reduce 4 x 6;
  // reduce_scatter and all_gather ring 6 + halving_doubling 4 + direct 6; all_to_all 6;
  // broadcast and reduce 3 x 6; send_recv 1. Hierarchical: 5 ops x 3 layouts.
  REQUIRE(plans == 24 + 2 * 16 + 6 + 2 * 18 + 1 + 15);
}

TEST_CASE("Ring: per-rank bytes and steps in closed form") {
  for (int n : {2, 3, 4, 7, 8, 16, 100}) {
    CAPTURE(n);
    const double fn = n;
    const auto ar = plan_of(Op::all_reduce, Alg::ring, flat(n));
    const auto rs = plan_of(Op::reduce_scatter, Alg::ring, flat(n));
    const auto ag = plan_of(Op::all_gather, Alg::ring, flat(n));
    REQUIRE(ar.stages.size() == 1);
    REQUIRE(ar.stages[0].steps == 2 * (n - 1));
    REQUIRE(rs.stages[0].steps == n - 1);
    REQUIRE(ag.stages[0].steps == n - 1);
    for (int r : flat(n).ranks) {
      REQUIRE(bytes_sent_share(ar, r) == Approx(2 * (fn - 1) / fn));
      REQUIRE(bytes_sent_share(rs, r) == Approx((fn - 1) / fn));
      REQUIRE(bytes_sent_share(ag, r) == Approx((fn - 1) / fn));
    }
  }
}

TEST_CASE("Ring broadcast is a chain from the root; reduce the same chain towards it") {
  const GroupLayout g = flat(4);  // 1000, 997, 994, 991
  const auto bc = plan_of(Op::broadcast, Alg::ring, g);
  const auto rd = plan_of(Op::reduce, Alg::ring, g);
  REQUIRE(bc.stages[0].steps == 3);
  REQUIRE(rd.stages[0].steps == 3);
  const std::vector<std::pair<int, int>> chain{{1000, 997}, {997, 994}, {994, 991}};
  REQUIRE(bc.stages[0].transfers.size() == 3);
  REQUIRE(rd.stages[0].transfers.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    const Transfer& down = bc.stages[0].transfers[i];
    const Transfer& up = rd.stages[0].transfers[i];
    REQUIRE(std::pair{down.src, down.dst} == chain[i]);
    REQUIRE(std::pair{up.dst, up.src} == chain[i]);
    REQUIRE(down.share == 1);
    REQUIRE(down.chain == 0);
  }
  REQUIRE(bytes_sent_share(bc, 991) == 0);
  REQUIRE(bytes_sent_share(rd, 1000) == 0);
}

TEST_CASE("Steps grow like 2 log2 n for the tree and 2(n-1) for the ring") {
  for (int n : {8, 64, 1000, 1024}) {
    CAPTURE(n);
    const int log2n = ceil_log2(n);
    REQUIRE(make_plan(Op::all_reduce, Alg::tree, flat(n)).stages[0].steps == 2 * log2n);
    REQUIRE(make_plan(Op::all_reduce, Alg::ring, flat(n)).stages[0].steps == 2 * (n - 1));
  }
}

TEST_CASE("Halving-doubling all_reduce on a power of two: 2(n-1)/n per rank, 2 log2 n rounds") {
  for (int n : {2, 4, 8, 16, 64}) {
    CAPTURE(n);
    const GroupLayout g = flat(n);
    const auto plan = plan_of(Op::all_reduce, Alg::halving_doubling, g);
    const int rounds = ceil_log2(n);
    REQUIRE(plan.stages.size() == static_cast<std::size_t>(2 * rounds));
    for (int r : g.ranks) REQUIRE(bytes_sent_share(plan, r) == Approx(2.0 * (n - 1) / n));
    // Halving round j: partner at distance n/2^(j+1), 1/2^(j+1) each way; doubling mirrors it.
    for (int j = 0; j < rounds; ++j) {
      const Stage& halve = plan.stages[static_cast<std::size_t>(j)];
      const Stage& dbl = plan.stages[static_cast<std::size_t>(2 * rounds - 1 - j)];
      REQUIRE(halve.name == "halving " + std::to_string(j + 1) + "/" + std::to_string(rounds));
      REQUIRE(halve.transfers.size() == static_cast<std::size_t>(n));
      REQUIRE(dbl.transfers.size() == static_cast<std::size_t>(n));
      for (int i = 0; i < n; ++i) {
        const Transfer& h = halve.transfers[static_cast<std::size_t>(i)];
        const Transfer& d = dbl.transfers[static_cast<std::size_t>(i)];
        const int partner = i ^ (n >> (j + 1));
        REQUIRE(h.src == g.ranks[static_cast<std::size_t>(i)]);
        REQUIRE(h.dst == g.ranks[static_cast<std::size_t>(partner)]);
        REQUIRE(h.share == Approx(1.0 / (1 << (j + 1))));
        REQUIRE(h.chain == -1);
        REQUIRE(std::pair{d.src, d.dst} == std::pair{h.src, h.dst});
        REQUIRE(d.share == Approx(h.share));
      }
    }
  }
}

TEST_CASE("Halving-doubling all_reduce folds the ranks past the largest power of two") {
  const GroupLayout g = flat(12);  // p = 8, r = 4
  const auto plan = plan_of(Op::all_reduce, Alg::halving_doubling, g);
  std::vector<std::string> names;
  for (const Stage& s : plan.stages) names.push_back(s.name);
  REQUIRE(names == std::vector<std::string>{"fold", "halving 1/3", "halving 2/3", "halving 3/3",
                                            "doubling 1/3", "doubling 2/3", "doubling 3/3",
                                            "unfold"});
  const Stage& fold = plan.stages.front();
  const Stage& unfold = plan.stages.back();
  REQUIRE(fold.transfers.size() == 4);
  REQUIRE(unfold.transfers.size() == 4);
  for (std::size_t i = 0; i < 4; ++i) {
    REQUIRE(fold.transfers[i].src == g.ranks[8 + i]);
    REQUIRE(fold.transfers[i].dst == g.ranks[i]);
    REQUIRE(fold.transfers[i].share == 1);
    REQUIRE(unfold.transfers[i].src == g.ranks[i]);
    REQUIRE(unfold.transfers[i].dst == g.ranks[8 + i]);
  }
  // The extra ranks only fold; their partners also unfold; the rest only exchange.
  const double exchange = 2.0 * 7 / 8;
  for (std::size_t i = 0; i < 12; ++i) {
    const double expected = i < 4 ? exchange + 1 : i < 8 ? exchange : 1.0;
    REQUIRE(bytes_sent_share(plan, g.ranks[i]) == Approx(expected));
  }
  REQUIRE(plan_of(Op::all_reduce, Alg::halving_doubling, flat(3)).stages.size() == 4);
}

TEST_CASE("Halving-doubling reduce_scatter and all_gather: (n-1)/n per rank in log2 n rounds") {
  for (int n : {2, 8, 16}) {
    CAPTURE(n);
    const GroupLayout g = flat(n);
    const auto rs = plan_of(Op::reduce_scatter, Alg::halving_doubling, g);
    const auto ag = plan_of(Op::all_gather, Alg::halving_doubling, g);
    REQUIRE(rs.stages.size() == static_cast<std::size_t>(ceil_log2(n)));
    REQUIRE(ag.stages.size() == static_cast<std::size_t>(ceil_log2(n)));
    REQUIRE(rs.stages[0].transfers[0].share == Approx(0.5));
    REQUIRE(ag.stages[0].transfers[0].share == Approx(1.0 / n));
    for (int r : g.ranks) {
      REQUIRE(bytes_sent_share(rs, r) == Approx((n - 1.0) / n));
      REQUIRE(bytes_sent_share(ag, r) == Approx((n - 1.0) / n));
    }
  }
}

TEST_CASE("Direct plans: all pairs, stars and the point-to-point send") {
  for (int n : {2, 3, 7, 16}) {
    CAPTURE(n);
    const GroupLayout g = flat(n);
    const double fn = n;
    const auto a2a = plan_of(Op::all_to_all, Alg::direct, g);
    const auto ar = plan_of(Op::all_reduce, Alg::direct, g);
    const auto bc = plan_of(Op::broadcast, Alg::direct, g);
    const auto rd = plan_of(Op::reduce, Alg::direct, g);
    REQUIRE(a2a.stages.size() == 1);
    REQUIRE(a2a.stages[0].size() == static_cast<std::size_t>(n * (n - 1)));
    // Implicit: every ordered pair, a's sends before the next member's, nothing listed.
    REQUIRE(a2a.stages[0].all_pairs());
    REQUIRE(a2a.stages[0].transfers.empty());
    std::size_t i = 0;
    for (int a : g.ranks)
      for (int b : g.ranks) {
        if (a == b) continue;
        const Transfer t = a2a.stages[0].transfer(i++);
        REQUIRE(std::tuple{t.src, t.dst, t.share, t.chain} == std::tuple{a, b, 1.0 / fn, -1});
      }
    REQUIRE(ar.stages.size() == 2);
    for (int r : g.ranks) {
      REQUIRE(bytes_sent_share(a2a, r) == Approx((fn - 1) / fn));
      REQUIRE(bytes_sent_share(ar, r) == Approx(2 * (fn - 1) / fn));
      REQUIRE(bytes_sent_share(bc, r) == (r == g.ranks[0] ? fn - 1 : 0));
      REQUIRE(bytes_sent_share(rd, r) == (r == g.ranks[0] ? 0 : 1));
    }
  }
  const auto p2p = plan_of(Op::send_recv, Alg::direct, flat(2));
  REQUIRE(p2p.stages.size() == 1);
  REQUIRE(p2p.stages[0].transfers.size() == 1);
  const Transfer& t = p2p.stages[0].transfers[0];
  REQUIRE(std::tuple{t.src, t.dst, t.share, t.chain} == std::tuple{1000, 997, 1.0, -1});
  REQUIRE(p2p.stages[0].steps == 1);
}

TEST_CASE("Hierarchical all_reduce: 2(m-1)/m + 2(k-1)/(k m) per rank") {
  for (auto [k, m] : {std::pair{2, 4}, {4, 8}, {3, 1}, {8, 2}}) {
    CAPTURE(k, m);
    const GroupLayout g = nodes(k, m);
    const auto plan = plan_of(Op::all_reduce, Alg::hierarchical, g);
    const double fk = k, fm = m;
    for (int r : g.ranks)
      REQUIRE(bytes_sent_share(plan, r) ==
              Approx(2 * (fm - 1) / fm + 2 * (fk - 1) / (fk * fm)));
    const std::size_t rail = m == 1 ? 0 : 1;  // one rank per node: no intra-node stages
    REQUIRE(plan.stages.size() == (m == 1 ? 1u : 3u));
    REQUIRE(plan.stages[rail].name == "inter-node all_reduce (rail)");
    REQUIRE(plan.stages[rail].steps == 2 * (k - 1));
    if (m > 1) {
      REQUIRE(plan.stages[0].name == "intra-node reduce_scatter");
      REQUIRE(plan.stages[0].steps == m - 1);
      REQUIRE(plan.stages[2].steps == m - 1);
    }
  }
}

TEST_CASE("Hierarchical groups by node of first appearance and rails by local index") {
  // Ranks alternate between nodes 7 and 3: node 7 = {0, 2, 4, 6}, node 3 = {1, 3, 5, 7}.
  GroupLayout g;
  for (int i = 0; i < 8; ++i) {
    g.ranks.push_back(i);
    g.node_of.push_back(i % 2 == 0 ? 7 : 3);
  }
  const auto ar = plan_of(Op::all_reduce, Alg::hierarchical, g);
  std::set<std::tuple<int, int, int32_t>> intra, rail;
  for (const Transfer& t : ar.stages[0].transfers) intra.emplace(t.src, t.dst, t.chain);
  for (const Transfer& t : ar.stages[1].transfers) rail.emplace(t.src, t.dst, t.chain);
  REQUIRE(intra == std::set<std::tuple<int, int, int32_t>>{
                       {0, 2, 0}, {2, 4, 0}, {4, 6, 0}, {6, 0, 0},
                       {1, 3, 1}, {3, 5, 1}, {5, 7, 1}, {7, 1, 1}});
  REQUIRE(rail == std::set<std::tuple<int, int, int32_t>>{
                      {0, 1, 0}, {1, 0, 0}, {2, 3, 1}, {3, 2, 1},
                      {4, 5, 2}, {5, 4, 2}, {6, 7, 3}, {7, 6, 3}});
}

TEST_CASE("Hierarchical broadcast: along the root's rail, then inside every node") {
  const GroupLayout g = nodes(3, 4);  // ranks 500..511, node x = 500 + 4x .. 503 + 4x
  const auto bc = plan_of(Op::broadcast, Alg::hierarchical, g);
  REQUIRE(bc.stages.size() == 2);
  REQUIRE(bc.stages[0].steps == 2);
  REQUIRE(bc.stages[1].steps == 3);
  std::set<std::pair<int, int>> rail;
  for (const Transfer& t : bc.stages[0].transfers) rail.emplace(t.src, t.dst);
  REQUIRE(rail == std::set<std::pair<int, int>>{{500, 504}, {504, 508}});
  REQUIRE(bc.stages[1].transfers.size() == 9);
  REQUIRE(levels(bc.stages[1].transfers, 508) == 4);  // a chain of the node's 4 ranks
  REQUIRE(bytes_sent_share(bc, 500) == 2);
  REQUIRE(bytes_sent_share(bc, 508) == 1);
  REQUIRE(bytes_sent_share(bc, 511) == 0);

  const auto rd = plan_of(Op::reduce, Alg::hierarchical, g);
  REQUIRE(rd.stages[0].name == "intra-node reduce");
  std::set<std::pair<int, int>> rail_up;
  for (const Transfer& t : reversed(rd.stages[1].transfers)) rail_up.emplace(t.src, t.dst);
  REQUIRE(rail_up == rail);
  // Every rank but the root forwards S once: inside its node or along the rail.
  for (int r : g.ranks) REQUIRE(bytes_sent_share(rd, r) == (r == 500 ? 0 : 1));
}

TEST_CASE("Hierarchical reduce_scatter and all_gather: (n-1)/n per rank") {
  for (auto [k, m] : {std::pair{2, 4}, {4, 8}, {3, 1}}) {
    CAPTURE(k, m);
    const GroupLayout g = nodes(k, m);
    const double n = k * m;
    const auto rs = plan_of(Op::reduce_scatter, Alg::hierarchical, g);
    const auto ag = plan_of(Op::all_gather, Alg::hierarchical, g);
    for (int r : g.ranks) {
      REQUIRE(bytes_sent_share(rs, r) == Approx((n - 1) / n));
      REQUIRE(bytes_sent_share(ag, r) == Approx((n - 1) / n));
    }
  }
}

TEST_CASE("all_gather plans deliver every piece exactly once with matching shares") {
  for (int n : {2, 3, 4, 8, 16}) {
    CAPTURE(n);
    check_all_gather_flow(make_plan(Op::all_gather, Alg::ring, flat(n)));
    check_all_gather_flow(make_plan(Op::all_gather, Alg::direct, flat(n)));
    if (power_of_two(n))
      check_all_gather_flow(make_plan(Op::all_gather, Alg::halving_doubling, flat(n)));
  }
  for (auto [k, m] : {std::pair{2, 4}, {4, 8}, {3, 1}}) {
    CAPTURE(k, m);
    check_all_gather_flow(make_plan(Op::all_gather, Alg::hierarchical, nodes(k, m)));
  }
}

TEST_CASE("bytes_sent_share is zero for a rank outside the group") {
  REQUIRE(bytes_sent_share(make_plan(Op::all_reduce, Alg::ring, flat(4)), 1) == 0);
}

TEST_CASE("Unsupported requests throw PlanError naming the problem") {
  using Catch::Contains;
  const GroupLayout g8 = flat(8);
  REQUIRE_THROWS_WITH(make_plan(Op::all_gather, Alg::tree, g8),
                      Contains("tree supports all_reduce, broadcast and reduce; not all_gather"));
  REQUIRE_THROWS_WITH(make_plan(Op::all_to_all, Alg::ring, g8),
                      Contains("ring supports") && Contains("not all_to_all"));
  REQUIRE_THROWS_WITH(make_plan(Op::all_to_all, Alg::hierarchical, nodes(2, 4)),
                      Contains("not all_to_all"));
  REQUIRE_THROWS_WITH(make_plan(Op::broadcast, Alg::halving_doubling, g8),
                      Contains("halving_doubling supports all_reduce, reduce_scatter and "
                               "all_gather; not broadcast"));
  REQUIRE_THROWS_WITH(make_plan(Op::all_reduce, Alg::automatic, g8),
                      Contains("auto is not a plan"));
  REQUIRE_THROWS_WITH(make_plan(Op::all_gather, Alg::in_network, g8),
                      Contains("in_network supports all_reduce; not all_gather"));
  REQUIRE_THROWS_WITH(make_plan(Op::send_recv, Alg::ring, flat(2)),
                      Contains("send_recv accepts only algorithm direct; got ring"));
  REQUIRE_THROWS_WITH(make_plan(Op::send_recv, Alg::direct, flat(3)),
                      Contains("send_recv needs exactly 2 ranks; got 3"));
}

TEST_CASE("Groups and layouts that do not fit throw PlanError naming the problem") {
  using Catch::Contains;
  REQUIRE_THROWS_WITH(make_plan(Op::all_reduce, Alg::ring, flat(1)),
                      Contains("at least 2 ranks; got 1"));
  REQUIRE_THROWS_WITH(make_plan(Op::all_reduce, Alg::direct, GroupLayout{}),
                      Contains("at least 2 ranks; got 0"));
  REQUIRE_THROWS_WITH(make_plan(Op::all_reduce, Alg::ring, GroupLayout{{1, 5, 2, 5}, {}, 1, {}, 1}),
                      Contains("rank 5 appears twice"));
  REQUIRE_THROWS_WITH(make_plan(Op::all_gather, Alg::halving_doubling, flat(12)),
                      Contains("halving_doubling all_gather needs a power-of-two group; got 12"));
  REQUIRE_THROWS_WITH(make_plan(Op::reduce_scatter, Alg::halving_doubling, flat(6)),
                      Contains("halving_doubling reduce_scatter needs a power-of-two group; "
                               "got 6"));
  // node_of may be empty except for hierarchical; when given it must match the ranks.
  REQUIRE_THROWS_WITH(make_plan(Op::all_reduce, Alg::hierarchical, flat(4)),
                      Contains("ranks and node_of sizes differ"));
  REQUIRE_THROWS_WITH(make_plan(Op::all_reduce, Alg::ring, GroupLayout{{0, 1, 2}, {0, 0}, 1, {}, 1}),
                      Contains("ranks and node_of sizes differ"));
  GroupLayout one_node = nodes(1, 8);
  REQUIRE_THROWS_WITH(make_plan(Op::all_reduce, Alg::hierarchical, one_node),
                      Contains("hierarchical needs at least 2 nodes"));
  // Nodes 0..3 with 8 ranks each, except node 3 with 5.
  GroupLayout uneven = nodes(4, 8);
  uneven.ranks.resize(29);
  uneven.node_of.resize(29);
  REQUIRE_THROWS_WITH(make_plan(Op::broadcast, Alg::hierarchical, uneven),
                      Contains("hierarchical needs the same number of ranks on every node; "
                               "node 3 has 5, node 0 has 8"));
}

TEST_CASE("in_network all_reduce: NVLS moves S (m+1)/m over each GPU link, SHARP S/m per rail, in one step",
          "[plan]") {
  // m members per node: NVLS reduces and multicasts inside each node (each GPU sends S up for
  // the reduction and its S/m shard for the multicast), then rail j's members reduce their
  // shards in the fabric (S/m each way through their NICs). Channels do not change it: the
  // rails are the members.
  for (const auto& [node_count, m] : {std::pair{1, 8}, std::pair{4, 8}, std::pair{4, 2}, std::pair{6, 1}}) {
    for (int channels : {1, 8}) {
      CAPTURE(node_count, m, channels);
      GroupLayout layout = nodes(node_count, m);
      layout.channels = channels;
      std::map<int, int> node;
      for (std::size_t i = 0; i < layout.ranks.size(); ++i) node[layout.ranks[i]] = layout.node_of[i];
      const auto plan = make_plan(Op::all_reduce, Alg::in_network, layout);
      REQUIRE(plan.stages.size() == 1);
      CHECK(plan.stages[0].steps == 1);
      std::map<int, double> inside, across;
      for (const Transfer& t : plan.stages[0].transfers) (node[t.src] == node[t.dst] ? inside : across)[t.src] += t.share;
      for (int r : layout.ranks) {
        CHECK(inside[r] == Approx(m > 1 ? (m + 1.0) / m : 0.0));
        CHECK(across[r] == Approx(node_count > 1 ? 1.0 / m : 0.0));
      }
    }
  }
}

TEST_CASE("in_network all_reduce: the group's order does not change what crosses between nodes",
          "[plan]") {
  // SHARP reduces S up and S down per switch whatever the order of the ranks list, so the
  // plan's node-to-node edges (per pipeline, with their shares) are those of the sorted group.
  const auto node_edges = [](const GroupLayout& g) {
    std::map<int, int> node;
    for (std::size_t i = 0; i < g.ranks.size(); ++i) node[g.ranks[i]] = g.node_of[i];
    std::multiset<std::tuple<int, int, int32_t, double>> out;
    const CollectivePlan plan = plan_of(Op::all_reduce, Alg::in_network, g);
    for (const Transfer& t : plan.stages.at(0).transfers)
      if (node[t.src] != node[t.dst]) out.emplace(node[t.src], node[t.dst], t.chain, t.share);
    return out;
  };
  const auto layout = [](const std::vector<int>& ranks, int gpus_per_node, int channels) {
    GroupLayout g{ranks, {}, channels, {}, 1};
    for (int r : ranks) g.node_of.push_back(r / gpus_per_node);
    return g;
  };
  struct Case {
    std::vector<int> sorted, shuffled;
    int gpus_per_node;
  };
  const std::vector<Case> cases{
      {{0, 1, 2, 3, 8, 9, 10, 11}, {0, 8, 1, 9, 2, 10, 3, 11}, 8},    // interleaved nodes
      {{0, 1, 2, 3, 8, 9, 10, 11}, {9, 3, 8, 0, 11, 1, 10, 2}, 8},    // node 1 first
      {{0, 1, 2, 3, 4, 5, 6, 7}, {5, 2, 7, 0, 3, 6, 1, 4}, 1},        // 1-GPU nodes
      {{0, 1, 2, 3, 4, 8, 9, 16}, {16, 4, 9, 0, 3, 8, 1, 2}, 8},      // uneven nodes
  };
  for (const Case& c : cases)
    for (int channels : {1, 8}) {
      CAPTURE(c.shuffled, channels);
      const auto sorted = node_edges(layout(c.sorted, c.gpus_per_node, channels));
      REQUIRE(node_edges(layout(c.shuffled, c.gpus_per_node, channels)) == sorted);
      // Sorted, every pipeline leaves and enters each node once.
      std::map<std::pair<int, int32_t>, int> leaving;
      for (const auto& [from, to, chain, share] : sorted) ++leaving[{from, chain}];
      for (const auto& [node_chain, count] : leaving) REQUIRE(count == 1);
    }
}
