#pragma once
// Shared by the report tests: price tables and count lookups.
#include <string>

#include "topology/report.hpp"

namespace cs::topo::test {

// Every priced item in the 400 Gb/s class (switch ports, NICs, transceivers), the others as
// given; sources "test".
struct UsdWatts {
  double usd = 0;
  double watts = 0;
};

inline PriceTable flat_prices(UsdWatts port, UsdWatts nic, UsdWatts transceiver,
                              UsdWatts copper = {}, UsdWatts optical = {}, UsdWatts node = {}) {
  PriceTable t;
  t.switch_port.by_gbps[400] = {port.usd, port.watts, "test"};
  t.nic.by_gbps[400] = {nic.usd, nic.watts, "test"};
  t.transceiver.by_gbps[400] = {transceiver.usd, transceiver.watts, "test"};
  t.copper_cable = {copper.usd, copper.watts, "test"};
  t.optical_cable = {optical.usd, optical.watts, "test"};
  t.gpu_node = {node.usd, node.watts, "test"};
  return t;
}

// 1 USD and 1 W per port, NIC and transceiver: counts, not prices, matter.
inline PriceTable unit_prices() { return flat_prices({1, 1}, {1, 1}, {1, 1}); }

inline int64_t count(const Counts& counts, const std::string& name) {
  for (const auto& [k, v] : counts)
    if (k == name) return v;
  return 0;
}

}  // namespace cs::topo::test
