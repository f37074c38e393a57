// workload.kind "jobs" (classes with arrivals, or a trace; the number of jobs) with its fleet
// section (the cluster's size, the fleet's nodes, checkpoint, restore) and fleet.scheduler
// (policy, queues, preemption, placement) into cs::jobs::JobsConfig. The fleet's nodes,
// checkpoints, restores, arrivals and distributions are the shared parsers'. Only parsing:
// the model is sim/fleet's (job_cluster.hpp).
#include <algorithm>
#include <cmath>
#include <fstream>

#include "sim/scenario/load.hpp"
#include "sim/scenario/parse_fleet_values.hpp"
#include "sim/scenario/parse_sections.hpp"
#include "sim/scenario/quantity_range.hpp"
#include "sim/scenario/suggest.hpp"
#include "workloads/job_trace.hpp"
#include "workloads/training_memory.hpp"

namespace cs::scenario::detail {
namespace {

using jobs::JobsConfig;
using jobs::QueueConfig;

constexpr std::string_view kScheduler = "fleet.scheduler";
constexpr int64_t kMaxQueues = 1000;
constexpr int64_t kMaxClasses = 1000;
// Beyond this many submissions a run takes many minutes: refused up front.
constexpr double kMaxExpectedJobs = 1e8;

const json& array_or_empty(const json& obj, std::string_view key, std::string_view at) {
  static const json empty = json::array();  // immutable
  const json* v = member(obj, key);
  if (!v) return empty;
  if (!v->is_array()) throw InputError(join_path(at, key), "expected a list; got " + describe_value(*v));
  return *v;
}

std::vector<QueueConfig> parse_queues(const json& scheduler) {
  const std::string at = join_path(kScheduler, "queues");
  const json& list = array_or_empty(scheduler, "queues", kScheduler);
  if (!member(scheduler, "queues")) return jobs::SchedulerConfig{}.queues;
  if (list.empty() || static_cast<int64_t>(list.size()) > kMaxQueues)
    throw InputError(at, "expected a list of 1 to 1000 queues {name, priority, quota, max_gpus}");
  std::vector<QueueConfig> queues;
  double quotas = 0.0;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string item = join_path(at, i);
    const json& q = list[i];
    if (!q.is_object()) throw InputError(item, "expected a queue {name, priority, quota, max_gpus}; got " + describe_value(q));
    if (!member(q, "name")) throw InputError(item, "missing required key \"name\"");
    QueueConfig c;
    c.name = get_string(q, "name", item, "");
    if (c.name.empty()) throw InputError(join_path(item, "name"), "expected a non-empty name");
    for (const QueueConfig& other : queues)
      if (other.name == c.name) throw InputError(join_path(item, "name"), "a second queue named \"" + c.name + "\"");
    c.priority = static_cast<int>(get_int(q, "priority", item, 0, -1'000'000, 1'000'000));
    if (member(q, "quota")) {
      c.quota = get_number(q, "quota", item, 0.0, 0.0, 1.0);
      quotas += *c.quota;
    }
    c.max_gpus = static_cast<int>(get_int(q, "max_gpus", item, jobs::kNoGpuCap, 1, jobs::kNoGpuCap));
    queues.push_back(std::move(c));
  }
  if (quotas > 1.0 + 1e-9)
    throw InputError(at, "the quotas add up to " + describe_value(json(quotas)) + "; expected at most 1",
                     "a quota is a share of the cluster's GPUs");
  return queues;
}

void parse_scheduler(const json& fleet, JobsConfig& c) {
  const json& s = object_or_empty(fleet, "scheduler", kFleet);
  jobs::SchedulerConfig& sc = c.scheduler;
  sc.policy = get_choice(s, "policy", kScheduler, jobs::kPolicyNames, jobs::Policy::fifo);
  sc.backfill = get_bool(s, "backfill", kScheduler, sc.policy == jobs::Policy::backfill);
  if (sc.policy == jobs::Policy::backfill && !sc.backfill)
    throw InputError(join_path(kScheduler, "backfill"), "the backfill policy is FIFO with EASY backfilling",
                     "use policy \"fifo\" for FIFO alone");
  sc.preemption = get_bool(s, "preemption", kScheduler, false);
  sc.placement = get_choice(s, "placement", kScheduler, jobs::kPlacementPolicyNames, jobs::PlacementPolicy::any);
  sc.queues = parse_queues(s);
  sc.bf_max_job_test = static_cast<int>(get_int(s, "bf_max_job_test", kScheduler, sc.bf_max_job_test, 1, 1'000'000));
  sc.max_switch_wait_s =
      get_quantity(s, "max_switch_wait", kScheduler, QuantityKind::time, Sign::non_negative, sc.max_switch_wait_s);
  if (sc.max_switch_wait_s > 0.0 && sc.placement != jobs::PlacementPolicy::topology)
    throw InputError(join_path(kScheduler, "max_switch_wait"), "a job waits for fewer leaves only with topology placement",
                     "set \"placement\": \"topology\"");
  sc.usage_half_life_s =
      get_quantity(s, "usage_half_life", kScheduler, QuantityKind::time, Sign::non_negative, sc.usage_half_life_s);
}

int queue_index(const json& v, const std::string& path, const std::vector<QueueConfig>& queues) {
  std::vector<std::string> names;
  for (const QueueConfig& q : queues) names.push_back(q.name);
  if (!v.is_string()) throw InputError(path, "expected a queue name (" + quoted_list(names) + "); got " + describe_value(v));
  for (std::size_t i = 0; i < queues.size(); ++i)
    if (queues[i].name == v.get_ref<const std::string&>()) return static_cast<int>(i);
  throw InputError(path, "no queue named " + describe_value(v) + " in fleet.scheduler.queues (" + quoted_list(names) + ")",
                   did_you_mean(v.get<std::string>(), names));
}

void parse_classes(const json& w, JobsConfig& c) {
  const std::string at = join_path(kWorkload, "classes");
  const json& list = array_or_empty(w, "classes", kWorkload);
  if (list.empty() || static_cast<int64_t>(list.size()) > kMaxClasses)
    throw InputError(at, "expected a list of 1 to 1000 job classes {name, queue, share, gpus, duration}");
  const auto& queues = c.scheduler.queues;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string item = join_path(at, i);
    const json& k = list[i];
    if (!k.is_object()) throw InputError(item, "expected a job class {name, queue, share, gpus, duration}; got " + describe_value(k));
    if (!member(k, "duration"))
      throw InputError(join_path(item, "duration"), "required: how long a job runs (a time or a distribution of times), "
                                                    "e.g. {\"dist\": \"lognormal\", \"mean\": \"6h\", \"cv\": 2}");
    jobs::JobClass jc;
    jc.name = get_string(k, "name", item, "class " + std::to_string(i));
    jc.queue = member(k, "queue") ? queue_index(k.at("queue"), join_path(item, "queue"), queues) : 0;
    jc.share = get_number(k, "share", item, 1.0, 0.0, 1e12);
    if (!(jc.share > 0.0)) throw InputError(join_path(item, "share"), "expected a share of the arrivals > 0");
    jc.gpus = get_distribution(k, "gpus", item, jc.gpus, std::nullopt);
    const int limit = std::min(c.total_gpus(), queues[static_cast<std::size_t>(jc.queue)].max_gpus);
    if (jc.gpus.kind == sources::Distribution::Kind::constant) {
      const double g = jc.gpus.mean;
      if (g < 1.0 || std::floor(g) != g || g > limit)
        throw InputError(join_path(item, "gpus"), "expected a whole number of GPUs from 1 to " + std::to_string(limit) +
                                                      " (what its queue may hold and the cluster has); got " + describe_value(json(g)));
    }
    jc.duration = get_distribution(k, "duration", item, jc.duration);
    jc.spread_penalty = get_number(k, "spread_penalty", item, 0.0, 0.0, 100.0);
    c.classes.push_back(std::move(jc));
  }
}

