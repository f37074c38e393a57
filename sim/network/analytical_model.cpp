#include "sim/network/analytical_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>

#include <Eigen/Core>

namespace cs::net {

namespace {

// The plan's routes by (src, dst) pair, looked up in the router once per pair: plans repeat
// pairs (a ring's channels share their intra-node edges), and a flat table is cheaper than
// the router's own cache. Routers hand out stable references (network.hpp), so the table
// keeps pointers.
class RouteMemo {
 public:
  explicit RouteMemo(Network& network) : network_(network) { rehash(10); }

  const topo::Route& operator()(int src, int dst) {
    const uint64_t key = uint64_t{static_cast<uint32_t>(src)} << 32 | static_cast<uint32_t>(dst);
    std::size_t i = slot_of(key);
    for (; slots_[i].route != nullptr; i = (i + 1) & mask_)
      if (slots_[i].key == key) return *slots_[i].route;
    const topo::Route& route = network_.route(src, dst);  // may throw: nothing stored yet
    slots_[i] = {key, &route};
    if (2 * ++size_ > slots_.size()) rehash(bits_ + 1);
    return route;
  }

 private:
  struct Slot {
    uint64_t key = 0;
    const topo::Route* route = nullptr;  // null: empty
  };
  std::size_t slot_of(uint64_t key) const {
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> (64 - bits_));
  }
  void rehash(int bits) {
    std::vector<Slot> old = std::move(slots_);
    bits_ = bits;
    slots_.assign(std::size_t{1} << bits, Slot{});
    mask_ = slots_.size() - 1;
    for (const Slot& s : old) {
      if (s.route == nullptr) continue;
      std::size_t i = slot_of(s.key);
      while (slots_[i].route != nullptr) i = (i + 1) & mask_;
      slots_[i] = s;
    }
  }

  Network& network_;
  std::vector<Slot> slots_;
  std::size_t mask_ = 0, size_ = 0;
  int bits_ = 0;
};

}  // namespace

RoutedPlan::RoutedPlan(Network& network, const work::CollectivePlan& plan, const FlowKeyOf& flow_key)
    : plan_(plan) {
  for (const work::Stage& stage : plan.stages) {
    if (stage.all_pairs() && !flow_key && worth_streaming(network, stage) &&
        (network.load_aware() ? place_pairs(network, stage) : stream_pairs(network, stage))) {
      streamed_.push_back(1);
      continue;
    }
    route_listed(network, stage, flow_key);
    streamed_.push_back(0);
  }
}

void RoutedPlan::route_listed(Network& network, const work::Stage& stage, const FlowKeyOf& flow_key) {
  const topo::Topology& topology = network.topology();
  const std::size_t stage_index = links_.size(), n = stage.size();
  // Load-aware routings choose each stage's routes transfer by transfer, seeing the ones
  // placed before them (Network::StagePlacement); the memo would reuse the first choice.
  Network::StagePlacement placement(network);
  RouteMemo route_of(network);
  std::vector<StageLatency::Wire> wires(n);
  std::vector<double> shares(n);
  // The stage's (link, unit load, crossings) per hop, merged by link: sorting the hops costs
  // the plan's size, where scratch arrays by link id would cost the fabric's for every plan (a
  // send's one-transfer plan on a 4,096-GPU fabric).
  struct Hop {
    uint32_t link;
    double unit, crossings;
  };
  std::vector<Hop> hops;
  std::vector<uint32_t> route_links;  // one route's model links (bundles where it sprays)
  if (network.load_aware() && stage.all_pairs())  // UGAL: an all-to-all on its start routes first
    for (std::size_t t = 0; t < n; ++t) {
      const work::Transfer tr = stage.transfer(t);
      placement.prime(tr.src, tr.dst, flow_key ? flow_key(stage_index, t) : 0);
    }
  // A load-aware routing routes the stage's transfers together (StagePlacement::route_all).
  std::vector<const topo::Route*> chosen;
  if (network.load_aware()) {
    std::vector<Network::Endpoints> batch;
    batch.reserve(n);
    for (std::size_t t = 0; t < n; ++t) {
      const work::Transfer tr = stage.transfer(t);
      batch.push_back({tr.src, tr.dst, flow_key ? flow_key(stage_index, t) : 0});
    }
    chosen = placement.route_all(batch);
  }
  for (std::size_t t = 0; t < n; ++t) {
    const work::Transfer tr = stage.transfer(t);
    const topo::Route& route = network.load_aware() ? *chosen[t]
                               : flow_key           ? network.route(tr.src, tr.dst, flow_key(stage_index, t))
                                                    : route_of(tr.src, tr.dst);
    wires[t] = {route.latency_s, transfer_class(topology, tr.src, tr.dst)};
    shares[t] = tr.share;
    // The route's links ascending, a link it crosses m times once with m (a few: sorted here).
    route_links.clear();
    network.append_model_links(route, route_links);
    std::sort(route_links.begin(), route_links.end());
    for (std::size_t h = 0; h < route_links.size();) {
      std::size_t e = h + 1;
      while (e < route_links.size() && route_links[e] == route_links[h]) ++e;
      const auto m = static_cast<double>(e - h);
      hops.push_back({route_links[h], m * tr.share, m});
      h = e;
    }
  }
  std::sort(hops.begin(), hops.end(), [](const Hop& a, const Hop& b) { return a.link < b.link; });
  std::vector<uint32_t> links;
  std::vector<double> loads, crossings;
  for (const Hop& h : hops) {
    if (!links.empty() && links.back() == h.link) {
      loads.back() += h.unit;
      crossings.back() += h.crossings;
    } else {
      links.push_back(h.link);
      loads.push_back(h.unit);
      crossings.push_back(h.crossings);
    }
  }
  // Eigen's sum: its order is the one every recorded result was made with.
  const double payload = Eigen::Map<const Eigen::VectorXd>(shares.data(), static_cast<Eigen::Index>(n)).sum();
  add_stage(network, std::move(links), std::move(loads), std::move(crossings), payload, StageLatency(stage, wires));
}

