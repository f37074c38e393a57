#include "topology/all_pairs.hpp"

#include <algorithm>
#include <atomic>
#include <limits>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

#include "topology/routing_detail.hpp"

namespace cs::topo {

namespace {

// f(model link) for each of a route's hops, in order.
template <class F>
void for_each_model_link(const Topology& topology, const Route& route, F&& f) {
  if (route.bundle.empty()) {
    for (LinkId l : route.links) f(l);
    return;
  }
  const auto base = static_cast<uint32_t>(topology.num_links());
  for (std::size_t i = 0; i < route.links.size(); ++i) f(route.bundle[i] == kNoBundle ? route.links[i] : base + route.bundle[i]);
}

}  // namespace

void count_route(const Topology& topology, const Route& route, std::span<uint64_t> crossings) {
  for_each_model_link(topology, route, [&](uint32_t l) { ++crossings[l]; });
}

void append_model_links(const Topology& topology, const Route& route, std::vector<uint32_t>& out) {
  for_each_model_link(topology, route, [&](uint32_t l) { out.push_back(l); });
}

namespace {

class RouteByRoute final : public AllPairsCounter {
 public:
  RouteByRoute(const Topology& t, std::span<const int> ranks, RouteInto route_into)
      : t_(t), ranks_(ranks), route_into_(std::move(route_into)) {}

  void add_sources(std::size_t first, std::size_t last, PairLoads& into) const override {
    Route route;
    for (std::size_t i = first; i < last; ++i) {
      const int a = ranks_[i];
      for (const int b : ranks_) {
        if (a == b) continue;
        if (!route_into_(a, b, route)) throw std::logic_error("count_by_routes: the routing cannot compute routes uncached");
        count_route(t_, route, into.crossings);
        double& slowest = t_.node_of_rank(a) == t_.node_of_rank(b) ? into.max_latency_same_node_s : into.max_latency_across_s;
        slowest = std::max(slowest, route.latency_s);
      }
    }
  }

  void append_links(std::size_t i, std::size_t j, Route& scratch, std::vector<uint32_t>& out) const override {
    if (!route_into_(ranks_[i], ranks_[j], scratch))
      throw std::logic_error("count_by_routes: the routing cannot compute routes uncached");
    append_model_links(t_, scratch, out);
  }

 private:
  const Topology& t_;
  std::span<const int> ranks_;
  RouteInto route_into_;
};

// make_leg_counter's counter (routing_detail.hpp).
class LegCounter final : public AllPairsCounter {
 public:
  using Fabric = std::function<void(std::size_t, std::size_t, detail::HopSink&)>;
  LegCounter(const Topology& t, const std::vector<LinkId>& nic_up, std::span<const int> ranks, Fabric fabric,
             std::vector<uint32_t> source_class)
      : t_(t), ranks_(ranks), fabric_(std::move(fabric)), class_(std::move(source_class)) {
    if (!class_.empty() && class_.size() != ranks.size())
      throw std::invalid_argument("all-pairs count: one source class per member");
    for (int rank : ranks)
      if (rank < 0 || rank >= t.ranks())
        throw std::out_of_range("all-pairs count: rank " + std::to_string(rank) + " out of range (ranks: " +
                                std::to_string(t.ranks()) + ")");
    legs_.resize(ranks.size());
    std::vector<LinkId> links;
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      const int rank = ranks[i];
      const auto nic = static_cast<std::size_t>(t.nic_index_of_rank(rank));
      Leg& leg = legs_[i];
      leg.node = t.node_of_rank(rank);
      leg.nic = nic;
      links.clear();
      detail::append_gpu_to_nic(t, rank, links);
      links.push_back(nic_up[nic]);
      for (LinkId l : links) leg.up_latency_s += t.link(l).latency_s;  // from 0, as finish() sums
      leg.up_begin = static_cast<uint32_t>(up_.size());
      up_.insert(up_.end(), links.begin(), links.end());
      leg.up_end = static_cast<uint32_t>(up_.size());
      links.clear();
      links.push_back(reverse(nic_up[nic]));
      detail::append_nic_to_gpu(t, rank, links);
      leg.down_begin = static_cast<uint32_t>(down_.size());
      down_.insert(down_.end(), links.begin(), links.end());
      leg.down_end = static_cast<uint32_t>(down_.size());
    }
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      const Leg& leg = legs_[i];
      const auto member = static_cast<uint32_t>(i);
      for (uint32_t k = leg.up_begin; k < leg.up_end; ++k) leg_links_.push_back({up_[k], member << 1});
      for (uint32_t k = leg.down_begin; k < leg.down_end; ++k) leg_links_.push_back({down_[k], member << 1 | 1});
    }
    std::sort(leg_links_.begin(), leg_links_.end());
    // Each node's members, ascending (the pairs inside a node, and the pairs between nodes
    // each member has).
    node_first_.assign(static_cast<std::size_t>(t.nodes()) + 1, 0);
    for (const Leg& leg : legs_) ++node_first_[static_cast<std::size_t>(leg.node) + 1];
    for (std::size_t k = 1; k < node_first_.size(); ++k) node_first_[k] += node_first_[k - 1];
    node_members_.resize(ranks.size());
    std::vector<uint32_t> cursor(node_first_.begin(), node_first_.end() - 1);
    for (std::size_t i = 0; i < ranks.size(); ++i)
      node_members_[cursor[static_cast<std::size_t>(legs_[i].node)]++] = static_cast<uint32_t>(i);
  }

