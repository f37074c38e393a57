#include "sim/jobs/cluster_state.hpp"

#include <algorithm>
#include <functional>
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

}  // namespace

ClusterState::ClusterState(int nodes, int gpus_per_node, std::vector<int> node_domain)
    : gpus_per_node_(gpus_per_node),
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
    const std::size_t room = d < 0 ? static_cast<std::size_t>(nodes) : nodes_of_domain(d).size();
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
}

void ClusterState::unbucket(int node) {
  NodeBuckets& nb = node_buckets_[static_cast<std::size_t>(node)];
  if (nb.free < 0) return;
  const auto erase = [&](Bucket& b, int NodeBuckets::*pos) {
    const int last = bucket_nodes_[b.begin + --b.size];
    bucket_nodes_[b.begin + static_cast<std::size_t>(nb.*pos)] = last;
    node_buckets_[static_cast<std::size_t>(last)].*pos = nb.*pos;
    nb.*pos = -1;
  };
  erase(buckets_[bucket_index(nb.domain, nb.free)], &NodeBuckets::pos_domain);
  erase(buckets_[bucket_index(-1, nb.free)], &NodeBuckets::pos_cluster);
  nb.free = -1;
}

void ClusterState::rebucket(int node) {
  if (!available(node)) return;
  NodeBuckets& nb = node_buckets_[static_cast<std::size_t>(node)];
  const int k = free_on(node);
  const auto insert = [&](Bucket& b, int NodeBuckets::*pos) {
    nb.*pos = static_cast<int>(b.size);
    bucket_nodes_[b.begin + b.size++] = node;
  };
  insert(buckets_[bucket_index(nb.domain, k)], &NodeBuckets::pos_domain);
  insert(buckets_[bucket_index(-1, k)], &NodeBuckets::pos_cluster);
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
  domain_free_[static_cast<std::size_t>(domain_of(node))] += delta;
  available_nodes_ += on ? 1 : -1;
  rebucket(node);
}

void ClusterState::change(int node, int delta_allocated) {
  const int now = allocated(node) + delta_allocated;
  logic_check(node >= 0 && node < nodes(), [&] { return "no node " + std::to_string(node); });
  logic_check(now >= 0 && now <= gpus_per_node_,
              [&] { return "node " + std::to_string(node) + " would hold " + std::to_string(now) + " allocated GPUs"; });
  const int free_before = free_on(node);
  unbucket(node);
  allocated_[static_cast<std::size_t>(node)] = now;
  allocated_total_ += delta_allocated;
  if (!available(node)) allocated_unavailable_ += delta_allocated;
  const int delta_free = free_on(node) - free_before;
  free_ += delta_free;
  domain_free_[static_cast<std::size_t>(domain_of(node))] += delta_free;
  rebucket(node);
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

int ClusterState::spread(const Allocation& a) const {
  // Allocations are small (a few nodes); a linear scan of the domains seen beats a set.
  int count = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const int d = domain_of(a[i].node);
    bool seen = false;
    for (std::size_t j = 0; j < i && !seen; ++j) seen = domain_of(a[j].node) == d;
    if (!seen) ++count;
  }
  return count;
}

int ClusterState::min_spread(int gpus) const {
  int count = 0;
  for (const int capacity : domains_by_size_) {
    if (gpus <= 0) break;
    gpus -= capacity;
    ++count;
  }
  return std::max(count, 1);
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
}

}  // namespace cs::jobs
