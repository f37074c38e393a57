#!/usr/bin/env python3
"""Regenerate the reference results (results/): for each flagship scenario, a short markdown
report with its headline numbers and plots, all computed now from the scenario files.

    PYTHONPATH=build/python /usr/bin/python3 scripts/reference_results.py [--out results] [names...]

Each report is a function below: it runs its scenarios through the Python package, writes its
plots as PNG next to the markdown, and returns the markdown. The README shows the headline
plot and links the reports."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "scenarios"


def _table(df: pd.DataFrame, floatfmt: str = "{:.4g}") -> str:
    """A DataFrame as a markdown table (no tabulate dependency: pandas' to_markdown needs it)."""
    cells = [[floatfmt.format(v) if isinstance(v, float) else str(v) for v in row] for row in df.itertuples(index=False)]
    lines = ["| " + " | ".join(map(str, df.columns)) + " |", "|" + "---|" * len(df.columns)]
    lines += ["| " + " | ".join(row) + " |" for row in cells]
    return "\n".join(lines)


def _save(fig, out: Path, name: str) -> str:
    fig.tight_layout()
    fig.savefig(out / name, dpi=110)
    plt.close(fig)
    return name


def nccl_tests(cs, out: Path) -> str:
    """All-reduce on one 8 x H100 node, 8 B to 8 GiB, every algorithm."""
    res = cs.run(SCENARIOS / "nccl_tests_sweep.json")
    df = pd.DataFrame(res.summary["collective"]["results"])
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for algorithm, d in df.groupby("requested_algorithm", sort=False):
        ax.plot(d["bytes"], d["busbw_GBps"], marker=".", label=algorithm)
    ax.axhspan(365, 370, color="grey", alpha=0.3, label="published ring (365-370)")
    ax.axhspan(476, 480, color="tan", alpha=0.4, label="published NVLS (476-480)")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("busbw (GB/s)")
    ax.set_title("all_reduce on 8 x H100 (one node)")
    ax.legend(fontsize=8)
    plot = _save(fig, out, "nccl_tests.png")
    largest = df[df["bytes"] == df["bytes"].max()][["requested_algorithm", "algorithm", "protocol", "time_s", "busbw_GBps"]]
    return f"""# all_reduce on one 8 x H100 node

`clustersim run scenarios/nccl_tests_sweep.json`: nccl-tests' all_reduce_perf from 8 B to 8 GiB
for the ring, NCCL's tree (on one node a chain through its GPUs), NVLS and NCCL's own choice
(`auto`), each size at the protocol NCCL's tuner would pick.

![busbw against size]({plot})

At 8 GiB:

{_table(largest)}

Published: ring 365-370 GB/s (NVIDIA/nccl #1455, nccl-tests #212), NVLS 476-480 GB/s (Azure ND
H100 v5, nccl-tests #212).
"""


def fabric_comparison(cs, out: Path) -> str:
    """Fat-tree vs dragonfly at 1,024 GPUs (clustersim compare)."""
    cmp = cs.compare([SCENARIOS / "compare_fat_tree_1k.json", SCENARIOS / "compare_dragonfly_1k.json"],
                     [SCENARIOS / "compare_fat_tree_1k.json", SCENARIOS / "compare_all_to_all.json"], jobs=2)
    fig, ax = plt.subplots(figsize=(6.5, 4))
    cmp.plot(ax)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_title("1,024 H100 GPUs: network cost per delivered GB/s")
    plot = _save(fig, out, "fabric_comparison.png")
    return f"""# Fat-tree or dragonfly, 1,024 GPUs

```
clustersim compare scenarios/compare_fat_tree_1k.json scenarios/compare_dragonfly_1k.json \\
    --workload scenarios/compare_fat_tree_1k.json --workload scenarios/compare_all_to_all.json
```

![cost per delivered GB/s]({plot})

```
{cmp.table}```
"""


def spot_training(cs, out: Path) -> str:
    """Llama 3 405B's pre-training on on-demand, mixed and spot fleets."""
    sc = cs.Scenario.load(SCENARIOS / "training_run_spot_405b.json")
    markets = cs.compare_markets(sc, mixes=[0, 0.7, 1], replications=40)
    fig, ax = plt.subplots(figsize=(6.5, 4))
    ax.errorbar(markets["days"], markets["cost_usd"] / 1e6, xerr=markets["days_ci95"],
                yerr=markets["cost_usd_ci95"] / 1e6, fmt="o", capsize=3)
    for _, r in markets.iterrows():
        ax.annotate(r["market"], (r["days"], r["cost_usd"] / 1e6), xytext=(5, 5), textcoords="offset points")
    ax.set_xlabel("days to train")
    ax.set_ylabel("cost ($M)")
    ax.set_title("Llama 3 405B on 2,048 nodes: days against dollars (95% CI)")
    plot = _save(fig, out, "spot_training.png")
    return f"""# Llama 3 405B on spot, mixed and on-demand fleets

`scenarios/training_run_spot_405b.json` through `cs.compare_markets` (40 replications per
market mix; Llama 3's failure rate and causes, AWS's reclaim notice, Daly's checkpoint interval).

![days against dollars]({plot})

{_table(markets)}
"""


def training_steps(cs, out: Path) -> str:
    """Where a GPU's step goes: GPT-3 175B and Llama 3 70B training steps on H100s."""
    gpt3 = cs.Scenario.load(SCENARIOS / "gpt3_175b_1024_h100.json")
    llama = cs.Scenario.load(SCENARIOS / "llama3_70b_256_h100.json")
    steps = {"GPT-3 175B, Megatron's plan, 1,024 GPUs": cs.run(gpt3), "Llama 3 70B, 256 GPUs": cs.run(llama)}
    fig, ax = plt.subplots(figsize=(9, 2.8))
    cs.step_breakdown(steps, ax=ax)
    plot = _save(fig, out, "training_steps.png")
    breakdown = pd.concat({name: r.step.set_index("component")["seconds"] for name, r in steps.items()}, axis=1)
    breakdown = breakdown[(breakdown > 0).any(axis=1)].reset_index()
    return f"""# Where a GPU's training step goes

One optimizer step simulated on the scenario's fabric (flow model), default efficiencies. How
these defaults compare with NVIDIA's and the Megatron-LM papers' published throughput, row by
row: [validation](validation.md).

Where a GPU's step goes in the two shipped files (bf16):

![step breakdown]({plot})

{_table(breakdown)}
"""


def validation(cs, out: Path) -> str:
    """Every public measurement replayed with default settings: source, configuration, measured, simulated, ratio."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from validation_serving import jetstream_section, neuron_section, serving_section, vllm_tpu_section
    from validation_layer_time import layer_section
    from validation_nccl import nccl_section
    from validation_training import training_section

    return f"""# Validation against public measurements

Each row is a published measurement replayed through clustersim with catalog defaults and the
configuration as published, no per-case fitting; the ratio is simulated over measured.

{training_section(cs)}
{layer_section(cs)}

{nccl_section(cs)}

{serving_section(cs)}
{neuron_section(cs)}
{jetstream_section(cs)}
{vllm_tpu_section(cs)}"""


AUTOSCALING_REPLICATIONS = 5


def autoscaling(cs, out: Path) -> str:
    """A day of LLM serving with the HPA: replicas, latency and cost over time (the scenario's
    seed), and the day's figures as mean ± 95% interval over independent seeds."""
    sc = cs.Scenario.load(SCENARIOS / "serving_llm_diurnal_hpa.json")
    res = cs.run(sc)
    plot = _save(cs.serving_plot(res), out, "autoscaling.png")
    s = res.summary["serving"]
    keys = ["requests", "replicas_mean", "replicas_max", "latency_p50_s", "latency_p99_s", "slo_attainment", "cost_usd"]
    n = AUTOSCALING_REPLICATIONS
    r = cs.run(sc.copy().set("run.replications", n)).summary["serving"]
    digits = {"requests": 0, "replicas_max": 1, "slo_attainment": 4, "cost_usd": 1}
    over_seeds = {k: _pm(r[k], digits=digits.get(k, 3)) for k in keys}
    return f"""# A day of LLM serving with the HPA

`scenarios/serving_llm_diurnal_hpa.json`: Llama 3 8B on one H100 per replica, diurnal arrivals
(mean 40 requests/s, 1.6x at 14:00), the Kubernetes HPA on 16 concurrent requests per replica.

![replicas, latency, cost]({plot})

The day drawn above (the scenario's seed):

{_table(pd.DataFrame([{k: s[k] for k in keys}]))}

The same day over {n} independent seeds (`run.replications`), mean ± 95% interval:

{_table(pd.DataFrame([over_seeds]))}
"""


def _pm(v, scale: float = 1.0, digits: int = 2) -> str:
    """A replicated summary number ({"mean", "ci95"}) as "mean ± ci95", scaled and rounded."""
    return f"{v['mean'] / scale:.{digits}f} ± {v['ci95'] / scale:.{digits}f}"


SHARED_CLUSTER_REPLICATIONS = 10


def shared_cluster(cs, out: Path) -> str:
    """Four teams sharing 512 GPUs: waits per job class, with and without an urgent queue that preempts."""
    n = SHARED_CLUSTER_REPLICATIONS
    runs = {}
    for setup, name in (("no urgent queue", "jobs_four_teams.json"), ("urgent queue (preempts)", "jobs_four_teams_urgent.json")):
        sc = cs.Scenario.load(SCENARIOS / name)
        runs[setup] = cs.run(sc.set("run.replications", n)).summary["jobs"]
    overall, classes, queues = [], [], []
    for setup, j in runs.items():
        overall.append({"setup": setup, "jobs completed": _pm(j["completed"], digits=0),
                        "utilization": _pm(j["utilization"], digits=3),
                        "mean wait (h)": _pm(j["wait_mean_s"], 3600), "p95 wait (h)": _pm(j["wait_p95_s"], 3600),
                        "preemptions": _pm(j["preemptions"], digits=0), "lost GPU-hours": _pm(j["lost_gpu_hours"], digits=0),
                        "cost ($M)": _pm(j["cost_usd"], 1e6, 3)})
        # Per job class (the urgent evaluations are a class either way, a queue only in one).
        for cls, c in sorted(j["classes"].items()):
            classes.append({"setup": setup, "class": cls, "jobs completed": _pm(c["completed"], digits=0),
                            "mean wait (h)": _pm(c["wait_mean_s"], 3600, 3), "p95 wait (h)": _pm(c["wait_p95_s"], 3600),
                            "mean": c["wait_mean_s"]["mean"] / 3600, "ci95": c["wait_mean_s"]["ci95"] / 3600})
        # Chargeback per team: GPU-hours, share of the cluster's GPU-time against the quota, dollars.
        for q, d in sorted(j["queues"].items()):
            quota = d.get("quota")
            queues.append({"setup": setup, "queue": q, "GPU-hours": _pm(d["busy_gpu_hours"], digits=0),
                           "share of the cluster": _pm(d["cluster_share"], digits=3),
                           "quota": "-" if quota is None else f"{quota['mean']:.2f}",
                           "cost ($k)": _pm(d["cost_usd"], 1e3, 0), "mean wait (h)": _pm(d["wait_mean_s"], 3600)})
    per_class = pd.DataFrame(classes)
    means = per_class.pivot(index="class", columns="setup", values="mean")[list(runs)]
    errors = per_class.pivot(index="class", columns="setup", values="ci95")[list(runs)]
    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    means.plot.bar(ax=ax, rot=0, yerr=errors, capsize=3)
    ax.set_yscale("log")
    ax.set_ylabel("mean wait (hours, log)")
    ax.set_title(f"512 GPUs: waits per job class ({n} seeds, 95% CI)")
    plot = _save(fig, out, "shared_cluster.png")
    llm = {setup: _pm(j["queues"]["llm"]["wait_mean_s"], 3600, 1) for setup, j in runs.items()}
    (a, b) = (j["queues"]["llm"]["wait_mean_s"] for j in runs.values())
    verdict = ("the intervals overlap, so these seeds do not show that the urgent queue costs the llm team wait "
               "(a paired comparison at common seeds, `clustersim sweep --paired`, is the sharper test)"
               if abs(a["mean"] - b["mean"]) <= a["ci95"] + b["ci95"] else
               "the intervals do not overlap: the urgent queue costs the llm team wait")
    return f"""# Four teams sharing 512 GPUs

`scenarios/jobs_four_teams.json` and `scenarios/jobs_four_teams_urgent.json`: 64 nodes of 8
H100s, three weeks of jobs from four teams (quotas 40/30/20/10) under Slurm-style fair share
with EASY backfill and topology-aware placement; 5% of the arrivals are urgent 64-GPU
evaluations, queued with the llm team's jobs, or in a queue of their own that preempts.

Every figure is the mean over {n} replications (seeds 1 to {n}) with its 95% confidence
interval (Student's t): one seed is not enough here. The llm team's queue waits
{llm["no urgent queue"]} h on average without the urgent queue and {llm["urgent queue (preempts)"]} h with
it: {verdict}.

![mean wait per job class]({plot})

{_table(pd.DataFrame(overall))}

Per job class (the jobs completed in the three weeks; a wait is all the time a job spent
pending):

{_table(per_class.drop(columns=["mean", "ci95"]))}

Chargeback per team (queue): its GPU-hours, its share of the cluster's GPU-time against its
quota, and its part of the cluster's cost (the cost split by busy GPU-time, idle capacity
charged pro rata):

{_table(pd.DataFrame(queues))}
"""


# The planner's comparison (docs/python.md#reference-results): every accelerator the catalog has, in every
# market the data files price it in. Training needs a fabric the step is simulated on: a TPU slice
# of 64 chips (3D torus on v5p, 2D on v5e/v6e: docs/topologies.md), else 64 accelerators on a fat-tree
# of their servers (8 GPUs, or 16 Trainium chips, per node).
ACCELERATORS = ["H100-SXM", "H200", "MI300X", "TPU-v5e", "TPU-v5p", "TPU-v6e", "Trainium1", "Trainium2", "Inferentia2"]
COST_MODELS = {"Llama 3 8B": "llama3-8b", "Llama 3 70B": "llama3-70b"}
SERVING_RATE = {"llama3-8b": 20.0, "llama3-70b": 5.0}   # requests/s offered to the fleet
TRAINING_CHIPS = 64
TRAINING_STEPS = 20000                                   # 20,000 steps of 128 sequences
SLICE_SHAPES = {"TPU-v5p": [4, 4, 4], "TPU-v5e": [8, 8], "TPU-v6e": [8, 8]}
CHIPS_PER_NODE = {"Trainium1": 16, "Trainium2": 16}
SERVING_ONLY = {"Inferentia2"}   # AWS sells Inferentia for inference only (its trn instances train)
# Each market as the fleet section that buys it; "owned" and "serverless" use no catalog instance.
MARKETS = {"owned": {"ownership": {}}, "reserved": {"market": "reserved"}, "on_demand": {"market": "on_demand"},
           "spot": {"market": "spot"}, "serverless": {"market": "serverless"}}


def _first_line(err: Exception) -> str:
    return str(err).splitlines()[0].removeprefix("error: ")


def _instance(gpu: str):
    """The first entry of data/instance_prices.json holding `gpu` (the simulator's own default rule),
    and what each market it prices rests on: "listed", or "estimate" where the file says its
    figure is not a provider's list price (a market it omits is derived by a default discount)."""
    import json
    for name, inst in json.loads((ROOT / "data" / "instance_prices.json").read_text())["instances"].items():
        if inst["gpu"] == gpu:
            return name, {m: "estimate" if p["source"].startswith("estimate") else "listed"
                          for m, p in inst["usd_per_hour"].items()}
    return None, {}


def _serving_scenario(gpu, model, gpus, replicas, fleet):
    """Llama `model` served by `replicas` fixed replicas of `gpus` accelerators (or as many
    serverless replicas kept warm) under the steady load, bought as `fleet` says."""
    sc = {"name": f"cost_{gpu}_{model}", "seed": 1, "hardware": {"gpu": gpu},
          "workload": {"kind": "serving", "model": {"preset": model},
                       "arrivals": {"process": "poisson", "rate": f"{SERVING_RATE[model]}/s"},
                       "request": {"prompt_tokens": {"dist": "lognormal", "mean": 1000, "cv": 1.0},
                                   "output_tokens": {"dist": "lognormal", "mean": 200, "cv": 1.0},
                                   "max_prompt_tokens": 8192, "max_output_tokens": 2048},
                       "replica": {"gpus": gpus},
                       "slo": {"latency": "60s", "percentile": 99, "ttft": "2s", "tpot": "100ms"}},
          "fleet": dict(fleet), "run": {"until": "10min"}}
    if fleet.get("market") == "serverless":   # the platform's replicas, held warm at the sized count
        sc["fleet"]["serverless"] = {"min": replicas, "max": replicas}
    else:
        sc["fleet"]["autoscaler"] = {"policy": "fixed", "replicas": replicas}
        if fleet.get("market") == "reserved":   # a serving fleet commits replicas, not a market share
            sc["fleet"] = {"reserved": replicas, "autoscaler": sc["fleet"]["autoscaler"]}
    return sc


def _size_replica(cs, gpu, model, fleet):
    """The smallest replica (accelerators, tensor parallel) the simulator accepts, then the fewest
    replicas of it meeting the SLO at the offered load (doubling, then bisection). ValueError when
    no replica fits (every market), the simulator's ScenarioError when the market is refused."""
    reason = ""
    for gpus in (1, 2, 4, 8, 16):
        try:
            ok = lambda n: cs.run(_serving_scenario(gpu, model, gpus, n, fleet)).summary["serving"]["slo"]["met"]
            if ok(1):
                return gpus, 1
            lo, hi = 1, 2
            while not ok(hi):
                if hi >= 64:
                    raise ValueError(f"64 replicas of {gpus} do not meet the SLO")
                lo, hi = hi, hi * 2
            while hi - lo > 1:
                mid = (lo + hi) // 2
                lo, hi = (lo, mid) if ok(mid) else (mid, hi)
            return gpus, hi
        except cs.ScenarioError as err:
            if not _first_line(err).startswith("workload.replica.gpus"):
                raise   # the market's refusal (no price, not sold), not the replica's
            if "expected an integer" in str(err):
                break   # past the largest replica: keep the last memory refusal
            reason = _first_line(err)
    raise ValueError(reason)   # no replica fits, in any market


def _training_scenario(gpu, model, fleet):
    nodes = TRAINING_CHIPS // CHIPS_PER_NODE.get(gpu, 1 if gpu in SLICE_SHAPES else 8)
    topology = {"kind": "tpu_slice", "shape": SLICE_SHAPES[gpu]} if gpu in SLICE_SHAPES else {"kind": "fat_tree"}
    return {"name": f"cost_{gpu}_{model}", "seed": 1, "hardware": {"gpu": gpu},
            "topology": dict(topology, nodes=nodes), "network": {"model": "analytical"},
            "workload": {"kind": "training_run", "steps": TRAINING_STEPS,
                         "training": {"model": {"preset": model}, "parallel": {"tp": 1, "pp": 1, "dp": TRAINING_CHIPS, "zero": 3},
                                      "batch": {"global": 128, "micro": 2}, "precision": "bf16", "recompute": "full"}},
            "fleet": dict(fleet, nodes=nodes), "run": {}}


def accelerator_cost_tables(cs):
    """Cost per million output tokens served and per billion tokens trained, one row per accelerator,
    model and market the simulator accepts, and the combinations it refuses with its reason."""
    serving, training, skipped = [], [], []
    for gpu in ACCELERATORS:
        instance, listed = _instance(gpu)
        for label, model in COST_MODELS.items():
            sized, fits = None, True   # (accelerators, replicas) sized in the first market accepted
            for market, fleet in MARKETS.items():
                rented = market in ("reserved", "on_demand", "spot")
                if rented and instance is None:
                    reason = "no instance in data/instance_prices.json holds it"
                    skipped += [{"accelerator": gpu, "model": label, "task": t, "market": market, "reason": reason}
                                for t in ("serving", "training")]
                    continue
                fleet = dict(fleet, instance=instance) if rented else fleet
                basis = listed.get(market, "derived (default discount)") if rented else {
                    "owned": "data/ownership.json", "serverless": "per GPU-second"}[market]
                try:
                    if fits:
                        sized = sized or _size_replica(cs, gpu, model, fleet)
                        s = cs.run(_serving_scenario(gpu, model, *sized, fleet)).summary["serving"]
                        serving.append({"accelerator": gpu, "model": label, "market": market, "price": basis,
                                        "replica": f"{sized[1]} x {sized[0]}", "p99 TTFT (s)": s["slo"]["bounds"]["ttft"]["observed_s"],
                                        "$ per M output tokens": s["cost_per_million_tokens_usd"]})
                except cs.ScenarioError as err:
                    skipped.append({"accelerator": gpu, "model": label, "task": "serving", "market": market, "reason": _first_line(err)})
                except ValueError as err:
                    skipped.append({"accelerator": gpu, "model": label, "task": "serving", "market": "every market", "reason": str(err)})
                    fits = False
                if market == "serverless" or gpu in SERVING_ONLY:
                    continue   # serverless platforms bill requests, not training runs
                try:
                    t = cs.run(_training_scenario(gpu, model, fleet)).summary["training_run"]
                    training.append({"accelerator": gpu, "model": label, "market": market, "price": basis,
                                     "goodput": t["goodput"], "days": t["wall_time_s"] / 86400,
                                     "$ per B tokens": t["cost_per_billion_tokens_usd"]})
                except cs.ScenarioError as err:
                    skipped.append({"accelerator": gpu, "model": label, "task": "training", "market": market, "reason": _first_line(err)})
    # One row per refusal: the tasks, then the markets, it holds for joined.
    skipped = pd.DataFrame(skipped).groupby(["accelerator", "model", "market", "reason"], sort=False)["task"].agg(", ".join)
    skipped = skipped.reset_index().groupby(["accelerator", "model", "task", "reason"], sort=False)["market"].agg(", ".join)
    skipped = skipped.reset_index()[["accelerator", "model", "task", "market", "reason"]]
    return pd.DataFrame(serving), pd.DataFrame(training), skipped


def accelerator_cost_plot(serving: pd.DataFrame, training: pd.DataFrame):
    """Grouped bars: $ per million output tokens served and $ per billion tokens trained, by
    accelerator and market, one row of panels per model (log scale)."""
    fig, axes = plt.subplots(len(COST_MODELS), 2, figsize=(11, 3.4 * len(COST_MODELS)), squeeze=False)
    order = [m for m in MARKETS if m in set(serving["market"]) | set(training["market"])]
    for row, label in enumerate(COST_MODELS):
        for ax, df, value, title in ((axes[row][0], serving, "$ per M output tokens", "served"),
                                     (axes[row][1], training, "$ per B tokens", "trained")):
            d = df[df["model"] == label].pivot(index="accelerator", columns="market", values=value)
            d = d[[m for m in order if m in d.columns]]
            d.plot.bar(ax=ax, rot=30, logy=True, width=0.8)
            ax.set_title(f"{label}: $ per {'million output' if title == 'served' else 'billion'} tokens {title}")
            ax.set_xlabel("")
            ax.legend(fontsize=7)
    return fig


def accelerator_costs(cs, out: Path) -> str:
    """Which accelerator and which market: $ per million tokens served and per billion trained, Llama 3 8B and 70B."""
    serving, training, skipped = accelerator_cost_tables(cs)
    plot = _save(accelerator_cost_plot(serving, training), out, "accelerator_costs.png")
    return f"""# Which accelerator, which market

Llama 3 8B and 70B served and trained on every accelerator of the catalog, in every market the
data files sell it in, each number one `cs.run` of a scenario dict built by
`accelerator_cost_tables` in `scripts/reference_results.py` (`notebooks/accelerator_costs.ipynb`
draws the same).

Assumptions:

- **Serving**: a steady Poisson load ({SERVING_RATE['llama3-8b']:g} requests/s for 8B,
  {SERVING_RATE['llama3-70b']:g} for 70B), lognormal prompts of mean 1,000 tokens and outputs of
  mean 200 (cv 1), for 10 simulated minutes, seed 1. The replica is the fewest accelerators
  (1, 2, 4, 8, 16: tensor parallel) whose memory leaves a KV cache; the fleet is the fewest
  fixed replicas (sized on demand) meeting p99 TTFT 2 s and p99 TPOT 100 ms; every market
  then runs those replicas. Cost per million output tokens is the run's cost over the output
  tokens it produced: the replicas are billed whether busy or not (utilization is what the load
  makes of them).
- **Training**: {TRAINING_CHIPS} accelerators (a TPU slice of shape 4x4x4 on v5p, 8x8 on v5e/v6e;
  otherwise servers of 8 GPUs or 16 Trainium chips on a fat-tree), fully sharded data parallel
  (ZeRO-3) over all {TRAINING_CHIPS}, 128 sequences of the preset's length per step (2 per
  accelerator), bf16, full recomputation, {TRAINING_STEPS:,} steps as a `training_run` (node
  failures at the default rate, Young/Daly checkpoints, spot reclaims on spot): cost per billion
  tokens includes the goodput lost to them; one seed. Inferentia2 is served only (AWS sells it
  for inference).
- **Prices**: `data/instance_prices.json` (each price's source and date there: AWS and GCP list
  prices read 2023-2025), the first instance holding the accelerator; a market it does not list is
  derived from on demand by the file's default discount (spot 60%, reserved 40%, both estimates)
  and marked so; "estimate" marks a figure the file says is not a provider's list price (e.g.
  trn2's on-demand price, p5's 1-year reserved price, MI300X's Azure ND MI300X v5 at $6 per
  GPU-hour as quoted in 2026). Reserved is the 1-year commitment. Owned: `data/ownership.json` (node
  price, MI300X's an estimate; 5 years, 10% maintenance a year, PUE 1.58, $0.08/kWh, $160 per
  kW-month hosting); TPUs, Trainium and Inferentia are not sold, only rented.
  Serverless: `data/serverless_prices.json` (Modal, else the first provider selling the
  accelerator; per GPU-second while warm, the replicas kept warm).
- Catalog efficiencies are the defaults (docs/hardware.md); nothing is fitted here.

![cost per token by accelerator and market]({plot})

## Serving: $ per million output tokens

{_table(serving)}

## Training: $ per billion tokens

{_table(training)}

## Skipped: what the simulator refuses

Each with the simulator's own reason (not sold there, no price, does not fit in memory):

{_table(skipped)}
"""


REPORTS = {"nccl_tests": nccl_tests, "fabric_comparison": fabric_comparison, "spot_training": spot_training,
           "training_steps": training_steps, "validation": validation, "autoscaling": autoscaling,
           "shared_cluster": shared_cluster, "accelerator_costs": accelerator_costs}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "results"), help="directory for the reports (default results/)")
    parser.add_argument("names", nargs="*", help=f"reports to make (default all: {', '.join(REPORTS)})")
    args = parser.parse_args(argv)
    import clustersim as cs

    unknown = [n for n in args.names if n not in REPORTS]
    if unknown:
        parser.error(f"unknown report {unknown[0]!r}; one of {', '.join(REPORTS)}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    names = args.names or list(REPORTS)
    for name in names:
        (out / f"{name}.md").write_text(REPORTS[name](cs, out))
        print(f"{name}: {out / (name + '.md')}")
    index = ["# Reference results", "",
             "Regenerated by `scripts/reference_results.py` from the scenario files; every number is computed.", ""]
    index += [f"- [{name}]({name}.md): {REPORTS[name].__doc__}" for name in REPORTS if (out / f"{name}.md").exists()]
    (out / "README.md").write_text("\n".join(index) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
