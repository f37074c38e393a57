// The fat-tree configurator (rules: topology/fat_tree_shape.hpp).
//
// Checked against NVIDIA's published DGX SuperPOD compute fabrics (tests/cpp/topology/
// test_configurator.cpp):
//   - DGX B200 SuperPOD, 8 x 400G NICs per node, 64-port QM9700 switches, rail-optimized
//     (docs.nvidia.com/dgx-superpod/reference-architecture-scalable-infrastructure-b200/latest/
//     dgx-superpod-architecture.html, "Larger DGX SuperPOD component counts"): 512 GPUs 16 leaf
//     / 8 spine, 1,024: 32 / 16, 2,048: 64 / 32, 4,096: 128 / 128 / 64 core, 8,192: 256 / 256
//     / 128, 16,384: 512 / 512 / 256, one cable per NIC and per leaf and spine up-port.
//   - DGX B300 SuperPOD (XDR), 144-port switches, 72 nodes per SU
//     (docs.nvidia.com/dgx-superpod/reference-architecture/scalable-infrastructure-b300-xdr/
//     latest/dgx-superpod-architecture.html): 576 GPUs 8 leaf / 4 spine, 1,152: 16 / 8,
//     2,304: 32 / 18, 4,608: 64 / 36, 9,216 (1,296 nodes): 144 / 72.
#include "topology/fat_tree_shape.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "topology/build_detail.hpp"