// workload.classes[i].training: the class's jobs are that training workload, on a fixed GPU
// count, their slowdown simulated on the topology section (which must be given).
void parse_class_training(const json& doc, const json& w, Config& config) {
  const json& list = w.at("classes");
  config.job_class_training.assign(list.size(), std::nullopt);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const json* t = member(list[i], "training");
    if (!t) continue;
    const std::string item = join_path(join_path(kWorkload, "classes"), i);
    const jobs::JobClass& jc = config.jobs.classes[i];
    if (!member(doc, "topology"))
      throw InputError(join_path(item, "training"), "a class's training step is simulated on the cluster's fabric: "
                                                    "give the topology section",
                       "or give spread_penalty instead");
    if (member(list[i], "spread_penalty"))
      throw InputError(join_path(item, "spread_penalty"), "give spread_penalty or training, not both",
                       "with training the slowdown is simulated");
    if (jc.gpus.kind != sources::Distribution::Kind::constant)
      throw InputError(join_path(item, "gpus"), "a class with a training workload runs on a fixed number of GPUs: its "
                                                "plan's tp x pp x dp x cp");
    config.job_class_training[i] =
        parse_training_config(*t, join_path(item, "training"), config, static_cast<int64_t>(jc.gpus.mean));
    // As a training run's plan: a job class's must fit in its GPUs' memory (its step is
    // simulated; a plan that does not fit is a result for one step, never a job that runs).
    const TrainingConfig& tc = *config.job_class_training[i];
    const work::MemoryReport m = work::memory_per_gpu(tc.workload, config.gpu.memory_bytes, tc.step.memory);
    if (!m.fits)
      throw InputError(join_path(item, "training.parallel"),
                       "a plan that fits in GPU memory less its headroom: this one needs " +
                           format_quantity(m.max_bytes, QuantityKind::bytes) + " per GPU of " +
                           format_quantity(m.usable_bytes, QuantityKind::bytes) + " usable (" +
                           format_quantity(config.gpu.memory_bytes, QuantityKind::bytes) + " less memory_headroom)",
                       "more tensor or pipeline parallelism, ZeRO, recomputation, or clustersim plan for one that fits");
  }
}

