"""One transformer layer's forward and backward against Korthikanti et al. 2022's Table 4 (GPT
22B, tp 8 on one DGX A100, micro-batch 4): the experiments of data/published_training.json's
`layer_times`, each replayed on that file's 22B row with its sequence parallelism and
recomputation.

    layer_rows(cs)       -> one dict per experiment: measured and simulated forward and backward
                            (ms per layer) and the simulated layer's parts
    layer_section(cs)    -> the "### One layer" part of results/validation.md (markdown)

A layer's simulated time is read off the step's timeline (run.trace): with one micro-batch on one
pipeline stage the layers run one after another, so a layer's forward is the time from the start
of its first task (compute or tensor-parallel communication) to the start of the next layer's,
averaged over the inner layers (the first and last are left out: the embedding and the LM head
sit next to them); its backward (recomputation included, as the paper times it) likewise in
reverse. Its parts are the roofline seconds of its ops (summary.training.ops over the layers):
GEMMs, the unfused attention's batched products, its softmax and dropout through HBM, the other
element-wise kernels; what the timeline adds on top is tensor-parallel communication left exposed
(and compute slowed beside it), the launch gaps counted in the roofline figures."""
from __future__ import annotations

import json

from validation_training import DATA, _machine, scenario_doc

# summary.training.ops names by part of a layer (workloads/training_ops.cpp); anything else of a
# layer is element-wise (norms, activation, residual adds).
GEMMS = ("qkv", "proj", "fc1", "fc2")
ATTENTION_PRODUCTS = ("attention_scores", "attention_values")
SOFTMAX = ("softmax", "dropout")
OUTSIDE_LAYERS = ("embedding", "final_norm", "lm_head", "loss", "adam")


def load_experiments() -> tuple[dict, dict]:
    """Table 4 (data/published_training.json's layer_times) and the row its model and plan are from."""
    data = json.loads(DATA.read_text())
    table = data["layer_times"]
    row = next(r for r in data["rows"] if r["name"] == table["row"] and r["gpu"] == "A100-80GB")
    return table, row


def _layer_spans(trace: dict, layers: int) -> tuple[float, float]:
    """Forward and backward seconds of one inner layer, from one GPU's tasks in the trace."""
    events = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    pid = min(e["pid"] for e in events)
    head_backward = min(e["ts"] for e in events
                        if e["pid"] == pid and e["name"].startswith("B head"))
    forward_start, backward_start = {}, {}
    for e in events:
        if e["pid"] != pid or " L" not in e["name"]:
            continue
        layer = int(e["name"].split(" L")[1].split()[0])
        starts = forward_start if e["ts"] < head_backward else backward_start
        starts[layer] = min(starts.get(layer, e["ts"]), e["ts"])
    inner = layers - 2
    forward = (forward_start[layers - 1] - forward_start[1]) / inner
    backward = (backward_start[1] - backward_start[layers - 1]) / inner
    return forward * 1e-6, backward * 1e-6  # the trace's microseconds


def _parts(ops: list[dict], layers: int, forward_ops: dict[str, float]) -> dict[str, dict[str, float]]:
    """Roofline seconds of one layer by part, forward and backward. Recomputation's ops carry the
    forward phase (they rerun forward kernels): what a run's forward-phase ops hold beyond
    `forward_ops` (the same plan's without recomputation) is counted in backward."""
    parts = {"forward": {}, "backward": {}}
    for op in ops:
        if op["op"] in OUTSIDE_LAYERS:
            continue
        part = ("GEMMs" if op["op"] in GEMMS else "attention products" if op["op"] in ATTENTION_PRODUCTS
                else "softmax, dropout" if op["op"] in SOFTMAX else "element-wise")
        seconds = op["seconds"] / layers
        if op["phase"] == "forward":
            forward = forward_ops.get(op["op"], seconds) if forward_ops else seconds
            parts["forward"][part] = parts["forward"].get(part, 0) + forward
            seconds -= forward
        parts["backward"][part] = parts["backward"].get(part, 0) + seconds
    return parts


def layer_rows(cs) -> list[dict]:
    table, row = load_experiments()
    layers = row["model"]["layers"]
    out, forward_ops = [], {}
    for experiment in table["experiments"]:
        doc = scenario_doc({**row, "sequence_parallel": experiment["sequence_parallel"],
                            "recompute": experiment["recompute"]})
        doc["run"] = {"trace": "trace.json"}
        result = cs.run(cs.Scenario.from_json(json.dumps(doc)))
        ops = result.summary["training"]["ops"]
        if experiment["recompute"] == "none":  # this plan's forward, for the runs that recompute
            forward_ops[experiment["sequence_parallel"]] = {
                op["op"]: op["seconds"] / layers for op in ops if op["phase"] == "forward"}
        forward, backward = _layer_spans(result.trace, layers)
        out.append({"experiment": experiment, "forward_s": forward, "backward_s": backward,
                    "parts": _parts(ops, layers, forward_ops.get(experiment["sequence_parallel"], {}))})
    return out


