#include <stdexcept>

#include "topology/params.hpp"

namespace cs::topo {

std::string_view to_string(TopologyKind kind) { return name_of(kTopologyKindNames, kind); }

std::string_view to_string(RoutingKind kind) { return name_of(kRoutingKindNames, kind); }

std::optional<TopologyKind> routing_family(RoutingKind kind) {
  switch (kind) {
    case RoutingKind::dmodk:
    case RoutingKind::ecmp:
    case RoutingKind::adaptive:
    case RoutingKind::spray: return TopologyKind::fat_tree;
    case RoutingKind::minimal:
    case RoutingKind::valiant:
    case RoutingKind::ugal:
    case RoutingKind::valiant_packet:
    case RoutingKind::ugal_packet: return TopologyKind::dragonfly;
    case RoutingKind::dor: return TopologyKind::torus;
    case RoutingKind::shortest: return std::nullopt;
  }
  throw std::logic_error("unknown routing kind");
}

RoutingKind default_routing(TopologyKind kind) {
  switch (kind) {
    case TopologyKind::fat_tree: return RoutingKind::dmodk;
    case TopologyKind::dragonfly: return RoutingKind::minimal;
    case TopologyKind::torus: return RoutingKind::dor;
    case TopologyKind::single_node:
    case TopologyKind::custom: return RoutingKind::shortest;
  }
  throw std::logic_error("unknown topology kind");
}

}  // namespace cs::topo
