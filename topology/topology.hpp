#pragma once
// The graph of a cluster: GPUs, NICs, node switches (NVSwitch, PCIe host) and fabric switches,
// joined by full-duplex cables. Each cable is two directed links with their own bandwidth
// (bytes/s) and latency (s); the link a->b has an even id and b->a is id ^ 1.
//
// Ranks are GPUs numbered node by node: rank = node * gpus_per_node + local GPU index.
//
// Invariants kept by Topology: vertex and link ids are dense (0..n-1); out_links(v) lists the
// links leaving v in insertion order (boost_graph.hpp, internal, builds the Boost.Graph of the
// same edges in the same order for the searches that use it). Vertex names are unique.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "topology/params.hpp"

namespace cs::topo {

using VertexId = uint32_t;
using LinkId = uint32_t;

enum class VertexKind : uint8_t { gpu, nic, node_switch, fabric_switch };
enum class LinkKind : uint8_t { node_fabric, pcie, fabric };
// The names the reports use.
inline constexpr auto kLinkKindNames = std::to_array<EnumName<LinkKind>>({
    {"node_fabric", LinkKind::node_fabric, "NVLink: GPU to NVSwitch, or GPU to GPU in a mesh", NameUse::output_only},
    {"pcie", LinkKind::pcie, "PCIe inside a node: GPU, NIC, PCIe switch, host", NameUse::output_only},
    {"fabric", LinkKind::fabric, "the network: NIC to switch, switch to switch", NameUse::output_only},
});
static_assert(names_every_value<kLinkKindNames>());
std::string_view link_kind_name(LinkKind kind);

// A parameter the builder rejects. param() is the offending key relative to the topology
// section of a scenario ("nodes", "switch_radix", "links.3.b", "switches.0"); node parameters
// are reported as "node.<key>" ("node.gpus", "node.nic_bandwidth"), which the scenario file
// holds under hardware.node. Keys use the scenario spelling (no unit suffix). what() is the
// explanation alone, without the key, so the caller can prefix the full JSON path.
class BuildError : public std::invalid_argument {
 public:
  BuildError(std::string param, const std::string& what)
      : std::invalid_argument(what), param_(std::move(param)) {}
  const std::string& param() const noexcept { return param_; }

