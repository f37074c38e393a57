// Training steps on the real network models: the symmetry shortcut against the full
// simulation, the flow model against the analytical one, placement, traces and summaries.
#include <set>

#include "training_scenarios.hpp"

namespace cs::scenario::test {
namespace {

// DGX-like nodes (8 x H100, NVSwitch, 8 NICs of 400 Gb/s) on a 2-tier fat-tree.
json dgx_cluster(int nodes, const std::string& model) {
  return {{"hardware", {{"gpu", "H100-SXM"}, {"node", {{"gpus", 8}, {"nics", 8}, {"nic_bandwidth", "400Gbps"}}}}},
          {"topology", {{"kind", "fat_tree"}, {"nodes", nodes}, {"switch_radix", 16}, {"link_bandwidth", "400Gbps"}}},
          {"network", {{"model", model}}}};
}

void check_same_step(const json& full, const json& one) {
  const json& a = full["training"];
  const json& b = one["training"];
  CHECK(a["simulation"]["one_replica"] == false);
  CHECK(b["simulation"]["one_replica"] == true);
  CHECK(b["step_time_s"].get<double>() == Approx(a["step_time_s"].get<double>()).epsilon(1e-12));
  CHECK(b["bubble_fraction"].get<double>() == Approx(a["bubble_fraction"].get<double>()).epsilon(1e-12).margin(1e-15));
  CHECK(b["compute_s"].get<double>() == Approx(a["compute_s"].get<double>()).epsilon(1e-12));
  for (const char* group : {"tp", "cp", "ep", "pp", "dp"})
    CHECK(b["breakdown"]["exposed_comm_s"][group].get<double>() ==
          Approx(a["breakdown"]["exposed_comm_s"][group].get<double>()).epsilon(1e-12).margin(1e-15));
}

json moe_model() {
  json m = tiny_model(4);
  m["experts"] = 4;
  m["top_k"] = 2;
  return m;
}

// Each data-parallel replica inside one node: auto takes the shortcut, and it is exact.
TEST_CASE("the one-replica shortcut equals the full simulation where auto takes it", "[training][symmetry]") {
  struct Case {
    const char* name;
    int nodes;
    json parallel;
    json model;
  };
  const Case cases[] = {
      {"tp 2 x dp 4 on one node, ZeRO 1", 1, {{"tp", 2}, {"dp", 4}, {"zero", 1}, {"sequence_parallel", true}},
       tiny_model(4)},
      {"tp 2 x pp 2 per node, dp across 2 nodes, ZeRO 3", 2,
       {{"tp", 2}, {"pp", 2}, {"dp", 4}, {"zero", 3}, {"order", "tp-pp-cp-ep-dp"}}, tiny_model(4)},
      {"MoE: ep 2 of dp 4, zb_h1", 2,
       {{"tp", 2}, {"pp", 2}, {"dp", 4}, {"ep", 2}, {"schedule", "zb_h1"}, {"order", "tp-pp-cp-ep-dp"}},
       moe_model()},
  };
  for (const auto& c : cases)
    for (const char* model : {"flow", "analytical"}) {
      json doc = dgx_cluster(c.nodes, model);
      doc["workload"] = {{"kind", "training"}, {"model", c.model}, {"parallel", c.parallel},
                         {"batch", {{"global", 32}, {"micro", 2}}}, {"comm_compute_share", 0.1}};
      INFO(c.name << ", " << model);
      const json one = run_summary(doc);
      CHECK(one["training"]["simulation"]["one_replica_exact"] == true);
      doc["workload"]["one_replica"] = false;
      check_same_step(run_summary(doc), one);
    }
}

TEST_CASE("auto simulates every replica where a replica spans nodes", "[training][symmetry]") {
  json doc = dgx_cluster(2, "flow");
  doc["workload"] = {{"kind", "training"}, {"model", tiny_model(4)},
                     {"parallel", {{"tp", 2}, {"pp", 2}, {"dp", 4}}},  // pp slowest: stages on different nodes
                     {"batch", {{"global", 8}}}};
  const json t = run_summary(doc)["training"];
  CHECK(t["simulation"]["one_replica"] == false);
  CHECK(t["simulation"]["replicas_simulated"] == 4);
  CHECK_THAT(t["simulation"]["reason"].get<std::string>(), Catch::Contains("span nodes"));
  doc["workload"]["one_replica"] = true;  // asked for: taken, and said to be an assumption
  const json one = run_summary(doc)["training"];
  CHECK(one["simulation"]["one_replica"] == true);
  CHECK(one["simulation"]["one_replica_exact"] == false);
}

TEST_CASE("flow and analytical models give the same step where nothing contends", "[training][models]") {
  // A pipeline over 4 nodes (one GPU each, its own NIC): each send alone on its links.
  json doc = {{"hardware", {{"gpu", "H100-SXM"}, {"node", {{"gpus", 1}, {"nics", 1}, {"nic_bandwidth", "400Gbps"}}}}},
              {"topology", {{"kind", "fat_tree"}, {"nodes", 4}, {"switch_radix", 8}, {"link_bandwidth", "400Gbps"}}}};
  doc["workload"] = {{"kind", "training"}, {"model", {{"preset", "llama3-8b"}, {"layers", 8}, {"seq_len", 2048}}},
                     {"parallel", {{"pp", 4}, {"schedule", "gpipe"}}}, {"batch", {{"global", 4}}}};
  doc["network"] = {{"model", "flow"}};
  const json flow = run_summary(doc)["training"];
  doc["network"] = {{"model", "analytical"}};
  const json analytical = run_summary(doc)["training"];
  CHECK(analytical["step_time_s"].get<double>() == Approx(flow["step_time_s"].get<double>()).epsilon(1e-9));
  CHECK(analytical["breakdown"]["exposed_comm_s"]["pp"].get<double>() ==
        Approx(flow["breakdown"]["exposed_comm_s"]["pp"].get<double>()).epsilon(1e-9));
  CHECK(flow["breakdown"]["exposed_comm_s"]["pp"].get<double>() > 0);
}

TEST_CASE("the training summary has the contract's keys and its breakdowns add up", "[training][summary]") {
  json doc = dgx_cluster(2, "flow");
  doc["workload"] = {{"kind", "training"}, {"model", {{"preset", "llama3-8b"}, {"layers", 8}, {"seq_len", 2048}}},
                     {"parallel", {{"tp", 4}, {"pp", 2}, {"zero", 1}, {"sequence_parallel", true}}},
                     {"batch", {{"global", 16}, {"micro", 1}}}};
  const json s = run_summary(doc);
  const json& t = s["training"];
  for (const char* key : {"step_time_s", "tokens_per_s", "tflops_per_gpu", "model_tflops_per_gpu", "mfu",
                          "bubble_fraction", "compute_s", "exposed_comm_s", "memory_per_gpu_bytes", "fits"})
    CHECK(t.contains(key));
  const json& b = t["breakdown"];
  double exposed = 0;
  for (const auto& [group, seconds] : b["exposed_comm_s"].items()) exposed += seconds.get<double>();
  CHECK(exposed == Approx(t["exposed_comm_s"].get<double>()));
  CHECK(b["compute_s"].get<double>() + b["optimizer_s"].get<double>() + exposed + b["bubble_s"].get<double>() ==
        Approx(t["step_time_s"].get<double>()).epsilon(1e-9));
  CHECK(t["tokens_per_s"].get<double>() == Approx(16.0 * 2048 / t["step_time_s"].get<double>()));
  CHECK(t["plan"]["dp"] == 2);  // 16 GPUs / (tp 4 x pp 2)
  CHECK(t["memory"]["per_stage"].size() == 2);
  CHECK(t["fits"] == true);
  CHECK(s["sim_time_s"].get<double>() == Approx(t["step_time_s"].get<double>()));
  // Tensor-parallel peers share a node: the NVSwitch carries their traffic.
  CHECK(s["links"]["hottest"][0]["kind"] == "node_fabric");
}

TEST_CASE("run.trace gives a Perfetto trace with a track per GPU stream", "[training][trace]") {
  json doc = dgx_cluster(1, "flow");
  doc["workload"] = {{"kind", "training"}, {"model", tiny_model(4)},
                     {"parallel", {{"tp", 2}, {"pp", 2}, {"dp", 2}, {"zero", 1}}}, {"batch", {{"global", 4}}}};
  doc["run"] = {{"trace", "trace.json"}};
  const cs::world::RunOutput out = world::run_scenario(parse_config(doc));
  const json trace = json::parse(out.trace_json);
  std::set<std::string> processes, threads;
  std::size_t spans = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") processes.insert(e["args"]["name"].get<std::string>());
    if (e["ph"] == "M" && e["name"] == "thread_name") threads.insert(e["args"]["name"].get<std::string>());
    spans += e["ph"] == "X";
  }
  // Each replica inside the node: one replica simulated, its 4 GPUs traced.
  CHECK(processes.size() == 4);
  CHECK(processes.count("GPU 5 (node 0): stage 1 replica 0, rank 5") == 1);
  for (const char* stream : {"compute", "tp", "pp", "dp", "dp_gather"}) CHECK(threads.count(stream) == 1);
  CHECK(threads.count("host") == 0);  // no offload: no host stream
  CHECK(spans == out.summary["training"]["simulation"]["tasks"].get<std::size_t>() * 2);  // tp 2 GPUs per worker
  CHECK(out.summary["training"]["simulation"]["trace_tracks"] == "per_gpu");
}

TEST_CASE("a plan that does not fit is a result", "[training][memory]") {
  json doc = dgx_cluster(1, "analytical");
  doc["workload"] = {{"kind", "training"}, {"model", {{"preset", "llama2-70b"}, {"layers", 8}}},
                     {"parallel", {{"tp", 1}, {"dp", 8}}}, {"batch", {{"global", 8}}}};
  const json t = run_summary(doc)["training"];
  CHECK(t["fits"] == false);
  CHECK(t["memory"]["gpu_fits"] == false);
  CHECK(t["memory_per_gpu_bytes"].get<double>() > 80e9);
  CHECK(t["step_time_s"].get<double>() > 0);
}

}  // namespace
}  // namespace cs::scenario::test
