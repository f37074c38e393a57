#pragma once
// Internal to run.cpp: a jobs workload on its cluster (cs::jobs::JobCluster), without a
// network, its summary block and its per-job table.
#include <string>

#include <nlohmann/json.hpp>

#include "sim/engine/simulator.hpp"
#include "sim/jobs/jobs_result.hpp"
#include "sim/scenario/config.hpp"

namespace cs::world::detail {

// Runs config.jobs on `sim` until every job is done or run.until; returns the summary's "jobs"
// block. With `record`, the time series (queue lengths, busy GPUs per queue, waits) go to
// sim's Recorder; with `jobs_csv`, the per-job table is written there. A malformed trace row
// found while running is an InputError at workload.trace. With `draw_ahead`, a second thread
// draws the job stream ahead of the simulation (sim/jobs/job_feed.hpp: the same jobs).
nlohmann::json run_jobs(const scenario::Config& config, engine::Simulator& sim, bool record, std::string* jobs_csv,
                        bool draw_ahead = false);

// docs/scenarios.md's keys (submitted, completed, wait_mean_s, wait_p95_s, utilization, preemptions,
// lost_gpu_hours, cost_usd, queues: {name: {completed, wait_mean_s, wait_p95_s, gpu_share, ...}})
// then the breakdowns nested under "stream", "fleet", "gpu_hours", "placement",
// "cost_usd_by_market", "node_hours_by_market", and the "scheduler" that ran.
nlohmann::json jobs_block(const jobs::JobsResult& result, const jobs::JobsConfig& config);

// "job,class,queue,submit_s,start_s,end_s,gpus,nodes,spread,slowdown,preemptions,
// interruptions,wait_s,lost_work_s,completed": one row per job, by id; start and end empty for
// a job that never started / did not finish.
std::string jobs_table_csv(const jobs::JobsResult& result, const jobs::JobsConfig& config);

}  // namespace cs::world::detail
