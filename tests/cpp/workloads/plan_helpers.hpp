#pragma once
// Shared by the plan tests: groups with recognisable rank numbers, the well-formedness check
// every plan gets, and views of a plan (a chain's edges, neighbours, tree levels and parents).
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "workloads/collective_plan.hpp"

namespace cs::work::test {

using Op = CollectiveOp;
using Alg = CollectiveAlgorithm;

inline constexpr Op kOps[] = {Op::all_reduce, Op::reduce_scatter, Op::all_gather, Op::all_to_all,
                              Op::broadcast,  Op::reduce,         Op::send_recv};

// Rank numbers unlike positions (descending, spaced) so a plan that mixes them up shows.
inline GroupLayout flat(int n) {
  GroupLayout g;
  for (int i = 0; i < n; ++i) g.ranks.push_back(1000 - 3 * i);
  return g;
}

// k nodes of m ranks, node-major.
inline GroupLayout nodes(int k, int m) {
  GroupLayout g;
  for (int i = 0; i < k * m; ++i) {
    g.ranks.push_back(500 + i);
    g.node_of.push_back(i / m);
  }
  return g;
}

inline bool power_of_two(int n) { return n > 0 && (n & (n - 1)) == 0; }

inline void check_well_formed(const CollectivePlan& plan, Op op, Alg alg, const GroupLayout& g) {
  CAPTURE(to_string(op), to_string(alg), g.ranks.size());
  REQUIRE(plan.op == op);
  REQUIRE(plan.algorithm == alg);
  REQUIRE(plan.ranks == g.ranks);
  REQUIRE_FALSE(plan.stages.empty());
  const std::set<int> group(g.ranks.begin(), g.ranks.end());
  for (const Stage& s : plan.stages) {
    CAPTURE(s.name);
    REQUIRE_FALSE(s.name.empty());
    REQUIRE(s.size() > 0);
    REQUIRE(s.steps >= 1);
    // Listed, or all pairs (then nothing listed, and no pipeline).
    if (s.all_pairs()) REQUIRE(s.transfers.empty());
    std::map<int32_t, double> chain_share;  // a pipeline moves at one rate: equal shares
    std::size_t seen = 0;
    s.for_each([&](const Transfer& t) {
      REQUIRE(t.src != t.dst);
      REQUIRE(group.count(t.src) == 1);
      REQUIRE(group.count(t.dst) == 1);
      REQUIRE(t.share > 0);
      REQUIRE(t.chain >= -1);
      REQUIRE(std::tuple{t.src, t.dst, t.share, t.chain} ==
              std::tuple{s.transfer(seen).src, s.transfer(seen).dst, s.transfer(seen).share, s.transfer(seen).chain});
      ++seen;
      if (t.chain < 0) return;
      const auto [it, fresh] = chain_share.try_emplace(t.chain, t.share);
      if (!fresh) REQUIRE(t.share == Approx(it->second));
    });
    REQUIRE(seen == s.size());
    // Chain ids number the pipelines 0, 1, ...
    int32_t expected = 0;
    for (const auto& [chain, share] : chain_share) REQUIRE(chain == expected++);
  }
}

// The plan for op over g, checked well formed.
inline CollectivePlan plan_of(Op op, Alg alg, const GroupLayout& g) {
  CollectivePlan plan = make_plan(op, alg, g);
  check_well_formed(plan, op, alg, g);
  return plan;
}

inline double total_share(const CollectivePlan& plan) {
  double total = 0;
  for (int r : plan.ranks) total += bytes_sent_share(plan, r);
  return total;
}

// Levels of a tree given by its edges (parent -> child), from the root down.
inline int levels(const std::vector<Transfer>& down, int root) {
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

inline int ceil_log2(int n) { return static_cast<int>(std::ceil(std::log2(n))); }

inline std::vector<Transfer> of_chain(const Stage& s, int32_t chain) {
  std::vector<Transfer> out;
  for (const Transfer& t : s.transfers)
    if (t.chain == chain) out.push_back(t);
  return out;
}

inline std::vector<Transfer> reversed(std::vector<Transfer> edges) {
  for (Transfer& t : edges) std::swap(t.src, t.dst);
  return edges;
}

// The undirected neighbours of every member in one pipeline of a stage.
inline std::map<int, std::set<int>> neighbours(const std::vector<Transfer>& edges) {
  std::map<int, std::set<int>> out;
  for (const Transfer& t : edges) {
    out[t.src].insert(t.dst);
    out[t.dst].insert(t.src);
  }
  return out;
}

// NCCL's tree has ceil(log2 n) + 1 levels: the chain from the root at position 0 through
// bit_floor(n - 1), ..., 4, 2 down to the leaf at position 1.
inline int tree_levels(int n) { return ceil_log2(n) + 1; }

// child -> parent of the tree given by its undirected edges, hung from `root`.
inline std::map<int, int> parents_from(const std::vector<Transfer>& edges, int root) {
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

}  // namespace cs::work::test
