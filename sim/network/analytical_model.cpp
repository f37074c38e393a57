#include "sim/network/analytical_model.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>

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
  const topo::Topology& topology = network.topology();
  const auto num_links = static_cast<Eigen::Index>(network.model_links());
  routing_.reserve(plan.stages.size());
  shares_.reserve(plan.stages.size());
  links_.reserve(plan.stages.size());
  latency_.reserve(plan.stages.size());

  RouteMemo route_of(network);
  // Load-aware routings choose each stage's routes transfer by transfer, seeing the ones
  // placed before them (Network::StagePlacement); the memo would reuse the first choice.
  Network::StagePlacement placement(network);
  std::vector<const topo::Route*> routes;  // per transfer of the stage
  std::vector<StageLatency::Wire> wires;
  // A stage's (link, unit load, crossings) per hop, merged by link: sorting the hops costs the
  // plan's size, where scratch arrays by link id would cost the fabric's for every plan (a
  // send's one-transfer plan on a 4,096-GPU fabric).
  struct Hop {
    topo::LinkId link;
    double unit, crossings;
  };
  std::vector<Hop> hops_of;
  // The stage's routes as model links (bundles where a routing sprays), route after route.
  std::vector<uint32_t> model_links;
  std::vector<std::size_t> model_begin;
  for (const work::Stage& stage : plan.stages) {
    const std::size_t stage_index = routing_.size(), n = stage.transfers.size();
    placement.clear();
    routes.resize(n);
    wires.resize(n);
    Eigen::VectorXd shares(static_cast<Eigen::Index>(n));
    model_links.clear();
    model_begin.assign(1, 0);
    for (std::size_t t = 0; t < n; ++t) {
      const work::Transfer& tr = stage.transfers[t];
      const topo::Route& route =
          network.load_aware() ? placement.route(tr.src, tr.dst, flow_key ? flow_key(stage_index, t) : 0)
          : flow_key           ? network.route(tr.src, tr.dst, flow_key(stage_index, t))
                               : route_of(tr.src, tr.dst);
      routes[t] = &route;
      wires[t] = {route.latency_s, transfer_class(topology, tr.src, tr.dst)};
      shares[static_cast<Eigen::Index>(t)] = tr.share;
      network.append_model_links(route, model_links);
      model_begin.push_back(model_links.size());
    }

    // Compressed, column by column, as setFromTriplets would make it of one triplet
    // (link, t, 1) per hop: each column's links ascending, a link the route crosses m times
    // once with value m. Built in place: Eigen 3.4's SparseMatrix has no move constructor.
    Eigen::SparseMatrix<double>& r = routing_.emplace_back(num_links, static_cast<Eigen::Index>(n));
    r.resizeNonZeros(static_cast<Eigen::Index>(model_links.size()));
    int* outer = r.outerIndexPtr();
    int* inner = r.innerIndexPtr();
    double* value = r.valuePtr();
    int nnz = 0;
    for (std::size_t t = 0; t < n; ++t) {
      const int begin = nnz;
      outer[t] = begin;
      for (std::size_t h = model_begin[t]; h < model_begin[t + 1]; ++h) {  // a few: insertion
        const auto l = static_cast<int>(model_links[h]);
        int k = nnz;
        while (k > begin && inner[k - 1] > l) --k;
        if (k > begin && inner[k - 1] == l) {
          value[k - 1] += 1.0;
          continue;
        }
        for (int j = nnz; j > k; --j) {
          inner[j] = inner[j - 1];
          value[j] = value[j - 1];
        }
        inner[k] = l;
        value[k] = 1.0;
        ++nnz;
      }
    }
    outer[n] = nnz;
    r.resizeNonZeros(nnz);

    // Unit loads R shares and the flows crossing each link (R 1: every crossing of every
    // transfer), merged by link in ascending order (Eigen's product would fill a dense vector
    // over every link of the fabric); and the busiest link per byte (strict: ties keep the
    // lowest link id).
    hops_of.clear();
    for (std::size_t t = 0; t < n; ++t)
      for (int k = outer[t]; k < outer[t + 1]; ++k)
        hops_of.push_back({static_cast<topo::LinkId>(inner[k]), value[k] * shares[static_cast<Eigen::Index>(t)], value[k]});
    std::sort(hops_of.begin(), hops_of.end(), [](const Hop& a, const Hop& b) { return a.link < b.link; });
    std::vector<topo::LinkId> links;
    std::vector<double>& loads = unit_load_.emplace_back();
    std::vector<double> crossings;
    for (const Hop& h : hops_of) {
      if (!links.empty() && links.back() == h.link) {
        loads.back() += h.unit;
        crossings.back() += h.crossings;
      } else {
        links.push_back(h.link);
        loads.push_back(h.unit);
        crossings.push_back(h.crossings);
      }
    }
    double per_byte = 0, weight = links.empty() ? 0 : std::numeric_limits<double>::infinity();
    topo::LinkId bottleneck = 0;
    for (std::size_t i = 0; i < links.size(); ++i) {
      weight = std::min(weight, crossings[i] / loads[i]);
      const double busy = loads[i] / network.capacity_Bps(links[i]);
      if (busy > per_byte) per_byte = busy, bottleneck = links[i];
    }
    bottleneck = network.topology_link(bottleneck);
    per_byte_s_.push_back(per_byte);
    bottleneck_.push_back(bottleneck);
    flow_weight_.push_back(weight);

    shares_.push_back(std::move(shares));
    links_.push_back(std::move(links));
    latency_.emplace_back(stage, wires);
  }
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
  const std::vector<topo::LinkId>& links = plan.links_[s];
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
