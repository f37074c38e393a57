// topology.*: kind, sizes, fat-tree parameters, custom switches and links (dragonfly and
// torus keys: parse_topology_direct.cpp).
#include <limits>
#include <set>
#include <unordered_map>

#include "sim/scenario/parse_sections.hpp"
#include "sim/scenario/prices.hpp"
#include "sim/scenario/parse_util.hpp"
#include "sim/scenario/quantity_range.hpp"
#include "sim/scenario/suggest.hpp"
#include "topology/topology.hpp"

namespace cs::scenario::detail {
namespace {

// "123" -> 123; nullopt for empty, leading zeros, non-digits or more than 9 digits.
std::optional<int64_t> canonical_number(std::string_view s) {
  if (s.empty() || s.size() > 9 || (s.size() > 1 && s[0] == '0')) return std::nullopt;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

// The vertex name of NIC `nic` of node `node`: "n<node>" with one NIC per node, else
// "n<node>.<nic>". (Built by appending: GCC 12 warns falsely on "n" + std::string.)
std::string nic_vertex(int64_t node, int64_t nic, int nics) {
  std::string s(1, 'n');
  s += std::to_string(node);
  if (nics > 1) {
    s += '.';
    s += std::to_string(nic);
  }
  return s;
}

struct NicName {
  int64_t node = 0, nic = 0;
  bool has_nic = false;
};

// "n<i>" or "n<i>.<j>"; nullopt when the name does not have that form.
std::optional<NicName> parse_nic_name(std::string_view s) {
  if (s.size() < 2 || s[0] != 'n') return std::nullopt;
  s.remove_prefix(1);
  NicName out;
  const auto dot = s.find('.');
  auto node = canonical_number(s.substr(0, dot));
  if (!node) return std::nullopt;
  out.node = *node;
  if (dot != std::string_view::npos) {
    auto nic = canonical_number(s.substr(dot + 1));
    if (!nic) return std::nullopt;
    out.nic = *nic;
    out.has_nic = true;
  }
  return out;
}

// topology.oversubscription: one number (the leaves' down:up; the tiers above are
// non-blocking) or a list with one ratio per tier below the top, leaf first.
void parse_oversubscription(const json& t, topo::TopologyParams& p) {
  const double max = p.switch_radix - 1.0;
  const json* v = member(t, "oversubscription");
  if (!v || !v->is_array()) {
    p.oversubscription = get_number(t, "oversubscription", kTopology, 1.0, 1.0, max);
    return;
  }
  const std::string path = join_path(kTopology, "oversubscription");
  const auto ratios = static_cast<std::size_t>(p.tiers - 1);
  if (v->size() != ratios)
    throw InputError(path, "expected " + std::to_string(ratios) + " ratio" + (ratios == 1 ? "" : "s") +
                               " for " + std::to_string(p.tiers) + " tiers (one per tier below the top, " +
                               "leaf first); got " + std::to_string(v->size()),
                     "or give one number: the leaves' ratio, with the tiers above non-blocking");
  p.oversubscription = number_value((*v)[0], join_path(path, std::size_t{0}), 1.0, max);
  p.upper_oversubscription.clear();
  for (std::size_t i = 1; i < v->size(); ++i)
    p.upper_oversubscription.push_back(number_value((*v)[i], join_path(path, i), 1.0, max));
}

// topology.parallel_links as given: absent or "auto" (fat_tree only): {} (the builder
// chooses); a number: {n} with *number set; a list: its entries, "auto" entries (fat_tree
// only) as 0.
constexpr int64_t kMaxParallel = 2048;

std::vector<int> parallel_links_value(const json& t, bool auto_allowed, bool* number) {
  const std::string path = join_path(kTopology, "parallel_links");
  const json* v = member(t, "parallel_links");
  *number = false;
  auto entry = [&](const json& x, const std::string& at) {
    if (auto_allowed && x.is_string() && x.get_ref<const std::string&>() == "auto") return 0;
    if (x.is_string())
      throw InputError(at, "expected a number of cables from 1 to " + std::to_string(kMaxParallel) +
                               (auto_allowed ? " or \"auto\"" : "") + "; got " + describe_value(x));
    return static_cast<int>(int_value(x, at, 1, kMaxParallel));
  };
  if (!v) return {};
  if (!v->is_array()) {
    const int n = entry(*v, path);
    *number = n > 0;
    return n > 0 ? std::vector<int>{n} : std::vector<int>{};
  }
  std::vector<int> out;
  for (std::size_t i = 0; i < v->size(); ++i) out.push_back(entry((*v)[i], join_path(path, i)));
  return out;
}

void parse_fat_tree(const json& t, topo::TopologyParams& p) {
  p.tiers = static_cast<int>(get_int(t, "tiers", kTopology, 2, 2, 3));
  p.switch_radix = static_cast<int>(get_int(t, "switch_radix", kTopology, 64, 4, 4096));
  if (p.switch_radix % 2 != 0)
    throw InputError("topology.switch_radix",
                     "expected an even number of ports; got " + std::to_string(p.switch_radix));
  parse_oversubscription(t, p);
  p.rail_optimized = get_bool(t, "rail_optimized", kTopology, false);
  // One number: every tier boundary; a list: one entry per boundary, leaf to tier 2 first.
  bool number = false;
  p.parallel_links = parallel_links_value(t, true, &number);
  if (number) p.parallel_links.assign(static_cast<std::size_t>(p.tiers - 1), p.parallel_links[0]);
  if (member(t, "parallel_links") && member(t, "parallel_links")->is_array() &&
      p.parallel_links.size() != static_cast<std::size_t>(p.tiers - 1))
    throw InputError("topology.parallel_links",
                     "expected " + std::to_string(p.tiers - 1) + " entries for " +
                         std::to_string(p.tiers) + " tiers (one per tier boundary, leaf first); got " +
                         std::to_string(p.parallel_links.size()),
                     "or give one number for every boundary, or \"auto\"");
  // Any L-tier fat-tree has fewer endpoints than radix^L (radix subtrees of the tier below).
  const int64_t nics = int64_t{p.nodes} * p.node.nics;
  const int64_t radix = p.switch_radix;
  int64_t most = radix;
  for (int tier = 1; tier < p.tiers; ++tier) most *= radix;
  if (nics >= most)
    throw InputError("topology.nodes",
                     "a " + std::to_string(p.tiers) + "-tier fat-tree of radix " + std::to_string(radix) +
                         " connects fewer than " + std::to_string(most) + " NICs; got " +
                         std::to_string(p.nodes) + " nodes x " + std::to_string(p.node.nics) + " NICs",
                     p.tiers < 3 ? "raise topology.switch_radix or topology.tiers, or use fewer nodes"
                                 : "raise topology.switch_radix or use fewer nodes");
  // The exact limits (radix, ratios, rails), as the builder applies them.
  try {
    topo::check_fat_tree(p);
  } catch (const topo::BuildError& e) {
    throw InputError(join_path(kTopology, e.param()), e.what());
  }
}

std::string check_endpoint(const json& v, const std::string& path, const topo::TopologyParams& p,
                           const std::set<std::string>& switches) {
  if (!v.is_string()) throw InputError(path, "expected a switch name or a NIC name; got " + describe_value(v));
  const auto& name = v.get_ref<const std::string&>();
  if (switches.count(name)) return name;
  if (auto nic = parse_nic_name(name)) {
    if (nic->node >= p.nodes)
      throw InputError(path, "NIC \"" + name + "\" names node " + std::to_string(nic->node) +
                                 ", but there are " + std::to_string(p.nodes) + " nodes (n0..n" +
                                 std::to_string(p.nodes - 1) + ")");
    if (!nic->has_nic && p.node.nics > 1)
      throw InputError(path, "node " + std::to_string(nic->node) + " has " + std::to_string(p.node.nics) +
                                 " NICs; name one as \"" + name + ".<j>\"",
                       "did you mean \"" + nic_vertex(nic->node, 0, p.node.nics) + "\"?");
    if (nic->has_nic && nic->nic >= p.node.nics)
      throw InputError(path, "NIC \"" + name + "\" does not exist: nodes have " +
                                 std::to_string(p.node.nics) + " NICs (.0 to ." +
                                 std::to_string(p.node.nics - 1) + ")");
    // One NIC per node: "n3.0" and "n3" are the same vertex; keep the short name.
    return nic_vertex(nic->node, nic->nic, p.node.nics);
  }
  const std::vector<std::string> names(switches.begin(), switches.end());
  throw InputError(path, "unknown link endpoint \"" + name + "\"; expected a switch from " +
                             "topology.switches or a NIC \"n<i>\" / \"n<i>.<j>\"",
                   did_you_mean(name, names));
}

// Union-find over endpoint names: every NIC must reach NIC 0 of node 0.
struct Components {
  std::unordered_map<std::string, std::string> parent;
  std::string find(const std::string& x) {
    std::string r = x;
    while (parent.count(r) && parent[r] != r) r = parent[r];
    std::string y = x;  // path compression
    while (parent.count(y) && parent[y] != r) {
      std::string next = parent[y];
      parent[y] = r;
      y = next;
    }
    return r;
  }
  void unite(const std::string& a, const std::string& b) {
    parent.try_emplace(a, a);
    parent.try_emplace(b, b);
    parent[find(a)] = find(b);
  }
};

void parse_custom(const json& t, topo::TopologyParams& p) {
  std::set<std::string> switches;
  if (const json* list = member(t, "switches")) {
    if (!list->is_array()) throw InputError("topology.switches", "expected a list of switch names");
    for (std::size_t i = 0; i < list->size(); ++i) {
      const std::string path = join_path("topology.switches", i);
      const json& s = (*list)[i];
      if (!s.is_string() || s.get_ref<const std::string&>().empty())
        throw InputError(path, "expected a non-empty switch name; got " + describe_value(s));
      const auto& name = s.get_ref<const std::string&>();
      if (parse_nic_name(name))
        throw InputError(path, "switch name \"" + name + "\" looks like a NIC name (n<i>, n<i>.<j>)",
                         "rename the switch, e.g. \"sw" + name.substr(1) + "\"");
      if (!switches.insert(name).second)
        throw InputError(path, "duplicate switch name \"" + name + "\"; switch names must be unique");
      p.switches.push_back(name);
    }
  }
  Components components;
  if (const json* list = member(t, "links")) {
    if (!list->is_array()) throw InputError("topology.links", "expected a list of links {a, b, bandwidth, latency}");
    for (std::size_t i = 0; i < list->size(); ++i) {
      const std::string at = join_path("topology.links", i);
      const json& l = (*list)[i];
      if (!l.is_object()) throw InputError(at, "expected a link {a, b, bandwidth, latency}; got " + describe_value(l));
      for (const char* key : {"a", "b"})
        if (!member(l, key)) throw InputError(at, std::string("missing required key \"") + key + "\"");
      topo::CustomLink link;
      link.a = check_endpoint(l["a"], join_path(at, "a"), p, switches);
      link.b = check_endpoint(l["b"], join_path(at, "b"), p, switches);
      if (link.a == link.b) throw InputError(join_path(at, "b"), "a link from \"" + link.a + "\" to itself");
      link.bandwidth_Bps = get_ranged(l, "bandwidth", at, "link_bandwidth", p.link_bandwidth_Bps);
      link.latency_s = get_ranged(l, "latency", at, "latency", p.link_latency_s);
      components.unite(link.a, link.b);
      p.links.push_back(std::move(link));
    }
  }
  // With several nodes, every NIC must be able to reach every other.
  if (p.nodes > 1 || p.node.nics > 1) {
    auto nic_name = [&](int64_t node, int nic) { return nic_vertex(node, nic, p.node.nics); };
    const std::string first = nic_name(0, 0);
    const std::string root = components.parent.count(first) ? components.find(first) : std::string();
    for (int64_t n = 0; n < p.nodes; ++n)
      for (int j = 0; j < p.node.nics; ++j) {
        const std::string name = nic_name(n, j);
        if (p.nodes == 1 && !components.parent.count(name)) continue;  // intra-node only
        if (root.empty() || !components.parent.count(name) || components.find(name) != root)
          throw InputError("topology.links", "NIC \"" + name + "\" is not connected to \"" + first +
                                                 "\" by any path of links",
                           "every NIC needs a path to every other NIC; add links for it");
      }
  }
}

// topology.failed: what is down for the whole run (topology/failures.hpp); names are
// resolved when the topology is built, which reports them at their keys.
void parse_failed(const json& t, topo::TopologyParams& p, uint64_t seed) {
  const json* f = member(t, "failed");
  if (!f) return;
  constexpr std::string_view at = "topology.failed";
  if (!f->is_object()) throw InputError(std::string(at), "expected an object {links, switches, random_links, ...}");
  topo::FailureParams& out = p.failed;
  if (const json* list = member(*f, "links")) {
    for (std::size_t i = 0; i < list->size(); ++i) {
      const json& l = (*list)[i];
      const std::string path = join_path(join_path(at, "links"), i);
      out.links.push_back({get_string(l, "a", path, ""), get_string(l, "b", path, ""),
                           static_cast<int>(get_int(l, "cables", path, 0, 0, topo::kMaxSwitchRadix))});
    }
  }
  if (const json* list = member(*f, "switches"))
    for (const json& name : *list) out.switches.push_back(name.get<std::string>());
  out.random_links = static_cast<int>(get_int(*f, "random_links", at, 0, 0, 1 << 30));
  out.random_switches = static_cast<int>(get_int(*f, "random_switches", at, 0, 0, 1 << 30));
  out.link_mtbf_s = get_quantity(*f, "link_mtbf", at, QuantityKind::time, Sign::positive, 0.0);
  out.window_s = get_quantity(*f, "window", at, QuantityKind::time, Sign::non_negative, 0.0);
  if ((out.link_mtbf_s > 0) != (out.window_s > 0))
    throw InputError(join_path(at, out.link_mtbf_s > 0 ? "window" : "link_mtbf"),
                     "link_mtbf and window go together: each cable is down with probability 1 - exp(-window / link_mtbf)",
                     "give both, e.g. \"link_mtbf\": \"50000h\", \"window\": \"30d\"");
  out.seed = static_cast<uint64_t>(get_int(*f, "seed", at, static_cast<int64_t>(seed), 0,
                                           std::numeric_limits<int64_t>::max()));
  if (out.any() && p.kind == topo::TopologyKind::single_node)
    throw InputError(std::string(at), "a single_node topology has no fabric to fail", "use a fat_tree, dragonfly, torus or custom topology");
}

}  // namespace

void parse_topology(const json& doc, Config& config) {
  const json& t = object_or_empty(doc, "topology", "");
  config.prices = load_prices(doc);
  topo::TopologyParams& p = config.topology;
  if (const json* kind = member(t, "kind"); kind && kind->is_string() && kind->get_ref<const std::string&>() == kTpuSlice) {
    parse_tpu_slice(doc, t, config);
    parse_failed(t, p, config.seed);
    if (get_bool(t, "sharp", kTopology, false))
      throw InputError("topology.sharp", "SHARP reduces in fabric switches; a tpu_slice has none");
    return;
  }
  p.kind = get_choice(t, "kind", kTopology, topo::kTopologyKindNames, topo::TopologyKind::fat_tree);
  const int64_t nodes = get_int(t, "nodes", kTopology, direct_default_nodes(t, p.kind), 1, kMaxTotalGpus);
  if (p.kind == topo::TopologyKind::single_node && nodes != 1)
    throw InputError("topology.nodes", "a single_node topology has exactly 1 node; got " + std::to_string(nodes),
                     "use kind \"fat_tree\" or \"custom\" for several nodes");
  if (nodes * p.node.gpus > kMaxTotalGpus)
    throw InputError("topology.nodes", "expected at most " + std::to_string(kMaxTotalGpus) +
                                           " GPUs in total; got " + std::to_string(nodes) + " nodes x " +
                                           std::to_string(p.node.gpus) + " GPUs");
  p.nodes = static_cast<int>(nodes);
  p.link_bandwidth_Bps = get_ranged(t, "link_bandwidth", kTopology, "link_bandwidth", 50e9);
  p.link_latency_s = get_ranged(t, "link_latency", kTopology, "latency", 0.5e-6);
  p.nodes_per_rack = static_cast<int>(get_int(t, "nodes_per_rack", kTopology, 4, 1, 4096));
  p.racks_per_row = static_cast<int>(get_int(t, "racks_per_row", kTopology, 8, 1, 4096));
  if (p.kind == topo::TopologyKind::fat_tree) parse_fat_tree(t, p);
  if (p.kind == topo::TopologyKind::custom) parse_custom(t, p);
  if (p.kind == topo::TopologyKind::dragonfly || p.kind == topo::TopologyKind::torus) {
    // Keys the direct networks share with fat_tree, read here; their own: parse_*_direct.
    p.router_radix = static_cast<int>(get_int(t, "switch_radix", kTopology, 0, 4, 4096));
    bool number = false;
    std::vector<int> parallel = parallel_links_value(t, false, &number);
    if (p.kind == topo::TopologyKind::dragonfly) {
      if (!parallel.empty() && !number)
        throw InputError("topology.parallel_links",
                         "a dragonfly takes one number: cables between each pair of a group's routers");
      p.local_parallel_links = parallel.empty() ? 1 : parallel[0];
      p.rail_optimized = get_bool(t, "rail_optimized", kTopology, false);
      parse_dragonfly(t, p);
    } else {
      p.dim_parallel_links = std::move(parallel);  // one entry: every dimension
      parse_torus(t, p);
    }
  }
  parse_failed(t, p, config.seed);
  config.in_network.sharp = get_bool(t, "sharp", kTopology, false);
  if (config.in_network.sharp && (p.kind == topo::TopologyKind::single_node || p.kind == topo::TopologyKind::torus))
    throw InputError("topology.sharp", "SHARP reduces in fabric switches; a single_node or torus topology has none");
}

}  // namespace cs::scenario::detail
