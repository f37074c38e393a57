#pragma once
// A degraded fabric: cables and switches down for the whole run. The topology keeps every
// vertex and link as built (names, ids and layouts unchanged); failed cables are marked
// (Topology::failed) and carry nothing: routings route around them as each real one does
// (routing.hpp), and the report's bisection and all-to-all bound count only live cables.
//
// What can fail (TopologyParams::failed, scenario key topology.failed):
//   - named cables: every cable, or `cables` of the parallel cables, between two vertices;
//   - named fabric switches: every cable of the switch (a spine group: list its spines);
//   - random_links switch-to-switch cables, and random_switches switches without NICs
//     (spines, cores), drawn uniformly with `seed`;
//   - a failure rate: each switch-to-switch cable down with probability
//     1 - exp(-window / link_mtbf), independently (the state at the end of a window of that
//     length, nothing repaired), drawn with `seed`.
// NIC cables are never drawn at random: a NIC cut from the fabric cuts its GPUs' ranks (no
// PXN fallback over NVLink to another NIC is modelled), and a fabric whose NICs cannot all
// reach each other over live cables is refused, naming the NICs cut off.
#include "topology/params.hpp"
#include "topology/topology.hpp"

namespace cs::topo {

// Marks the failures `f` asks for on `t`. Throws BuildError with the key relative to the
// topology section ("failed.links.2.a", "failed.switches.0", "failed.random_links",
// "failed"): an unknown name, a vertex that is not a fabric switch, two vertices no cable
// joins, more cables or switches than there are to draw, or failures that cut NICs off.
void apply_failures(Topology& t, const FailureParams& f);

// Fabric switches all of whose cables failed.
std::size_t dead_switches(const Topology& t);

}  // namespace cs::topo
