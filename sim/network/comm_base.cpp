#include "sim/network/comm_base.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "common/free_slots.hpp"
#include "sim/network/neuron_ccom.hpp"
#include "topology/direct_layouts.hpp"

namespace cs::net {

using work::CollectiveAlgorithm;
using work::CollectiveOp;

namespace {

std::string describe(CollectiveAlgorithm a, CollectiveOp op) {
  return std::string(work::to_string(a)) + " " + std::string(work::to_string(op));
}

}  // namespace

CommBase::CommBase(Network& network, Placement placement, const CommConfig& config)
    : network_(network), placement_(std::move(placement)), config_(config) {
  if (placement_.ranks() > 0 && *std::max_element(placement_.gpus().begin(), placement_.gpus().end()) >=
                                    network_.topology().ranks())
    throw std::invalid_argument("CommBase: the placement uses GPUs the topology does not have");
}

void CommBase::check_rank(int rank, const char* what) const {
  if (rank < 0 || rank >= ranks())
    throw CommError("ranks", std::string(what) + " rank " + std::to_string(rank) + " is outside 0.." +
                                 std::to_string(ranks() - 1));
}

void CommBase::check_bytes(double bytes) const {
  if (!(bytes > 0) || !std::isfinite(bytes))
    throw CommError("bytes", "expected a finite number of bytes > 0; got " + std::to_string(bytes));
}

GroupId CommBase::group(std::span<const int> ranks, int channels) {
  if (ranks.size() < 2) throw CommError("ranks", "a group needs at least 2 ranks; got " + std::to_string(ranks.size()));
  if (channels < 0) throw CommError("channels", "expected channels >= 0");
  std::vector<int> members(ranks.begin(), ranks.end());
  const auto key = std::make_pair(members, channels);
  if (const auto it = group_ids_.find(key); it != group_ids_.end()) return it->second;
  std::vector<char> seen(static_cast<std::size_t>(this->ranks()), 0);
  for (int r : members) {
    check_rank(r, "group");
    if (seen[static_cast<std::size_t>(r)]) throw CommError("ranks", "rank " + std::to_string(r) + " is listed twice");
    seen[static_cast<std::size_t>(r)] = 1;
  }
  const topo::Topology& topology = network_.topology();
  Group g;
  g.members = std::move(members);
  g.layout.channels = channels > 0 ? channels : std::min(topology.nics_per_node(), work::kMaxChannels);
  std::map<int, int> per_node;
  for (int r : g.members) {
    const int gpu = placement_.gpu(r);
    g.layout.ranks.push_back(gpu);
    g.layout.node_of.push_back(topology.node_of_rank(gpu));
    ++per_node[g.layout.node_of.back()];
  }
  if (const topo::TorusLayout* torus = topology.torus()) {
    g.layout.torus_dims = torus->dims;
    g.layout.torus_slices = torus->slices;
  }
  g.spans.first = per_node.size() > 1;
  g.nodes = static_cast<int>(per_node.size());
  g.fewest_on_a_node = per_node.empty() ? 1 : per_node.begin()->second;
  for (const auto& [node, count] : per_node) {
    g.spans.second |= count > 1;
    g.most_on_a_node = std::max(g.most_on_a_node, count);
    g.fewest_on_a_node = std::min(g.fewest_on_a_node, count);
  }
  const auto id = static_cast<GroupId>(groups_.size());
  groups_.push_back(std::move(g));
  group_ids_.emplace(key, id);
  return id;
}

std::span<const int> CommBase::members(GroupId group) const { return groups_.at(group).members; }

void CommBase::check_in_network(const Group& g) const {
  const auto [several_nodes, shared_node] = g.spans;
  if (shared_node && !config_.in_network.nvls)
    throw CommError("algorithm", "in_network: ranks share a node, and its fabric does not reduce (NVLS)",
                    "set hardware.node.nvls to true (NVSwitch nodes)");
  if (several_nodes && !config_.in_network.sharp)
    throw CommError("algorithm", "in_network: ranks on several nodes need the fabric's switches to reduce (SHARP)",
                    "set topology.sharp to true");
}

const work::CollectivePlan& CommBase::plan(GroupId group, CollectiveOp op, CollectiveAlgorithm algorithm) {
  Group& g = groups_.at(group);
  auto& slot = g.plans[{op, algorithm}];
  if (slot) return *slot;
  if (algorithm == CollectiveAlgorithm::automatic)
    throw std::invalid_argument("CommBase::plan: automatic is a choice, not a plan");
  if (algorithm == CollectiveAlgorithm::in_network) check_in_network(g);
  if (algorithm == CollectiveAlgorithm::torus && g.layout.torus_dims.empty())
    throw CommError("algorithm", "torus runs on a torus fabric; this topology is not one",
                    "use topology.kind tpu_slice or torus, or algorithm ring");
  try {
    slot = std::make_unique<work::CollectivePlan>(work::make_plan(op, algorithm, g.layout));
  } catch (const work::PlanError& e) {
    g.plans.erase({op, algorithm});
    throw CommError("algorithm", describe(algorithm, op) + ": " + e.what());
  }
  return *slot;
}

std::vector<CollectiveAlgorithm> CommBase::candidates(GroupId group, CollectiveOp op) {
  const Group& g = groups_.at(group);
  const auto [several_nodes, shared_node] = g.spans;
  // NVLS needs more than two GPUs of the group on a node: NCCL 2.18.3 and 2.20.3 leave it off
  // for two (src/transport/nvls.cc, ncclNvlsInit: gpuCount <= 2), where NVLink's direct copies
  // are as fast. A group of one rank per node reduces in the switches (SHARP) alone.
  const bool nvls = config_.in_network.nvls && g.most_on_a_node > 2;
  const bool reduces = (!shared_node || nvls) && (!several_nodes || config_.in_network.sharp);
  std::vector<CollectiveAlgorithm> out;
  for (CollectiveAlgorithm a : work::tuned_algorithms_for(op)) {
    if (a == CollectiveAlgorithm::in_network && !reduces) continue;
    if (a == CollectiveAlgorithm::torus && g.layout.torus_dims.empty()) continue;
    if (!refuses(group, op, a)) out.push_back(a);  // refused where the layout does not fit (torus: one rank per chip)
  }
  return out;
}

bool CommBase::refuses(GroupId group, CollectiveOp op, CollectiveAlgorithm algorithm) {
  if (algorithm == CollectiveAlgorithm::automatic) return false;
  Group& g = groups_.at(group);
  if (g.refused.contains({op, algorithm})) return true;
  try {
    plan(group, op, algorithm);  // a pure function of the group's layout and the configuration
    return false;
  } catch (const CommError&) {
    g.refused.insert({op, algorithm});
    return true;
  }
}

const RoutedPlan& CommBase::routed(const work::CollectivePlan& plan) {
  auto& r = routed_[&plan];
  if (!r) {
    if (fabric_idle()) routed_on_idle_.insert(&plan);
    r = std::make_unique<RoutedPlan>(network_, plan);
  }
  return *r;
}

bool CommBase::routed_on_idle(const work::CollectivePlan& plan) const { return routed_on_idle_.contains(&plan); }

const std::vector<ProtocolCosts>& CommBase::protocols(const CollectiveOptions& options) {
  const Protocol p = options.protocol.value_or(config_.protocol);
  auto& table = protocols_[p];
  if (!table.empty()) return table;
  // Neuron runs one protocol whatever NCCL protocol is asked for; none stays the wire alone.
  // XLA runs none of NCCL's protocols: its collectives are the wire alone whatever is asked.
  if (config_.collective_library == CollectiveLibrary::xla)
    table = nccl_protocols(Protocol::none, config_.in_network.nvls_efficiency);
  else if (config_.collective_library == CollectiveLibrary::neuron_ccom && p != Protocol::none)
    table = {{Protocol::simple, neuron_ccom_costs()}};
  else
    table = nccl_protocols(p, config_.in_network.nvls_efficiency);
  return table;
}

CommBase::Pick& CommBase::pick(GroupId group, CollectiveOp op, double bytes, const CollectiveOptions& options) {
  if (group >= groups_.size()) throw std::out_of_range("Comm: unknown group");
  const Protocol requested_protocol = options.protocol.value_or(config_.protocol);
  if (picks_.size() < groups_.size()) picks_.resize(groups_.size());
  std::vector<Pick>& known = picks_[group];
  for (Pick& p : known)
    if (p.op == op && p.requested == options.algorithm && p.requested_protocol == requested_protocol &&
        p.bytes == bytes)
      return p;
  check_request(op, options.algorithm);
  const std::vector<ProtocolCosts>& protos = protocols(options);
  const bool any_algorithm = options.algorithm == CollectiveAlgorithm::automatic;
  Pick best;
  const Group& g = groups_.at(group);
  if (!any_algorithm && protos.size() == 1) {  // nothing to choose: no estimate
    best.plan = &plan(group, op, options.algorithm);
    best.choice = {options.algorithm, protos.front().protocol};
    best.costs = refined_costs(g, op, *best.plan, options.algorithm, protos.front(), bytes);
  } else {
    const std::vector<CollectiveAlgorithm> algorithms =
        any_algorithm ? candidates(group, op) : std::vector{options.algorithm};
    if (algorithms.empty())
      throw CommError("algorithm", "no algorithm has a plan for " + std::string(work::to_string(op)) + " on this group");
    double best_t = std::numeric_limits<double>::infinity();
    for (CollectiveAlgorithm a : algorithms) {
      const work::CollectivePlan& p = plan(group, op, a);
      for (const ProtocolCosts& proto : protos) {
        const CollectiveCosts costs = refined_costs(g, op, p, a, proto, bytes);
        const double t = AnalyticalModel::time_s(routed(p), bytes, costs);
        if (t < best_t || best.plan == nullptr) {
          best_t = t;
          best.choice = {a, proto.protocol};
          best.costs = costs;
          best.plan = &p;
        }
      }
    }
  }
  best.choice.protocol = nccl_protocol_run(best.choice.algorithm, best.choice.protocol);
  best.op = op;
  best.requested = options.algorithm;
  best.requested_protocol = requested_protocol;
  best.bytes = bytes;
  return known.emplace_back(best);
}

CollectiveCosts CommBase::refined_costs(const Group& g, CollectiveOp op, const work::CollectivePlan& plan,
                                       CollectiveAlgorithm algorithm, const ProtocolCosts& protocol, double bytes) {
  CollectiveCosts c = protocol.costs[algorithm];
  if (config_.collective_library != CollectiveLibrary::nccl) return c;  // NCCL's refinements are NCCL's
  if (algorithm == CollectiveAlgorithm::in_network) {  // NVLS and SHARP: Simple, their own efficiency
    // Inside one node (NVLS) NCCL's kernel is a pipeline of stages on their own warps, each at
    // the pace of the whole, so filling and draining it costs stage times: a share of the
    // bandwidth time, large at mid sizes where NCCL's chunks leave few loops. NVLS across nodes
    // and SHARP run other kernels (not modelled); no protocol is the wire alone.
    if (!g.spans.first && g.spans.second && protocol.protocol != Protocol::none)
      c.bandwidth_efficiency *= nccl_nvls_pipeline_share(bytes, static_cast<int>(g.members.size()));
    return c;
  }
  const NcclGroupShape shape{op, static_cast<int>(g.members.size()), g.nodes, g.most_on_a_node, g.fewest_on_a_node};
  c.bandwidth_efficiency = nccl_efficiency(algorithm, protocol.protocol, shape, c.bandwidth_efficiency) *
                           nccl_size_correction(algorithm, op, protocol.protocol, bytes);
  // NCCL's ring plateau: its large Simple ring all-reduces across nodes pay more latency.
  const double plateau = nccl_latency_factor(algorithm, protocol.protocol, shape, bytes, g.layout.channels,
                                             config_.gpu_arch);
  c.base_latency_s *= plateau;
  for (double& step : c.step_latency_s) step *= plateau;
  // Staged through host memory, the transfers inside a node set the pace. (A group of one rank
  // per node is left as it is: GPUDirect RDMA's absence without P2P is not modelled.)
  if (config_.host_staged && g.spans.second) c.bandwidth_efficiency *= nccl_shm_efficiency();
  const double ceiling = nccl_busbw_ceiling_Bps(protocol.protocol, config_.gpu_arch, g.nodes);
  if (std::isfinite(ceiling)) {
    // Alone, the collective's bus bandwidth is busbw factor x efficiency / (seconds per byte of
    // S over its stages); above the ceiling, the efficiency drops until it is at it.
    const RoutedPlan& r = routed(plan);
    double per_byte_s = 0;
    for (std::size_t s = 0; s < r.stages(); ++s) per_byte_s += r.per_byte_s(s);
    const double factor = work::busbw_factor(op, static_cast<int>(g.members.size()));
    if (per_byte_s > 0 && factor > 0) {
      const double busbw = factor * c.bandwidth_efficiency / per_byte_s;
      if (busbw > ceiling) c.bandwidth_efficiency *= ceiling / busbw;
    }
  }
  return c;
}

CollectiveChoice CommBase::choose(GroupId group, CollectiveOp op, double bytes, const CollectiveOptions& options) {
  check_bytes(bytes);
  return pick(group, op, bytes, options).choice;
}

double CommBase::alone_time_s(GroupId group, CollectiveOp op, double bytes, const CollectiveOptions& options) {
  check_bytes(bytes);
  const Pick& p = pick(group, op, bytes, options);
  return AnalyticalModel::time_s(routed(*p.plan), bytes, p.costs);
}

TransferId CommBase::open_slot(TransferObserver* observer, uint64_t tag, double bytes) {
  const uint32_t index = take_slot(slots_, free_slots_);
  Slot& s = slots_[index];
  s.active = true;
  s.route = nullptr;
  s.observer = observer;
  s.tag = tag;
  s.bytes = bytes;
  s.runner = nullptr;
  ++active_;
  return uint64_t{s.generation} << 32 | index;
}

void CommBase::check_send(int src, int dst, double bytes) const {
  check_rank(src, "send from");
  check_rank(dst, "send to");
  if (src == dst) throw CommError("ranks", "a send from rank " + std::to_string(src) + " to itself");
  check_bytes(bytes);
}

std::vector<TransferId> CommBase::send_together(std::span<const SendRequest> sends, TransferObserver* observer) {
  std::vector<Network::Endpoints> batch;
  batch.reserve(sends.size());
  for (const SendRequest& s : sends) {
    check_send(s.src, s.dst, s.bytes);
    batch.push_back({placement_.gpu(s.src), placement_.gpu(s.dst), s.flow_key});
  }
  const Network::PinnedBatch pinned(network_, batch);
  return Comm::send_together(sends, observer);
}

TransferId CommBase::send(int src, int dst, double bytes, TransferObserver* observer, uint64_t tag,
                          uint64_t flow_key) {
  check_send(src, dst, bytes);
  const TransferId id = open_slot(observer, tag, bytes);
  try {
    start_send(id, placement_.gpu(src), placement_.gpu(dst), bytes, flow_key);
  } catch (...) {
    Slot& s = slot_of(id);
    s.active = false;
    ++s.generation;
    --active_;
    free_slots_.push_back(static_cast<uint32_t>(id & 0xffffffffu));
    throw;
  }
  return id;
}

TransferId CommBase::collective(GroupId group, CollectiveOp op, double bytes, TransferObserver* observer, uint64_t tag,
                                const CollectiveOptions& options) {
  check_bytes(bytes);
  Pick& p = pick(group, op, bytes, options);
  if (!p.runner) p.runner = &runner(*p.plan);  // may throw: before a slot is taken
  CollectiveRunner& run = *p.runner;
  const TransferId id = open_slot(observer, tag, bytes);
  Slot& s = slot_of(id);
  s.runner = &run;
  s.choice = p.choice;
  s.run = run.start(bytes, p.costs, [this, id] { complete(id); });
  return id;
}

const topo::Route* CommBase::route_of(TransferId id) const {
  const std::size_t index = id & 0xffffffffu;
  if (index >= slots_.size() || !slots_[index].active || slots_[index].generation != id >> 32) return nullptr;
  return slots_[index].route;
}

CollectiveChoice CommBase::choice(TransferId id) const {
  const std::size_t index = id & 0xffffffffu;
  if (index >= slots_.size() || !slots_[index].active || slots_[index].generation != id >> 32 ||
      slots_[index].runner == nullptr)
    throw std::out_of_range("Comm::choice: not an active collective");
  return slots_[index].choice;
}

void CommBase::complete(TransferId id) {
  const std::size_t index = id & 0xffffffffu;
  Slot& s = slots_[index];
  if (!s.active || s.generation != id >> 32) return;
  TransferObserver* observer = s.observer;
  const uint64_t tag = s.tag;
  s.active = false;
  ++s.generation;
  --active_;
  ++completed_;
  free_slots_.push_back(static_cast<uint32_t>(index));
  if (observer) observer->on_transfer_done(id, tag);
}

double CommBase::cancel(TransferId id) {
  const std::size_t index = id & 0xffffffffu;
  if (index >= slots_.size()) return -1;
  Slot& s = slots_[index];
  if (!s.active || s.generation != id >> 32) return -1;
  double delivered;
  if (s.runner) {
    delivered = s.runner->cancel(s.run);
  } else {
    delivered = cancel_send(id);
    if (delivered < 0) delivered = s.bytes;  // finished at this instant, its word still to come
  }
  s.active = false;
  ++s.generation;
  --active_;
  free_slots_.push_back(static_cast<uint32_t>(index));
  forget_callback(id);
  return std::max(delivered, 0.0);
}

}  // namespace cs::net
