#pragma once
// Where the bytes went: per-link usage of a run (bytes, busy time, peak and mean utilization)
// as a JSON summary of the hottest links, a CSV of every used link, and a short text table.
//
// A link is "used" when it carried bytes (bytes > 0); only used links are reported. Links
// are directed (topology link ids), so the two directions of a cable are separate rows.
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/network/comm.hpp"
#include "topology/topology.hpp"

namespace cs::report {

// Per-link measurements of one run, indexed by topology link id (comm.hpp): `bytes` has one
// entry per directed link; `busy_s` and `peak_utilization` have one too, or are empty when the
// model did not measure them (reported as null / an empty CSV field / "-").
using LinkUsage = net::LinkUsage;

// { "links_used": links with bytes > 0,
//   "busy_share_max", "busy_share_mean": busy_s / elapsed_s over the used links (0 if none),
//   "bytes_total": sum over all links (a byte crossing k links counts k times),
//   "by_class": the used links by class (topo::link_class: tier and direction), busiest
//     first: [{ "class", "links_used", "bytes", "busy_share_max", "busy_share_mean",
//     "peak_utilization_max", "mean_utilization_max" }],
//   "hottest": up to `top` used links by busy share, then bytes, descending, then link id:
//     [{ "id", "link": "<from>-><to>", "kind", "capacity_Bps", "bytes", "busy_s",
//        "busy_share", "peak_utilization", "mean_utilization": bytes / (capacity * elapsed) }] }
// Throws std::invalid_argument if a vector's size does not match the topology.
nlohmann::json link_summary(const topo::Topology& topology, const LinkUsage& usage,
                            std::size_t top = 10);

// "link,from,to,kind,capacity_Bps,bytes,busy_s,busy_share,peak_utilization,mean_utilization"
// and one row per used link in link id order (link = id, from/to = vertex names), numbers
// with 17 significant digits.
std::string link_table_csv(const topo::Topology& topology, const LinkUsage& usage);

// A small table of link_summary()'s "by_class" roll-up: class, links, busy max and mean %, GB.
std::string link_classes_text(const nlohmann::json& summary_links);

// A small table of link_summary()'s "hottest" entries for the terminal: link, kind, busy %,
// peak %, GB. Takes the summary (or its "hottest" array).
std::string hottest_links_text(const nlohmann::json& summary_links);

}  // namespace cs::report
