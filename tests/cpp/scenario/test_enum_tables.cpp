// The scenario schema's "enum" lists against the enumeration tables (common/enum_table.hpp).
//
// The rule: at every key that takes an enumeration, the schema lists exactly the names the
// parser takes there, in any order and each once. Those are the choices the parser builds for
// the key from the enumeration's table: its scenario names (never an output-only one), narrowed
// where the key takes part of the enumeration, with the names the parser adds itself
// (network.routing's "default") and the planned names it recognises and refuses as not
// implemented yet (a training precision's "fp32"). Each key below builds its choices as the
// parser does (sim/scenario/parse_*.cpp).
//
// Every other list of two or more strings in the schema is named below as what it is (a catalog,
// or keywords of a quantity), so that a new key that takes an enumeration cannot go unchecked.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/fleet/checkpoint.hpp"
#include "sim/fleet/market.hpp"
#include "sim/fleet/serverless_prices.hpp"
#include "sim/fleet/storage.hpp"
#include "sim/jobs/jobs_config.hpp"
#include "sim/network/comm_config.hpp"
#include "sim/scenario/config.hpp"
#include "sim/scenario/load.hpp"
#include "sim/scenario/parse_util.hpp"
#include "sim/serving/autoscaler_spec.hpp"
#include "sim/serving/hpa.hpp"
#include "sim/serving/llm_replica.hpp"
#include "sim/serving/load_balancer.hpp"
#include "sim/serving/replica_pool.hpp"
#include "sim/serving/step_scaling.hpp"
#include "topology/params.hpp"
#include "workloads/arrivals.hpp"
#include "workloads/collective.hpp"
#include "workloads/distribution.hpp"
#include "workloads/traffic.hpp"
#include "workloads/training_model.hpp"
#include "workloads/training_ops.hpp"
#include "workloads/training_plan.hpp"

