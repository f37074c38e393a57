#pragma once
// Storage tiers a checkpoint is written to and read from.
//
// A transfer of B bytes by k nodes at once (each moving B / k) takes
//   latency_s + B / min(k * per_node_Bps, total_Bps)
// where per_node_Bps is what one node's client and NIC sustain into the tier and total_Bps is
// the tier's aggregate bandwidth (infinite for a node-local tier, whose capacity grows with the
// nodes). A read from a cold tier first waits retrieval_s (an archive restores objects in hours).
//
// Defaults (storage_tier(name)) are for a cloud GPU node of the p5 class; each says where its
// figures come from, and "estimate" marks figures that are not a published specification.
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cs::fleet {

struct StorageTier {
  std::string name;
  double write_Bps_per_node = 0.0;
  double read_Bps_per_node = 0.0;
  double write_Bps_total = std::numeric_limits<double>::infinity();
  double read_Bps_total = std::numeric_limits<double>::infinity();
  double retrieval_s = 0.0;  // before the first byte of a read
  double latency_s = 0.0;    // per transfer: open, metadata, commit
  bool node_local = false;   // a node's share lives on that node (local NVMe)
  std::string source;

  // Seconds to write (read) `bytes` spread over `nodes` writers (readers); a read includes
  // retrieval_s.
  double write_time_s(double bytes, int nodes) const;
  double read_time_s(double bytes, int nodes) const;
  void validate(const char* what) const;
};

// "local_nvme", "parallel_fs", "object_store", "archive".
std::optional<StorageTier> storage_tier(std::string_view name);
std::vector<std::string> storage_tier_names();

}  // namespace cs::fleet
