#include "sim/jobs/cluster_state.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>

namespace cs::jobs {
namespace {

// `what` makes the message, called only when the check fails: these checks run on every
// allocation and release, and building a string each time cost a tenth of a jobs run.
template <class Message>
void logic_check(bool ok, const Message& what) {
  if (!ok) throw std::logic_error("ClusterState: " + std::string(what()));
}

// change()'s two refusals, out of line and cold: built inline (as logic_check's messages
// were), their strings' frame and saved registers were set up on every change of a node.
[[gnu::cold, gnu::noinline, noreturn]] void refuse_node(int node) {
  throw std::logic_error("ClusterState: no node " + std::to_string(node));
}

[[gnu::cold, gnu::noinline, noreturn]] void refuse_allocated(int node, int now) {
  throw std::logic_error("ClusterState: node " + std::to_string(node) + " would hold " + std::to_string(now) +
                         " allocated GPUs");
}

}  // namespace

ClusterState::ClusterState(int nodes, int gpus_per_node, std::vector<int> node_domain, bool cluster_buckets)
    : gpus_per_node_(gpus_per_node),
      cluster_buckets_(cluster_buckets),
      node_domain_(std::move(node_domain)),
      allocated_(static_cast<std::size_t>(nodes), 0),
      available_(static_cast<std::size_t>(nodes), 1),
      stride_(static_cast<std::size_t>(gpus_per_node) + 1),
      node_buckets_(static_cast<std::size_t>(std::max(nodes, 0))) {
  if (nodes < 1 || gpus_per_node < 1) throw std::invalid_argument("ClusterState: need nodes and GPUs >= 1");
  if (node_domain_.empty()) node_domain_.assign(static_cast<std::size_t>(nodes), 0);
  if (node_domain_.size() != static_cast<std::size_t>(nodes))
    throw std::invalid_argument("ClusterState: one domain per node");
  int domains = 0;
  for (const int d : node_domain_) {
    if (d < 0) throw std::invalid_argument("ClusterState: domains are numbered from 0");
    domains = std::max(domains, d + 1);
  }
  domain_nodes_.resize(static_cast<std::size_t>(domains));
  for (int n = 0; n < nodes; ++n) domain_nodes_[static_cast<std::size_t>(node_domain_[static_cast<std::size_t>(n)])].push_back(n);
  domain_free_.assign(static_cast<std::size_t>(domains), 0);
  buckets_.resize((static_cast<std::size_t>(domains) + 1) * stride_);
  std::size_t at = 0;
  for (int d = -1; d < domains; ++d) {
    const std::size_t room = d >= 0 ? nodes_of_domain(d).size() : cluster_buckets_ ? static_cast<std::size_t>(nodes) : 0;
    for (int k = 0; k <= gpus_per_node; ++k) {
      buckets_[bucket_index(d, k)].begin = at;
      at += room;
    }
  }
  bucket_nodes_.assign(at, -1);
  for (int n = 0; n < nodes; ++n) node_buckets_[static_cast<std::size_t>(n)].domain = domain_of(n);
  for (int n = 0; n < nodes; ++n) {
    domain_free_[static_cast<std::size_t>(domain_of(n))] += gpus_per_node_;
    rebucket(n);
  }
  free_ = nodes * gpus_per_node_;
  available_nodes_ = nodes;
  for (int d = 0; d < domains; ++d) domains_by_size_.push_back(domain_capacity(d));
  std::sort(domains_by_size_.begin(), domains_by_size_.end(), std::greater<>());
  const int largest = domains_by_size_.front();
  if (domains <= 64 && largest <= kMaxIndexedFree) {
    domains_with_free_.assign(static_cast<std::size_t>(largest) + 1, 0);
    free_counts_.assign(static_cast<std::size_t>(largest) / 64 + 1, 0);
    for (int d = 0; d < domains; ++d) {
      const int f = domain_free_[static_cast<std::size_t>(d)];
      domains_with_free_[static_cast<std::size_t>(f)] |= uint64_t{1} << d;
      free_counts_[static_cast<std::size_t>(f) / 64] |= uint64_t{1} << (f % 64);
    }
  }
}

[[gnu::always_inline]] inline void ClusterState::add_domain_free(int d, int delta) {
  int& f = domain_free_[static_cast<std::size_t>(d)];
  if (delta != 0 && !domains_with_free_.empty()) {
    const uint64_t bit = uint64_t{1} << d;
    uint64_t& from = domains_with_free_[static_cast<std::size_t>(f)];
    from &= ~bit;
    if (from == 0) free_counts_[static_cast<std::size_t>(f) / 64] &= ~(uint64_t{1} << (f % 64));
    const int to = f + delta;
    domains_with_free_[static_cast<std::size_t>(to)] |= bit;
    free_counts_[static_cast<std::size_t>(to) / 64] |= uint64_t{1} << (to % 64);
  }
  f += delta;
}

int ClusterState::best_fit_domain(int gpus) const {
  if (domains_with_free_.empty()) return best_fit_by_scan(gpus);
  // The first free count >= gpus that some domain has, then that count's first domain.
  if (gpus >= static_cast<int>(domains_with_free_.size())) return -1;
  std::size_t word = static_cast<std::size_t>(gpus) / 64;
  uint64_t counts = free_counts_[word] & (~uint64_t{0} << (gpus % 64));
  while (counts == 0) {
    if (++word == free_counts_.size()) return -1;
    counts = free_counts_[word];
  }
  const std::size_t v = word * 64 + static_cast<std::size_t>(std::countr_zero(counts));
  return std::countr_zero(domains_with_free_[v]);
}

int ClusterState::best_fit_by_scan(int gpus) const {
  // The least free count among the domains that hold it, then the first domain with that
  // count: as a minimum kept in four independent lanes, the scan is four short chains of
  // selects (a running best index and count made one chain of dependent steps, two selects
  // per domain).
  const std::span<const int> free = domain_free_;
  constexpr int kNone = std::numeric_limits<int>::max();
  const auto fitting = [&](int f) { return f >= gpus ? f : kNone; };
  std::array<int, 4> lane{kNone, kNone, kNone, kNone};
  std::size_t i = 0;
  for (; i + lane.size() <= free.size(); i += lane.size())
    for (std::size_t l = 0; l < lane.size(); ++l) lane[l] = std::min(lane[l], fitting(free[i + l]));
  for (; i < free.size(); ++i) lane[0] = std::min(lane[0], fitting(free[i]));
  const int best_free = std::min(std::min(lane[0], lane[1]), std::min(lane[2], lane[3]));
  if (best_free == kNone) return -1;
  return static_cast<int>(std::find(free.begin(), free.end(), best_free) - free.begin());
}

[[gnu::always_inline]] inline void ClusterState::take_out(Bucket& b, int node, int NodeBuckets::*pos) {
  NodeBuckets& nb = node_buckets_[static_cast<std::size_t>(node)];
  const int last = bucket_nodes_[b.begin + --b.size];
  bucket_nodes_[b.begin + static_cast<std::size_t>(nb.*pos)] = last;
  node_buckets_[static_cast<std::size_t>(last)].*pos = nb.*pos;
  nb.*pos = -1;
}

[[gnu::always_inline]] inline void ClusterState::put_in(Bucket& b, int node, int NodeBuckets::*pos) {
  node_buckets_[static_cast<std::size_t>(node)].*pos = static_cast<int>(b.size);
  bucket_nodes_[b.begin + b.size++] = node;
}

void ClusterState::unbucket(int node) {
  NodeBuckets& nb = node_buckets_[static_cast<std::size_t>(node)];
  if (nb.free < 0) return;
  take_out(buckets_[bucket_index(nb.domain, nb.free)], node, &NodeBuckets::pos_domain);
  if (cluster_buckets_) take_out(buckets_[bucket_index(-1, nb.free)], node, &NodeBuckets::pos_cluster);
  nb.free = -1;
}

void ClusterState::rebucket(int node) {
  if (!available(node)) return;
  NodeBuckets& nb = node_buckets_[static_cast<std::size_t>(node)];
  const int k = free_on(node);
  put_in(buckets_[bucket_index(nb.domain, k)], node, &NodeBuckets::pos_domain);
  if (cluster_buckets_) put_in(buckets_[bucket_index(-1, k)], node, &NodeBuckets::pos_cluster);
  nb.free = k;
}

void ClusterState::set_available(int node, bool on) {
  if (available(node) == on) return;
  const int free_before = free_on(node);
  unbucket(node);
  available_[static_cast<std::size_t>(node)] = on ? 1 : 0;
  allocated_unavailable_ += on ? -allocated(node) : allocated(node);
  const int delta = free_on(node) - free_before;
  free_ += delta;
  add_domain_free(domain_of(node), delta);
  available_nodes_ += on ? 1 : -1;
  rebucket(node);
}

void ClusterState::change(int node, int delta_allocated) {
  if (node < 0 || node >= nodes()) [[unlikely]]
    refuse_node(node);
  const auto n = static_cast<std::size_t>(node);
  const int now = allocated_[n] + delta_allocated;
  if (now < 0 || now > gpus_per_node_) [[unlikely]]
    refuse_allocated(node, now);
  allocated_[n] = now;
  allocated_total_ += delta_allocated;
  if (!available(node)) {  // no free GPUs and in no bucket, before and after
    allocated_unavailable_ += delta_allocated;
    return;
  }
  // Its free GPUs go from nb.free to `to`: it moves from bucket to bucket, in its domain and in
  // the cluster (what unbucket and rebucket do, each bucket's order the same, without the
  // checks: every start and release changes a node or two).
  NodeBuckets& nb = node_buckets_[n];
  const int to = gpus_per_node_ - now;
  take_out(buckets_[bucket_index(nb.domain, nb.free)], node, &NodeBuckets::pos_domain);
  put_in(buckets_[bucket_index(nb.domain, to)], node, &NodeBuckets::pos_domain);
  if (cluster_buckets_) {
    take_out(buckets_[bucket_index(-1, nb.free)], node, &NodeBuckets::pos_cluster);
    put_in(buckets_[bucket_index(-1, to)], node, &NodeBuckets::pos_cluster);
  }
  nb.free = to;
  free_ -= delta_allocated;
  add_domain_free(nb.domain, -delta_allocated);
}

void ClusterState::allocate(const Allocation& a) {
  for (const NodeShare& s : a) {
    logic_check(s.gpus > 0, [] { return "an allocation of no GPUs"; });
    logic_check(available(s.node), [&] { return "node " + std::to_string(s.node) + " is not available"; });
    change(s.node, s.gpus);
  }
}

void ClusterState::release(const Allocation& a) {
  for (const NodeShare& s : a) change(s.node, -s.gpus);
}

void ClusterState::check() const {
  int free = 0, allocated = 0, available = 0, allocated_unavailable = 0;
  std::vector<int> domain_free(domain_free_.size(), 0);
  for (int n = 0; n < nodes(); ++n) {
    logic_check(allocated_[static_cast<std::size_t>(n)] >= 0 &&
                    allocated_[static_cast<std::size_t>(n)] <= gpus_per_node_,
                [&] { return "node " + std::to_string(n) + " over-allocated"; });
    free += free_on(n);
    allocated += allocated_[static_cast<std::size_t>(n)];
    available += this->available(n) ? 1 : 0;
    if (!this->available(n)) allocated_unavailable += allocated_[static_cast<std::size_t>(n)];
    domain_free[static_cast<std::size_t>(domain_of(n))] += free_on(n);
    const int k = node_buckets_[static_cast<std::size_t>(n)].free;
    logic_check(this->available(n) ? k == free_on(n) : k == -1, [&] { return "node " + std::to_string(n) + " in the wrong bucket"; });
  }
  logic_check(free == free_ && allocated == allocated_total_ && available == available_nodes_ &&
                  allocated_unavailable == allocated_unavailable_,
              [] { return "cluster totals disagree with the nodes"; });
  logic_check(domain_free == domain_free_, [] { return "domain totals disagree with the nodes"; });
  for (std::size_t v = 0; v < domains_with_free_.size(); ++v) {
    uint64_t expected = 0;
    for (std::size_t d = 0; d < domain_free_.size(); ++d)
      if (domain_free_[d] == static_cast<int>(v)) expected |= uint64_t{1} << d;
    const bool counted = (free_counts_[v / 64] >> (v % 64) & 1) != 0;
    logic_check(domains_with_free_[v] == expected && counted == (expected != 0),
                [] { return "the free-count index disagrees with the domains"; });
  }
}

}  // namespace cs::jobs
