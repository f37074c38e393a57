// workload.kind "training": the keys, their defaults, and errors at their JSON paths.
#include "sim/compute/gpu_catalog.hpp"
#include "training_scenarios.hpp"

namespace cs::scenario::test {
namespace {

json training_doc(json workload) {
  json doc = free_node(8);
  workload["kind"] = "training";
  doc["workload"] = std::move(workload);
  return doc;
}

TEST_CASE("a preset with overrides, and the plan's defaults", "[training][parse]") {
  const Config c = parse_config(training_doc(
      {{"model", {{"preset", "llama3-70b"}, {"layers", 8}, {"seq_len", 4096}}}, {"parallel", {{"tp", 8}}}}));
  const auto& w = c.training.workload;
  CHECK(c.workload == WorkloadKind::training);
  CHECK(w.model.name == "llama3-70b");
  CHECK(w.model.layers == 8);
  CHECK(w.model.seq_len == 4096);
  CHECK(w.model.hidden == 8192);  // from the preset
  CHECK(w.model.kv_heads == 8);
  CHECK(w.model.mlp == work::MlpKind::swiglu);
  CHECK(w.parallel.dp == 1);  // the GPUs tp x pp x cp leave
  CHECK(w.parallel.schedule == work::Schedule::one_f_one_b);
  CHECK(w.batch.global == 0);  // micro x dp
  CHECK(w.precision == work::Precision::bf16);
  CHECK(w.fp8_recipe == work::Fp8Recipe::delayed);
  CHECK(c.warnings.empty());
  CHECK(c.training.replicas == ReplicaMode::automatic);
  CHECK(c.training.step.graph.gradient_bytes == 2);
  CHECK(c.training.step.graph.optimizer == work::OptimizerKind::megatron);  // NVIDIA's recipes
  CHECK(c.training.step.host.pcie_bandwidth_Bps == c.topology.node.pcie_bandwidth_Bps);
  // Compute slows while communication runs, by the measured share (0.16: 18.9% longer).
  CHECK(c.training.step.executor.comm_compute_share == compute::kMeasuredCommComputeShare);
  CHECK(1 / (1 - compute::kMeasuredCommComputeShare) == Approx(1.189).epsilon(0.002));
}

TEST_CASE("tensor-parallel overlap defaults to what the chip's training stack does", "[training][parse]") {
  // NVIDIA's recipes overlap tp collectives (userbuffers); AWS Neuron's compiler cannot
  // (GpuSpec::overlaps_tp_comm): a Trainium plan runs them between the blocks unless the file says.
  auto plan = [](const char* gpu, json parallel) {
    json doc = training_doc({{"model", {{"preset", "llama3-8b"}, {"layers", 2}}}, {"parallel", std::move(parallel)}});
    doc["hardware"] = {{"gpu", gpu}, {"node", {{"gpus", 16}}}};
    return parse_config(doc).training.workload.parallel;
  };
  const json sp = {{"tp", 4}, {"sequence_parallel", true}};
  CHECK(plan("H100-SXM", sp).tp_comm_overlap);
  for (const char* neuron : {"Trainium1", "Trainium2", "Inferentia2"}) {
    CHECK_FALSE(compute::find_gpu(neuron)->overlaps_tp_comm);
    CHECK_FALSE(plan(neuron, sp).tp_comm_overlap);
  }
  json asked = sp;
  asked["tp_comm_overlap"] = true;
  CHECK(plan("Trainium1", asked).tp_comm_overlap);  // a file that names it is taken at its word
  CHECK(plan("Trainium1", sp).overlap_grad_reduce);  // the other overlaps keep their defaults
}

TEST_CASE("a model by its shape, and the simulation keys", "[training][parse]") {
  const Config c = parse_config(training_doc({{"model", {{"layers", 4}, {"hidden", 256}, {"heads", 8}, {"kv_heads", 2},
                                                         {"mlp", "swiglu"}, {"seq_len", 128}, {"vocab", 1000},
                                                         {"experts", 8}, {"top_k", 2}, {"capacity_factor", 1.25}}},
                                              {"parallel", {{"tp", 2}, {"pp", 2}, {"ep", 2}, {"schedule", "interleaved"},
                                                            {"zero", 2}, {"offload", "optimizer"}}},
                                              {"batch", {{"global", 16}, {"micro", 2}}},
                                              {"precision", "fp8"},
                                              {"fp8_recipe", "current"},
                                              {"recompute", "selective"},
                                              {"efficiency", {{"gemm", 0.7}, {"memory", 0.9}}},
                                              {"measured", {{"forward/qkv", "1.5ms"}, {"host/adam", "20ms"}}},
                                              {"comm_compute_share", 0.12},
                                              {"gradient_bytes", 4},
                                              {"optimizer", "megatron_no_grad_buffer"},
                                              {"bucket_size", 1e6},
                                              {"one_replica", false}}));
  const auto& w = c.training.workload;
  CHECK(w.model.name == "custom");
  CHECK(w.model.moe.experts == 8);
  CHECK(w.model.moe.capacity_factor == 1.25);
  CHECK(w.parallel.dp == 2);
  CHECK(w.parallel.virtual_stages == 2);  // interleaved's default
  CHECK(w.parallel.offload == work::Offload::optimizer);
  CHECK(w.precision == work::Precision::fp8);
  CHECK(w.fp8_recipe == work::Fp8Recipe::current);
  const auto& o = c.training.step;
  CHECK(o.efficiency.gemm == 0.7);
  // `memory` alone is the user's machine: the activation, the loss and the unfused attention
  // core take it too.
  CHECK(o.efficiency.activation_memory == 0.9);
  CHECK(o.efficiency.loss_memory == 0.9);
  CHECK(o.efficiency.attention_memory == 0.9);
  CHECK(o.efficiency.measured_s.at("forward/qkv") == Approx(1.5e-3));
  CHECK(o.efficiency.measured_s.at("host/adam") == Approx(20e-3));
  CHECK(o.executor.comm_compute_share == 0.12);
  CHECK(o.graph.gradient_bytes == 4);
  CHECK(o.graph.optimizer == work::OptimizerKind::megatron_no_grad_buffer);
  CHECK(o.memory.gradient_bytes == 4);
  CHECK(o.graph.bucket_params == 1e6);
  CHECK(c.training.replicas == ReplicaMode::all);
}

TEST_CASE("training errors name their key", "[training][parse]") {
  struct Case {
    json workload;
    const char* path;
    const char* contains;
  };
  const json shape = tiny_model(4);
  const Case cases[] = {
      {{{"model", {{"preset", "lama3-8b"}}}}, "workload.model.preset", "unknown model"},
      {{{"model", {{"layers", 4}}}}, "workload.model.hidden", "required without a preset"},
      {json::object(), "workload.model", "required"},
      {{{"model", shape}, {"parallel", {{"tp", 2}, {"dp", 2}}}}, "workload.parallel.dp", "but the cluster has 8 GPUs"},
      {{{"model", shape}, {"parallel", {{"tp", 8}}}}, "workload.parallel.tp", "heads (4) must be a multiple of tp (8)"},
      {{{"model", shape}, {"parallel", {{"pp", 8}}}}, "workload.parallel.pp", "not a multiple"},
      {{{"model", shape}, {"parallel", {{"ep", 2}}}}, "workload.parallel.ep", "needs an MoE model"},
      {{{"model", shape}, {"parallel", {{"pp", 2}, {"layer_split", {1, 2}}}}}, "workload.parallel.layer_split",
       "sum to 3"},
      {{{"model", shape}, {"parallel", {{"order", "tp-dp-pp-cp-ep"}}}}, "workload.parallel.order", "adjacent"},
      {{{"model", shape}, {"batch", {{"global", 12}, {"micro", 1}}}, {"parallel", {{"dp", 8}}}},
       "workload.batch.global", "multiple of micro x dp"},
      {{{"model", shape}, {"precision", "fp32"}}, "workload.precision", "not implemented yet"},
      {{{"model", shape}, {"measured", {{"forward/qkvv", 1e-3}}}}, "workload.measured.forward/qkvv",
       "no op \"forward/qkvv\""},
      {{{"model", shape}, {"one_replica", "yes"}}, "workload.one_replica", "expected \"auto\", or true or false"},
      {{{"model", shape}, {"efficiency", {{"gemm", 0}}}}, "workload.efficiency.gemm", "from 0.001 to 1"},
      {{{"model", shape}, {"efficiency", {{"kernel_overhead", "-1us"}}}}, "workload.efficiency.kernel_overhead", ""},
      {{{"model", shape}, {"efficiency", {{"loss_memory", 1.5}}}}, "workload.efficiency.loss_memory", "from 0.001 to 1"},
      {{{"model", shape}, {"efficiency", {{"attention_memory", 0}}}}, "workload.efficiency.attention_memory",
       "from 0.001 to 1"},
      {{{"model", shape}, {"parallel", {{"tp_comm_overlap", "on"}}}}, "workload.parallel.tp_comm_overlap", ""},
      {{{"model", shape}, {"parallel", {{"overlap_grad_reduce", 1}}}}, "workload.parallel.overlap_grad_reduce", ""},
      {{{"model", shape}, {"parallel", {{"overlap_p2p", "no"}}}}, "workload.parallel.overlap_p2p", ""},
      {{{"model", shape}, {"precision", "fp8"}, {"fp8_recipe", "tensor"}}, "workload.fp8_recipe", "\"current\""},
      {{{"model", shape}, {"optimizer", "adamw"}}, "workload.optimizer", "\"megatron_no_grad_buffer\""},
      // A measured time faster than the op's FLOPs at the dense peak (an MFU above 1).
      {{{"model", shape}, {"measured", {{"forward/qkv", 1e-15}}}}, "workload.measured.forward/qkv",
       "the op's FLOPs at the GPU's dense peak"},
  };
  for (const auto& c : cases) {
    INFO(c.workload.dump());
    const InputError e = scenario_error(training_doc(c.workload));
    CHECK(e.path() == c.path);
    CHECK_THAT(e.expected(), Catch::Contains(c.contains));
  }
  // The measured key's hint is the nearest op.
  CHECK(scenario_error(training_doc({{"model", shape}, {"measured", {{"forward/qkvv", 1e-3}}}})).hint() ==
        "did you mean \"forward/qkv\"?");
  // fp8 on a GPU without fp8 tensor cores.
  json a100 = training_doc({{"model", shape}, {"precision", "fp8"}});
  a100["hardware"]["gpu"] = "A100-80GB";
  const InputError e = scenario_error(a100);
  CHECK(e.path() == "workload.precision");
  CHECK_THAT(e.expected(), Catch::Contains("A100-80GB has no tensor cores for fp8"));
  // A custom GPU gives no fp8 peak nor fp8 GEMM ceiling: fp8 says which it lacks.
  json custom = training_doc({{"model", shape}, {"precision", "fp8"}});
  custom["hardware"]["gpu"] = {{"name", "my-gpu"}, {"peak_flops", 1e15}, {"hbm_bandwidth", "3TB/s"}, {"memory", "80GB"}};
  const InputError c = scenario_error(custom);
  CHECK(c.path() == "workload.precision");
  CHECK_THAT(c.expected(), Catch::Contains("fp8 peak and fp8 GEMM efficiency"));
  CHECK_THAT(c.hint(), Catch::Contains("\"H100-SXM\""));
  // tp across nodes: refused unless allowed.
  json wide = training_doc({{"model", shape}, {"parallel", {{"tp", 4}}}});
  wide["hardware"]["node"]["gpus"] = 2;
  wide["topology"] = {{"kind", "fat_tree"}, {"nodes", 4}};
  const InputError across = scenario_error(wide);
  CHECK(across.path() == "workload.parallel.tp");
  CHECK_THAT(across.expected(), Catch::Contains("larger than a node (2 GPUs)"));
  wide["workload"]["parallel"]["allow_tp_across_nodes"] = true;
  CHECK(parse_config(wide).training.workload.parallel.tp == 4);
}

TEST_CASE("a GPU optimizer under CPU offload is a warning naming the key", "[training][parse]") {
  const json offload = {{"model", tiny_model(4)}, {"parallel", {{"zero", 2}, {"offload", "optimizer"}}},
                        {"optimizer", "megatron"}};
  const Config c = parse_config(training_doc(offload));
  REQUIRE(c.warnings.size() == 1);
  CHECK_THAT(c.warnings[0], Catch::Contains("workload.optimizer: has no effect with parallel.offload \"optimizer\""));
  // Without offload the key is read: no warning.
  CHECK(parse_config(training_doc({{"model", tiny_model(4)}, {"optimizer", "fused"}})).warnings.empty());
}

TEST_CASE("overlap_tp_wgrad under zb_h1 is a warning naming the key", "[training][parse]") {
  // zb_h1 runs the weight gradients in a pass of their own: no collective waits for them.
  json parallel = {{"tp", 2}, {"pp", 2}, {"schedule", "zb_h1"}, {"overlap_tp_wgrad", false}};
  const Config c = parse_config(training_doc({{"model", tiny_model(4)}, {"parallel", parallel}}));
  REQUIRE(c.warnings.size() == 1);
  CHECK_THAT(c.warnings[0],
             Catch::Contains("workload.parallel.overlap_tp_wgrad: has no effect with parallel.schedule \"zb_h1\""));
  // 1F1B runs them in the backward: the key is read.
  parallel["schedule"] = "1f1b";
  CHECK(parse_config(training_doc({{"model", tiny_model(4)}, {"parallel", parallel}})).warnings.empty());
}

TEST_CASE("an fp8 recipe in a 16-bit run is a warning naming the key", "[training][parse]") {
  const Config c = parse_config(training_doc({{"model", tiny_model(4)}, {"fp8_recipe", "current"}}));
  REQUIRE(c.warnings.size() == 1);
  CHECK_THAT(c.warnings[0], Catch::Contains("workload.fp8_recipe: has no effect with precision \"bf16\""));
}

TEST_CASE("the schema's GPU list is the catalog", "[training][schema]") {
  const json schema = json::parse(schema_text());
  const json& names = schema["properties"]["hardware"]["properties"]["gpu"]["oneOf"][0]["enum"];
  std::vector<std::string> listed = names.get<std::vector<std::string>>();
  CHECK(listed == compute::gpu_names());
}

}  // namespace
}  // namespace cs::scenario::test