  std::span<const uint32_t> source_classes() const override { return class_; }

  void add_sources(std::size_t first, std::size_t last, PairLoads& into) const override {
    if (!class_.empty()) return add_by_class(first, last, into);
    std::vector<uint64_t> down_pairs(ranks_.size(), 0);  // per destination: its pairs between nodes
    std::vector<LinkId> scratch;
    detail::HopSink sink{t_, into.crossings, nullptr, 0, scratch};
    Route same_node;
    for (std::size_t i = first; i < last; ++i) {
      const Leg& a = legs_[i];
      uint64_t across = 0;
      for (std::size_t j = 0; j < ranks_.size(); ++j) {
        if (j == i) continue;
        const Leg& b = legs_[j];
        if (a.node == b.node) {
          same_node.links.clear();
          detail::append_same_node(t_, ranks_[i], ranks_[j], same_node.links);
          detail::finish(t_, same_node);
          count_route(t_, same_node, into.crossings);
          into.max_latency_same_node_s = std::max(into.max_latency_same_node_s, same_node.latency_s);
          continue;
        }
        ++across;
        ++down_pairs[j];
        sink.latency_s = a.up_latency_s;
        fabric_(i, j, sink);
        for (uint32_t k = b.down_begin; k < b.down_end; ++k) sink.latency_s += t_.link(down_[k]).latency_s;
        into.max_latency_across_s = std::max(into.max_latency_across_s, sink.latency_s);
      }
      for (uint32_t k = a.up_begin; k < a.up_end; ++k) into.crossings[up_[k]] += across;
    }
    for (std::size_t j = 0; j < ranks_.size(); ++j)
      for (uint32_t k = legs_[j].down_begin; k < legs_[j].down_end; ++k) into.crossings[down_[k]] += down_pairs[j];
  }

  void append_links(std::size_t i, std::size_t j, Route& scratch, std::vector<uint32_t>& out) const override {
    const Leg &a = legs_[i], &b = legs_[j];
    if (a.node == b.node) {
      detail::append_same_node(t_, ranks_[i], ranks_[j], out);  // no bundle inside a node
      return;
    }
    out.insert(out.end(), up_.begin() + a.up_begin, up_.begin() + a.up_end);
    if (const ClassWalks* walks = class_walks(); walks != nullptr) {
      const std::size_t e = static_cast<std::size_t>(walks->row[class_[i]]) * ranks_.size() + j;
      out.insert(out.end(), walks->hops.begin() + walks->first[e], walks->hops.begin() + walks->first[e + 1]);
    } else {
      detail::HopSink sink{t_, {}, &out, 0, scratch.links};
      fabric_(i, j, sink);
    }
    out.insert(out.end(), down_.begin() + b.down_begin, down_.begin() + b.down_end);
  }

