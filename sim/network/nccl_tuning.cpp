// Reading the compiled-in NCCL tuning table. The file is ours and fixed at build time, so a
// malformed entry is a bug: nlohmann's exceptions (missing key, wrong type) are not caught.
#include "sim/network/nccl_tuning.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "workloads/collective.hpp"

namespace cs::net {
namespace {

using json = nlohmann::json;

const json& table() {
  static const json t = json::parse(nccl_tuning_text());
  return t;
}

// Every algorithm the table prices, by its scenario spelling (work::to_string).
using A = work::CollectiveAlgorithm;
constexpr A kAlgorithms[] = {A::ring,         A::tree,      A::halving_doubling, A::direct,
                             A::hierarchical, A::automatic, A::in_network, A::torus};

CollectiveCosts costs_of(const json& entry, double efficiency) {
  constexpr double us = 1e-6;
  CollectiveCosts c;
  c.base_latency_s = entry.at("base_latency_us").get<double>() * us;
  const json& step = entry.at("step_latency_us");
  c.step_latency_s[static_cast<std::size_t>(TransferClass::nvlink)] = step.at("nvlink").get<double>() * us;
  c.step_latency_s[static_cast<std::size_t>(TransferClass::pcie)] = step.at("pcie").get<double>() * us;
  c.step_latency_s[static_cast<std::size_t>(TransferClass::net)] = step.at("net").get<double>() * us;
  c.bandwidth_efficiency = efficiency;
  return c;
}

}  // namespace

CollectiveCostTable nccl_costs(std::string_view protocol) {
  const json& t = table();
  const json& protocols = t.at("protocols");
  const std::string name(protocol);
  if (!protocols.contains(name))
    throw std::invalid_argument("unknown NCCL protocol \"" + name +
                                "\" (expected simple, ll or ll128)");
  CollectiveCostTable out;
  for (work::CollectiveAlgorithm a : kAlgorithms) {
    const json& use = t.at("algorithms").at(std::string(work::to_string(a)));
    // An algorithm may be pinned to one protocol (in_network: NVLS runs Simple only).
    const std::string proto = use.value("protocol", name);
    const double efficiency = protocols.at(proto).at("bandwidth_efficiency").get<double>();
    const json& entry = t.at("nccl_algorithms").at(use.at("nccl_algorithm").get<std::string>()).at(proto);
    out[a] = costs_of(entry, efficiency);
  }
  return out;
}

double nccl_nvls_efficiency(std::string_view arch) {
  const json& table_of = table().at("nvls_efficiency");
  const auto it = table_of.find(std::string(arch));
  return it != table_of.end() && it->is_number() ? it->get<double>() : 0.0;
}

int nccl_nvls_loops(double bytes, int ranks) {
  if (ranks < 1) throw std::invalid_argument("nccl_nvls_loops: ranks must be >= 1");
  const json& p = table().at("nvls_pipeline");
  const double concurrent = p.at("channels").get<double>() * ranks;  // chunks in flight a loop
  double chunk = p.at("max_chunk_bytes").get<double>();
  for (const json& rule : p.at("chunk_rules").at("rules")) {
    const double smaller = rule.at("chunk_bytes").get<double>();
    if (bytes < rule.at("below_loops").get<double>() * concurrent * chunk && chunk > smaller) chunk = smaller;
  }
  // Clamped before the cast: past 2^31 - 1 loops (some 36 PB on 8 GPUs) the cast overflows an
  // int (undefined; on x86 it gave INT_MIN, so one loop and a third of the bandwidth).
  const double loops = std::ceil(bytes / (concurrent * chunk));
  if (!(loops < std::numeric_limits<int>::max())) return std::numeric_limits<int>::max();
  return std::max(1, static_cast<int>(loops));
}

double nccl_nvls_pipeline_share(double bytes, int ranks) {
  const double loops = nccl_nvls_loops(bytes, ranks);
  return loops / (loops + table().at("nvls_pipeline").at("stages").get<double>() - 1);
}

double nccl_shm_efficiency() {
  return table().at("bandwidth_refinements").at("shm_efficiency").at("value").get<double>();
}

std::string nccl_pinned_protocol(work::CollectiveAlgorithm algorithm) {
  return table().at("algorithms").at(std::string(work::to_string(algorithm))).value("protocol", "");
}

double nccl_efficiency(work::CollectiveAlgorithm algorithm, Protocol protocol, const NcclGroupShape& group,
                       double base) {
  using A = work::CollectiveAlgorithm;
  if ((algorithm != A::ring && algorithm != A::tree) || protocol == Protocol::none || protocol == Protocol::automatic)
    return base;
  const json& by_algorithm =
      table().at("bandwidth_refinements").at("efficiency").at(algorithm == A::ring ? "ring" : "tree");
  // NCCL's factor for the algorithm under every protocol, then the protocol's own in place of
  // its payload efficiency (tree LL: 0.92 x 1/3.8), then the tree's TREE pattern (a node with
  // one GPU of the group: master takes the largest pattern over the ranks, maxTreePattern, so
  // one such node is enough), in ncclTopoTuneModel's order.
  double e = by_algorithm.value("every_protocol", 1.0);
  const auto it = by_algorithm.find(std::string(to_string(protocol)));
  if (it == by_algorithm.end()) e *= base;
  else if (it->is_object()) e *= it->at(group.nodes > 1 ? "multi_node" : "single_node").get<double>();
  else e *= it->get<double>();
  if (algorithm == A::tree && group.fewest_on_a_node == 1) e *= by_algorithm.at("one_rank_per_node").get<double>();
  return e;
}

double nccl_size_correction(work::CollectiveAlgorithm algorithm, work::CollectiveOp op, Protocol protocol,
                            double bytes) {
  if (algorithm != work::CollectiveAlgorithm::tree || op != work::CollectiveOp::all_reduce ||
      protocol == Protocol::none || protocol == Protocol::automatic)
    return 1.0;
  const json& t = table().at("bandwidth_refinements").at("tree_correction");
  // NCCL's log2i(nBytes >> 6): the floor of log2, 0 below 128 bytes.
  const double sixty_fours = std::floor(bytes / 64);
  const int index = sixty_fours < 2 ? 0 : static_cast<int>(std::floor(std::log2(sixty_fours)));
  if (index >= t.at("index_limit").get<int>()) return 1.0;
  return t.at(std::string(to_string(protocol))).at(static_cast<std::size_t>(index)).get<double>();
}

double nccl_latency_factor(work::CollectiveAlgorithm algorithm, Protocol protocol, const NcclGroupShape& group,
                           double bytes, int channels, std::string_view arch) {
  if (algorithm != work::CollectiveAlgorithm::ring || protocol != Protocol::simple ||
      group.op != work::CollectiveOp::all_reduce || group.nodes < 2)
    return 1.0;
  const json& p = table().at("bandwidth_refinements").at("ring_plateau");
  // NCCL counts the communicator's channels: twice the rings its search found (connect.cc).
  const double comm_channels = std::min(p.at("channels_per_ring").get<double>() * std::max(channels, 1),
                                        p.at("max_channels").get<double>());
  const double per_rank_and_channel = bytes / (comm_channels * static_cast<double>(group.ranks));
  if (per_rank_and_channel < p.at("min_bytes_per_rank_and_channel").get<double>()) return 1.0;
  // NCCL tests minCompCap < 80: Volta and Turing.
  const json& older = p.at("archs_below_compute_capability_8");
  const bool below_8 = std::find(older.begin(), older.end(), std::string(arch)) != older.end();
  return p.at(below_8 ? "below_compute_capability_8" : "other").get<double>();
}

double nccl_busbw_ceiling_Bps(Protocol protocol, std::string_view arch, int nodes) {
  if (protocol != Protocol::ll) return std::numeric_limits<double>::infinity();
  const json& ceiling = table().at("bandwidth_refinements").at("ll_max_busbw_GBps");
  if (nodes > 2) return ceiling.at("more_nodes").get<double>() * 1e9;
  if (nodes == 2) return ceiling.at("two_nodes").get<double>() * 1e9;
  const json& by_arch = ceiling.at("single_node");
  const auto it = by_arch.find(std::string(arch));
  return it == by_arch.end() ? std::numeric_limits<double>::infinity() : it->get<double>() * 1e9;
}

std::vector<ProtocolCosts> nccl_protocols(Protocol requested, double nvls_efficiency) {
  if (requested == Protocol::none) return {{Protocol::none, {}}};
  std::vector<ProtocolCosts> all;
  for (Protocol p : {Protocol::ll, Protocol::ll128, Protocol::simple})
    if (requested == Protocol::automatic || requested == p) all.push_back({p, nccl_costs(to_string(p))});
  for (ProtocolCosts& p : all) p.costs[work::CollectiveAlgorithm::in_network].bandwidth_efficiency *= nvls_efficiency;
  return all;
}

Protocol nccl_protocol_run(work::CollectiveAlgorithm algorithm, Protocol chosen) {
  if (chosen == Protocol::none) return chosen;
  const std::string pinned = nccl_pinned_protocol(algorithm);
  if (pinned.empty()) return chosen;
  for (Protocol p : {Protocol::simple, Protocol::ll, Protocol::ll128})
    if (to_string(p) == pinned) return p;
  throw std::logic_error("data/nccl_tuning.json pins an unknown protocol: " + pinned);
}

}  // namespace cs::net
