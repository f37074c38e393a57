#pragma once
// The GPUs of a shared cluster: which are free, which are allocated, which nodes are out.
//
// nodes x gpus_per_node GPUs; GPUs of one node are interchangeable (one NVSwitch), so the
// state is a count per node. Each node belongs to one placement domain (a leaf, rail group or
// dragonfly group). A node is available or not (failed, reclaimed, under a reclaim notice): an
// unavailable node's GPUs are never free, while those still allocated on it stay allocated
// until their job releases them.
//
// Free GPUs are also kept in buckets (available nodes with exactly k free GPUs, per domain and,
// when asked for, over the cluster), so a placement finds the best-fitting node without scanning.
// Invariants: 0 <= allocated(n) <= gpus_per_node; free(n) = available(n) ? gpus_per_node -
// allocated(n) : 0; the domain and cluster totals are the sums of the nodes'. check()
// verifies them all (tests).
#include <cstdint>
#include <span>
#include <vector>

namespace cs::jobs {

// GPUs of one node given to a job.
struct NodeShare {
  int node = 0;
  int gpus = 0;
};
using Allocation = std::vector<NodeShare>;

class ClusterState {
 public:
  // node_domain: each node's domain (0-based); empty: all in domain 0. cluster_buckets: keep the
  // buckets over the whole cluster too (nodes_with_free(-1, k): pack placement reads them;
  // topology placement reads only its domains', and keeping both was half of every change of a
  // node).
  ClusterState(int nodes, int gpus_per_node, std::vector<int> node_domain, bool cluster_buckets = true);

  int nodes() const { return static_cast<int>(allocated_.size()); }
  int gpus_per_node() const { return gpus_per_node_; }
  int domains() const { return static_cast<int>(domain_nodes_.size()); }
  int domain_of(int node) const { return node_domain_[static_cast<std::size_t>(node)]; }
  const std::vector<int>& nodes_of_domain(int d) const { return domain_nodes_[static_cast<std::size_t>(d)]; }
  int domain_capacity(int d) const { return static_cast<int>(nodes_of_domain(d).size()) * gpus_per_node_; }

  bool available(int node) const { return available_[static_cast<std::size_t>(node)] != 0; }
  int allocated(int node) const { return allocated_[static_cast<std::size_t>(node)]; }
  int free_on(int node) const {
    return available(node) ? gpus_per_node_ - allocated(node) : 0;
  }
  int free_in_domain(int d) const { return domain_free_[static_cast<std::size_t>(d)]; }
  // The fullest domain that holds `gpus` free GPUs (gpus >= 1): the fewest free GPUs among the
  // domains with at least that many, the lowest index on a tie; -1 when no domain has them.
  // Topology placement's best fit, asked at every start: with at most 64 domains of at most
  // kMaxIndexedFree GPUs it is two bit scans (domains indexed by their free count), else a
  // scan of the domains.
  int best_fit_domain(int gpus) const;
  int free_gpus() const { return free_; }
  int allocated_gpus() const { return allocated_total_; }
  int available_gpus() const { return available_nodes_ * gpus_per_node_; }
  // GPUs in service: those of available nodes, and those jobs still hold on nodes taken out of
  // scheduling (a reclaim notice's nodes until they go, a failed node's until its job is
  // released): never fewer than the GPUs held.
  int in_service_gpus() const { return available_gpus() + allocated_unavailable_; }
  // Allocated GPUs on nodes taken out of scheduling.
  int allocated_unavailable_gpus() const { return allocated_unavailable_; }
  int total_gpus() const { return nodes() * gpus_per_node_; }

  // Available nodes of domain d (d = -1: of the cluster; always empty without cluster_buckets)
  // with exactly k free GPUs. (Inline and unchecked: a placement asks for several buckets per
  // domain it packs, and checks has_cluster_buckets() once.)
  bool has_cluster_buckets() const { return cluster_buckets_; }
  std::span<const int> nodes_with_free(int d, int k) const {
    const Bucket& b = buckets_[bucket_index(d, k)];
    return {bucket_nodes_.data() + b.begin, b.size};
  }