  // add_sources where a class's sources share their fabric walks: the legs and the pairs in
  // a node source by source, and the fabric once per (class, destination) for the piece's
  // sources of the class outside the destination's node, weighted by their number. The
  // slowest route of such a walk is the one from the source of the slowest up-leg among them:
  // rounded sums are monotone in each term, so the maximum over the sources is the sum from
  // the largest first term, to the bit.
  void add_by_class(std::size_t first, std::size_t last, PairLoads& into) const {
    const std::size_t n = ranks_.size();
    std::vector<uint64_t> in_node(static_cast<std::size_t>(t_.nodes()), 0);  // the piece's sources per node
    Route same_node;
    for (std::size_t i = first; i < last; ++i) {
      const Leg& a = legs_[i];
      const auto node = static_cast<std::size_t>(a.node);
      for (uint32_t k = node_first_[node]; k < node_first_[node + 1]; ++k) {
        const uint32_t j = node_members_[k];
        if (j == i) continue;
        same_node.links.clear();
        detail::append_same_node(t_, ranks_[i], ranks_[j], same_node.links);
        detail::finish(t_, same_node);
        count_route(t_, same_node, into.crossings);
        into.max_latency_same_node_s = std::max(into.max_latency_same_node_s, same_node.latency_s);
      }
      const uint64_t across = n - (node_first_[node + 1] - node_first_[node]);
      for (uint32_t k = a.up_begin; k < a.up_end; ++k) into.crossings[up_[k]] += across;
      ++in_node[node];
    }
    for (std::size_t j = 0; j < n; ++j) {
      const uint64_t sources = (last - first) - in_node[static_cast<std::size_t>(legs_[j].node)];
      for (uint32_t k = legs_[j].down_begin; k < legs_[j].down_end; ++k) into.crossings[down_[k]] += sources;
    }
    // The piece's sources by class, the slowest up-leg first in each.
    std::vector<uint32_t> order(last - first);
    for (std::size_t i = first; i < last; ++i) order[i - first] = static_cast<uint32_t>(i);
    std::sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
      if (class_[x] != class_[y]) return class_[x] < class_[y];
      if (legs_[x].up_latency_s != legs_[y].up_latency_s) return legs_[x].up_latency_s > legs_[y].up_latency_s;
      return x < y;
    });
    std::vector<LinkId> scratch;
    detail::HopSink sink{t_, into.crossings, nullptr, 0, scratch};
    std::fill(in_node.begin(), in_node.end(), 0);  // now: the class's sources per node
    for (std::size_t begin = 0, end = 0; begin < order.size(); begin = end) {
      while (end < order.size() && class_[order[end]] == class_[order[begin]]) ++end;
      for (std::size_t k = begin; k < end; ++k) ++in_node[static_cast<std::size_t>(legs_[order[k]].node)];
      for (std::size_t j = 0; j < n; ++j) {
        const Leg& b = legs_[j];
        const uint64_t sources = (end - begin) - in_node[static_cast<std::size_t>(b.node)];
        if (sources == 0) continue;
        std::size_t slowest = begin;  // the first source outside j's node
        while (legs_[order[slowest]].node == b.node) ++slowest;
        sink.weight = sources;
        sink.latency_s = legs_[order[slowest]].up_latency_s;
        fabric_(order[slowest], j, sink);
        for (uint32_t k = b.down_begin; k < b.down_end; ++k) sink.latency_s += t_.link(down_[k]).latency_s;
        into.max_latency_across_s = std::max(into.max_latency_across_s, sink.latency_s);
      }
      for (std::size_t k = begin; k < end; ++k) in_node[static_cast<std::size_t>(legs_[order[k]].node)] = 0;
    }
  }

  bool append_leg_pairs(uint32_t link, std::vector<std::pair<uint32_t, uint32_t>>& out) const override {
    const auto first = std::lower_bound(leg_links_.begin(), leg_links_.end(), std::pair<uint32_t, uint32_t>{link, 0});
    const std::size_t begin = out.size();
    auto it = first;
    for (; it != leg_links_.end() && it->first == link; ++it) {
      const uint32_t member = it->second >> 1;
      const int node = legs_[member].node;
      const bool as_source = (it->second & 1) == 0;
      for (uint32_t other = 0; other < legs_.size(); ++other) {
        if (legs_[other].node == node) continue;  // a pair in one node takes no leg
        out.push_back(as_source ? std::pair{member, other} : std::pair{other, member});
      }
    }
    // One member's leg (the usual case) lists its pairs ascending; several (ranks sharing a
    // NIC, or a link in a leg twice) are merged so that a pair's entries sit side by side.
    if (it - first > 1) std::sort(out.begin() + static_cast<std::ptrdiff_t>(begin), out.end());
    return true;
  }

 private:
  // A rank's legs: GPU -> NIC -> switch in up_[up_begin, up_end), its latency summed in order,
  // and switch -> NIC -> GPU in down_[down_begin, down_end).
  struct Leg {
    int node = 0;
    std::size_t nic = 0;
    double up_latency_s = 0;
    uint32_t up_begin = 0, up_end = 0, down_begin = 0, down_end = 0;
  };
  // The fabric hops of every (source class, destination) walk, for append_links: listing
  // every pair's links (a flow exchange's fixes: 268 M pairs over 16,384 GPUs) then copies a
  // pair's hops from its class's row instead of walking them (512 x 16,384 walks, once).
  struct ClassWalks {
    std::vector<uint32_t> row;    // per class: its row
    std::vector<uint32_t> first;  // per (row, destination), and one past the last: its hops
    std::vector<uint32_t> hops;
  };
  // The table, made by the first call (null where there are no classes, where classes hold
  // fewer than kSharedWalk sources on average, or past 2^32 - 1 hops: walking is no dearer).
  // (A flag read first: std::call_once alone costs a call and thread-local stores per pair.)
  const ClassWalks* class_walks() const {
    if (!walks_ready_.load(std::memory_order_acquire))
      std::call_once(walks_made_, [this] {
        walks_ = make_class_walks();
        walks_ready_.store(true, std::memory_order_release);
      });
    return walks_.get();
  }
  static constexpr std::size_t kSharedWalk = 4;
  std::unique_ptr<ClassWalks> make_class_walks() const {
    const std::size_t n = ranks_.size();
    if (class_.empty()) return nullptr;
    auto walks = std::make_unique<ClassWalks>();
    walks->row.assign(static_cast<std::size_t>(*std::max_element(class_.begin(), class_.end())) + 1, 0);
    std::vector<std::vector<uint32_t>> members;  // per row, ascending
    std::vector<bool> seen(walks->row.size(), false);
    for (std::size_t i = 0; i < n; ++i) {
      if (!seen[class_[i]]) {
        seen[class_[i]] = true;
        walks->row[class_[i]] = static_cast<uint32_t>(members.size());
        members.emplace_back();
      }
      members[walks->row[class_[i]]].push_back(static_cast<uint32_t>(i));
    }
    if (members.size() * kSharedWalk > n) return nullptr;
    walks->first.reserve(members.size() * n + 1);
    walks->first.push_back(0);
    std::vector<LinkId> scratch;
    detail::HopSink sink{t_, {}, &walks->hops, 0, scratch};
    for (const std::vector<uint32_t>& sources : members)
      for (std::size_t j = 0; j < n; ++j) {
        // Any source of the class outside j's node walks the class's hops (source_classes).
        const auto outside = std::find_if(sources.begin(), sources.end(),
                                          [&](uint32_t s) { return legs_[s].node != legs_[j].node; });
        if (outside != sources.end()) fabric_(*outside, j, sink);
        if (walks->hops.size() >= std::numeric_limits<uint32_t>::max()) return nullptr;
        walks->first.push_back(static_cast<uint32_t>(walks->hops.size()));
      }
    return walks;
  }

  const Topology& t_;
  std::span<const int> ranks_;
  Fabric fabric_;
  mutable std::once_flag walks_made_;
  mutable std::atomic<bool> walks_ready_{false};
  mutable std::unique_ptr<ClassWalks> walks_;
  std::vector<Leg> legs_;
  std::vector<LinkId> up_, down_;
  // (model link, member << 1 | 1 for a down leg): each leg's links, by link.
  std::vector<std::pair<uint32_t, uint32_t>> leg_links_;
  std::vector<uint32_t> class_;  // per member: its source class (empty: none)
  // node k's members: node_members_[node_first_[k], node_first_[k + 1]), ascending.
  std::vector<uint32_t> node_first_, node_members_;
};

}  // namespace

std::unique_ptr<AllPairsCounter> detail::make_leg_counter(const Topology& t, const std::vector<LinkId>& nic_up,
                                                          std::span<const int> ranks, LegCounter::Fabric fabric,
                                                          std::vector<uint32_t> source_class) {
  return std::make_unique<LegCounter>(t, nic_up, ranks, std::move(fabric), std::move(source_class));
}

std::unique_ptr<AllPairsCounter> count_by_routes(const Topology& topology, std::span<const int> ranks,
                                                 RouteInto route_into) {
  if (ranks.size() >= 2) {  // the routing's answer for one pair is its answer for all
    Route probe;
    if (!route_into(ranks[0], ranks[1], probe)) return nullptr;
  }
  return std::make_unique<RouteByRoute>(topology, ranks, std::move(route_into));
}

std::unique_ptr<AllPairsCounter> detail::CachedRouter::all_pairs_counter(std::span<const int> ranks) const {
  return count_by_routes(t_, ranks, [this](int a, int b, Route& out) { return route_into(a, b, 0, out); });
}

}  // namespace cs::topo