bool RoutedPlan::worth_streaming(const Network& network, const work::Stage& stage) {
  // Streaming costs an array over the fabric's links per thread; listing costs a few hops per
  // pair. A small group (an expert-parallel all-to-all of 8 on a 16K-GPU fabric) is listed.
  return static_cast<double>(stage.size()) * kHopsPerPair >= static_cast<double>(network.model_links());
}

namespace {
// An all-pairs count's slowest routes, by TransferClass (-1: none): its pairs in one node are
// all of one class, that of a member with itself.
}  // namespace

bool RoutedPlan::stream_pairs(Network& network, const work::Stage& stage) {
  const std::vector<int>& members = stage.pair_members;
  const std::optional<topo::PairLoads> count = network.count_all_pairs(members);
  if (!count) return false;
  add_pairs_stage(network, stage, count->crossings, max_wire_by_class(network.topology(), members[0], *count));
  return true;
}

bool RoutedPlan::place_pairs(Network& network, const work::Stage& stage) {
  const std::vector<int>& members = stage.pair_members;
  const topo::Topology& topology = network.topology();
  // Adaptive: counted as placed, by the router's own copy of the loads it reads.
  if (const std::optional<topo::PairLoads> chosen = network.count_chosen_pairs(members)) {
    add_pairs_stage(network, stage, chosen->crossings, max_wire_by_class(topology, members[0], *chosen));
    return true;
  }
  std::vector<uint64_t> crossings(network.model_links(), 0);
  // The stage's placements come off the links when it is routed, or when a route fails, as
  // the listed path's StagePlacement takes them off.
  struct Unplace {
    Network& network;
    const std::vector<uint64_t>& placed;
    ~Unplace() { network.unplace(placed); }
  } unplace{network, crossings};
  std::array<double, 3> max_wire_s{-1, -1, -1};  // by TransferClass
  // UGAL: every pair on its start route at once (counted on every core), then each pair in
  // turn chooses against the whole stage's load. Pairs that keep their start route change
  // nothing, so only those that would leave it (Network::first_leaving_start, checked on every
  // core with the loads as they are then) choose one after another.
  const bool started = [&] {
    std::optional<topo::PairLoads> start = network.place_start_routes(members);
    if (!start) return false;
    crossings = std::move(start->crossings);
    max_wire_s = max_wire_by_class(topology, members[0], *start);
    return true;
  }();
  const std::size_t n = members.size(), pairs = n * n;
  topo::Route route;
  std::size_t row = pairs;  // the row last polled for an interrupt
  for (std::size_t p = started ? network.first_leaving_start(members, 0) : 0; p < pairs;
       p = started ? network.first_leaving_start(members, p + 1) : p + 1) {
    if (p / n != row) network.sim().poll_interrupt(), row = p / n;  // a row: n pairs, a few ms at 16,384 ranks
    const int a = members[p / n], b = members[p % n];
    if (a == b) continue;
    if (started) {  // off its start route: it chooses again
      network.start_route_into(a, b, 0, route);
      network.unplace(route);
      for (topo::LinkId l : route.links) --crossings[l];
    }
    if (!network.place_into(a, b, 0, route)) return false;  // the routing's, so the first pair's
    topo::count_route(topology, route, crossings);
    double& wire = max_wire_s[static_cast<std::size_t>(transfer_class(topology, a, b))];
    wire = std::max(wire, route.latency_s);
  }
  add_pairs_stage(network, stage, crossings, max_wire_s);
  return true;
}