// Returns the trace's span: the last job's end had it started on submission (the run lasts at
// least that long).
double parse_trace(const json& w, JobsConfig& c) {
  const std::string at = join_path(kWorkload, "trace");
  const json& v = w.at("trace");
  if (!v.is_string() || v.get_ref<const std::string&>().empty())
    throw InputError(at, "expected the path of a CSV file (submit_time, gpus, duration, queue, class)");
  c.trace_path = v.get<std::string>();
  std::ifstream in(c.trace_path);
  if (!in)
    throw InputError(at, "cannot open '" + c.trace_path + "'",
                     kInputPathHint);
  // Read it through once (row by row, nothing kept): a malformed row is an input error now
  // rather than in the middle of the run. (A job larger than its queue allows is the run's to
  // refuse at submission, as Slurm does: JobsResult::rejected.)
  double span_s = 0;
  try {
    work::JobTraceReader reader(in);
    int64_t rows = 0;
    while (const auto row = reader.next()) {
      span_s = std::max(span_s, row->submit_s + row->duration_s);
      ++rows;
    }
    if (rows == 0) throw std::invalid_argument("the trace has no job: a header and no row");
  } catch (const std::invalid_argument& e) {
    throw InputError(at, "in '" + c.trace_path + "': " + e.what(),
                     "a header row naming submit_time, gpus, duration (and queue, class), then one job per row");
  }
  if (member(w, "arrivals"))
    throw InputError(join_path(kWorkload, "arrivals"), "a trace gives the submission times: no arrivals with it");
  return span_s;
}

// The cluster: the topology's nodes (its domains come when the world builds it), or
// fleet.nodes without a topology.
void parse_cluster(const json& doc, const json& fleet, Config& config) {
  JobsConfig& c = config.jobs;
  c.gpus_per_node = config.topology.node.gpus;
  const json* nodes = member(fleet, "nodes");
  if (member(doc, "topology")) {
    if (nodes && int_value(*nodes, "fleet.nodes", 1, kMaxTotalGpus) != config.topology.nodes)
      throw InputError("fleet.nodes", "the topology has " + std::to_string(config.topology.nodes) + " nodes; fleet.nodes says " +
                                          describe_value(*nodes),
                       "leave out fleet.nodes: the topology sets the cluster's size");
    c.fleet.nodes = config.topology.nodes;
    config.jobs_on_topology = true;
    return;
  }
  if (!nodes)
    throw InputError("fleet.nodes", "required for a jobs workload without a topology: how many nodes the cluster has",
                     "or describe the cluster in the topology section (kind, nodes)");
  c.fleet.nodes = static_cast<int>(get_int(fleet, "nodes", kFleet, 1, 1, kMaxTotalGpus / std::max(1, c.gpus_per_node)));
  if (c.scheduler.placement == jobs::PlacementPolicy::topology)
    throw InputError(join_path(kScheduler, "placement"), "topology placement needs the topology section (its leaves or groups)",
                     "describe the cluster in topology, or use \"any\" or \"pack\"");
}

