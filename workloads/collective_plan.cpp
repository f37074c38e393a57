// Collective algorithms as plans: stages of transfers, shares of the nccl-tests size S.
#include "workloads/collective_plan.hpp"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>

#include "workloads/collective_plan_detail.hpp"

namespace cs::work {
namespace {

constexpr CollectiveAlgorithm kPlanned[] = {
    CollectiveAlgorithm::ring, CollectiveAlgorithm::tree, CollectiveAlgorithm::halving_doubling,
    CollectiveAlgorithm::direct, CollectiveAlgorithm::hierarchical};
constexpr CollectiveOp kOps[] = {
    CollectiveOp::all_reduce, CollectiveOp::reduce_scatter, CollectiveOp::all_gather,
    CollectiveOp::all_to_all, CollectiveOp::broadcast,      CollectiveOp::reduce,
    CollectiveOp::send_recv};

bool supports(CollectiveAlgorithm algorithm, CollectiveOp op) {
  using Op = CollectiveOp;
  const bool rooted = op == Op::broadcast || op == Op::reduce;
  const bool symmetric = op == Op::all_reduce || op == Op::reduce_scatter || op == Op::all_gather;
  switch (algorithm) {
    // No ring or hierarchical all_to_all: NCCL runs it as direct sends.
    case CollectiveAlgorithm::ring:
    case CollectiveAlgorithm::hierarchical: return symmetric || rooted;
    case CollectiveAlgorithm::tree: return op == Op::all_reduce || rooted;
    case CollectiveAlgorithm::halving_doubling: return symmetric;
    case CollectiveAlgorithm::direct: return true;
    case CollectiveAlgorithm::in_network: return op == Op::all_reduce;
    case CollectiveAlgorithm::torus: return symmetric;
    case CollectiveAlgorithm::automatic: return false;
  }
  return false;
}

// "a, b and c"
std::string join(const std::vector<std::string_view>& words) {
  std::string out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (i > 0) out += i + 1 == words.size() ? " and " : ", ";
    out += words[i];
  }
  return out;
}

}  // namespace

namespace detail {

std::string unsupported(CollectiveAlgorithm algorithm, CollectiveOp op) {
  std::vector<std::string_view> ops;
  for (CollectiveOp o : kOps)
    if (supports(algorithm, o)) ops.push_back(to_string(o));
  return std::string(to_string(algorithm)) + " supports " + join(ops) + "; not " +
         std::string(to_string(op));
}

// --- Building blocks shared by every algorithm ------------------------------------------------

// A pipelined ring: members[i] -> members[i+1], and the last back to the first.
Transfers ring_edges(const Members& members, double share, int32_t chain) {
  Transfers out;
  for (std::size_t i = 0; i < members.size(); ++i)
    out.push_back({members[i], members[(i + 1) % members.size()], share, chain});
  return out;
}

// A pipelined open chain: away from members[0] (broadcast) or towards it (reduce).
Transfers chain_edges(const Members& members, double share, int32_t chain, bool towards_head) {
  Transfers out;
  for (std::size_t i = 0; i + 1 < members.size(); ++i) {
    const int from = members[i], to = members[i + 1];
    out.push_back(towards_head ? Transfer{to, from, share, chain}
                               : Transfer{from, to, share, chain});
  }
  return out;
}

Stage stage(std::string name, Transfers transfers, int steps) {
  Stage s;
  s.name = std::move(name);
  s.transfers = std::move(transfers);
  s.steps = steps;
  return s;
}

}  // namespace detail

