"""Collectives against published nccl-tests runs: replay every row of data/published_nccl_tests.json
through the collective workload (the analytical model, `auto` algorithm and protocol: NCCL's own
choice, as the runs used NCCL's defaults) on the run's machine, and compare the time per size.

    nccl_rows(cs)      -> one dict per published row: series, size, measured and simulated time,
                          ratio (simulated / measured), the algorithm and protocol chosen
    nccl_errors(rows)  -> mean absolute relative error of the time by hardware class and size band
    nccl_section(cs)   -> the "## Collectives: nccl-tests" section of results/validation.md

The machine is the training validation's (validation_training._machine): DGX-like nodes of 8 GPUs
(NVSwitch), across nodes 8 NICs a node on a rail-optimized fat tree. Where only a bus bandwidth was
published, the measured time is size x busbw factor / busbw (nccl-tests' definitions)."""
from __future__ import annotations

import json
from pathlib import Path

from validation_training import _machine

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "published_nccl_tests.json"

# Size bands of the error table: NCCL's latency-bound sizes, mid sizes (a tensor-parallel
# collective of a training step), and sizes at which the bandwidth rating governs.
BANDS = ((0, 1 << 20, "< 1 MiB"), (1 << 20, 16 << 20, "1-16 MiB"), (16 << 20, 256 << 20, "16-256 MiB"),
         (256 << 20, 1 << 62, ">= 256 MiB"))


def load_series() -> list[dict]:
    return json.loads(DATA.read_text())["series"]


def _busbw_factor(op: str, n: int) -> float:
    return 2 * (n - 1) / n if op == "all_reduce" else (n - 1) / n


def _simulate(cs, series: dict, op: str, sizes: list[int]) -> list[dict]:
    gpus = 8 * series["nodes"]
    hardware, topology = _machine({"gpu": series["gpu"], "gpus": gpus,
                                   "nic_bandwidth": series.get("nic_bandwidth", "400Gbps")})
    doc = {"name": "nccl_tests", "hardware": hardware, "topology": topology,
           "network": {"model": "analytical", "protocol": "auto"},
           "workload": {"kind": "collective", "op": op, "algorithm": series["algorithm"], "sizes": sizes}}
    return cs.run(cs.Scenario.from_json(json.dumps(doc))).summary["collective"]["results"]


def nccl_rows(cs) -> list[dict]:
    out = []
    for series in load_series():
        gpus = 8 * series["nodes"]
        ops = sorted({r.get("op", series.get("op")) for r in series["rows"]})
        for op in ops:
            rows = [r for r in series["rows"] if r.get("op", series.get("op")) == op]
            simulated = _simulate(cs, series, op, [r["bytes"] for r in rows])
            for published, sim in zip(rows, simulated):
                size = published["bytes"]
                measured = (published["time_us"] * 1e-6 if "time_us" in published
                            else size * _busbw_factor(op, gpus) / (published["busbw_GBps"] * 1e9))
                out.append({"series": series["name"], "gpu": series["gpu"], "nodes": series["nodes"],
                            "nccl": series["nccl_version"], "op": op, "bytes": size,
                            "measured_s": measured, "simulated_s": sim["time_s"],
                            "ratio": sim["time_s"] / measured,
                            "choice": f"{sim.get('algorithm', '')} {sim.get('protocol', '')}".strip(),
                            "url": series["url"]})
    return out


def band_of(size: int) -> str:
    return next(name for low, high, name in BANDS if low <= size < high)


def nccl_errors(rows: list[dict]) -> list[dict]:
    """Mean absolute relative error of the time, |simulated - measured| / measured, by hardware
    class (GPU and nodes) and size band, with the mean ratio (below 1: the model is fast)."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for r in rows:
        machine = f"{r['gpu']}, {r['nodes']} node{'s' if r['nodes'] > 1 else ''}"
        groups.setdefault((machine, band_of(r["bytes"])), []).append(r)
    order = [name for _, _, name in BANDS]
    out = []
    for (machine, band), rs in sorted(groups.items(), key=lambda kv: (kv[0][0], order.index(kv[0][1]))):
        out.append({"machine": machine, "band": band, "rows": len(rs),
                    "mae": sum(abs(r["ratio"] - 1) for r in rs) / len(rs),
                    "mean_ratio": sum(r["ratio"] for r in rs) / len(rs)})
    return out


def _size(b: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= scale:
            return f"{b / scale:g} {unit}"
    return f"{b} B"


def nccl_section(cs, rows: list[dict] | None = None) -> str:
    rows = nccl_rows(cs) if rows is None else rows
    errors = nccl_errors(rows)
    lines = ["## Collectives: nccl-tests", "",
             "Published nccl-tests runs (`data/published_nccl_tests.json`, each with its source) replayed",
             "by `scripts/validation_nccl.py`: the collective workload on the run's machine, the",
             "analytical model, `auto` algorithm and protocol (the runs used NCCL's defaults); time per",
             "size, the ratio simulated over measured (below 1: the model is fast).", "",
             "Mean absolute error of the time by machine and size band:", "",
             "| machine | sizes | rows | mean abs. error | mean ratio |", "|---|---|---:|---:|---:|"]
    lines += [f"| {e['machine']} | {e['band']} | {e['rows']} | {100 * e['mae']:.1f}% | {e['mean_ratio']:.3f} |"
              for e in errors]
    total = sum(abs(r["ratio"] - 1) for r in rows) / len(rows)
    lines += ["", f"Over all {len(rows)} rows: {100 * total:.1f}%.", "",
              "| run | NCCL | op | size | measured (us) | simulated (us) | ratio | chosen |",
              "|---|---|---|---:|---:|---:|---:|---|"]
    lines += [f"| [{r['series']}]({r['url']}) | {r['nccl']} | {r['op']} | {_size(r['bytes'])} | "
              f"{1e6 * r['measured_s']:,.1f} | {1e6 * r['simulated_s']:,.1f} | {r['ratio']:.3f} | {r['choice']} |"
              for r in rows]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    import clustersim

    print(nccl_section(clustersim))
