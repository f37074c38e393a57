// fleet.checkpoint (interval, size or write time, mode, write pattern, storage tier) and
// fleet.restore into cs::fleet's CheckpointConfig and RestoreConfig.
#include <cmath>
#include <limits>

#include "sim/fleet/storage.hpp"
#include "sim/scenario/parse_fleet_values.hpp"
#include "sim/scenario/parse_sections.hpp"
#include "sim/scenario/suggest.hpp"

namespace cs::scenario::detail {
namespace {

constexpr std::string_view kCheckpoint = "fleet.checkpoint";
constexpr std::string_view kRestore = "fleet.restore";

// A tier by name, or {"tier", and what differs from it: per-node and total bandwidths,
// retrieval delay, latency}.
fleet::StorageTier parse_storage(const json& v, const std::string& path) {
  const std::vector<std::string> names = fleet::storage_tier_names();
  const auto tier = [&](const json& name, const std::string& at) {
    if (!name.is_string()) throw InputError(at, "expected one of " + quoted_list(names) + "; got " + describe_value(name));
    const auto& text = name.get_ref<const std::string&>();
    auto t = fleet::storage_tier(text);
    if (!t) throw InputError(at, "expected one of " + quoted_list(names) + "; got \"" + text + "\"", did_you_mean(text, names));
    return *t;
  };
  if (!v.is_object()) return tier(v, path);
  fleet::StorageTier t = member(v, "tier") ? tier(v.at("tier"), join_path(path, "tier")) : *fleet::storage_tier("parallel_fs");
  const auto bandwidth = [&](const char* key, double def) {
    return get_quantity(v, key, path, QuantityKind::bandwidth, Sign::positive, def);
  };
  t.write_Bps_per_node = bandwidth("write_bandwidth", t.write_Bps_per_node);
  t.read_Bps_per_node = bandwidth("read_bandwidth", t.read_Bps_per_node);
  t.write_Bps_total = bandwidth("total_write_bandwidth", t.write_Bps_total);
  t.read_Bps_total = bandwidth("total_read_bandwidth", t.read_Bps_total);
  t.retrieval_s = get_quantity(v, "retrieval_delay", path, QuantityKind::time, Sign::non_negative, t.retrieval_s);
  t.latency_s = get_quantity(v, "latency", path, QuantityKind::time, Sign::non_negative, t.latency_s);
  if (v.size() > (member(v, "tier") ? 1u : 0u)) t.source = "scenario file, from the " + t.name + " tier's defaults: " + t.source;
  return t;
}

}  // namespace

void parse_checkpoint(const json& fleet, fleet::CheckpointConfig& cp, std::optional<double> model_bytes) {
  const std::string at(kCheckpoint);
  const json& in = object_or_empty(fleet, "checkpoint", "fleet");
  if (!member(in, "size") && !member(in, "write_time") && !model_bytes)
    throw InputError(at, "a checkpoint needs its size (written to fleet.checkpoint.storage) or its write_time",
                     "e.g. \"size\": \"5.7TB\" (405B parameters x 14 bytes: bf16 weights, fp32 master weights and "
                     "Adam moments), or \"write_time\": \"90s\"");
  if (const json* i = member(in, "interval")) {
    const double tau = time_or_named(*i, join_path(at, "interval"), Sign::positive,
                                     {{"auto", std::numeric_limits<double>::quiet_NaN()},
                                      {"none", std::numeric_limits<double>::infinity()}});
    if (!std::isnan(tau)) cp.interval_s = tau;
  }
  cp.size_bytes = get_quantity(in, "size", at, QuantityKind::bytes, Sign::non_negative,
                               member(in, "write_time") ? 0.0 : model_bytes.value_or(0.0));
  if (member(in, "write_time"))
    cp.write_time_s = get_quantity(in, "write_time", at, QuantityKind::time, Sign::non_negative, 0.0);
  cp.mode = get_choice(in, "mode", at, fleet::kCheckpointModeNames, fleet::CheckpointMode::sync);
  cp.pattern = get_choice(in, "pattern", at, fleet::kWritePatternNames, fleet::WritePattern::sharded);
  if (const json* s = member(in, "storage")) cp.storage = parse_storage(*s, join_path(at, "storage"));
  cp.snapshot_Bps_per_node = get_quantity(in, "snapshot_bandwidth", at, QuantityKind::bandwidth, Sign::positive,
                                          cp.snapshot_Bps_per_node);
  if (cp.mode == fleet::CheckpointMode::async && cp.size_bytes <= 0.0 && member(in, "write_time"))
    throw InputError(join_path(at, "size"), "an async checkpoint copies its size to host memory first: required with mode \"async\"",
                     "give \"size\" (the snapshot takes size / (nodes x snapshot_bandwidth))");
  cp.final_checkpoint = get_bool(in, "final", at, cp.final_checkpoint);
  cp.emergency_on_notice = get_bool(in, "emergency", at, cp.emergency_on_notice);
}

void parse_restore(const json& fleet, fleet::RestoreConfig& r) {
  const std::string at(kRestore);
  const json& in = object_or_empty(fleet, "restore", "fleet");
  if (member(in, "time")) r.time_s = get_quantity(in, "time", at, QuantityKind::time, Sign::non_negative, 0.0);
  r.detection_s = get_quantity(in, "detection", at, QuantityKind::time, Sign::non_negative, r.detection_s);
  r.restart.fixed_s = get_quantity(in, "restart", at, QuantityKind::time, Sign::non_negative, r.restart.fixed_s);
  r.restart.per_node_s =
      get_quantity(in, "restart_per_node", at, QuantityKind::time, Sign::non_negative, r.restart.per_node_s);
  r.warmup_s = get_quantity(in, "warmup", at, QuantityKind::time, Sign::non_negative, r.warmup_s);
  r.launch_overhead_at_start = get_bool(in, "at_launch", at, r.launch_overhead_at_start);
}

}  // namespace cs::scenario::detail