namespace cs::scenario::test {
namespace {

using json = nlohmann::json;
using detail::Choice;
using detail::choices_of;
using detail::choices_where;

// A key that takes an enumeration: where its "enum" is in the schema (a JSON pointer), and the
// names of the choices the parser builds for it.
struct EnumerationKey {
  std::string pointer;
  std::vector<std::string> names;
};

template <class E>
std::vector<std::string> names(const std::vector<Choice<E>>& choices) {
  std::vector<std::string> out;
  for (const Choice<E>& c : choices) out.emplace_back(c.name);
  return out;
}

template <class E, std::size_t N>
std::vector<std::string> names(const std::array<EnumName<E>, N>& table) {
  return names(choices_of(table));
}

std::vector<EnumerationKey> enumeration_keys() {
  const std::string workload = "/properties/workload/properties/";
  const std::string background = workload + "background/items/properties/";
  const std::string fleet = "/properties/fleet/properties/";
  const std::string autoscaler = fleet + "autoscaler/properties/";
  const std::string hpa_behavior = autoscaler + "hpa/properties/behavior/properties/";
  const std::string training = "/definitions/training_";

  // network.routing: "default" (the family's own routing, config_parse.cpp), then the table.
  std::vector<std::string> routings{"default"};
  for (const std::string& n : names(topo::kRoutingKindNames)) routings.push_back(n);
  // A training precision: the table, then the planned names (parse_training.cpp).
  const auto precisions = names(choices_of(work::kPrecisionNames, work::kPlannedPrecisionNames));
  // The dynamic policies scheduled and predictive run around (parse_autoscaler.cpp).
  const auto inner = names(choices_where(serving::kScalingPolicyNames, [](serving::ScalingPolicy p) {
    using serving::ScalingPolicy;
    return p == ScalingPolicy::hpa || p == ScalingPolicy::target_tracking || p == ScalingPolicy::step ||
           p == ScalingPolicy::kpa;
  }));
  // The topology library's kinds, then the scenario's tpu_slice (a torus: parse_tpu_slice.cpp).
  std::vector<std::string> topology_kinds = names(topo::kTopologyKindNames);
  topology_kinds.emplace_back("tpu_slice");
  // A background workload: traffic or a collective (parse_workload.cpp).
  const auto background_kinds = names(choices_where(
      kWorkloadKindNames, [](WorkloadKind k) { return k == WorkloadKind::traffic || k == WorkloadKind::collective; }));
  // A background collective runs one algorithm: the parser reads the table and refuses "auto"
  // afterwards ("a background collective needs one algorithm, not a list or auto").
  const auto background_algorithms = names(choices_where(
      work::kCollectiveAlgorithmNames, [](work::CollectiveAlgorithm a) { return a != work::CollectiveAlgorithm::automatic; }));

  return {
      {"/properties/hardware/properties/node/properties/fabric", names(topo::kNodeFabricNames)},
      {"/properties/hardware/properties/node/properties/mesh", names(topo::kNodeMeshNames)},
      {"/properties/topology/properties/kind", topology_kinds},
      {"/properties/topology/properties/global_arrangement", names(topo::kGlobalArrangementNames)},
      {"/properties/network/properties/model", names(net::kNetworkModelNames)},
      {"/properties/network/properties/routing", routings},
      {"/properties/network/properties/granularity", names(net::kGranularityNames)},
      {"/properties/network/properties/protocol", names(net::kProtocolNames)},
      {workload + "kind", names(kWorkloadKindNames)},
      {workload + "pattern", names(work::kTrafficPatternNames)},
      {workload + "op", names(work::kCollectiveOpNames)},
      {workload + "algorithm/oneOf/0", names(work::kCollectiveAlgorithmNames)},
      {workload + "algorithm/oneOf/1/items", names(work::kCollectiveAlgorithmNames)},
      // Shared by training (the table and its planned names) and serving, whose replicas take
      // the table alone: a serving workload's "fp32" passes the schema and is refused by the
      // parser as an unknown name.
      {workload + "precision", precisions},
      {workload + "arrivals/properties/process", names(work::kArrivalProcessNames)},
      {workload + "replica/properties/scheduler", names(serving::kSchedulerModeNames)},
      {workload + "disaggregated/properties/prefill_replica/properties/scheduler", names(serving::kSchedulerModeNames)},
      {workload + "replica/properties/kv_layout", names(serving::kKvLayoutNames)},
      {workload + "disaggregated/properties/prefill_replica/properties/kv_layout", names(serving::kKvLayoutNames)},
      {workload + "replica/properties/step_padding", names(serving::kStepPaddingNames)},
      {workload + "disaggregated/properties/prefill_replica/properties/step_padding", names(serving::kStepPaddingNames)},
      {background + "kind", background_kinds},
      {background + "pattern", names(work::kTrafficPatternNames)},
      {background + "op", names(work::kCollectiveOpNames)},
      {background + "algorithm", background_algorithms},
      {fleet + "market/oneOf/0", names(fleet::kMarketNames)},
      {fleet + "checkpoint/properties/mode", names(fleet::kCheckpointModeNames)},
      {fleet + "checkpoint/properties/pattern", names(fleet::kWritePatternNames)},
      {autoscaler + "policy", names(serving::kScalingPolicyNames)},
      {autoscaler + "metric", names(serving::kMetricKindNames)},
      {autoscaler + "inner", inner},
      {hpa_behavior + "scaleUp/properties/selectPolicy", names(serving::kHpaSelectNames)},
      {hpa_behavior + "scaleDown/properties/selectPolicy", names(serving::kHpaSelectNames)},
      {hpa_behavior + "scaleUp/properties/policies/items/properties/type", names(serving::kHpaPolicyTypeNames)},
      {hpa_behavior + "scaleDown/properties/policies/items/properties/type", names(serving::kHpaPolicyTypeNames)},
      {autoscaler + "step/properties/adjustment_type", names(serving::kAdjustmentTypeNames)},
      {fleet + "scheduler/properties/policy", names(jobs::kPolicyNames)},
      {fleet + "scheduler/properties/placement", names(jobs::kPlacementPolicyNames)},
      {fleet + "balancer", names(serving::kBalancePolicyNames)},
      {fleet + "lost_work", names(serving::kLostWorkNames)},
      {training + "model/properties/mlp", names(work::kMlpKindNames)},
      {training + "parallel/properties/schedule", names(work::kScheduleNames)},
      {training + "parallel/properties/offload", names(work::kOffloadNames)},
      {training + "precision", precisions},
      {training + "recompute", names(work::kRecomputeNames)},
      {"/properties/workload/properties/fp8_recipe", names(work::kFp8RecipeNames)},
      {"/properties/workload/properties/optimizer", names(work::kOptimizerNames)},
      {"/definitions/distribution/oneOf/1/properties/dist", names(work::kDistributionKindNames)},
      {"/definitions/count_distribution/oneOf/1/properties/dist", names(work::kDistributionKindNames)},
  };
}

// Lists of names that are not an enumeration's, each checked where it is defined.
const std::vector<std::string> kNotEnumerations = {
    // The GPU catalog (test_training_parse.cpp checks it against compute::gpu_names()).
    "/properties/hardware/properties/gpu/oneOf/0",
    // Named notice times of a spot reclaim: keywords of a time (parse_fleet.cpp).
    "/properties/fleet/properties/interruptions/properties/warning/anyOf/1",
    // Keywords of the checkpoint interval: Young/Daly's, or none.
    "/properties/fleet/properties/checkpoint/properties/interval/anyOf/1",
    // The storage tiers: a catalog (checked against fleet::storage_tier_names() below).
    "/properties/fleet/properties/checkpoint/properties/storage/oneOf/0",
    "/properties/fleet/properties/checkpoint/properties/storage/oneOf/1/properties/tier",
    // The serverless providers: a catalog (checked against fleet::ServerlessCatalog below).
    "/properties/fleet/properties/serverless/properties/provider",
};

// The JSON pointer of every "enum" in `node` that lists two or more strings.
void string_enums(const json& node, const std::string& at, std::vector<std::string>& out) {
  if (node.is_object()) {
    if (const auto e = node.find("enum"); e != node.end() && e->size() >= 2 &&
                                          std::all_of(e->begin(), e->end(), [](const json& x) { return x.is_string(); }))
      out.push_back(at);
    for (const auto& [key, child] : node.items()) string_enums(child, at + "/" + key, out);
  } else if (node.is_array()) {
    for (std::size_t i = 0; i < node.size(); ++i) string_enums(node[i], at + "/" + std::to_string(i), out);
  }
}

const json& schema() {
  static const json s = json::parse(schema_text());
  return s;
}

std::vector<std::string> schema_enum(const std::string& pointer) {
  return schema().at(json::json_pointer(pointer)).at("enum").get<std::vector<std::string>>();
}

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

TEST_CASE("the schema lists at each enumeration key the names the parser takes there", "[schema][enum]") {
  for (const EnumerationKey& key : enumeration_keys()) {
    INFO(key.pointer);
    const std::vector<std::string> listed = schema_enum(key.pointer);
    CHECK(std::set<std::string>(listed.begin(), listed.end()).size() == listed.size());  // each once
    CHECK(sorted(listed) == sorted(key.names));
  }
}

TEST_CASE("every list of names in the schema is an enumeration key above or named as another list", "[schema][enum]") {
  std::vector<std::string> found;
  string_enums(schema(), "", found);
  std::set<std::string> known(kNotEnumerations.begin(), kNotEnumerations.end());
  for (const EnumerationKey& key : enumeration_keys()) CHECK(known.insert(key.pointer).second);  // listed once
  for (const std::string& pointer : found) {
    INFO(pointer);
    CHECK(known.count(pointer) == 1);
  }
  // And nothing named above has left the schema.
  const std::set<std::string> in_schema(found.begin(), found.end());
  for (const std::string& pointer : known) {
    INFO(pointer);
    CHECK(in_schema.count(pointer) == 1);
  }
}

TEST_CASE("the schema's storage tiers are the catalog's", "[schema][enum]") {
  const std::vector<std::string> tiers = fleet::storage_tier_names();
  CHECK(sorted(schema_enum("/properties/fleet/properties/checkpoint/properties/storage/oneOf/0")) == sorted(tiers));
  CHECK(sorted(schema_enum("/properties/fleet/properties/checkpoint/properties/storage/oneOf/1/properties/tier")) ==
        sorted(tiers));
  CHECK(sorted(schema_enum("/properties/fleet/properties/serverless/properties/provider")) ==
        sorted(fleet::ServerlessCatalog::builtin().names()));
}

TEST_CASE("a table's output-only names are no scenario choice", "[enum]") {
  const auto policies = names(serving::kScalingPolicyNames);
  CHECK(std::find(policies.begin(), policies.end(), "none") == policies.end());
  const auto kinds = names(work::kDistributionKindNames);
  CHECK(std::find(kinds.begin(), kinds.end(), "sum") == kinds.end());
  CHECK(names(serving::kDropReasonNames).empty());
  CHECK(serving::to_string(serving::ScalingPolicy::none) == "none");
}

}  // namespace
}  // namespace cs::scenario::test
