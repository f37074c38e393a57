"""The serverless market end to end: a plain server on a serverless platform billed per
GPU-second from each replica's start to its stop (closed form from a trace of requests), the
cold start a request pays on a pool at zero, the provider's defaults from
data/serverless_prices.json, the example scenario's cost keys, and bad input named by its path
with the nearest valid choice."""
import json

import pytest

import clustersim as cs
from conftest import ROOT, run_cli

EXAMPLE = ROOT / "scenarios" / "serving_serverless_llama8b.json"
PRICES = json.loads((ROOT / "data" / "serverless_prices.json").read_text())["providers"]


def serverless(trace, **serverless_keys):
    """A plain one-slot server on Modal's H100, fed a trace file; cold start: the container
    start only (no model weights for a plain server)."""
    return cs.Scenario({
        "name": "serverless_by_hand", "seed": 1, "hardware": {"gpu": "H100-SXM"},
        "workload": {"kind": "serving", "arrivals": {"process": "trace", "trace": str(trace)},
                     "replica": {"concurrency": 1}},
        "fleet": {"market": "serverless", "serverless": serverless_keys,
                  "cold_start": {"warmup": 0}},
        "run": {"until": "30min", "timeseries_interval": 0}})


def test_a_request_on_a_pool_at_zero_pays_the_cold_start_and_the_bill_is_start_to_idle_stop(tmp_path):
    modal = PRICES["modal"]
    boot, idle = modal["container_start"]["s"], modal["idle_timeout"]["s"]
    price = modal["usd_per_gpu_second"]["H100-SXM"]["usd"]
    trace = tmp_path / "t.csv"
    # Two requests of 4 s, 200 s apart: each finds the pool at zero (idle timeout 60 s).
    trace.write_text("timestamp,service_time\n0,4\n200,4\n")
    s = cs.run(serverless(trace)).summary["serving"]
    assert s["completed"] == 2
    assert s["latency_mean_s"] == pytest.approx(boot + 4)
    billed_s = 2 * (boot + 4 + idle)
    assert s["cost_usd"] == pytest.approx(billed_s * price)
    assert s["cost_usd_by_market"]["serverless"] == pytest.approx(s["cost_usd"])
    assert s["cost_usd_by_market"]["on_demand"] == 0
    assert s["replica_hours_by_market"]["serverless"] == pytest.approx(billed_s / 3600)
    assert s["cost_per_million_requests_usd"] == pytest.approx(s["cost_usd"] / 2 * 1e6)
    # Kept warm for longer than the gap: one replica, one cold start, billed to the last + idle.
    s = cs.run(serverless(trace, idle_timeout="5min")).summary["serving"]
    assert s["latency_p50_s"] == pytest.approx(4, rel=0.05)  # the second is a warm hit
    assert s["cost_usd"] == pytest.approx((204 + 300) * price)
    # A price given replaces the provider's.
    s = cs.run(serverless(trace, price="$3.6/h")).summary["serving"]
    assert s["cost_usd"] == pytest.approx(billed_s * 0.001)


def test_the_example_scales_to_zero_and_fills_the_cost_keys():
    sc = cs.Scenario.load(EXAMPLE)
    sc.set("run.until", "1h")
    s = cs.run(sc).summary["serving"]
    assert s["cost_usd"] > 0
    assert s["cost_usd_by_market"]["serverless"] == pytest.approx(s["cost_usd"])
    assert s["cost_per_million_tokens_usd"] > 0
    # Billed less than one replica for the whole hour at sparse load (scale to zero), and the
    # cold starts show in the TTFT tail: 1 s container + 16 s of weights + 10 s warm-up.
    assert s["replica_hours_by_market"]["serverless"] < 1.0
    assert s["ttft"]["p99_s"] > 27


@pytest.mark.parametrize("change,path,needle", [
    ({"hardware": {"gpu": "MI300X"}, "fleet": {"market": "serverless"}}, "fleet.market", "buy it \"on_demand\""),
    ({"hardware": {"gpu": "MI300X"}}, "fleet.serverless.provider", "no provider in the serverless catalog sells MI300X"),
    ({"fleet": {"market": "serverless", "serverless": {"provider": "cloud_run"}}}, "fleet.serverless.provider",
     "use provider \"modal\""),
    ({"fleet": {"market": "serverless", "autoscaler": {"policy": "hpa"}}}, "fleet.autoscaler", "scales by requests"),
    ({"fleet": {"market": "on_demand", "serverless": {"max": 2}}}, "fleet.serverless", "\"serverless\""),
    ({"fleet": {"market": "serverless", "serverless": {"min": 5, "max": 2}}}, "fleet.serverless.min", "at most max"),
])
def test_bad_serverless_input_names_its_path_and_the_nearest_valid_choice(tmp_path, change, path, needle):
    doc = json.loads(EXAMPLE.read_text())
    for section, keys in change.items():
        if section == "fleet":
            doc["fleet"] = keys
        else:
            doc[section] = keys
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(doc))
    proc = run_cli("validate", f)
    assert proc.returncode == 2, proc.stderr
    assert f"error: {path}:" in proc.stderr
    assert needle in proc.stderr


def test_a_training_run_is_not_sold_serverless(tmp_path):
    doc = json.loads((ROOT / "scenarios" / "training_run_by_hand.json").read_text())
    doc["fleet"]["market"] = "serverless"
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(doc))
    proc = run_cli("validate", f)
    assert proc.returncode == 2
    assert "error: fleet.market:" in proc.stderr and "serving" in proc.stderr