namespace {

using namespace detail;

// Every ordered pair, each an independent transfer: implicit (Stage::pair_members).
Stage all_pairs(std::string name, const Members& members, double share) {
  Stage s;
  s.name = std::move(name);
  s.pair_members = members;
  s.pair_share = share;
  return s;
}

// The root (members[0]) and every other member, each an independent transfer.
Transfers star(const Members& members, double share, bool towards_root) {
  Transfers out;
  for (std::size_t i = 1; i < members.size(); ++i) {
    const int root = members[0], leaf = members[i];
    out.push_back(towards_root ? Transfer{leaf, root, share, -1} : Transfer{root, leaf, share, -1});
  }
  return out;
}

// --- halving_doubling (Rabenseifner) ---------------------------------------------------------

// One exchange round among members[0, p): member i and member i ^ distance swap `share`.
Stage exchange(std::string name, const Members& m, int p, int distance, double share) {
  Transfers out;
  for (int i = 0; i < p; ++i)
    out.push_back({m[static_cast<std::size_t>(i)], m[static_cast<std::size_t>(i ^ distance)],
                   share, -1});
  return stage(std::move(name), std::move(out), 1);
}

// Recursive halving: round j swaps half of what is left, 1/2^(j+1), at distance p/2^(j+1).
std::vector<Stage> halving(const Members& m, int p) {
  const int rounds = std::countr_zero(static_cast<unsigned>(p));
  std::vector<Stage> out;
  for (int j = 0; j < rounds; ++j) {
    const std::string name = "halving " + std::to_string(j + 1) + "/" + std::to_string(rounds);
    out.push_back(exchange(name, m, p, p >> (j + 1), 1.0 / (1 << (j + 1))));
  }
  return out;
}

// Recursive doubling, halving in reverse: round j swaps all it holds, 2^j/p, at distance 2^j.
std::vector<Stage> doubling(const Members& m, int p) {
  const int rounds = std::countr_zero(static_cast<unsigned>(p));
  std::vector<Stage> out;
  for (int j = 0; j < rounds; ++j) {
    const std::string name = "doubling " + std::to_string(j + 1) + "/" + std::to_string(rounds);
    out.push_back(exchange(name, m, p, 1 << j, static_cast<double>(1 << j) / p));
  }
  return out;
}

std::vector<Stage> halving_doubling_plan(CollectiveOp op, const Members& m) {
  const int n = static_cast<int>(m.size());
  if (op == CollectiveOp::reduce_scatter || op == CollectiveOp::all_gather) {
    // Without all_reduce's fold the pieces cannot be split evenly among a non-power-of-two.
    if (!std::has_single_bit(static_cast<unsigned>(n)))
      throw PlanError("halving_doubling " + std::string(to_string(op)) +
                      " needs a power-of-two group; got " + std::to_string(n));
    return op == CollectiveOp::reduce_scatter ? halving(m, n) : doubling(m, n);
  }
  if (op != CollectiveOp::all_reduce)
    throw PlanError(unsupported(CollectiveAlgorithm::halving_doubling, op));
  // The r members past the largest power of two p fold their data into the first r, sit out
  // the exchanges, and get the result back at the end.
  const int p = static_cast<int>(std::bit_floor(static_cast<unsigned>(n)));
  const Members extra(m.begin() + p, m.end());
  const Members partners(m.begin(), m.begin() + (n - p));
  Transfers fold, unfold;
  for (std::size_t i = 0; i < extra.size(); ++i) {
    fold.push_back({extra[i], partners[i], 1, -1});
    unfold.push_back({partners[i], extra[i], 1, -1});
  }
  std::vector<Stage> out;
  if (!fold.empty()) out.push_back(stage("fold", std::move(fold), 1));
  for (std::vector<Stage> rounds : {halving(m, p), doubling(m, p)})
    for (Stage& s : rounds) out.push_back(std::move(s));
  if (!unfold.empty()) out.push_back(stage("unfold", std::move(unfold), 1));
  return out;
}

// --- direct ----------------------------------------------------------------------------------

std::vector<Stage> direct_plan(CollectiveOp op, const Members& m) {
  const double piece = 1.0 / static_cast<double>(m.size());
  switch (op) {
    case CollectiveOp::all_to_all: return {all_pairs("direct all_to_all", m, piece)};
    case CollectiveOp::reduce_scatter: return {all_pairs("direct reduce_scatter", m, piece)};
    case CollectiveOp::all_gather: return {all_pairs("direct all_gather", m, piece)};
    case CollectiveOp::all_reduce:
      return {all_pairs("direct reduce_scatter", m, piece), all_pairs("direct all_gather", m, piece)};
    case CollectiveOp::broadcast: return {stage("direct broadcast", star(m, 1, false), 1)};
    case CollectiveOp::reduce: return {stage("direct reduce", star(m, 1, true), 1)};
    case CollectiveOp::send_recv:
      return {stage("send_recv", {Transfer{m[0], m[1], 1, -1}}, 1)};
  }
  throw PlanError(unsupported(CollectiveAlgorithm::direct, op));
}

// --- checks ----------------------------------------------------------------------------------

void check_request(CollectiveOp op, CollectiveAlgorithm algorithm, const GroupLayout& group) {
  if (algorithm == CollectiveAlgorithm::automatic)
    throw PlanError("auto is not a plan: the analytical model picks an algorithm per size");
  if (op == CollectiveOp::send_recv && algorithm != CollectiveAlgorithm::direct)
    throw PlanError("send_recv accepts only algorithm direct; got " +
                    std::string(to_string(algorithm)));
  if (!supports(algorithm, op)) throw PlanError(unsupported(algorithm, op));

  const std::size_t n = group.ranks.size();
  if (op == CollectiveOp::send_recv && n != 2)
    throw PlanError("send_recv needs exactly 2 ranks; got " + std::to_string(n));
  if (n < 2)
    throw PlanError("a collective needs a group of at least 2 ranks; got " + std::to_string(n));
  const bool needs_nodes = algorithm == CollectiveAlgorithm::hierarchical;
  if ((needs_nodes || !group.node_of.empty()) && group.node_of.size() != n)
    throw PlanError("ranks and node_of sizes differ: " + std::to_string(n) + " ranks, " +
                    std::to_string(group.node_of.size()) + " node_of entries");
  std::unordered_set<int> seen;
  for (int r : group.ranks)
    if (!seen.insert(r).second)
      throw PlanError("rank " + std::to_string(r) + " appears twice in the group");
}

}  // namespace