  void set_available(int node, bool available);
  // Takes (gives back) the GPUs of an allocation; throws std::logic_error on an over- or
  // under-allocation, or on taking GPUs of an unavailable node.
  void allocate(const Allocation& a);
  void release(const Allocation& a);

  // Distinct domains (nodes) an allocation spans. (Inline, as min_spread: every start asks for
  // both, and the calls were most of their cost.)
  int spread(const Allocation& a) const {
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
  static int node_count(const Allocation& a) { return static_cast<int>(a.size()); }
  // The fewest domains `gpus` GPUs could span on an empty cluster: filled largest first.
  int min_spread(int gpus) const {
    int count = 0;
    for (const int capacity : domains_by_size_) {
      if (gpus <= 0) break;
      gpus -= capacity;
      ++count;
    }
    return count > 1 ? count : 1;
  }

  // Throws std::logic_error when an invariant does not hold.
  void check() const;

 private:
  // An indexed set of nodes, bucket_nodes_[begin, begin + size): O(1) insert (at the end) and
  // erase (the last takes the hole). Every bucket has room for all its domain's nodes (the
  // cluster's for all nodes), so the buckets share one flat table and never reallocate.
  struct Bucket {
    std::size_t begin = 0;
    std::size_t size = 0;
  };
  // Where a node is bucketed: its bucket's free count (-1: none) and its positions in its
  // domain's bucket and the cluster's (-1 without cluster buckets); with its domain, one 16-byte record per node (a change
  // of a node's free GPUs reads and writes it whole).
  struct NodeBuckets {
    int domain = 0;
    int free = -1;
    int pos_domain = -1;
    int pos_cluster = -1;
  };
  std::size_t bucket_index(int d, int k) const {
    return (static_cast<std::size_t>(d) + 1) * stride_ + static_cast<std::size_t>(k);
  }
  // Node `node` leaves bucket b (the last node of b takes its place) or joins it at the end;
  // `pos`: which of its positions (in its domain's bucket or the cluster's).
  void take_out(Bucket& b, int node, int NodeBuckets::*pos);
  void put_in(Bucket& b, int node, int NodeBuckets::*pos);
  void unbucket(int node);
  void rebucket(int node);
  void change(int node, int delta_allocated);
  // Domain d's free GPUs change by delta (its total and its place in the free-count index).
  void add_domain_free(int d, int delta);
  int best_fit_by_scan(int gpus) const;

  int gpus_per_node_;
  bool cluster_buckets_;
  std::vector<int> node_domain_;
  std::vector<std::vector<int>> domain_nodes_;
  std::vector<int> allocated_;
  std::vector<unsigned char> available_;
  std::vector<int> domain_free_;
  int free_ = 0;
  int allocated_total_ = 0;
  int available_nodes_ = 0;
  int allocated_unavailable_ = 0;  // allocated GPUs on unavailable nodes
  // buckets_[(d + 1) * stride_ + k]: d = -1 is the whole cluster (no room in bucket_nodes_
  // without cluster_buckets_); stride_ = gpus_per_node + 1.
  std::size_t stride_;
  std::vector<Bucket> buckets_;
  std::vector<int> bucket_nodes_;
  std::vector<NodeBuckets> node_buckets_;
  std::vector<int> domains_by_size_;  // domain capacities, largest first (min_spread)
  // The free-count index (empty past 64 domains or kMaxIndexedFree GPUs in a domain):
  // domains_with_free_[v] has bit d set when domain d has v free GPUs, and free_counts_ has
  // bit v set when some domain has v free GPUs.
  static constexpr int kMaxIndexedFree = 1023;
  std::vector<uint64_t> domains_with_free_;
  std::vector<uint64_t> free_counts_;
};

}  // namespace cs::jobs
