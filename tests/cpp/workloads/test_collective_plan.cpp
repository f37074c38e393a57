// Collective plans: well-formed for every op and algorithm, per-rank bytes in closed form,
// the shapes of trees and exchanges, data flow of all_gather, and the errors.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "workloads/collective_plan.hpp"

using namespace cs::work;
using Op = CollectiveOp;
using Alg = CollectiveAlgorithm;

namespace {

constexpr Op kOps[] = {Op::all_reduce, Op::reduce_scatter, Op::all_gather, Op::all_to_all,
                       Op::broadcast,  Op::reduce,         Op::send_recv};

// Rank numbers unlike positions (descending, spaced) so a plan that mixes them up shows.
GroupLayout flat(int n) {
  GroupLayout g;
  for (int i = 0; i < n; ++i) g.ranks.push_back(1000 - 3 * i);
  return g;
}

// k nodes of m ranks, node-major.
GroupLayout nodes(int k, int m) {
  GroupLayout g;
  for (int i = 0; i < k * m; ++i) {
    g.ranks.push_back(500 + i);
    g.node_of.push_back(i / m);
  }
  return g;
}

bool power_of_two(int n) { return n > 0 && (n & (n - 1)) == 0; }

void check_well_formed(const CollectivePlan& plan, Op op, Alg alg, const GroupLayout& g) {
  CAPTURE(to_string(op), to_string(alg), g.ranks.size());
  REQUIRE(plan.op == op);
  REQUIRE(plan.algorithm == alg);
  REQUIRE(plan.ranks == g.ranks);
  REQUIRE_FALSE(plan.stages.empty());
  const std::set<int> group(g.ranks.begin(), g.ranks.end());
  for (const Stage& s : plan.stages) {
    CAPTURE(s.name);
    REQUIRE_FALSE(s.name.empty());
    REQUIRE_FALSE(s.transfers.empty());
    REQUIRE(s.steps >= 1);
    std::map<int32_t, double> chain_share;  // a pipeline moves at one rate: equal shares
    for (const Transfer& t : s.transfers) {
      REQUIRE(t.src != t.dst);
      REQUIRE(group.count(t.src) == 1);
      REQUIRE(group.count(t.dst) == 1);
      REQUIRE(t.share > 0);
      REQUIRE(t.chain >= -1);
      if (t.chain < 0) continue;
      const auto [it, fresh] = chain_share.try_emplace(t.chain, t.share);
      if (!fresh) REQUIRE(t.share == Approx(it->second));
    }
    // Chain ids number the pipelines 0, 1, ...
    int32_t expected = 0;
    for (const auto& [chain, share] : chain_share) REQUIRE(chain == expected++);
  }
}

// The plan for op over g, checked well formed.
CollectivePlan plan_of(Op op, Alg alg, const GroupLayout& g) {
  CollectivePlan plan = make_plan(op, alg, g);
  check_well_formed(plan, op, alg, g);
  return plan;
}

double total_share(const CollectivePlan& plan) {
  double total = 0;
  for (int r : plan.ranks) total += bytes_sent_share(plan, r);
  return total;
}

// Levels of a tree given by its edges (parent -> child), from the root down.
int levels(const std::vector<Transfer>& down, int root) {
  std::map<int, std::vector<int>> children;
  for (const Transfer& t : down) children[t.src].push_back(t.dst);
  int depth = 0;
  std::vector<int> level{root};
  while (!level.empty()) {
    ++depth;
    std::vector<int> next;
    for (int r : level)
      for (int c : children[r]) next.push_back(c);
    level = next;
  }
  return depth;
}

int ceil_log2(int n) { return static_cast<int>(std::ceil(std::log2(n))); }

std::vector<Transfer> of_chain(const Stage& s, int32_t chain) {
  std::vector<Transfer> out;
  for (const Transfer& t : s.transfers)
    if (t.chain == chain) out.push_back(t);
  return out;
}

std::vector<Transfer> reversed(std::vector<Transfer> edges) {
  for (Transfer& t : edges) std::swap(t.src, t.dst);
  return edges;
}

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
    for (const Transfer& t : s.transfers) {
      if (t.chain >= 0) {
        REQUIRE(rings[t.chain].emplace(t.src, t.dst).second);
        continue;
      }
      REQUIRE(t.share == Approx(static_cast<double>(held[t.src].size()) / n));
      for (int piece : held[t.src]) REQUIRE(next[t.dst].insert(piece).second);
    }
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

// The undirected neighbours of every member in one pipeline of a stage.
std::map<int, std::set<int>> neighbours(const std::vector<Transfer>& edges) {
  std::map<int, std::set<int>> out;
  for (const Transfer& t : edges) {
    out[t.src].insert(t.dst);
    out[t.dst].insert(t.src);
  }
  return out;
}

// NCCL's tree has ceil(log2 n) + 1 levels: the chain from the root at position 0 through
// bit_floor(n - 1), ..., 4, 2 down to the leaf at position 1.
int tree_levels(int n) { return ceil_log2(n) + 1; }

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

// child -> parent of the tree given by its undirected edges, hung from `root`.
std::map<int, int> parents_from(const std::vector<Transfer>& edges, int root) {
  const auto adj = neighbours(edges);
  std::map<int, int> parent{{root, -1}};
  std::vector<int> todo{root};
  while (!todo.empty()) {
    const int r = todo.back();
    todo.pop_back();
    for (int x : adj.at(r))
      if (parent.emplace(x, r).second) todo.push_back(x);
  }
  return parent;
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
    REQUIRE(a2a.stages[0].transfers.size() == static_cast<std::size_t>(n * (n - 1)));
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
  REQUIRE_THROWS_WITH(make_plan(Op::all_reduce, Alg::ring, GroupLayout{{1, 5, 2, 5}, {}}),
                      Contains("rank 5 appears twice"));
  REQUIRE_THROWS_WITH(make_plan(Op::all_gather, Alg::halving_doubling, flat(12)),
                      Contains("halving_doubling all_gather needs a power-of-two group; got 12"));
  REQUIRE_THROWS_WITH(make_plan(Op::reduce_scatter, Alg::halving_doubling, flat(6)),
                      Contains("halving_doubling reduce_scatter needs a power-of-two group; "
                               "got 6"));
  // node_of may be empty except for hierarchical; when given it must match the ranks.
  REQUIRE_THROWS_WITH(make_plan(Op::all_reduce, Alg::hierarchical, flat(4)),
                      Contains("ranks and node_of sizes differ"));
  REQUIRE_THROWS_WITH(make_plan(Op::all_reduce, Alg::ring, GroupLayout{{0, 1, 2}, {0, 0}}),
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

TEST_CASE("in_network all_reduce: every rank sends S up and receives S down, in one step", "[plan]") {
  const GroupLayout g = nodes(4, 8);
  for (int channels : {1, 8}) {
    GroupLayout layout = g;
    layout.channels = channels;
    const auto plan = make_plan(Op::all_reduce, Alg::in_network, layout);
    REQUIRE(plan.stages.size() == 1);
    CHECK(plan.stages[0].steps == 1);
    for (int r : layout.ranks) CHECK(bytes_sent_share(plan, r) == Approx(1.0));
  }
}

TEST_CASE("tree all_reduce across nodes: chains inside nodes, trees between heads, per channel",
          "[plan]") {
  // 4 nodes x 8 GPUs: per pipeline, a chain of 7 edges per node and a 3-edge tree between the
  // 4 heads, each both ways; 8 channels -> 8 pipelines of 1/8 (NCCL alternates trees A and B).
  GroupLayout g = nodes(4, 8);
  for (int channels : {1, 8}) {
    g.channels = channels;
    const auto plan = make_plan(Op::all_reduce, Alg::tree, g);
    REQUIRE(plan.stages.size() == 1);
    const std::size_t pipelines = channels == 1 ? 2 : 8;
    CHECK(plan.stages[0].transfers.size() == pipelines * 2 * (4 * 7 + 3));
    CHECK(plan.stages[0].steps == 2 * (7 + 3 - 1));  // tree over 4 heads: 3 levels
    std::map<int32_t, std::size_t> per_chain;
    for (const auto& t : plan.stages[0].transfers) {
      ++per_chain[t.chain];
      CHECK(t.share == Approx(1.0 / static_cast<double>(pipelines)));
    }
    CHECK(per_chain.size() == pipelines);
    // Heads differ between channels: each channel leaves its nodes on its own rail.
    if (channels == 8) {
      std::set<int> senders_up_the_tree;
      for (const auto& t : plan.stages[0].transfers)
        if ((t.src - 500) / 8 != (t.dst - 500) / 8) senders_up_the_tree.insert((t.src - 500) % 8);
      CHECK(senders_up_the_tree.size() == 8);
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
