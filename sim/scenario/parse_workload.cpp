// workload.*: traffic patterns and collectives (training: parse_training.cpp; a training_run's keys:
// parse_fleet.cpp; a serving workload's: parse_serving.cpp; a jobs workload's: parse_jobs.cpp).
#include "sim/scenario/parse_fleet_sections.hpp"
#include "sim/scenario/parse_sections.hpp"
#include "sim/scenario/parse_util.hpp"
#include "workloads/collective_plan.hpp"

namespace cs::scenario::detail {
namespace {

void parse_traffic(const json& w, const std::string& at, int64_t ranks, work::TrafficSpec& spec) {
  using work::TrafficPattern;
  spec.pattern = get_choice(w, "pattern", at, work::kTrafficPatternNames, TrafficPattern::permutation);
  spec.bytes = get_quantity(w, "bytes", at, QuantityKind::bytes, Sign::positive, 1 << 20);
  spec.shift = static_cast<int>(get_int(w, "shift", at, 1, INT32_MIN, INT32_MAX));
  spec.incast_dst = static_cast<int>(get_int(w, "dst", at, 0, 0, INT32_MAX));
  const std::string n = std::to_string(ranks);
  switch (spec.pattern) {
    case TrafficPattern::permutation:
      if (ranks > 1 && spec.shift % ranks == 0)
        throw InputError(join_path(at, "shift"), "a shift of " + std::to_string(spec.shift) +
                                               " sends every rank to itself over " + n + " ranks",
                         "use a shift that is not a multiple of " + n);
      break;
    case TrafficPattern::incast:
      if (spec.incast_dst >= ranks)
        throw InputError(join_path(at, "dst"), "expected a rank from 0 to " + std::to_string(ranks - 1) +
                                             "; got " + std::to_string(spec.incast_dst));
      break;
    case TrafficPattern::all_to_all:
      if (ranks > kMaxAllToAllRanks)
        throw InputError(join_path(at, "pattern"), "all_to_all over " + n + " ranks is " + n + "^2 flows; at most " +
                                                 std::to_string(kMaxAllToAllRanks) + " ranks are allowed",
                         "use a collective all_to_all, or fewer nodes");
      break;
    case TrafficPattern::flows: {
      const json* list = member(w, "flows");
      if (!list) throw InputError(join_path(at, "flows"), "required when pattern is \"flows\": a list of {src, dst, bytes, start}");
      if (!list->is_array() || list->empty())
        throw InputError(join_path(at, "flows"), "expected a non-empty list of flows {src, dst, bytes, start}");
      spec.flows.reserve(list->size());
      for (std::size_t i = 0; i < list->size(); ++i) {
        const std::string item = join_path(join_path(at, "flows"), i);
        const json& f = (*list)[i];
        if (!f.is_object()) throw InputError(item, "expected a flow {src, dst, bytes, start}; got " + describe_value(f));
        for (const char* key : {"src", "dst", "bytes"})
          if (!member(f, key)) throw InputError(item, std::string("missing required key \"") + key + "\"");
        work::FlowSpec flow;
        flow.src = static_cast<int>(get_int(f, "src", item, 0, 0, ranks - 1));
        flow.dst = static_cast<int>(get_int(f, "dst", item, 0, 0, ranks - 1));
        if (flow.src == flow.dst)
          throw InputError(join_path(item, "dst"), "a flow from rank " + std::to_string(flow.src) + " to itself");
        flow.bytes = get_quantity(f, "bytes", item, QuantityKind::bytes, Sign::positive, 0);
        flow.start_s = get_quantity(f, "start", item, QuantityKind::time, Sign::non_negative, 0);
        spec.flows.push_back(flow);
      }
      break;
    }
  }
}

// Sizes: one size, a list of 1..64, or a geometric sweep {min, max, factor} (nccl-tests -b -e -f).
std::vector<double> parse_sizes(const json& sizes, const std::string& at) {
  std::vector<double> out;
  if (sizes.is_array()) {
    if (sizes.empty() || sizes.size() > 64)
      throw InputError(at, "expected a list of 1 to 64 sizes; got " + std::to_string(sizes.size()) + " items");
    for (std::size_t i = 0; i < sizes.size(); ++i)
      out.push_back(quantity_value(sizes[i], QuantityKind::bytes, Sign::positive, join_path(at, i)));
  } else if (sizes.is_object()) {
    for (const char* key : {"min", "max"})
      if (!member(sizes, key)) throw InputError(at, std::string("missing required key \"") + key + "\"");
    const double lo = get_quantity(sizes, "min", at, QuantityKind::bytes, Sign::positive, 0);
    const double hi = get_quantity(sizes, "max", at, QuantityKind::bytes, Sign::positive, 0);
    const double factor = get_number(sizes, "factor", at, 2, 1.0 + 1e-9, 1e6);
    if (hi < lo) throw InputError(join_path(at, "max"), "expected max >= min");
    for (double b = lo; b <= hi * (1 + 1e-12); b *= factor) {
      if (out.size() == 64)
        throw InputError(at, "the sweep has more than 64 sizes", "raise factor or narrow min..max");
      out.push_back(b);
    }
  } else {
    out.push_back(quantity_value(sizes, QuantityKind::bytes, Sign::positive, at));
  }
  return out;
}

std::vector<int> parse_rank_list(const json& list, const std::string& at, int64_t ranks) {
  if (list.size() < 2) throw InputError(at, "a collective needs at least 2 ranks; got " + std::to_string(list.size()));
  std::vector<int> out;
  std::vector<char> seen(ranks, 0);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const int r = static_cast<int>(int_value(list[i], join_path(at, i), 0, ranks - 1));
    if (seen[r]) throw InputError(join_path(at, i), "rank " + std::to_string(r) + " is listed twice");
    seen[r] = 1;
    out.push_back(r);
  }
  return out;
}

void parse_collective(const json& w, const std::string& at, int64_t ranks, work::CollectiveSpec& spec) {
  using work::CollectiveAlgorithm;
  using work::CollectiveOp;
  spec.op = get_choice(w, "op", at, work::kCollectiveOpNames, CollectiveOp::all_reduce);
  const std::vector<Choice<CollectiveAlgorithm>> algorithms = choices_of(work::kCollectiveAlgorithmNames);
  // The op's natural default: NCCL runs all_to_all and send/recv as direct point-to-point.
  const bool p2p = spec.op == CollectiveOp::all_to_all || spec.op == CollectiveOp::send_recv;
  spec.algorithms = {p2p ? CollectiveAlgorithm::direct : CollectiveAlgorithm::ring};
  if (const json* a = member(w, "algorithm")) {
    const std::string path = join_path(at, "algorithm");
    if (a->is_array()) {
      if (a->empty()) throw InputError(path, "expected a non-empty list of algorithms");
      spec.algorithms.clear();
      for (std::size_t i = 0; i < a->size(); ++i)
        spec.algorithms.push_back(choice_value((*a)[i], join_path(path, i), algorithms));
    } else {
      spec.algorithms = {choice_value(*a, path, algorithms)};
    }
  }
  if (const json* sizes = member(w, "sizes")) spec.sizes_bytes = parse_sizes(*sizes, join_path(at, "sizes"));
  const std::string ranks_at = join_path(at, "ranks");
  spec.ranks = 0;
  spec.rank_list.clear();
  if (ranks < 2)
    throw InputError(at, "a collective needs at least 2 ranks; the topology has 1 GPU",
                     "raise hardware.node.gpus or topology.nodes");
  if (const json* r = member(w, "ranks")) {
    if (r->is_array()) {
      spec.rank_list = parse_rank_list(*r, ranks_at, ranks);
    } else if (!(r->is_string() && r->get_ref<const std::string&>() == "all")) {
      if (r->is_string())
        throw InputError(ranks_at, "expected \"all\", a list of ranks or an integer from 2 to " +
                                       std::to_string(ranks) + "; got " + describe_value(*r));
      spec.ranks = static_cast<int>(int_value(*r, ranks_at, 2, ranks));
    }
  }
  spec.channels = static_cast<int>(get_int(w, "channels", at, 0, 1, work::kMaxChannels));
  spec.group_size = 0;
  spec.group_stride = 1;
  if (const json* g = member(w, "groups")) {
    const std::string gat = join_path(at, "groups");
    if (!g->is_object()) throw InputError(gat, "expected {\"size\": N, \"stride\": S}");
    if (!member(*g, "size")) throw InputError(gat, "missing required key \"size\"");
    spec.group_size = static_cast<int>(get_int(*g, "size", gat, 2, 2, ranks));
    spec.group_stride = static_cast<int>(get_int(*g, "stride", gat, 1, 1, ranks));
  }
  std::vector<std::vector<int>> groups;
  try {
    groups = work::collective_groups(spec, static_cast<int>(ranks));
  } catch (const std::invalid_argument& e) {
    throw InputError(join_path(at, "groups"), e.what());
  }
  const std::size_t smallest = groups.front().size();
  if (spec.op == CollectiveOp::send_recv && smallest != 2)
    throw InputError(ranks_at, "send_recv sends from the first rank to the second: expected groups of 2 ranks; got " +
                                   std::to_string(smallest),
                     "give \"ranks\": [src, dst] or \"groups\": {\"size\": 2}");

}


void parse_background(const json& w, int64_t ranks, Config& config) {
  config.background.clear();
  const json* list = member(w, "background");
  if (!list) return;
  const std::string at = "workload.background";
  if (!list->is_array()) throw InputError(at, "expected a list of workloads {kind, ...}");
  // Beside the main workload: traffic or a collective.
  const auto background_kinds = choices_where(
      kWorkloadKindNames, [](WorkloadKind k) { return k == WorkloadKind::traffic || k == WorkloadKind::collective; });
  for (std::size_t i = 0; i < list->size(); ++i) {
    const std::string item = join_path(at, i);
    const json& b = (*list)[i];
    if (!b.is_object()) throw InputError(item, "expected a workload {kind, ...}; got " + describe_value(b));
    BackgroundWorkload bg;
    bg.kind = get_choice(b, "kind", item, background_kinds, WorkloadKind::collective);
    if (bg.kind == WorkloadKind::traffic) parse_traffic(b, item, ranks, bg.traffic);
    else parse_collective(b, item, ranks, bg.collective);
    if (bg.kind == WorkloadKind::collective &&
        (bg.collective.algorithms.size() != 1 || bg.collective.algorithms[0] == work::CollectiveAlgorithm::automatic))
      throw InputError(join_path(item, "algorithm"), "a background collective needs one algorithm, not a list or auto");
    config.background.push_back(std::move(bg));
  }
}

}  // namespace

void parse_workload(const json& doc, Config& config) {
  const json& w = object_or_empty(doc, "workload", "");
  // Several kinds share keys (ranks, sizes, ...): a silent default would mislead.
  config.workload = required_choice(w, "kind", kWorkload, kWorkloadKindNames);
  if (config.workload == WorkloadKind::training_run) {
    parse_training_run_workload(w, std::string(kWorkload), config);  // parse_fleet.cpp
    return;
  }
  if (config.workload == WorkloadKind::jobs) return;  // parse_jobs.cpp, with the fleet section
  if (config.workload == WorkloadKind::serving) {
    parse_serving_workload(w, std::string(kWorkload), config);  // parse_serving.cpp
    return;
  }
  const int64_t ranks = total_gpus(config);
  if (config.workload == WorkloadKind::traffic) parse_traffic(w, std::string(kWorkload), ranks, config.traffic);
  else if (config.workload == WorkloadKind::training) parse_training(w, std::string(kWorkload), config);
  else parse_collective(w, std::string(kWorkload), ranks, config.collective);
  parse_background(w, ranks, config);
  // Whether each algorithm has a plan for the op and groups, and what the network model can
  // run, the communication layer says when the world is assembled (run.cpp).
}

}  // namespace cs::scenario::detail
