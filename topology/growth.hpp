#pragma once
// Growing a fabric: what the bill of a larger build (the same file with more nodes, groups or
// dims) shares with the bill of the one installed, what must be bought, and which cables move.
//
// Items match by the bill's lines (topology/bill.hpp: GPU nodes, NICs, switch ports by speed
// class, cables, transceivers): min(have, need) are reused, the rest bought at the grown
// bill's unit prices; what the grown fabric no longer needs is surplus. Switches match by
// name (leaf3, spine0, core1, g2.r5, ...): a switch of the installed fabric the grown one
// still has stays in place. Cables match by the names of their two ends: a cable whose ends
// the grown fabric still joins (as many times) stays; every other installed fabric cable is
// unplugged (re-used as bought stock where its class is needed), and the grown fabric's
// cables without a match are laid. Both builds follow the configurator's rules
// (topology/fat_tree_shape.hpp): NICs balanced over the leaves and bundles of equal size, so
// growing moves cables wherever those rules place a node on another leaf or a leaf on
// another spine; an installation that grows with spare ports kept for it is not modelled.
#include <cstdint>
#include <string>
#include <vector>

#include "topology/bill.hpp"
#include "topology/topology.hpp"

namespace cs::topo {

struct GrowthLine {
  std::string item;               // the bill's item ("switch_port_400Gbps", "optical_cable", ...)
  int64_t have = 0, need = 0;     // installed, grown
  int64_t reused = 0, bought = 0, surplus = 0;
  double unit_usd = 0, bought_usd = 0;
  bool network = true;            // false for GPU nodes
};

struct Growth {
  std::vector<GrowthLine> items;  // in the grown bill's order, then items only the installed one has
  double bought_usd = 0, bought_network_usd = 0;
  int64_t switches_kept = 0, switches_added = 0, switches_surplus = 0;
  int64_t cables_kept = 0;        // fabric cables whose two ends stay joined
  int64_t cables_unplugged = 0;   // installed fabric cables the grown fabric does not keep
  int64_t cables_laid = 0;        // the grown fabric's cables without an installed match
};

// `from` and `to` with the bills made from them (make_bill).
Growth grow(const Topology& from, const Bill& from_bill, const Topology& to, const Bill& to_bill);

}  // namespace cs::topo