void RoutedPlan::add_pairs_stage(const Network& network, const work::Stage& stage, std::span<const uint64_t> crossings,
                                 const std::array<double, 3>& max_wire_s) {
  std::vector<uint32_t> links;
  std::vector<double> loads, counts;
  for (std::size_t i = 0; i < crossings.size(); ++i)
    if (crossings[i] > 0) {
      links.push_back(static_cast<uint32_t>(i));
      counts.push_back(static_cast<double>(crossings[i]));
      loads.push_back(counts.back() * stage.pair_share);
    }
  add_stage(network, std::move(links), std::move(loads), std::move(counts),
            static_cast<double>(stage.size()) * stage.pair_share, StageLatency(stage.steps, max_wire_s));
}

void RoutedPlan::add_stage(const Network& network, std::vector<uint32_t> links, std::vector<double> loads,
                           std::vector<double> crossings, double payload_share, StageLatency latency) {
  // The busiest link per byte (strict: ties keep the lowest link id), and the flow weight.
  double per_byte = 0, weight = links.empty() ? 0 : std::numeric_limits<double>::infinity();
  uint32_t bottleneck = 0;
  for (std::size_t i = 0; i < links.size(); ++i) {
    weight = std::min(weight, crossings[i] / loads[i]);
    const double busy = loads[i] / network.capacity_Bps(links[i]);
    if (busy > per_byte) per_byte = busy, bottleneck = links[i];
  }
  per_byte_s_.push_back(per_byte);
  bottleneck_.push_back(network.topology_link(bottleneck));
  flow_weight_.push_back(weight);
  payload_share_.push_back(payload_share);
  links_.push_back(std::move(links));
  unit_load_.push_back(std::move(loads));
  crossings_.push_back(std::move(crossings));
  latency_.push_back(std::move(latency));
}

AnalyticalModel::AnalyticalModel(Network& network) {
  const std::size_t n = network.model_links();
  capacity_Bps_ = network.capacities_Bps();
  link_bytes_.assign(n, 0.0);
  link_busy_s_.assign(n, 0.0);
  // all_jobs_ and own_job_ on the first estimate_concurrent: a lone estimate needs neither.
}

namespace {

void check_inputs(double bytes, const CollectiveCosts& costs) {
  if (!(bytes >= 0) || !std::isfinite(bytes))
    throw std::invalid_argument("AnalyticalModel: bytes must be a finite number >= 0");
  if (!(costs.bandwidth_efficiency > 0 && costs.bandwidth_efficiency <= 1))
    throw std::invalid_argument("AnalyticalModel: bandwidth_efficiency must be in (0, 1]");
}

}  // namespace

void AnalyticalModel::record(const RoutedPlan& plan, std::size_t s, double scale) {
  const std::vector<uint32_t>& links = plan.links_[s];
  const std::vector<double>& unit = plan.unit_load_[s];
  for (std::size_t i = 0; i < links.size(); ++i) {
    const double load = unit[i] * scale;
    link_bytes_[links[i]] += load;
    link_busy_s_[links[i]] += load / capacity_Bps_[links[i]];
  }
}

double AnalyticalModel::time_s(const RoutedPlan& plan, double bytes, const CollectiveCosts& costs) {
  check_inputs(bytes, costs);
  const double scale = bytes / costs.bandwidth_efficiency;
  double t = costs.base_latency_s;
  for (std::size_t s = 0; s < plan.stages(); ++s) t += plan.latency_[s].seconds(costs) + plan.per_byte_s_[s] * scale;
  return t;
}

CollectiveEstimate AnalyticalModel::estimate(const RoutedPlan& plan, double bytes,
                                             const CollectiveCosts& costs) {
  check_inputs(bytes, costs);
  const double scale = bytes / costs.bandwidth_efficiency;
  CollectiveEstimate e;
  e.time_s = costs.base_latency_s;
  e.stages.reserve(plan.stages());
  for (std::size_t s = 0; s < plan.stages(); ++s) {
    const StageEstimate st{plan.latency_[s].seconds(costs), plan.per_byte_s_[s] * scale, plan.bottleneck_[s]};
    record(plan, s, scale);
    e.time_s += st.latency_s + st.bandwidth_s;
    e.stages.push_back(st);
  }
  return e;
}

}  // namespace cs::net