 private:
  std::string param_;
};

// Largest cluster the builders accept (GPUs, and NICs): beyond this a request is a typo, and
// building it would exhaust memory. Also keeps ranks within 24 bits for routing cache keys.
inline constexpr int64_t kMaxGpus = int64_t{1} << 24;
inline constexpr int64_t kMaxNics = int64_t{1} << 24;
inline constexpr int kMaxSwitchRadix = 1 << 16;

struct Vertex {
  VertexKind kind;
  int32_t node = -1;   // owning node, -1 for fabric switches
  int32_t index = 0;   // local GPU/NIC index, or switch index within its tier
  int32_t tier = 0;    // fabric switches: 1 = leaf, 2 = spine, ...; 0 otherwise
  std::string name;    // "n3.gpu5", "n3.1" ("n3" when one NIC), "n3.nvswitch", "n3.host",
                       // "leaf7", "spine2", "g3.r1" (dragonfly), "t1.2.3" (torus), custom names
};

struct Link {
  VertexId from, to;
  double bandwidth_Bps;
  double latency_s;
  LinkKind kind;
};

inline constexpr LinkId reverse(LinkId l) { return l ^ 1u; }

// Dragonfly and torus structure: topology/direct_layouts.hpp.
struct DragonflyLayout;
struct TorusLayout;

// One switch tier of a fat-tree (folded Clos), tier t = 1 (leaves) .. tiers (top). A tier's
// switches come in groups, one group above each subtree of the tier below (a leaf is its own
// group; with 3 tiers a tier-2 group is a pod's aggregation switches), numbered group by
// group: switch i is local switch i % per_group of group i / per_group. Groups of tier t+1
// take the groups of tier t in order, `fan` each (the last may take fewer). A switch of tier
// t has `up` up-ports in `up / parallel` bundles of `parallel` cables: up-port p of local
// switch s of group a leads to local switch s * (up / parallel) + p mod (up / parallel) of
// the group above a (cable p / (up / parallel) of its bundle), so a group of tier t+1 has
// per_group(t) * up(t) / parallel(t) switches, each with one bundle to every group below it.
// Sizes come from the configurator (topology/fat_tree_shape.hpp).
struct FatTreeTier {
  int switches = 0;
  int per_group = 1;             // switches per group (product of the lower tiers' up / parallel)
  int down = 0;                  // ports in use toward the tier below, the most on one switch
  int fan = 0;                   // leaf: down; above: groups below one group
  int up = 0;                    // ports per switch toward the tier above (0 at the top)
  int parallel = 1;              // cables per bundle to one switch above (0 ports up: 1)
  int64_t leaves_per_group = 1;  // leaf l lies below group l / leaves_per_group of this tier
  std::vector<VertexId> vertex;  // switch index -> vertex (whose Vertex::index is that index)
  std::vector<LinkId> up_link;   // switch * up + p -> link from the switch up through port p
};

// Fat-tree structure kept by the builder so routers compute routes arithmetically.
// Global NIC index g = node * nics_per_node + local NIC index. Switches are named leaf<i>,
// spine<i> (tier 2) and core<i> (tier 3). Tiers 1 and 2 keep their own fields (leaf, spine)
// for the 2-tier view; tier[] holds every tier, and is all the routers use. Fewer tiers are
// built than asked when fewer reach every NIC (one leaf: no tier 2; the leaves fit under one
// top switch's ports: no tier 3); tiers_requested keeps the number asked for.
// NICs are spread evenly over the leaves (of their rail): leaves hold equal numbers of nodes
// (of NICs when a node's NICs exceed a leaf), the first ones one more when it does not divide.
struct FatTreeLayout {
  int leaves = 0, spines = 0;         // spines: tier-2 switches (aggregation with 3 tiers)
  int down_ports = 0;                 // NIC-facing ports in use on the fullest leaf
  int up_ports = 0;                   // tier-2-facing ports per leaf in use (0 if 1 leaf)
  bool rail_optimized = false;
  std::vector<VertexId> leaf, spine;  // switch vertices
  std::vector<int> nic_leaf;          // global NIC index -> leaf
  std::vector<int> nic_port;          // global NIC index -> down-port on its leaf
  std::vector<LinkId> nic_up;         // global NIC index -> link NIC -> leaf
  std::vector<LinkId> leaf_up;        // leaf * up_ports + p -> link from the leaf up through
                                      // port p (see FatTreeTier)
  int tiers = 1;                      // switch tiers built, = tier.size()
  int tiers_requested = 2;            // TopologyParams::tiers
  std::vector<FatTreeTier> tier;      // tier[t - 1] for t = 1 .. tiers
  // Global NIC index -> D-mod-K key: the NIC's position in mixed radix, port on its leaf
  // first, each weight rounded up to a multiple of tier[t].per_group (the product of the
  // up-ports below it, each divided by its tier's parallel cables), so the up-port of level
  // t, floor(key / per_group(t)) mod up(t), is the leaf port mod up(1) at the leaf, and digit
  // t of the position on a full non-blocking tree without parallel links.
  std::vector<uint64_t> nic_key;
};

class Topology {
 public:
  // Throws std::invalid_argument on a duplicate name.
  VertexId add_vertex(VertexKind kind, int node, int index, int tier, std::string name);
  // A full-duplex cable; returns the id of a->b (b->a is reverse of it). a != b.
  LinkId add_cable(VertexId a, VertexId b, double bandwidth_Bps, double latency_s, LinkKind kind);
  // Capacity hint for builders (avoids regrowth on large fabrics).
  void reserve(std::size_t vertices, std::size_t cables);

  std::size_t num_vertices() const { return vertices_.size(); }
  std::size_t num_links() const { return links_.size(); }      // directed links
  std::size_t num_cables() const { return links_.size() / 2; }
  const Vertex& vertex(VertexId v) const { return vertices_[v]; }
  const Link& link(LinkId l) const { return links_[l]; }
  const std::vector<Link>& links() const { return links_; }
  std::span<const LinkId> out_links(VertexId v) const { return out_[v]; }
  std::optional<VertexId> find(std::string_view name) const;
  // The first link from -> to in out-link order (parallel cables: the first one built).
  std::optional<LinkId> find_link(VertexId from, VertexId to) const;
  // Number of fabric switches (VertexKind::fabric_switch).
  std::size_t num_fabric_switches() const { return fabric_switches_; }

  // Failed cables (topology/failures.hpp): a failed cable's two links carry nothing and no
  // routing crosses them; the graph keeps them (ids, layouts and names stay as built).
  void fail_cable(LinkId l);
  bool failed(LinkId l) const { return !failed_.empty() && failed_[l]; }
  bool has_failures() const { return failed_cables_ > 0; }
  std::size_t num_failed_cables() const { return failed_cables_; }
  // A link's bandwidth, 0 when its cable failed: what the structural figures count.
  double live_bandwidth(LinkId l) const { return failed(l) ? 0.0 : links_[l].bandwidth_Bps; }

