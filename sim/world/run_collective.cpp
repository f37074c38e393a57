#include "sim/world/run_collective.hpp"

#include "sim/network/collective_benchmark.hpp"
#include "workloads/collective_plan.hpp"

namespace cs::world::detail {

using namespace cs::scenario;

using nlohmann::json;

InputError input_error(const net::CommError& e, const std::string& workload_at) {
  const std::string& f = e.field();
  const bool network_key = f == "granularity" || f == "protocol" || f == "model";
  return InputError((network_key ? std::string("network") : workload_at) + "." + f, e.what(), e.hint());
}

namespace {

std::string at_background(std::size_t i) { return "workload.background." + std::to_string(i); }

json result_row(const net::BenchmarkResult& r, const net::BenchmarkRow& row, work::CollectiveOp op) {
  const double algbw = row.bytes / row.time_s;
  json out = {{"bytes", row.bytes},
              {"time_s", row.time_s},
              {"algbw_GBps", algbw / 1e9},
              {"busbw_GBps", algbw * work::busbw_factor(op, r.group_size) / 1e9},
              {"algorithm", std::string(work::to_string(row.choice.algorithm))},
              {"requested_algorithm", std::string(work::to_string(row.requested))},
              {"protocol", std::string(net::to_string(row.choice.protocol))}};
  if (r.groups > 1) out["fastest_group_time_s"] = row.fastest_group_s;
  return out;
}

}  // namespace

void add_background(const Config& config, net::Comm& comm, net::BackgroundLoad& load) {
  for (std::size_t i = 0; i < config.background.size(); ++i) {
    const auto& b = config.background[i];
    try {
      if (b.kind == WorkloadKind::traffic) load.add_traffic(work::expand_traffic(b.traffic, comm.ranks()));
      else load.add_collective(b.collective);
    } catch (const net::CommError& e) {
      throw input_error(e, at_background(i));
    }
  }
}

json background_summary(const net::BackgroundLoad& load) {
  json out = json::array();
  for (const auto& loop : load.collectives())
    out.push_back({{"kind", "collective"},
                   {"op", std::string(work::to_string(loop.op))},
                   {"groups", loop.groups},
                   {"completed", loop.completed},
                   {"mean_time_s", loop.mean_time_s}});
  for (const auto& t : load.traffic())
    out.push_back({{"kind", "traffic"}, {"flows", t->flows()}, {"completed", t->completed()}});
  return out;
}

json run_collective(const Config& config, engine::Simulator& sim, net::Comm& comm) {
  net::BackgroundLoad background(comm, sim);
  add_background(config, comm, background);
  background.start();
  net::BenchmarkResult r;
  try {
    r = net::run_collective_benchmark(comm, sim, config.collective, config.run.until_s);
  } catch (const net::CommError& e) {
    throw input_error(e, "workload");
  }
  background.stop();
  json rows = json::array();
  for (const auto& row : r.rows) rows.push_back(result_row(r, row, config.collective.op));
  const auto& algs = config.collective.algorithms;
  json algorithm = std::string(work::to_string(algs.front()));
  if (algs.size() > 1) {
    algorithm = json::array();
    for (auto a : algs) algorithm.push_back(std::string(work::to_string(a)));
  }
  json out = {{"op", std::string(work::to_string(config.collective.op))},
              {"algorithm", algorithm},
              {"ranks", r.group_size},
              {"groups", r.groups},
              {"results", std::move(rows)},
              {"sizes_not_run", r.sizes_not_run}};
  if (!config.background.empty()) out["background"] = background_summary(background);
  return out;
}

void check_collectives(const Config& config, net::Comm& comm) {
  auto check = [&](const work::CollectiveSpec& spec, const std::string& at) {
    try {
      if (work::collective_groups(spec, comm.ranks()).front().size() <= kMaxCheckedPlanRanks)
        net::check_collective(comm, spec);
    } catch (const net::CommError& e) {
      throw input_error(e, at);
    }
  };
  if (config.workload == WorkloadKind::collective) check(config.collective, "workload");
  for (std::size_t i = 0; i < config.background.size(); ++i)
    if (config.background[i].kind == WorkloadKind::collective) check(config.background[i].collective, at_background(i));
}

}  // namespace cs::world::detail
