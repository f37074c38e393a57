#include "sim/world/run_jobs.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "sim/jobs/job_cluster.hpp"
#include "sim/jobs/topology_domains.hpp"
#include "sim/report/summary.hpp"
#include "sim/scenario/input_error.hpp"
#include "sim/world/jobs_step_time.hpp"
#include "sim/world/held_estimate.hpp"
#include "sim/world/run_budget.hpp"
#include "sim/world/run.hpp"

namespace cs::world::detail {

using namespace cs::scenario;
using namespace cs::report;

using nlohmann::json;

json run_jobs(const Config& config, engine::Simulator& sim, bool record, std::string* jobs_csv, bool draw_ahead) {
  jobs::JobsConfig c = config.jobs;
  c.draw_ahead = draw_ahead;
  if (config.jobs_on_topology) c.node_domain = jobs::node_domains(build_topology(config));
  c.record_timeseries = record;
  c.record_jobs = jobs_csv != nullptr;
  c.max_held_jobs = held_at_most(config, kBytesPerJob);
  c.held_per_wait = kBytesPerJobWait / kBytesPerJob;
  jobs::JobsResult result;
  json simulated = json::object();  // per class with a training workload: its compact step
  try {
    // Classes with a training workload: their slowdown from the simulated step.
    std::unique_ptr<SimulatedStepModel> model;
    if (std::any_of(config.job_class_training.begin(), config.job_class_training.end(),
                    [](const auto& t) { return t.has_value(); }))
      model = std::make_unique<SimulatedStepModel>(config, sim.interrupt_check());
    const SimulatedStepModel* steps = model.get();
    jobs::JobCluster cluster(sim, std::move(c), std::move(model));
    cluster.start();
    jobs::run_until_done(sim, cluster, cluster.config().until_s);
    result = cluster.result();
    if (steps)
      for (std::size_t k = 0; k < steps->compact_step_s().size(); ++k)
        if (config.job_class_training[k])
          simulated[config.jobs.classes[k].name] = {{"compact_step_s", summary_number(steps->compact_step_s()[k].value_or(0.0))}};
  } catch (const jobs::HeldJobsLimitError& e) {
    throw_held_limit(config, double(e.held),
                     std::string("jobs (waiting, running") + (c.record_jobs ? ", kept for jobs.csv" : "") +
                         "; a finished job's kept wait counts as " + std::to_string(int(kBytesPerJob / kBytesPerJobWait)) +
                         "th of one)",
                     e.at_s, "jobs arrive faster than the cluster finishes them: fewer or shorter jobs, a lower rate, "
                             "a shorter run.until, or more nodes");
  } catch (const std::invalid_argument& e) {
    // The trace is read as the run goes: a bad row shows up here, named by its line.
    if (config.jobs.trace_path.empty()) throw;
    throw InputError("workload.trace", "in '" + config.jobs.trace_path + "': " + e.what(),
                     "a header row naming submit_time, gpus, duration (and queue, class), then one job per row");
  }
  if (jobs_csv) *jobs_csv = jobs_table_csv(result, config.jobs);
  json block = jobs_block(result, config.jobs);
  if (!simulated.empty()) block["simulated_steps"] = std::move(simulated);
  return block;
}

json jobs_block(const jobs::JobsResult& r, const jobs::JobsConfig& config) {
  const auto n = [](double x) { return summary_number(x); };
  json queues = json::object();
  for (const jobs::QueueResult& q : r.queues) {
    json& queue = queues[q.name] = {{"completed", n(q.completed)},       {"wait_mean_s", n(q.wait_mean_s)},
                                    {"wait_p95_s", n(q.wait_p95_s)},     {"gpu_share", n(q.gpu_share)},
                                    {"submitted", n(q.submitted)},       {"busy_gpu_hours", n(q.busy_gpu_hours)},
                                    {"preemptions", n(q.preemptions)},   {"cluster_share", n(q.cluster_share)},
                                    {"cost_usd", n(q.cost_usd)}};
    if (!std::isnan(q.quota)) queue["quota"] = n(q.quota);
  }
  const auto waits = [&](const std::vector<jobs::WaitGroup>& groups) {
    json out = json::object();
    for (const jobs::WaitGroup& g : groups)
      out[g.name] = {{"completed", n(g.completed)}, {"wait_mean_s", n(g.wait_mean_s)}, {"wait_p95_s", n(g.wait_p95_s)}};
    return out;
  };
  json hours_by_market = json::object();
  for (const fleet::Market m : fleet::kAllMarkets)
    hours_by_market[std::string(fleet::to_string(m))] = n(r.node_hours_by_market[m]);
  const jobs::SchedulerConfig& s = config.scheduler;
  json block = {
      {"submitted", n(r.submitted)},
      {"completed", n(r.completed)},
      {"wait_mean_s", n(r.wait_mean_s)},
      {"wait_p95_s", n(r.wait_p95_s)},
      {"utilization", n(r.utilization)},
      {"preemptions", n(r.preemptions)},
      {"lost_gpu_hours", n(r.lost_gpu_hours)},
      {"cost_usd", n(r.cost_usd)},
      {"queues", std::move(queues)},
      {"classes", waits(r.classes)},
      {"waits_by_size", waits(r.sizes)},
      {"stream", {{"rejected", n(r.rejected)},
                  {"pending_at_end", n(r.pending_at_end)},
                  {"running_at_end", n(r.running_at_end)},
                  {"runtime_mean_s", n(r.runtime_mean_s)},
                  {"horizon_s", n(r.horizon_s)}}},
      {"fleet", {{"node_failures", n(r.node_failures)},
                 {"reclaims", n(r.reclaims)},
                 {"interruptions", n(r.interruptions)},
                 {"checkpoints", n(r.checkpoints)},
                 {"emergency_checkpoints", n(r.emergency_checkpoints)}}},
      {"gpu_hours", {{"available", n(r.gpu_hours_available)},
                     {"busy", n(r.busy_gpu_hours)},
                     {"lost", n(r.lost_gpu_hours)},
                     {"restore", n(r.restore_gpu_hours)},
                     {"checkpoint", n(r.checkpoint_gpu_hours)},
                     {"stalled", n(r.stalled_gpu_hours)},
                     {"slowdown", n(r.slowdown_gpu_hours)}}},
      {"placement", {{"mean_spread", n(r.mean_spread)},
                     {"mean_slowdown", n(r.mean_slowdown)},
                     {"distinct_shapes", n(static_cast<double>(r.placement_shapes))}}},
      {"node_hours_by_market", std::move(hours_by_market)},
      {"scheduler", {{"policy", std::string(jobs::to_string(s.policy))},
                     {"backfill", s.backfilling()},
                     {"preemption", s.preemption},
                     {"placement", std::string(jobs::to_string(s.placement))}}},
  };
  add_grouped_numbers(block, r.money.summary_numbers());  // cost_usd_by_market, cost_breakdown_usd
  return block;
}

std::string jobs_table_csv(const jobs::JobsResult& r, const jobs::JobsConfig& config) {
  std::ostringstream out;
  out.precision(17);
  out << "job,class,queue,submit_s,start_s,end_s,gpus,nodes,spread,slowdown,preemptions,interruptions,wait_s,"
         "lost_work_s,completed\n";
  const auto time = [&](double t) -> std::ostream& {
    if (!std::isnan(t)) out << t;
    return out;
  };
  for (const jobs::JobRecord& j : r.jobs) {
    out << j.id << ',';
    if (j.job_class >= 0) out << config.classes[static_cast<std::size_t>(j.job_class)].name;
    out << ',' << config.scheduler.queues[static_cast<std::size_t>(j.queue)].name << ',' << j.submit_s << ',';
    time(j.start_s) << ',';
    time(j.end_s) << ',' << j.gpus << ',' << j.nodes << ',' << j.spread << ',' << j.slowdown << ',' << j.preemptions
                  << ',' << j.interruptions << ',' << j.wait_s << ',' << j.lost_work_s << ','
                  << (j.completed ? 1 : 0) << '\n';
  }
  return out.str();
}

}  // namespace cs::world::detail
