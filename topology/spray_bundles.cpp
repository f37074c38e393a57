// Spray's bundles on a fat-tree (the fat-tree router's routes name them, routing.hpp).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "topology/routing_detail.hpp"

namespace cs::topo::detail {

// Per leaf and level l: the share of a flow leaving the leaf that each level-l up-link
// carries when every switch splits evenly over its up-ports. Those links are the leaf's
// level-l up-bundle when the shares are equal (the same bundle for every leaf of a group,
// kept once); reversed, they are the level-l down-bundle into the leaf.
SprayBundles spray_bundles(const Topology& t, const FatTreeLayout& f) {
  SprayBundles out;
  const auto leaves = static_cast<std::size_t>(f.tier[0].switches);
  const auto levels = static_cast<std::size_t>(f.tiers - 1);
  out.up.assign(levels * leaves, kNoBundle);
  out.down.assign(levels * leaves, kNoBundle);
  std::map<std::vector<LinkId>, uint32_t> ids;
  const auto intern = [&](std::vector<LinkId> members) {
    std::sort(members.begin(), members.end());
    const auto [it, inserted] = ids.try_emplace(members, static_cast<uint32_t>(out.bundles.size()));
    if (inserted) out.bundles.push_back({std::move(members)});
    return it->second;
  };
  std::map<int, double> frontier, next;  // switch index in tier l -> share of the flow
  std::map<LinkId, double> share;
  std::vector<LinkId> members, reversed;
  // The model is exact only if a link belongs to one bundle (or none), and a flow turning
  // at tier T comes down from each tier-T switch with what it took up there: every leaf of
  // a tier-T group reaches the same tier-T switches, each with an equal share.
  constexpr uint32_t kPlain = kNoBundle - 1;
  std::vector<uint32_t> owner(t.num_links(), kNoBundle);
  std::map<std::pair<std::size_t, int64_t>, std::vector<int>> reached;  // (tier, group) -> switches
  const auto uneven = [](std::size_t leaf, std::size_t l) {
    return std::invalid_argument("routing 'spray' needs switches that reach the tier above evenly (leaf " +
                                 std::to_string(leaf) + ", level " + std::to_string(l) + ")");
  };
  const auto own = [&](LinkId link, uint32_t id, std::size_t leaf, std::size_t l) {
    if (owner[link] != kNoBundle && owner[link] != id) throw uneven(leaf, l);
    owner[link] = id;
  };
  for (std::size_t leaf = 0; leaf < leaves; ++leaf) {
    frontier = {{static_cast<int>(leaf), 1.0}};
    for (std::size_t l = 1; l <= levels; ++l) {
      const FatTreeTier& tr = f.tier[l - 1];
      share.clear();
      next.clear();
      for (const auto& [sw, w] : frontier)
        for (int p = 0; p < tr.up; ++p) {
          const LinkId link = tr.up_link[static_cast<std::size_t>(int64_t{sw} * tr.up + p)];
          share[link] += w / tr.up;
          next[t.vertex(t.link(link).to).index] += w / tr.up;
        }
      members.clear();
      reversed.clear();
      const double even = 1.0 / static_cast<double>(share.size());
      for (const auto& [link, w] : share) {
        if (std::abs(w - even) > 1e-9 * even) throw uneven(leaf, l);
        members.push_back(link);
        reversed.push_back(reverse(link));
      }
      const uint32_t up = members.size() >= 2 ? intern(members) : kPlain;
      const uint32_t down = members.size() >= 2 ? intern(reversed) : kPlain;
      for (std::size_t i = 0; i < members.size(); ++i) {
        own(members[i], up, leaf, l);
        own(reversed[i], down, leaf, l);
      }
      if (up != kPlain) {
        out.up[(l - 1) * leaves + leaf] = up;
        out.down[(l - 1) * leaves + leaf] = down;
      }
      frontier.swap(next);
      std::vector<int> switches;
      const double even_switch = 1.0 / static_cast<double>(frontier.size());
      for (const auto& [sw, w] : frontier) {
        if (std::abs(w - even_switch) > 1e-9 * even_switch) throw uneven(leaf, l);
        switches.push_back(sw);
      }
      const int64_t group = static_cast<int64_t>(leaf) / f.tier[l].leaves_per_group;
      const auto [it, first] = reached.try_emplace({l, group}, switches);
      if (!first && it->second != switches) throw uneven(leaf, l);
    }
  }
  return out;
}

}  // namespace cs::topo::detail