namespace cs::topo::detail {
namespace {

constexpr int kMaxTiers = 6;
constexpr int64_t kMaxSwitches = int64_t{1} << 24;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Down:up ratio of tier t (1-based, below the top), checked.
double tier_ratio(const TopologyParams& p, int t) {
  const auto upper = static_cast<std::size_t>(t - 2);
  const double o = t == 1 ? p.oversubscription
                          : (upper < p.upper_oversubscription.size() ? p.upper_oversubscription[upper]
                                                                     : 1.0);
  if (!(o > 0.0) || !std::isfinite(o))
    fail(t == 1 ? "oversubscription" : "oversubscription." + std::to_string(t - 1),
         "oversubscription (down:up) must be a finite number > 0");
  return o;
}

std::string ratio_param(int t) {
  return t == 1 ? "oversubscription" : "oversubscription." + std::to_string(t - 1);
}

// Most down-ports a switch of radix k may use at ratio o: d + ceil(d / o) <= k. The epsilon
// keeps exact ratios (k=8, o=3 -> 6) from rounding down through floating-point error.
int max_down(int k, double o) { return static_cast<int>(std::floor(k * o / (1.0 + o) + 1e-9)); }
// Up-ports that d down-ports need at ratio o.
int up_needed(int d, double o) { return static_cast<int>(std::ceil(d / o - 1e-9)); }

// Most down-ports at tier t's ratio, at least 1 or a BuildError.
int tier_down_cap(const TopologyParams& p, int t) {
  const double o = tier_ratio(p, t);
  const int d = max_down(p.switch_radix, o);
  if (d < 1 || d >= p.switch_radix)
    fail(ratio_param(t), "oversubscription " + std::to_string(o) + " with switch_radix " +
                             std::to_string(p.switch_radix) + " leaves " + std::to_string(d) +
                             " down and " + std::to_string(p.switch_radix - d) + " up ports per " +
                             (t == 1 ? std::string("leaf") : "switch of tier " + std::to_string(t)) +
                             "; each needs at least 1");
  return d;
}

// Cables per bundle fixed by the parameters for the boundary above tier t (1-based); 0: auto.
int fixed_parallel(const TopologyParams& p, int t) {
  const auto i = static_cast<std::size_t>(t - 1);
  return i < p.parallel_links.size() ? p.parallel_links[i] : 0;
}

std::string parallel_param(const TopologyParams& p, int t) {
  return p.parallel_links.size() > 1 ? "parallel_links." + std::to_string(t - 1) : "parallel_links";
}

void check_parallel_links(const TopologyParams& p) {
  const int k = p.switch_radix;
  if (p.parallel_links.size() > static_cast<std::size_t>(p.tiers - 1))
    fail("parallel_links", "a " + std::to_string(p.tiers) + "-tier fat-tree has " +
                               std::to_string(p.tiers - 1) +
                               " tier boundaries (one parallel_links entry each, leaf first), got " +
                               std::to_string(p.parallel_links.size()));
  for (int t = 1; t <= static_cast<int>(p.parallel_links.size()); ++t) {
    const int P = fixed_parallel(p, t);
    if (P < 0 || P > k / 2)
      fail(parallel_param(p, t), "parallel_links must be 1 to switch_radix / 2 = " +
                                     std::to_string(k / 2) + " (or 0 / \"auto\"), got " +
                                     std::to_string(P));
  }
}

LeafPlacement place_leaves(const TopologyParams& p, int64_t nics, int down_cap) {
  LeafPlacement lp;
  if (p.rail_optimized) {
    lp.rails = p.node.nics;
    lp.units = p.nodes;
  } else if (p.node.nics <= down_cap) {
    lp.units = p.nodes;  // whole nodes per leaf (a top-of-rack leaf)
    lp.unit_nics = p.node.nics;
  } else {
    lp.units = nics;
  }
  lp.leaves_per_rail = ceil_div(lp.units, down_cap / lp.unit_nics);
  return lp;
}

[[noreturn]] void fail_radix(const TopologyParams& p, const FatTreeShape& s) {
  // Most leaves under the asked-for tiers: k at the top (one cable each), times the groups
  // each tier below it gathers.
  int64_t max_leaves = p.switch_radix;
  for (int t = 2; t < p.tiers; ++t) max_leaves *= max_down(p.switch_radix, tier_ratio(p, t));
  const int d = max_down(p.switch_radix, tier_ratio(p, 1)), nics = p.node.nics;
  std::string what = "switch_radix too small for a " + std::to_string(p.tiers) +
                     "-tier fat-tree of " + std::to_string(s.nics) + " NICs: at most " +
                     std::to_string(max_leaves * d) + " NICs";
  if (p.rail_optimized)
    what += " (rail-optimized: at most " + std::to_string(max_leaves / nics * d) + " nodes of " +
            std::to_string(nics) + " NICs)";
  fail("switch_radix", what + "; raise switch_radix, tiers or oversubscription");
}

// Bundles from `below` to the tier above, whose switches take `fan` groups below and may use
// `cap` down-ports: sets below.up and below.parallel, returns the switches above that each
// switch below reaches (r).
int64_t choose_bundles(const TopologyParams& p, int t, TierShape& below, int fan, int cap) {
  const int k = p.switch_radix, fixed = fixed_parallel(p, t);
  const int up = below.up;
  int P = fixed, r = 0;
  if (fixed > 0) {
    r = static_cast<int>(ceil_div(up, fixed));
  } else {
    for (r = 1; r < up; ++r) {
      P = static_cast<int>(ceil_div(up, r));
      if (int64_t{fan} * P <= cap && below.down + int64_t{r} * P <= k) break;
    }
    if (r == up) P = 1;
  }
  const std::string where = t == 1 ? "leaf" : "switch of tier " + std::to_string(t);
  if (int64_t{fan} * P > cap)
    fail(parallel_param(p, t), "a switch of tier " + std::to_string(t + 1) + " takes a bundle of " +
                                   std::to_string(P) + " cables from each of " +
                                   std::to_string(fan) + " groups below: " +
                                   std::to_string(int64_t{fan} * P) + " ports, more than its " +
                                   std::to_string(cap) + "; lower parallel_links");
  if (below.down + int64_t{r} * P > k)
    fail(parallel_param(p, t), "each " + where + " needs " + std::to_string(up) +
                                   " up-ports; in bundles of " + std::to_string(P) + " that is " +
                                   std::to_string(r * P) + ", which with its " +
                                   std::to_string(below.down) +
                                   " down-ports exceeds switch_radix " + std::to_string(k));
  below.up = r * P;
  below.parallel = P;
  return r;
}

}  // namespace

LeafSlot leaf_block(const LeafPlacement& lp, int64_t unit) {
  const int64_t base = lp.units / lp.leaves_per_rail, extra = lp.units % lp.leaves_per_rail;
  const int64_t big = extra * (base + 1);  // units in the larger leaves, which come first
  if (unit < big) return {unit / (base + 1), unit % (base + 1)};
  return {extra + (unit - big) / base, (unit - big) % base};
}

namespace {

// The tiers from the leaves up, each tier below the top gathering the groups below into
// groups[i] groups (tier index i, leaf 0) where given and > 0, else into as few as fit.
FatTreeShape build_shape(const TopologyParams& p, const std::vector<int>& down_cap,
                         const std::vector<int64_t>& groups) {
  const int k = p.switch_radix;
  FatTreeShape s;
  s.nics = int64_t{p.nodes} * p.node.nics;
  s.placement = place_leaves(p, s.nics, down_cap[0]);
  const LeafPlacement& lp = s.placement;
  s.tier.reserve(static_cast<std::size_t>(p.tiers));  // references into it stay valid below
  TierShape leaf;
  leaf.groups = lp.rails * lp.leaves_per_rail;
  leaf.down = leaf.fan = static_cast<int>(ceil_div(lp.units, lp.leaves_per_rail) * lp.unit_nics);
  leaf.up = leaf.groups > 1 ? up_needed(leaf.down, tier_ratio(p, 1)) : 0;
  s.tier.push_back(leaf);

  int64_t switches = leaf.groups;
  for (int t = 2; s.tier.back().groups > 1; ++t) {
    if (t > p.tiers) fail_radix(p, s);
    TierShape& below = s.tier.back();
    const int64_t bundle = std::max(fixed_parallel(p, t - 1), 1);
    // The top: one group whose switches reach every group below with all k ports down.
    const bool top = t == p.tiers || below.groups * bundle <= k;
    TierShape next;
    int cap = k;
    // (Too many groups even for single cables is the radix's fault; too many for the asked
    // bundles is parallel_links', reported by choose_bundles.)
    if (top) {
      if (below.groups > k) fail_radix(p, s);
      next.fan = static_cast<int>(below.groups);
    } else {
      cap = down_cap[static_cast<std::size_t>(t - 1)];
      if (cap < 2) fail_radix(p, s);
      const int64_t fan_max = cap / bundle;
      if (fan_max < 2)
        fail(parallel_param(p, t - 1), "a switch of tier " + std::to_string(t) +
                                           " gathers at least 2 groups below, " +
                                           std::to_string(2 * bundle) + " ports in bundles of " +
                                           std::to_string(bundle) + ", more than its " +
                                           std::to_string(cap) + "; lower parallel_links");
      const auto i = static_cast<std::size_t>(t - 1);
      next.groups = std::max(ceil_div(below.groups, fan_max), i < groups.size() ? groups[i] : 0);
      next.fan = static_cast<int>(ceil_div(below.groups, next.groups));
    }
    const int64_t reach = choose_bundles(p, t - 1, below, next.fan, cap);
    next.per_group = below.per_group * reach;
    next.leaves_per_group = top ? leaf.groups : below.leaves_per_group * next.fan;
    next.down = next.fan * below.parallel;
    next.up = top ? 0 : up_needed(next.down, tier_ratio(p, t));
    if (next.per_group > kMaxSwitches || (switches += next.groups * next.per_group) > kMaxSwitches)
      fail("oversubscription", "this fat-tree would need more than " +
                                   std::to_string(kMaxSwitches) +
                                   " switches; use fewer up-ports (a larger oversubscription)");
    s.tier.push_back(next);
  }
  return s;
}

int64_t switch_count(const FatTreeShape& s) {
  int64_t n = 0;
  for (const TierShape& tier : s.tier) n += tier.groups * tier.per_group;
  return n;
}

int64_t up_cables(const FatTreeShape& s) {
  int64_t n = 0;
  for (const TierShape& tier : s.tier) n += tier.groups * tier.per_group * tier.up;
  return n;
}

}  // namespace

FatTreeShape fat_tree_shape(const TopologyParams& p) {
  if (p.tiers < 2 || p.tiers > kMaxTiers)
    fail("tiers", "a fat_tree has 2 to " + std::to_string(kMaxTiers) + " tiers, got " +
                      std::to_string(p.tiers) +
                      " (a single switch is a fat_tree whose NICs fit on one leaf)");
  const int k = p.switch_radix;
  if (k < 2) fail("switch_radix", "switch_radix must be >= 2, got " + std::to_string(k));
  if (k > kMaxSwitchRadix)
    fail("switch_radix", "switch_radix must be <= " + std::to_string(kMaxSwitchRadix) + ", got " +
                             std::to_string(k));
  if (p.upper_oversubscription.size() > static_cast<std::size_t>(p.tiers - 2))
    fail("oversubscription", "a " + std::to_string(p.tiers) + "-tier fat-tree takes " +
                                 std::to_string(p.tiers - 1) +
                                 " oversubscription ratios (one per tier below the top, leaf "
                                 "first), got " +
                                 std::to_string(p.upper_oversubscription.size() + 1));
  std::vector<int> down_cap(static_cast<std::size_t>(p.tiers));  // [t - 1], t below the top
  for (int t = 1; t < p.tiers; ++t) down_cap[static_cast<std::size_t>(t - 1)] = tier_down_cap(p, t);
  check_parallel_links(p);
  check_bandwidth(p.link_bandwidth_Bps, "link_bandwidth");
  check_latency(p.link_latency_s, "link_latency");

  // The fewest groups at each tier below the top need not give the smallest tree: 392 leaves
  // of a 2:1 rail fabric in 13 pods of 30-31 leaves (radix 64) leave each spine an up-port
  // more than its pod's leaves ask for, rounded up to bundles of 4 to 32, and 168 cores of
  // which 52 ports are used; 14 pods of 28 give spines at exactly 1:1 and 147 cores, for as
  // many switches and 504 fewer cables. So each non-blocking tier, from the bottom, takes the
  // group count that gives the fewest switches, then the fewest cables (the fewest groups on
  // a tie). A tapered tier keeps the fewest, largest groups: what its groups send out is cut
  // by its ratio, and the larger a group the less of its traffic leaves it.
  std::vector<int64_t> groups;
  FatTreeShape best = build_shape(p, down_cap, groups);
  for (std::size_t i = 1; i + 1 < best.tier.size(); ++i) {
    groups.resize(i + 1, 0);
    if (tier_ratio(p, static_cast<int>(i) + 1) > 1.0) {
      groups[i] = best.tier[i].groups;
      continue;
    }
    // Past k more groups than the fewest, a tier's switches only multiply.
    const int64_t fewest = best.tier[i].groups, most = std::min(best.tier[i - 1].groups / 2, fewest + k);
    for (int64_t g = fewest + 1; g <= most; ++g) {
      groups[i] = g;
      FatTreeShape s;
      try {
        s = build_shape(p, down_cap, groups);
      } catch (const BuildError&) {
        continue;  // this split needs more tiers, or bundles that do not fit
      }
      if (s.tier.size() != best.tier.size()) continue;
      const int64_t a = switch_count(s), b = switch_count(best);
      if (a < b || (a == b && up_cables(s) < up_cables(best))) best = std::move(s);
    }
    groups[i] = best.tier[i].groups;
  }
  return best;
}

}  // namespace cs::topo::detail