void check_size(const Config& config) {
  const JobsConfig& c = config.jobs;
  if (!c.trace_path.empty()) return;
  const double expected = c.max_jobs >= 0 ? static_cast<double>(c.max_jobs) : c.arrivals.rate_per_s * c.until_s;
  if (expected > kMaxExpectedJobs)
    throw InputError(c.max_jobs >= 0 ? "workload.jobs" : "run.until",
                     "about " + describe_value(json(expected)) + " jobs; at most 1e8",
                     "a bare rate is per second: write \"30/h\"");
}

}  // namespace

void parse_jobs(const json& doc, Config& config) {
  const json& w = object_or_empty(doc, "workload", "");
  const json& fleet = object_or_empty(doc, "fleet", "");
  JobsConfig& c = config.jobs;
  for (const char* key : {"elastic", "autoscaler"})
    if (member(fleet, key))
      throw InputError(join_path(kFleet, key), std::string("fleet.") + key + " applies to a " +
                                                   (std::string(key) == "elastic" ? "training_run" : "serving workload") +
                                                   ", not to a cluster's jobs");
  if (member(object_or_empty(fleet, "interruptions", kFleet), "fallback_after"))
    throw InputError("fleet.interruptions.fallback_after", "a job cluster's spot nodes wait for their capacity to come back",
                     "leave it out: buying on demand instead is modelled for training runs only");
  parse_scheduler(fleet, c);
  parse_cluster(doc, fleet, config);
  parse_fleet_nodes(fleet, config, c.fleet);
  parse_node_commitments(fleet, config, c.fleet);
  if (member(fleet, "checkpoint")) {
    c.checkpoint = fleet::CheckpointConfig{};
    parse_checkpoint(fleet, *c.checkpoint);
  }
  parse_restore(fleet, c.restore);

  const bool trace = member(w, "trace") != nullptr;
  double span_s = 0;  // how long the run lasts at least (without run.until)
  if (!trace && !member(w, "classes"))
    throw InputError(join_path(kWorkload, "classes"), "a jobs workload needs classes (with arrivals) or a trace",
                     "e.g. \"classes\": [{\"name\": \"train\", \"gpus\": 8, \"duration\": \"6h\"}], \"arrivals\": {\"rate\": \"2/h\"}");
  // Beside a trace, classes only name what its class column refers to.
  if (member(w, "classes")) {
    parse_classes(w, c);
    parse_class_training(doc, w, config);
  }
  if (trace) {
    span_s = parse_trace(w, c);
  } else {
    const std::string at = join_path(kWorkload, "arrivals");
    const json& a = object_or_empty(w, "arrivals", kWorkload);
    if (member(a, "process") && a.at("process") == "trace")
      throw InputError(join_path(at, "process"), "a job trace is workload.trace, a CSV of submit_time, gpus, duration, queue");
    if (!member(w, "arrivals"))
      throw InputError(at, "required with classes: how often jobs arrive, e.g. {\"process\": \"poisson\", \"rate\": \"30/h\"}");
    c.arrivals = parse_arrivals(a, at);
  }
  c.max_jobs = get_int(w, "jobs", kWorkload, -1, 1, INT64_MAX);
  if (member(w, "background"))
    throw InputError(join_path(kWorkload, "background"), "background work runs beside traffic and collective workloads, not jobs");

  c.until_s = config.run.until_s > 0 ? config.run.until_s : std::numeric_limits<double>::infinity();
  if (!trace && c.max_jobs < 0 && !std::isfinite(c.until_s))
    throw InputError("run.until", "jobs keep arriving: give run.until (how long to run) or workload.jobs (how many to submit)");
  c.sample_interval_s = config.run.timeseries_interval_s > 0 ? config.run.timeseries_interval_s : 3600.0;
  if (!trace && c.max_jobs >= 0) span_s = static_cast<double>(c.max_jobs) / c.arrivals.rate_per_s;
  check_period(c.sample_interval_s, std::isfinite(c.until_s) ? c.until_s : span_s, "run.timeseries_interval");
  check_size(config);
  // Every value was checked above with its JSON path; the library's own checks are a safety net
  // whose field names are not always the file's.
  try {
    c.validate();
  } catch (const std::invalid_argument& e) {
    throw InputError(std::string(kFleet), std::string("inconsistent jobs settings: ") + e.what());
  }
}

}  // namespace cs::scenario::detail
