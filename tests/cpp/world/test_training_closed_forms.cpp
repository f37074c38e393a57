// Training steps through the whole scenario path (file -> config -> the real communication
// layer -> summary) against closed forms: pipeline bubbles with uniform stages and free
// communication, model FLOPs, the ZeRO paper's memory, and data-parallel overlap.
#include "training_scenarios.hpp"

namespace cs::scenario::test {
namespace {

// A pipeline of pp stages (one GPU each) with m micro-batches, every layer 1 ms forward and
// 1 + 1 ms backward (input and weight gradients), everything else free.
json pipeline_doc(int pp, int m, const std::string& schedule, int v = 1) {
  json doc = free_node(pp);
  work::TrainingWorkload w;
  w.model = {.name = "tiny", .layers = 2 * pp * v, .hidden = 64, .heads = 4, .kv_heads = 4, .ffn_hidden = 256,
             .mlp = work::MlpKind::gelu, .seq_len = 32, .vocab = 128, .tied_embeddings = false, .bias = false,
             .learned_positions = false, .moe = {}, .source = ""};
  doc["workload"] = {{"kind", "training"},
                     {"model", tiny_model(2 * pp * v)},
                     {"parallel", {{"pp", pp}, {"schedule", schedule}, {"virtual_stages", v}}},
                     {"batch", {{"global", m}, {"micro", 1}}},
                     {"measured", uniform_layer_times(w, 1e-3, 1e-3, 1e-3)}};
  return doc;
}

double bubble(const json& doc) { return run_summary(doc)["training"]["bubble_fraction"].get<double>(); }

TEST_CASE("the simulated bubble is (p-1)/(m+p-1) for gpipe and 1f1b", "[training][bubble]") {
  for (const char* schedule : {"gpipe", "1f1b"})
    for (int p : {2, 4})
      for (int m : {1, 4, 8}) {
        INFO(schedule << " p " << p << " m " << m);
        CHECK(bubble(pipeline_doc(p, m, schedule)) == Approx(double(p - 1) / (m + p - 1)).epsilon(1e-6));
      }
}

TEST_CASE("the interleaved bubble is (p-1)/(v m + p - 1)", "[training][bubble]") {
  for (int p : {2, 4})
    for (int v : {2, 3})
      for (int m : {p, 2 * p}) {
        INFO("p " << p << " v " << v << " m " << m);
        CHECK(bubble(pipeline_doc(p, m, "interleaved", v)) == Approx(double(p - 1) / (v * m + p - 1)).epsilon(1e-6));
      }
}

TEST_CASE("ZB-H1's bubble is smaller than 1F1B's, and more micro-batches shrink every bubble", "[training][bubble]") {
  for (int p : {2, 4}) {
    double last_1f1b = 1, last_zb = 1;
    for (int m : {4, 8, 16}) {
      const double one_f = bubble(pipeline_doc(p, m, "1f1b"));
      const double zb = bubble(pipeline_doc(p, m, "zb_h1"));
      INFO("p " << p << " m " << m);
      CHECK(zb < one_f);
      CHECK(one_f < last_1f1b);
      CHECK(zb < last_zb);
      last_1f1b = one_f, last_zb = zb;
    }
  }
}

TEST_CASE("model FLOPs are 6 x parameters x tokens plus attention", "[training][flops]") {
  json doc = free_node(8);
  doc["workload"] = {{"kind", "training"},
                     {"model", {{"preset", "llama3-8b"}, {"layers", 4}, {"seq_len", 1024}}},
                     {"parallel", {{"tp", 2}, {"pp", 2}, {"sequence_parallel", true}}},
                     {"batch", {{"global", 8}, {"micro", 1}}}};
  for (const char* recompute : {"none", "full"}) {
    doc["workload"]["recompute"] = recompute;
    const json t = run_summary(doc)["training"];
    const double tokens = t["flops"]["tokens_per_step"].get<double>();
    CHECK(tokens == 8.0 * 1024);
    // 6 L h s per token: PaLM's 12 L h s (appendix B) over the causal half that is computed.
    const double attention = 6.0 * 4 * 4096 * 1024 * tokens;
    const double expected = 6 * t["model"]["active_matmul_parameters"].get<double>() * tokens + attention;
    CHECK(t["flops"]["model_per_step"].get<double>() == Approx(expected).epsilon(1e-12));
    const double model_tflops = expected / 8 / t["step_time_s"].get<double>() / 1e12;
    CHECK(t["model_tflops_per_gpu"].get<double>() == Approx(model_tflops).epsilon(1e-12));
    CHECK(t["mfu"].get<double>() == Approx(model_tflops * 1e12 / 989e12).epsilon(1e-12));
    // Recomputation adds executed FLOPs, never model FLOPs.
    if (std::string(recompute) == "full") CHECK(t["tflops_per_gpu"].get<double>() > t["model_tflops_per_gpu"].get<double>());
    else CHECK(t["tflops_per_gpu"].get<double>() == Approx(t["model_tflops_per_gpu"].get<double>()));
  }
}

TEST_CASE("model states reproduce the ZeRO paper's 7.5B on 64 GPUs through a scenario", "[training][memory]") {
  // Rajbhandari et al. 2020, Figure 1: Psi = 7.5 B, N_d = 64, K = 12: 120, 31.4, 16.6, 1.9 GB.
  // A GPT-style model of 36 layers of hidden 4096 and a vocabulary of 61,280 has Psi = 7.50 B.
  json doc = free_node(8);
  doc["topology"] = {{"kind", "fat_tree"}, {"nodes", 8}, {"link_bandwidth", 1e14}, {"link_latency", 0}};
  doc["hardware"]["node"]["nics"] = 8;
  doc["workload"] = {{"kind", "training"},
                     {"model", {{"layers", 36}, {"hidden", 4096}, {"heads", 32}, {"seq_len", 256}, {"vocab", 61280},
                                {"bias", true}, {"tied_embeddings", true}, {"mlp", "gelu"}}},
                     {"batch", {{"global", 64}, {"micro", 1}}}};
  const double paper[] = {120, 31.4, 16.6, 1.9};
  for (int zero = 0; zero <= 3; ++zero) {
    doc["workload"]["parallel"] = {{"zero", zero}};
    const json t = run_summary(doc)["training"];
    const double psi = t["model"]["parameters"].get<double>();
    CHECK(psi == Approx(7.5e9).epsilon(1e-3));
    const json& s = t["memory"]["per_stage"][0];
    const double states = s["parameters_bytes"].get<double>() + s["gradients_bytes"].get<double>() +
                          s["optimizer_bytes"].get<double>();
    const double exact[] = {16 * psi, 4 * psi + 12 * psi / 64, 2 * psi + 14 * psi / 64, 16 * psi / 64};
    INFO("ZeRO " << zero);
    CHECK(states == Approx(exact[zero]).epsilon(1e-12));
    CHECK(states / 1e9 == Approx(paper[zero]).margin(0.05));
    CHECK(t["plan"]["dp"] == 64);
  }
}

// Two GPUs of a PCIe workstation (25 GB/s links through the host, no latency, the wire
// alone), data parallelism over both, a gradient bucket per layer (8 layers); every layer's
// passes take `layer_s` each.
json overlap_doc(double layer_s) {
  json doc = {{"hardware", {{"gpu", "RTX-A5000"},
                            {"node", {{"gpus", 2}, {"fabric", "pcie"}, {"pcie_bandwidth", "25GB/s"}, {"pcie_latency", 0},
                                      {"nics", 1}}}}},
              {"topology", {{"kind", "single_node"}}},
              {"network", {{"model", "flow"}, {"protocol", "none"}}}};
  work::TrainingWorkload w;
  w.model = {.name = "mid", .layers = 8, .hidden = 1024, .heads = 8, .kv_heads = 8, .ffn_hidden = 4096,
             .mlp = work::MlpKind::gelu, .seq_len = 256, .vocab = 128, .tied_embeddings = false, .bias = false,
             .learned_positions = false, .moe = {}, .source = ""};
  doc["workload"] = {{"kind", "training"},
                     {"model", {{"layers", 8}, {"hidden", 1024}, {"heads", 8}, {"seq_len", 256}, {"vocab", 128}}},
                     {"parallel", {{"dp", 2}}},
                     {"batch", {{"global", 2}, {"micro", 1}}},
                     {"bucket_size", 1e6},  // one layer (12.6 M parameters) per bucket
                     {"grad_norm_sync", false},
                     {"measured", uniform_layer_times(w, layer_s, layer_s, layer_s)}};
  return doc;
}

TEST_CASE("long compute hides data-parallel reduction; short compute exposes it", "[training][overlap]") {
  const json long_run = run_summary(overlap_doc(50e-3))["training"];
  const json short_run = run_summary(overlap_doc(0))["training"];  // no compute at all
  const double params = long_run["model"]["parameters"].get<double>();
  // Every gradient (2 bytes) crosses GPU -> host -> GPU once in a 2-rank ring: S / B in all.
  const double all_reductions_s = params * 2 / 25e9;
  const double exposed_long = long_run["breakdown"]["exposed_comm_s"]["dp"].get<double>();
  const double exposed_short = short_run["breakdown"]["exposed_comm_s"]["dp"].get<double>();
  CHECK(exposed_short == Approx(all_reductions_s).epsilon(0.02));
  // With long compute only the last bucket (the first layer and the embedding) is left when the
  // backward ends: about an eighth of the reduction.
  CHECK(exposed_long < all_reductions_s / 6);
  CHECK(exposed_long > 0);
  CHECK(long_run["exposed_comm_s"].get<double>() == Approx(exposed_long));
  // Without overlap_grad_reduce every reduction waits for the backward's end: all exposed.
  json late = overlap_doc(50e-3);
  late["workload"]["parallel"]["overlap_grad_reduce"] = false;
  const json late_run = run_summary(late)["training"];
  CHECK(late_run["breakdown"]["exposed_comm_s"]["dp"].get<double>() == Approx(all_reductions_s).epsilon(0.02));
  CHECK(late_run["step_time_s"].get<double>() ==
        Approx(long_run["step_time_s"].get<double>() - exposed_long + all_reductions_s).epsilon(0.02));
}

TEST_CASE("model and executed FLOPs count attention's causal half: no MFU above 1 at long sequences",
          "[training][flops]") {
  // Llama 3 8B, 4 layers, tp 8, 2-4 M tokens a sequence: attention dominates; counted over the
  // whole s x s matrix the MFU came out at 1.02.
  json doc = free_node(8);
  for (int seq : {1 << 21, 1 << 22}) {
    doc["workload"] = {{"kind", "training"},
                       {"model", {{"preset", "llama3-8b"}, {"layers", 4}, {"seq_len", seq}}},
                       {"parallel", {{"tp", 8}, {"sequence_parallel", true}}},
                       {"batch", {{"global", 1}, {"micro", 1}}}};
    const json t = run_summary(doc)["training"];
    INFO("seq " << seq);
    CHECK(t["mfu"].get<double>() > 0.3);
    CHECK(t["mfu"].get<double>() < 0.75);  // below the attention kernels' own efficiency
    CHECK(t["tflops_per_gpu"].get<double>() * 1e12 < t["flops"]["peak_per_gpu"].get<double>());
  }
}

// Llama-like layers on two GPUs in tensor parallelism with sequence parallelism, over a slow
// link: the overlap of the gathers and scatters with compute emerges from the task graph.
json tensor_parallel_doc(bool overlap, bool p2p = true) {
  json doc = free_node(4);
  doc["hardware"]["node"]["gpu_bandwidth"] = "50GB/s";
  doc["workload"] = {{"kind", "training"},
                     {"model", {{"preset", "llama3-8b"}, {"layers", 4}, {"seq_len", 4096}}},
                     {"parallel", {{"tp", 2}, {"pp", 2}, {"sequence_parallel", true}, {"tp_comm_overlap", overlap},
                                   {"overlap_p2p", p2p}}},
                     {"batch", {{"global", 4}, {"micro", 1}}}};
  return doc;
}

TEST_CASE("tensor-parallel communication overlap and pipeline sends beside compute emerge from the graph",
          "[training][overlap]") {
  const json serial = run_summary(tensor_parallel_doc(false))["training"];
  const json overlapped = run_summary(tensor_parallel_doc(true))["training"];
  const double exposed_serial = serial["breakdown"]["exposed_comm_s"]["tp"].get<double>();
  const double exposed_overlapped = overlapped["breakdown"]["exposed_comm_s"]["tp"].get<double>();
  CHECK(exposed_serial > 0);
  // Pipelined in tp pieces: what stays exposed is the first and last piece of each collective
  // and what a piece takes beyond its chunk of compute.
  CHECK(exposed_overlapped < 0.6 * exposed_serial);
  CHECK(overlapped["step_time_s"].get<double>() < serial["step_time_s"].get<double>());
  // The same work either way: the FLOPs do not depend on the overlap.
  CHECK(overlapped["flops"]["executed_per_step"].get<double>() ==
        Approx(serial["flops"]["executed_per_step"].get<double>()).epsilon(1e-12));
  // Compute waiting for every pipeline send takes longer than sends beside compute.
  const json blocking = run_summary(tensor_parallel_doc(true, false))["training"];
  CHECK(blocking["step_time_s"].get<double>() > overlapped["step_time_s"].get<double>());
}

// Two layers in tensor parallelism of 2 without sequence parallelism, over a slow link: every
// all-reduce moves the same bytes (the micro-batch's activations), so each takes the same t.
// Only fc1 takes time (1 ms each pass), so of a layer's two backward all-reduces only the MLP's
// has a weight gradient to run beside.
json async_allreduce_doc(bool overlap_wgrad, double weight_s, double fc2_weight_s = 0) {
  json doc = free_node(2);
  doc["hardware"]["node"]["gpu_bandwidth"] = "50GB/s";
  work::TrainingWorkload w;
  w.model = {.name = "tiny", .layers = 2, .hidden = 64, .heads = 4, .kv_heads = 4, .ffn_hidden = 256,
             .mlp = work::MlpKind::gelu, .seq_len = 32, .vocab = 128, .tied_embeddings = false, .bias = false,
             .learned_positions = false, .moe = {}, .source = ""};
  w.parallel.tp = 2;
  doc["workload"] = {{"kind", "training"},
                     {"model", tiny_model(2)},
                     {"parallel", {{"tp", 2}, {"overlap_tp_wgrad", overlap_wgrad}}},
                     {"batch", {{"global", 1}, {"micro", 1}}},
                     {"measured", uniform_layer_times(w, 1e-3, 1e-3, weight_s)}};
  doc["workload"]["measured"]["backward_weight/fc2"] = fc2_weight_s;
  return doc;
}

TEST_CASE("an input gradient's all-reduce beside its weight gradient, or after it as Megatron-LM ran before",
          "[training][overlap]") {
  auto exposed_tp = [](bool overlap, double weight_s) {
    return run_summary(async_allreduce_doc(overlap, weight_s))["training"]["breakdown"]["exposed_comm_s"]["tp"]
        .get<double>();
  };
  const double serial = exposed_tp(false, 1e-3);
  REQUIRE(serial > 0);
  // After the weight gradient every all-reduce is exposed, however long the weight gradients:
  // the embedding's and 2 a layer forward, 2 a layer and the LM head's backward (4L + 2 = 10).
  CHECK(serial == Approx(exposed_tp(false, 0)).epsilon(1e-9));
  CHECK(serial == Approx(exposed_tp(true, 0)).epsilon(1e-9));  // nothing to hide behind
  // Beside it, each layer's MLP all-reduce hides behind fc1's 1 ms weight gradient: 8 of 10 left.
  CHECK(exposed_tp(true, 1e-3) == Approx(0.8 * serial).epsilon(1e-9));
  // fc2 (row-parallel) computes its weight gradient right after its input gradient, before fc1's
  // input gradient and its all-reduce: however long, nothing hides behind it.
  const json fc2_only = run_summary(async_allreduce_doc(true, 0, 1e-3))["training"];
  CHECK(fc2_only["breakdown"]["exposed_comm_s"]["tp"].get<double>() == Approx(serial).epsilon(1e-9));
  // ... and it ran: 1 ms a layer more than without it, all of it on the step's path.
  CHECK(fc2_only["step_time_s"].get<double>() ==
        Approx(run_summary(async_allreduce_doc(true, 0))["training"]["step_time_s"].get<double>() + 2e-3)
            .epsilon(1e-9));
}

// MoE layers without userbuffers: the replicated router's linear computes its weight gradient in
// the same backward step as its input gradient (Megatron-Core's RouterGatingLinearFunction), and
// the experts' linears leave their communication to the token dispatcher (explicit_expert_comm:
// no asynchronous collective), so neither weight gradient runs beside the all-to-all or the
// tensor-parallel all-reduce after it, whatever the tensor parallelism. 1 ms more of each per
// layer moves every collective later and hides none of it: the step 2 ms a layer longer, each
// group's exposed time the same.
TEST_CASE("an MoE layer's router and expert weight gradients hide no collective", "[training][overlap]") {
  for (int tp : {1, 2}) {
    auto run = [tp](double weight_s) {
      json doc = free_node(2 * tp);
      doc["hardware"]["node"]["gpu_bandwidth"] = "50GB/s";
      json moe = tiny_model(2);
      moe["experts"] = 4, moe["top_k"] = 2;
      doc["workload"] = {{"kind", "training"},
                         {"model", moe},
                         {"parallel", {{"tp", tp}, {"dp", 2}, {"ep", 2}}},
                         {"batch", {{"global", 2}, {"micro", 1}}},
                         {"measured",
                          {{"backward_weight/router", weight_s},
                           {"backward_weight/expert_fc1", weight_s},
                           {"backward_weight/expert_fc2", 0}}}};  // nothing else to hide behind
      return run_summary(doc)["training"];
    };
    INFO("tp " << tp);
    const json base = run(0), slow = run(1e-3);
    CHECK(slow["step_time_s"].get<double>() == Approx(base["step_time_s"].get<double>() + 2 * 2e-3).epsilon(1e-9));
    for (const char* group : {"tp", "ep"}) {
      if (tp == 1 && std::string(group) == "tp") continue;
      INFO(group);
      REQUIRE(base["breakdown"]["exposed_comm_s"][group].get<double>() > 0);
      CHECK(slow["breakdown"]["exposed_comm_s"][group].get<double>() ==
            Approx(base["breakdown"]["exposed_comm_s"][group].get<double>()).epsilon(1e-9));
    }
  }
}

// Context parallelism without tensor parallelism: the projection's weight gradient is computed
// right after its input gradient, before attention's backward and the K and V reduce-scatter
// after it; 1 ms more of it a layer hides none of that reduce-scatter.
TEST_CASE("the projection's weight gradient hides no context-parallel reduce-scatter", "[training][overlap]") {
  auto run = [](double proj_s) {
    json doc = free_node(2);
    doc["hardware"]["node"]["gpu_bandwidth"] = "50GB/s";
    doc["workload"] = {{"kind", "training"},
                       {"model", tiny_model(2)},
                       {"parallel", {{"cp", 2}, {"overlap_grad_reduce", false}}},
                       {"batch", {{"global", 1}, {"micro", 1}}},
                       {"measured", {{"backward_weight/proj", proj_s}}}};
    return run_summary(doc)["training"];
  };
  const json base = run(0), slow = run(1e-3);
  REQUIRE(base["breakdown"]["exposed_comm_s"]["cp"].get<double>() > 0);
  CHECK(slow["breakdown"]["exposed_comm_s"]["cp"].get<double>() ==
        Approx(base["breakdown"]["exposed_comm_s"]["cp"].get<double>()).epsilon(1e-9));
  CHECK(slow["step_time_s"].get<double>() == Approx(base["step_time_s"].get<double>() + 2e-3).epsilon(1e-9));
}

// The serial input-gradient collective (overlap_tp_wgrad false) in every backward the builder
// emits: a reduce-scatter under sequence parallelism, context parallelism's split attention, MoE
// layers (its experts' all-to-alls before it), full recomputation, the interleaved schedule, and
// zb_h1, whose weight gradients run in a pass of their own, and userbuffers (nothing to wait
// for: the same step).
// Each graph finishes (a collective waiting on a weight gradient that waits on it would leave it
// unfinished: simulate_training_step throws) and is never faster than the overlapped one.
TEST_CASE("the serial input-gradient collective finishes with every parallelism and schedule", "[training][overlap]") {
  json moe = tiny_model(4);
  moe["experts"] = 4, moe["top_k"] = 2;
  struct Case {
    const char* name;
    json parallel;
    json model;
    const char* recompute;
  };
  const Case cases[] = {
      {"sequence parallel", {{"tp", 2}, {"sequence_parallel", true}, {"tp_comm_overlap", false}}, tiny_model(2), "none"},
      {"cp 2", {{"tp", 2}, {"cp", 2}}, tiny_model(2), "none"},
      {"cp 2, sequence parallel", {{"tp", 2}, {"cp", 2}, {"sequence_parallel", true}, {"tp_comm_overlap", false}},
       tiny_model(2), "none"},
      {"MoE, ep 2", {{"tp", 2}, {"dp", 2}, {"ep", 2}}, moe, "none"},
      {"full recomputation", {{"tp", 2}}, tiny_model(2), "full"},
      {"interleaved", {{"tp", 2}, {"pp", 2}, {"schedule", "interleaved"}, {"virtual_stages", 2}}, tiny_model(4),
       "none"},
      {"zb_h1", {{"tp", 2}, {"pp", 2}, {"schedule", "zb_h1"}, {"sequence_parallel", true}, {"tp_comm_overlap", false}},
       tiny_model(4), "none"},
      // Userbuffers: the key is inert (the run warns so), MoE layers (not pipelined) included.
      {"MoE, userbuffers", {{"tp", 2}, {"dp", 2}, {"ep", 2}, {"sequence_parallel", true}, {"tp_comm_overlap", true}},
       moe, "none"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    auto step = [&](bool overlap) {
      json parallel = c.parallel;
      parallel["overlap_tp_wgrad"] = overlap;
      const int gpus = parallel["tp"].get<int>() * parallel.value("cp", 1) * parallel.value("pp", 1) *
                       parallel.value("dp", 1);
      json doc = free_node(gpus);
      doc["hardware"]["node"]["gpu_bandwidth"] = "50GB/s";
      doc["workload"] = {{"kind", "training"}, {"model", c.model}, {"parallel", parallel},
                         {"recompute", c.recompute}, {"batch", {{"global", 4 * parallel.value("dp", 1)}, {"micro", 1}}}};
      return run_summary(doc)["training"]["step_time_s"].get<double>();
    };
    const double serial = step(false), overlapped = step(true);
    CHECK(serial >= overlapped);
    const std::string name = c.name;
    if (name == "zb_h1" || name == "MoE, userbuffers") CHECK(serial == overlapped);
    else CHECK(serial > overlapped);
  }
}

}  // namespace
}  // namespace cs::scenario::test