  // Placement of ranks (filled by the builders).
  int nodes() const { return nodes_; }
  int gpus_per_node() const { return gpus_per_node_; }
  int nics_per_node() const { return nics_per_node_; }
  int ranks() const { return nodes_ * gpus_per_node_; }
  int node_of_rank(int rank) const { return rank / gpus_per_node_; }
  int local_of_rank(int rank) const { return rank % gpus_per_node_; }
  VertexId gpu(int rank) const { return gpu_[rank]; }
  VertexId nic(int node, int j) const { return nic_[node * nics_per_node_ + j]; }
  int nic_of_local_gpu(int local_gpu) const {
    return static_cast<int>(int64_t{local_gpu} * nics_per_node_ / gpus_per_node_);
  }
  // Global index (node * nics_per_node + j) of the NIC affine to a rank's GPU.
  int nic_index_of_rank(int rank) const {
    return node_of_rank(rank) * nics_per_node_ + nic_of_local_gpu(local_of_rank(rank));
  }
  // The NVSwitch or PCIe host of a node; nvlink_mesh nodes have none (has_node_switch()).
  bool has_node_switch() const { return !node_switch_.empty(); }
  VertexId node_switch(int node) const { return node_switch_[node]; }
  NodeFabric node_fabric() const { return node_fabric_; }
  // PCIe switches (NodeParams::pcie_switches), 0 per node when not modelled. With them, GPU
  // local i is behind pcie_switch(node, pcie_switch_of_gpu(i)), NIC j behind
  // pcie_switch(node, pcie_switch_of_nic(j)), and every PCIe switch joins host(node) (for
  // pcie nodes the host is node_switch(node)).
  int pcie_switches_per_node() const { return pcie_per_node_; }
  VertexId pcie_switch(int node, int k) const {
    return pcie_switch_[static_cast<std::size_t>(node) * static_cast<std::size_t>(pcie_per_node_) +
                        static_cast<std::size_t>(k)];
  }
  int pcie_switch_of_gpu(int local_gpu) const {
    return static_cast<int>(int64_t{local_gpu} * pcie_per_node_ / gpus_per_node_);
  }
  int pcie_switch_of_nic(int j) const {
    return static_cast<int>(int64_t{j} * pcie_per_node_ / nics_per_node_);
  }
  VertexId host(int node) const { return host_[static_cast<std::size_t>(node)]; }

  TopologyKind kind() const { return kind_; }
  const FatTreeLayout* fat_tree() const { return fat_tree_ ? &*fat_tree_ : nullptr; }
  const DragonflyLayout* dragonfly() const { return dragonfly_.get(); }
  const TorusLayout* torus() const { return torus_.get(); }

  // Builders' access.
  // node_switches: one per node, or none (nvlink_mesh nodes).
  void set_placement(TopologyKind kind, int nodes, int gpus_per_node, int nics_per_node,
                     std::vector<VertexId> gpus, std::vector<VertexId> nics,
                     std::vector<VertexId> node_switches);
  void set_node_fabric(NodeFabric fabric) { node_fabric_ = fabric; }
  // per_node PCIe switches of every node (node by node) and each node's host.
  void set_pcie(int per_node, std::vector<VertexId> switches, std::vector<VertexId> hosts) {
    pcie_per_node_ = per_node;
    pcie_switch_ = std::move(switches);
    host_ = std::move(hosts);
  }
  void set_fat_tree(FatTreeLayout layout) { fat_tree_ = std::move(layout); }
  void set_dragonfly(std::shared_ptr<const DragonflyLayout> l) { dragonfly_ = std::move(l); }
  void set_torus(std::shared_ptr<const TorusLayout> l) { torus_ = std::move(l); }

 private:
  std::vector<Vertex> vertices_;
  std::vector<Link> links_;
  std::vector<std::vector<LinkId>> out_;
  std::unordered_map<std::string, VertexId> by_name_;
  std::size_t fabric_switches_ = 0;
  std::vector<bool> failed_;  // per directed link; empty while no cable failed
  std::size_t failed_cables_ = 0;
  TopologyKind kind_ = TopologyKind::single_node;
  NodeFabric node_fabric_ = NodeFabric::nvswitch;
  int nodes_ = 0, gpus_per_node_ = 0, nics_per_node_ = 0;
  std::vector<VertexId> gpu_, nic_, node_switch_;
  int pcie_per_node_ = 0;
  std::vector<VertexId> pcie_switch_, host_;
  std::optional<FatTreeLayout> fat_tree_;
  std::shared_ptr<const DragonflyLayout> dragonfly_;  // shared: immutable once built
  std::shared_ptr<const TorusLayout> torus_;
};

// Every node's NIC vertices in global order (node * nics_per_node + j).
std::vector<VertexId> fabric_nics(const Topology& topology);

// Build from parameters. Every violation throws BuildError naming the parameter (see above),
// before any large allocation.
Topology build_topology(const TopologyParams& params);
// What build_topology(params) would build, from the parameters alone (no allocation beyond a
// fat-tree's per-tier shape): vertices and cables (each cable is two directed links). Throws
// BuildError as build_topology would on parameters it checks first.
struct TopologySize {
  int64_t vertices = 0, cables = 0;
};
TopologySize topology_size(const TopologyParams& params);

// The fat-tree builder's own checks (tiers, radix, oversubscription ratios, size), without
// building; throws BuildError as build_topology would. Assumes the node checks pass.
void check_fat_tree(const TopologyParams& params);

}  // namespace cs::topo
