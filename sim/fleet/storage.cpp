#include "sim/fleet/storage.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace cs::fleet {
namespace {

constexpr double GB = 1e9;
constexpr double kHour_s = 3600.0;

double transfer_s(double bytes, int nodes, double per_node, double total, double latency) {
  if (bytes <= 0.0) return 0.0;
  const double rate = std::min(std::max(nodes, 1) * per_node, total);
  return latency + bytes / rate;
}

std::vector<StorageTier> defaults() {
  std::vector<StorageTier> t;
  t.push_back({"local_nvme", 10 * GB, 20 * GB, std::numeric_limits<double>::infinity(),
               std::numeric_limits<double>::infinity(), 0.0, 0.5, true,
               "estimate: 8 x 3.84 TB local NVMe SSDs per p5.48xlarge (AWS capacity-block price "
               "table), ~1.3 GB/s sustained write and ~2.5 GB/s read per data-center NVMe drive; "
               "capacity grows with the nodes. A node's shard is gone with the node: pair it "
               "with a durable tier (not modelled here)."});
  t.push_back({"parallel_fs", 12.5 * GB, 12.5 * GB, 250 * GB, 250 * GB, 0.0, 2.0, false,
               "FSx for Lustre PERSISTENT_2 SSD provisions up to 1000 MB/s per TiB stored (AWS "
               "FSx docs): 250 GB/s aggregate for a 250 TiB file system (estimate of its size); "
               "12.5 GB/s per client, a 100 Gb/s storage path (estimate)."});
  t.push_back({"object_store", 5 * GB, 10 * GB, std::numeric_limits<double>::infinity(),
               std::numeric_limits<double>::infinity(), 0.0, 5.0, false,
               "S3: at least 3,500 PUT and 5,500 GET requests per second per partitioned prefix, "
               "scaling with prefixes (AWS S3 performance guide), so no aggregate cap; per node "
               "5 GB/s write and 10 GB/s read with many parallel multipart streams (estimate)."});
  t.push_back({"archive", 5 * GB, 10 * GB, std::numeric_limits<double>::infinity(),
               std::numeric_limits<double>::infinity(), 12 * kHour_s, 5.0, false,
               "S3 Glacier Deep Archive: standard retrievals typically finish within 12 hours "
               "(Flexible Retrieval: 3-5 hours; AWS S3 user guide, archive retrieval options); "
               "then read as from the object store."});
  return t;
}

}  // namespace

double StorageTier::write_time_s(double bytes, int nodes) const {
  return transfer_s(bytes, nodes, write_Bps_per_node, write_Bps_total, latency_s);
}

double StorageTier::read_time_s(double bytes, int nodes) const {
  if (bytes <= 0.0) return 0.0;
  return retrieval_s + transfer_s(bytes, nodes, read_Bps_per_node, read_Bps_total, latency_s);
}

void StorageTier::validate(const char* what) const {
  const std::string w(what);
  const auto positive = [&](double v, const char* field) {
    if (!(v > 0.0)) throw std::invalid_argument(w + "." + field + ": expected a bandwidth > 0");
  };
  positive(write_Bps_per_node, "write_Bps_per_node");
  positive(read_Bps_per_node, "read_Bps_per_node");
  positive(write_Bps_total, "write_Bps_total");
  positive(read_Bps_total, "read_Bps_total");
  if (!(retrieval_s >= 0.0) || !std::isfinite(retrieval_s))
    throw std::invalid_argument(w + ".retrieval_s: expected a finite time >= 0");
  if (!(latency_s >= 0.0) || !std::isfinite(latency_s))
    throw std::invalid_argument(w + ".latency_s: expected a finite time >= 0");
}

std::optional<StorageTier> storage_tier(std::string_view name) {
  for (StorageTier& t : defaults())
    if (t.name == name) return std::move(t);
  return std::nullopt;
}

std::vector<std::string> storage_tier_names() {
  std::vector<std::string> names;
  for (const StorageTier& t : defaults()) names.push_back(t.name);
  return names;
}

}  // namespace cs::fleet