def tp_all_reduce(cs) -> dict:
    """The layer's tensor-parallel all-reduce (one micro-batch's activations, micro x seq x hidden in
    16 bits) timed alone by the communication layer on the row's node, as the training replay runs
    it (the analytical model, ring), against layer_times' published all_reduce_perf run of such a
    node: its times at the sizes either side, interpolated linearly in size."""
    table, row = load_experiments()
    published = table["tp_all_reduce"]
    size = row["micro"] * row["seq_len"] * row["model"]["hidden"] * 2
    hardware, topology = _machine(row)
    doc = {"name": "tp_all_reduce", "hardware": hardware, "topology": topology,
           "network": {"model": "analytical"},
           "workload": {"kind": "collective", "op": "all_reduce", "algorithm": "ring", "sizes": [size]}}
    simulated = cs.run(cs.Scenario.from_json(json.dumps(doc))).summary["collective"]["results"][0]
    sizes, times = published["bytes"], published["time_us"]
    i = next(i for i in range(1, len(sizes)) if sizes[i] >= size)
    share = (size - sizes[i - 1]) / (sizes[i] - sizes[i - 1])
    measured = 1e-6 * (times[i - 1] + share * (times[i] - times[i - 1]))
    busbw = 2 * (row["tp"] - 1) / row["tp"] * size / measured / 1e9
    return {"bytes": size, "simulated_s": simulated["time_s"], "simulated_busbw_GBps": simulated["busbw_GBps"],
            "protocol": simulated["protocol"], "measured_s": measured, "measured_busbw_GBps": busbw,
            "source": published["source"], "url": published["url"]}


def _ms(seconds: float) -> str:
    return f"{1e3 * seconds:.2f}"


def layer_section(cs, results: list[dict] | None = None, all_reduce: dict | None = None) -> str:
    results = layer_rows(cs) if results is None else results
    ar = tp_all_reduce(cs) if all_reduce is None else all_reduce
    table, row = load_experiments()
    lines = ["| experiment | forward measured | simulated | ratio | backward measured | simulated | ratio |"
             " simulated forward: GEMMs, attention products, softmax and dropout, element-wise, the rest |"
             " simulated backward: the same |",
             "|---|---:|---:|---:|---:|---:|---:|---|---|"]
    for r in results:
        e = r["experiment"]
        cells = []
        for direction in ("forward", "backward"):
            parts = r["parts"][direction]
            compute = sum(parts.values())
            named = [parts.get(p, 0) for p in ("GEMMs", "attention products", "softmax, dropout", "element-wise")]
            cells.append(", ".join(_ms(s) for s in named) + f", {_ms(r[direction + '_s'] - compute)}")
        lines.append(f"| {e['name']} | {e['forward_ms']:.1f} | {_ms(r['forward_s'])} | "
                     f"{e['forward_ms'] / 1e3 / r['forward_s']:.2f} | {e['backward_ms']:.1f} | "
                     f"{_ms(r['backward_s'])} | {e['backward_ms'] / 1e3 / r['backward_s']:.2f} | "
                     f"{cells[0]} | {cells[1]} |")
    return f"""### One layer: Korthikanti et al. 2022, Table 4

[{table['source']}]({table['url']}): one transformer layer of the {row['name']} model ({row['model']['layers']} layers,
hidden {row['model']['hidden']}, {row['model']['heads']} heads, tp {row['tp']} on {row['gpus']} A100s, micro-batch {row['micro']},
sequence {row['seq_len']}), ms, replayed by `scripts/validation_layer_time.py` on the row above with each
experiment's sequence parallelism and recomputation. Ratio: measured over simulated time (above 1:
the simulation is faster). Parts: the layer's roofline seconds by kind of op (launch gaps
included); the rest is what the timeline adds, tensor-parallel communication left exposed and
compute slowed beside communication.

{chr(10).join(lines)}

The layer's tensor-parallel all-reduce ({ar['bytes'] / 1e6:.1f} MB, two in forward and two in backward
without sequence parallelism), timed alone on the node: simulated {1e6 * ar['simulated_s']:.0f} us (ring,
{ar['protocol']}, busbw {ar['simulated_busbw_GBps']:.0f} GB/s), measured {1e6 * ar['measured_s']:.0f} us (busbw
{ar['measured_busbw_GBps']:.0f} GB/s, interpolated between the sizes either side of a published run:
[{ar['source']}]({ar['url']})); measured over simulated {ar['measured_s'] / ar['simulated_s']:.2f}.
"""
