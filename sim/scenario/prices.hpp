#pragma once
// The price table of `clustersim topo`: data/prices.json compiled into the library (no file
// lookup at run time), with a scenario's topology.prices merged over it.
//
// Format (USD per unit, W per unit, a source string per entry):
//   { "switch_port" | "nic" | "transceiver" | "twin_port_transceiver" | "aoc":
//       { "<speed>Gbps": ITEM, ... }  (twin_port_transceiver and aoc may be null: none used),
//     "copper_cable" | "optical_cable" | "gpu_node": ITEM }
//   ITEM = { "usd": number >= 0, "watts": number >= 0, "source": string }
// Overrides may give any subset of keys (new speed classes too); an overridden item without
// its own source is marked "scenario override (topology.prices)".
#include <string_view>

#include <nlohmann/json.hpp>

#include "topology/report.hpp"

namespace cs::scenario {

// The text of data/prices.json.
std::string_view prices_text();

// The defaults merged with doc["topology"]["prices"] (absent: the defaults alone).
// Throws InputError naming the path ("topology.prices.nic.400Gbps.usd") on a bad value.
topo::PriceTable load_prices(const nlohmann::json& doc);

}  // namespace cs::scenario