CollectivePlan make_plan(CollectiveOp op, CollectiveAlgorithm algorithm, const GroupLayout& group) {
  check_request(op, algorithm, group);
  CollectivePlan plan{op, algorithm, group.ranks, {}};
  const Members& m = group.ranks;
  switch (algorithm) {
    case CollectiveAlgorithm::ring: plan.stages = ring_plan(op, group); break;
    case CollectiveAlgorithm::tree: plan.stages = tree_plan(op, group); break;
    case CollectiveAlgorithm::halving_doubling: plan.stages = halving_doubling_plan(op, m); break;
    case CollectiveAlgorithm::direct: plan.stages = direct_plan(op, m); break;
    case CollectiveAlgorithm::hierarchical: plan.stages = hierarchical_plan(op, group); break;
    case CollectiveAlgorithm::automatic:
    case CollectiveAlgorithm::in_network: plan.stages = in_network_plan(group); break;
    case CollectiveAlgorithm::torus: plan.stages = torus_plan(op, group); break;
  }
  return plan;
}

std::vector<CollectiveAlgorithm> algorithms_for(CollectiveOp op) {
  std::vector<CollectiveAlgorithm> out;
  for (CollectiveAlgorithm a : kPlanned)
    if (supports(a, op)) out.push_back(a);
  return out;
}

std::vector<CollectiveAlgorithm> tuned_algorithms_for(CollectiveOp op) {
  using A = CollectiveAlgorithm;
  // NCCL 2.20.3 src/graph/tuning.cc: tree only for all-reduce; NVLS and CollNet also for
  // reduce-scatter and all-gather, which in_network has no plan for here (all-reduce only);
  // broadcast and reduce only ring; all-to-all and send/recv are point-to-point sends, never tuned.
  switch (op) {
    case CollectiveOp::all_reduce: return {A::ring, A::tree, A::in_network, A::torus};
    case CollectiveOp::reduce_scatter:
    case CollectiveOp::all_gather: return {A::ring, A::torus};
    case CollectiveOp::broadcast:
    case CollectiveOp::reduce: return {A::ring};
    case CollectiveOp::all_to_all:
    case CollectiveOp::send_recv: return {A::direct};
  }
  return {};
}

double bytes_sent_share(const CollectivePlan& plan, int rank) {
  double total = 0;
  for (const Stage& s : plan.stages)
    s.for_each([&](const Transfer& t) {
      if (t.src == rank) total += t.share;
    });
  return total;
}

}  // namespace cs::work
