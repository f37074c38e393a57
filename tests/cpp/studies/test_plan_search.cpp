// clustersim plan: every fitting plan screened, the best simulated as `clustersim run` would,
// ranked; the same for any number of threads.
#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "../world/training_scenarios.hpp"
#include "sim/studies/plan_search.hpp"

namespace cs::scenario::test {
using namespace cs::studies;
namespace {

// Llama 3 8B cut to 4 layers of 1,024 tokens on 2 DGX-like nodes (16 GPUs), 16 GB GPUs so
// that some plans do not fit.
json small_search() {
  return {{"hardware", {{"gpu", {{"name", "H100-SXM"}, {"memory", "16GB"}}},
                        {"node", {{"gpus", 8}, {"nics", 8}, {"nic_bandwidth", "400Gbps"}}}}},
          {"topology", {{"kind", "fat_tree"}, {"nodes", 2}, {"switch_radix", 16}, {"link_bandwidth", "400Gbps"}}},
          {"network", {{"model", "flow"}}},
          {"workload", {{"kind", "training"}, {"model", {{"preset", "llama3-8b"}, {"layers", 4}, {"seq_len", 1024}}},
                        {"parallel", {{"tp", 8}, {"dp", 2}}}, {"batch", {{"global", 8}, {"micro", 1}}}}}};
}

TEST_CASE("plan search: dropped, screened, refined, ranked, whatever the threads", "[training][plan]") {
  const Config config = parse_config(small_search());
  PlanSearchOptions one, two;
  one.refine = two.refine = 5;
  two.jobs = 2;
  // Progress (what `clustersim plan` turns into its estimate of the time left): every plan
  // screened is counted once, in order, then the refined ones.
  std::vector<std::pair<std::string, std::size_t>> screening, refining;
  std::size_t screening_total = 0, bounded = 0;
  double least_elapsed_s = 0;  // no Catch assertion inside: the callback runs on a worker thread
  two.progress = [&](const char* stage, std::size_t done, std::size_t total, double elapsed_s) {
    least_elapsed_s = std::min(least_elapsed_s, elapsed_s);
    if (std::string(stage) == "bounding") {
      bounded = std::max(bounded, done);
    } else if (std::string(stage) == "screening") {
      screening.emplace_back(stage, done);
      screening_total = total;
    } else {
      refining.emplace_back(stage, done);
    }
  };
  const PlanSearch a = search_plans(config, one);
  const PlanSearch b = search_plans(config, two);
  REQUIRE(a.rows == b.rows);
  CHECK(least_elapsed_s >= 0);
  REQUIRE(screening.size() >= 2);
  CHECK(screening.front().second == 0);
  CHECK(screening.back().second == a.screened);
  CHECK(screening_total >= a.screened);
  CHECK(bounded == a.rows.size());
  for (std::size_t i = 1; i < screening.size(); ++i) CHECK(screening[i].second > screening[i - 1].second);
  REQUIRE_FALSE(refining.empty());
  CHECK(refining.back().second == a.refined);
  CHECK(a.dropped > 0);
  CHECK(a.valid == a.dropped + a.rows.size());
  CHECK(a.refined >= 5);
  CHECK(a.screened >= a.refined);
  CHECK(a.screened < a.rows.size());  // the bound spares some plans their screening
  double last = 1e300;
  for (std::size_t i = 0; i < a.rows.size(); ++i) {
    const json& r = a.rows[i];
    CHECK(r["rank"] == i + 1);
    CHECK(r["tokens_per_s"].get<double>() <= last);
    last = r["tokens_per_s"].get<double>();
    CHECK(r["memory_per_gpu_bytes"].get<double>() <= 16e9);
    // Contention only slows a step: the network's throughput never beats the screening's.
    if (r["simulation"] != "bound")
      CHECK(r["tokens_per_s"].get<double>() <= r["screening_tokens_per_s"].get<double>() * (1 + 1e-12));
  }
  for (std::size_t i = 0; i < 5; ++i) CHECK(a.rows[i]["simulation"] == "network");
  // No plan left screened or bounded promises more than the fifth best network figure.
  for (const auto& r : a.rows)
    if (r["simulation"] != "network") CHECK(r["tokens_per_s"].get<double>() * (1 + kScreeningMargin) <= a.rows[4]["tokens_per_s"].get<double>());

  // The best plan, run as a scenario, gives the same step.
  json doc = small_search();
  const json& best = a.rows[0];
  doc["workload"]["parallel"] = {{"tp", best["tp"]}, {"pp", best["pp"]}, {"dp", best["dp"]}, {"cp", best["cp"]},
                                 {"zero", best["zero"]}, {"sequence_parallel", best["sequence_parallel"]},
                                 {"schedule", best["schedule"]}, {"virtual_stages", best["virtual_stages"]}};
  doc["workload"]["batch"]["micro"] = best["micro_batch"];
  doc["workload"]["recompute"] = best["recompute"];
  const json t = run_summary(doc)["training"];
  CHECK(t["tokens_per_s"].get<double>() == Approx(best["tokens_per_s"].get<double>()).epsilon(1e-12));

  // The JSON and CSV views.
  const json j = plan_search_json(config, a, 3);
  CHECK(j["plans"].size() == 3);
  CHECK(j["plans_simulated"] == a.rows.size());
  const std::string csv = plan_search_csv(a);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == std::ptrdiff_t(a.rows.size() + 1));
  CHECK(csv.rfind("rank,tokens_per_s,step_time_s,", 0) == 0);
}

TEST_CASE("plan search narrowed by --only keeps exactly the matching plans, with the same numbers", "[training][plan]") {
  const Config config = parse_config(small_search());
  PlanSearchOptions all, only;
  all.refine = only.refine = 0;  // screening: a plan's row does not depend on the others
  only.space = plan_space({"schedule=1f1b,zb_h1", "zero=1", "recompute=selective", "micro=1"});
  const PlanSearch a = search_plans(config, all);
  const PlanSearch b = search_plans(config, only);
  REQUIRE(!b.rows.empty());
  std::size_t matching = 0;
  for (const json& r : a.rows) {
    const bool match = (r["schedule"] == "1f1b" || r["schedule"] == "zb_h1") && r["zero"] == 1 &&
                       r["recompute"] == "selective" && r["micro_batch"] == 1;
    if (!match) continue;
    ++matching;
    const auto same = std::find_if(b.rows.begin(), b.rows.end(), [&](const json& x) {
      for (const char* k : {"tp", "pp", "dp", "cp", "ep", "schedule", "sequence_parallel"})
        if (x[k] != r[k]) return false;
      return true;
    });
    REQUIRE(same != b.rows.end());
    CHECK((*same)["tokens_per_s"] == r["tokens_per_s"]);
  }
  CHECK(matching == b.rows.size());
  for (const auto& [bad, text] : std::vector<std::pair<std::string, std::string>>{
           {"schedule=1F1B", "expected some of gpipe"}, {"zero=4", "from 0 to 3"}, {"zeros=1", "unknown restriction"},
           {"micro", "expected KEY=V1,V2"}, {"max_cp=1,2", "unknown restriction"}}) {
    try {
      plan_space({bad});
      FAIL("no error for " << bad);
    } catch (const InputError& e) {
      CHECK(e.path() == "--only");
      CHECK_THAT(std::string(e.what()), Catch::Contains(text));
    }
  }
}

// [heavy]: every plan of the space simulated on the network, the point of the case; the
// sanitized ctest leaves it out and runs the first case's bound, screening and refinement.
TEST_CASE("plan search's top ten are an exhaustive network simulation's top ten", "[training][plan][heavy]") {
  // Every plan refined (simulated whole on the network) against the search's bound, screening
  // and refinement of the few that could reach the top.
  const Config config = parse_config(small_search());
  PlanSearchOptions searched, exhaustive;
  searched.space = exhaustive.space = plan_space({"zero=1", "recompute=selective"});
  exhaustive.refine = 1 << 20;
  const PlanSearch s = search_plans(config, searched);
  const PlanSearch e = search_plans(config, exhaustive);
  REQUIRE(e.refined == e.rows.size());
  REQUIRE(e.rows.size() > 20);
  CHECK(s.refined < e.rows.size() / 2);
  CHECK(s.screened < e.rows.size());
  for (std::size_t i = 0; i < 10; ++i) CHECK(s.rows[i] == e.rows[i]);
  // A bound row's tokens/s is above what the network gives for that plan.
  for (const json& bounded : s.rows) {
    if (bounded["simulation"] != "bound") continue;
    for (const json& simulated : e.rows) {
      json a = bounded, b = simulated;
      for (const char* k : {"rank", "tokens_per_s", "step_time_s", "mfu", "model_tflops_per_gpu", "tflops_per_gpu",
                            "bubble_fraction", "compute_s", "exposed_comm_s", "simulation", "screening_tokens_per_s"})
        a.erase(k), b.erase(k);
      // Against the network, not the screening: gpipe's extrapolated screening can be too fast
      // (test_plan_screening.cpp), and the bound is then below it.
      INFO(bounded.dump() << " against " << simulated["tokens_per_s"] << " on the network");
      if (a == b) CHECK(bounded["tokens_per_s"].get<double>() * (1 + 1e-12) >= simulated["tokens_per_s"].get<double>());
    }
  }
}

TEST_CASE("plan search runs every plan with the file's overlaps, as run does", "[training][plan]") {
  // Overlaps belong to the training stack, not to a plan: a file (or a chip, AWS Neuron) that
  // cannot overlap tensor-parallel collectives has every searched plan run without it.
  json doc = small_search();
  doc["workload"]["parallel"]["tp_comm_overlap"] = false;
  PlanSearchOptions options;
  options.refine = 1;
  options.space = plan_space({"schedule=1f1b", "zero=1", "recompute=selective", "micro=1"});
  const PlanSearch overlapped = search_plans(parse_config(small_search()), options);
  const PlanSearch exposed = search_plans(parse_config(doc), options);
  REQUIRE(exposed.rows.size() == overlapped.rows.size());
  int moved = 0;
  for (const json& r : exposed.rows) {
    if (r["tp"] == 1 || r["sequence_parallel"] == false) continue;
    const auto same = std::find_if(overlapped.rows.begin(), overlapped.rows.end(), [&](const json& x) {
      for (const char* k : {"tp", "pp", "dp", "cp", "ep", "sequence_parallel"})
        if (x[k] != r[k]) return false;
      return true;
    });
    REQUIRE(same != overlapped.rows.end());
    INFO(r.dump());
    // Compared where both rows were simulated the same way (screened or refined): the gathers
    // and scatters between the blocks move the step (either way: pipelined chunks cost too).
    if ((*same)["simulation"] != r["simulation"]) continue;
    CHECK(r["tokens_per_s"] != (*same)["tokens_per_s"]);
    ++moved;
  }
  CHECK(moved > 0);
  // The best plan, run as a scenario with the file's overlaps, gives the same step.
  const json& best = exposed.rows[0];
  REQUIRE(best["simulation"] == "network");
  doc["workload"]["parallel"] = {{"tp", best["tp"]}, {"pp", best["pp"]}, {"dp", best["dp"]}, {"cp", best["cp"]},
                                 {"zero", best["zero"]}, {"sequence_parallel", best["sequence_parallel"]},
                                 {"schedule", best["schedule"]}, {"virtual_stages", best["virtual_stages"]},
                                 {"tp_comm_overlap", false}};
  doc["workload"]["batch"]["micro"] = best["micro_batch"];
  doc["workload"]["recompute"] = best["recompute"];
  CHECK(run_summary(doc)["training"]["tokens_per_s"].get<double>() ==
        Approx(best["tokens_per_s"].get<double>()).epsilon(1e-12));
}

TEST_CASE("tensor-parallel overlap costs its GEMM chunks' launches and the contention, nothing else", "[training][plan]") {
  // The search's tp 2 cp 8 plan: collectives of a few microseconds, so the overlap's pipelined
  // chunks cost about what it hides. Its compute, less what the overlapped transfers slow it,
  // grows by one launch gap for each extra GEMM chunk: qkv, proj, fc1 and fc2 forward and
  // their input gradients, (tp - 1) = 1 more each, 4 layers, 8 micro-batches; the attention
  // ring's 8 kernels and the norms are launched once either way.
  json doc = small_search();
  doc["workload"]["parallel"] = {{"tp", 2}, {"cp", 8}, {"dp", 1}, {"zero", 1}, {"sequence_parallel", true}};
  doc["workload"]["recompute"] = "selective";
  std::map<bool, json> step;
  for (bool overlap : {false, true}) {
    doc["workload"]["parallel"]["tp_comm_overlap"] = overlap;
    step[overlap] = run_summary(doc)["training"];
  }
  auto unslowed = [](const json& t) {
    return t["breakdown"]["compute_s"].get<double>() - t["breakdown"]["slowdown_s"].get<double>();
  };
  CHECK(unslowed(step[true]) - unslowed(step[false]) == Approx(8 * 4 * 8 * 1e-6).epsilon(1e-9));
  // What it hides is more: with the launch fixed the overlap is not slower here.
  CHECK(step[true]["tokens_per_s"].get<double>() > step[false]["tokens_per_s"].get<double>());
}

TEST_CASE("plan search needs a training scenario", "[training][plan]") {
  json doc = free_node(8);
  doc["workload"] = {{"kind", "collective"}};
  try {
    search_plans(parse_config(doc));
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.path() == "workload.kind");
  }
}

}  // namespace
}  // namespace cs::scenario::test
