// workload.*: traffic patterns and collectives.
#include "sim/scenario/parse_sections.hpp"
#include "sim/scenario/parse_util.hpp"

namespace cs::scenario::detail {
namespace {

constexpr std::string_view kAt = "workload";

void parse_traffic(const json& w, int64_t ranks, work::TrafficSpec& spec) {
  using work::TrafficPattern;
  spec.pattern = get_choice<TrafficPattern>(w, "pattern", kAt,
                                            {{"permutation", TrafficPattern::permutation},
                                             {"incast", TrafficPattern::incast},
                                             {"all_to_all", TrafficPattern::all_to_all},
                                             {"flows", TrafficPattern::flows}},
                                            TrafficPattern::permutation);
  spec.bytes = get_quantity(w, "bytes", kAt, QuantityKind::bytes, Sign::positive, 1 << 20);
  spec.shift = static_cast<int>(get_int(w, "shift", kAt, 1, INT32_MIN, INT32_MAX));
  spec.incast_dst = static_cast<int>(get_int(w, "dst", kAt, 0, 0, INT32_MAX));
  const std::string n = std::to_string(ranks);
  switch (spec.pattern) {
    case TrafficPattern::permutation:
      if (ranks > 1 && spec.shift % ranks == 0)
        throw InputError("workload.shift", "a shift of " + std::to_string(spec.shift) +
                                               " sends every rank to itself over " + n + " ranks",
                         "use a shift that is not a multiple of " + n);
      break;
    case TrafficPattern::incast:
      if (spec.incast_dst >= ranks)
        throw InputError("workload.dst", "expected a rank from 0 to " + std::to_string(ranks - 1) +
                                             "; got " + std::to_string(spec.incast_dst));
      break;
    case TrafficPattern::all_to_all:
      if (ranks > kMaxAllToAllRanks)
        throw InputError("workload.pattern", "all_to_all over " + n + " ranks is " + n + "^2 flows; at most " +
                                                 std::to_string(kMaxAllToAllRanks) + " ranks are allowed",
                         "use a collective all_to_all, or fewer nodes");
      break;
    case TrafficPattern::flows: {
      const json* list = member(w, "flows");
      if (!list) throw InputError("workload.flows", "required when pattern is \"flows\": a list of {src, dst, bytes, start}");
      if (!list->is_array() || list->empty())
        throw InputError("workload.flows", "expected a non-empty list of flows {src, dst, bytes, start}");
      spec.flows.reserve(list->size());
      for (std::size_t i = 0; i < list->size(); ++i) {
        const std::string at = join_path("workload.flows", i);
        const json& f = (*list)[i];
        if (!f.is_object()) throw InputError(at, "expected a flow {src, dst, bytes, start}; got " + describe_value(f));
        for (const char* key : {"src", "dst", "bytes"})
          if (!member(f, key)) throw InputError(at, std::string("missing required key \"") + key + "\"");
        work::FlowSpec flow;
        flow.src = static_cast<int>(get_int(f, "src", at, 0, 0, ranks - 1));
        flow.dst = static_cast<int>(get_int(f, "dst", at, 0, 0, ranks - 1));
        if (flow.src == flow.dst)
          throw InputError(join_path(at, "dst"), "a flow from rank " + std::to_string(flow.src) + " to itself");
        flow.bytes = get_quantity(f, "bytes", at, QuantityKind::bytes, Sign::positive, 0);
        flow.start_s = get_quantity(f, "start", at, QuantityKind::time, Sign::non_negative, 0);
        spec.flows.push_back(flow);
      }
      break;
    }
  }
}

void parse_collective(const json& w, int64_t ranks, work::CollectiveSpec& spec) {
  using work::CollectiveAlgorithm;
  using work::CollectiveOp;
  spec.op = get_choice<CollectiveOp>(w, "op", kAt,
                                     {{"all_reduce", CollectiveOp::all_reduce},
                                      {"reduce_scatter", std::nullopt},
                                      {"all_gather", std::nullopt},
                                      {"all_to_all", std::nullopt},
                                      {"broadcast", std::nullopt}},
                                     CollectiveOp::all_reduce);
  spec.algorithm = get_choice<CollectiveAlgorithm>(w, "algorithm", kAt,
                                                   {{"ring", CollectiveAlgorithm::ring},
                                                    {"tree", std::nullopt},
                                                    {"halving_doubling", std::nullopt},
                                                    {"direct", std::nullopt},
                                                    {"hierarchical", std::nullopt},
                                                    {"auto", std::nullopt}},
                                                   CollectiveAlgorithm::ring);
  if (const json* sizes = member(w, "sizes")) {
    spec.sizes_bytes.clear();
    if (sizes->is_array()) {
      if (sizes->empty() || sizes->size() > 64)
        throw InputError("workload.sizes", "expected a list of 1 to 64 sizes; got " +
                                               std::to_string(sizes->size()) + " items");
      for (std::size_t i = 0; i < sizes->size(); ++i)
        spec.sizes_bytes.push_back(
            quantity_value((*sizes)[i], QuantityKind::bytes, Sign::positive, join_path("workload.sizes", i)));
    } else {
      spec.sizes_bytes.push_back(quantity_value(*sizes, QuantityKind::bytes, Sign::positive, "workload.sizes"));
    }
  }
  spec.ranks = 0;
  if (const json* r = member(w, "ranks")) {
    if (r->is_string() && r->get_ref<const std::string&>() == "all") return;
    if (ranks < 2)
      throw InputError("workload.ranks", "a collective needs at least 2 ranks; the topology has " +
                                             std::to_string(ranks) + " GPU");
    if (r->is_string())
      throw InputError("workload.ranks", "expected \"all\" or an integer from 2 to " + std::to_string(ranks) +
                                             "; got " + describe_value(*r));
    spec.ranks = static_cast<int>(int_value(*r, "workload.ranks", 2, ranks));
  } else if (ranks < 2) {
    throw InputError("workload", "a collective needs at least 2 ranks; the topology has 1 GPU",
                     "raise hardware.node.gpus or topology.nodes");
  }
}

}  // namespace

void parse_workload(const json& doc, Config& config) {
  const json& w = object_or_empty(doc, "workload", "");
  config.workload = get_choice<WorkloadKind>(w, "kind", kAt,
                                             {{"traffic", WorkloadKind::traffic},
                                              {"collective", WorkloadKind::collective},
                                              {"training", std::nullopt},
                                              {"serving", std::nullopt},
                                              {"training_run", std::nullopt}},
                                             WorkloadKind::collective);
  const int64_t ranks = total_gpus(config);
  if (config.workload == WorkloadKind::traffic) parse_traffic(w, ranks, config.traffic);
  else parse_collective(w, ranks, config.collective);
}

}  // namespace cs::scenario::detail
