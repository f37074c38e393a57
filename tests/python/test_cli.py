import json
import re

import pytest

from conftest import ROOT, run_cli, without_wall_time

FLAGSHIP = ROOT / "scenarios" / "fat_tree_allreduce.json"


def test_run_json_prints_exactly_the_summary(tmp_path):
    proc = run_cli("run", FLAGSHIP, "--json", check=True)
    summary = json.loads(proc.stdout)
    for key in ("scenario", "seed", "sim_time_s", "events", "wall_time_s"):
        assert key in summary
    coll = summary["collective"]
    assert coll["op"] == "all_reduce" and coll["algorithm"] == "ring" and coll["ranks"] == 128
    assert [r["bytes"] for r in coll["results"]] == [2**20, 2**24, 2**28, 2**30]
    for r in coll["results"]:
        assert set(r) >= {"bytes", "time_s", "algbw_GBps", "busbw_GBps"}
        assert r["busbw_GBps"] == pytest.approx(r["algbw_GBps"] * 2 * 127 / 128, rel=1e-12)


def test_out_dir_gets_summary_atomically(tmp_path):
    out = tmp_path / "res"
    proc = run_cli("run", FLAGSHIP, "--out", out, "--json", check=True)
    written = json.loads((out / "summary.json").read_text())
    assert without_wall_time(written) == without_wall_time(json.loads(proc.stdout))
    assert sorted(p.name for p in out.iterdir()) == ["links.csv", "summary.json"]  # no temp files left


def test_human_output_is_a_table():
    proc = run_cli("run", FLAGSHIP, check=True)
    assert "busbw (GB/s)" in proc.stdout
    assert len(proc.stdout.splitlines()) >= 6


def test_set_overrides_a_key_and_a_list():
    proc = run_cli("run", FLAGSHIP, "--json", "--set", "topology.nodes=2",
                   "--set", "workload.sizes=[1e6,2e6]", check=True)
    s = json.loads(proc.stdout)
    assert s["collective"]["ranks"] == 16
    assert [r["bytes"] for r in s["collective"]["results"]] == [1e6, 2e6]


def test_set_bare_string_value():
    proc = run_cli("run", ROOT / "scenarios" / "fat_tree_permutation.json", "--json",
                   "--set", "network.routing=ecmp", check=True)
    assert json.loads(proc.stdout)["traffic"]["flows"] == 32


def test_trace_and_timeseries_written_with_out(tmp_path):
    run_cli("run", ROOT / "scenarios" / "custom_two_switches.json", "--out", tmp_path, check=True)
    trace = json.loads((tmp_path / "trace.json").read_text())
    assert trace["traceEvents"], "trace has events"
    run_cli("run", ROOT / "scenarios" / "incast.json", "--out", tmp_path / "b", check=True)
    lines = (tmp_path / "b" / "timeseries.csv").read_text().splitlines()
    assert lines[0] == "series,time_s,value" and len(lines) > 3


def test_validate_and_schema():
    proc = run_cli("validate", FLAGSHIP, check=True)
    assert proc.stdout.startswith("ok:")
    schema = json.loads(run_cli("schema", check=True).stdout)
    assert schema["type"] == "object"
    for key in ("hardware", "topology", "network", "workload", "run"):
        assert key in schema["properties"]


def test_usage_errors_exit_2():
    for args in ([], ["frobnicate"], ["run"], ["run", FLAGSHIP, "--bogus"]):
        proc = run_cli(*args)
        assert proc.returncode == 2, args
        assert proc.stderr.startswith("error:"), proc.stderr


def test_bad_override_exit_2(tmp_path):
    proc = run_cli("run", FLAGSHIP, "--out", tmp_path / "o", "--set", "topology.nodes=-4")
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: topology.nodes:")
    assert not (tmp_path / "o" / "summary.json").exists()
    proc = run_cli("run", FLAGSHIP, "--set", "no_equals_sign")
    assert proc.returncode == 2 and proc.stderr.startswith("error:")


def test_flow_table_for_traffic(tmp_path):
    run_cli("run", ROOT / "scenarios" / "custom_two_switches.json", "--out", tmp_path, check=True)
    rows = (tmp_path / "flows.csv").read_text().splitlines()
    assert rows[0] == "flow,src,dst,bytes,start_s,finish_s,fct_s,route"
    assert len(rows) == 4
    # Worked by hand in scenarios/custom_two_switches.json's terms: the 0->1 flow shares n0's
    # uplink with 0->2 and finishes first.
    fct = {int(r.split(",")[0]): float(r.split(",")[6]) for r in rows[1:]}
    assert fct[2] < fct[0] and fct[2] < fct[1]


def test_run_threads_gives_the_same_summary_on_1_and_2_threads():
    # A shipped scenario whose 20 replications run in parallel: the summary's text is the same
    # byte for byte on one thread and on two, but the machine's top-level wall time.
    scenario = ROOT / "scenarios" / "training_run_spot_405b.json"
    texts = []
    for threads in ("1", "2"):
        out = run_cli("run", scenario, "--json", "--threads", threads, check=True).stdout
        top_level_wall = re.compile(r'\n  "wall_time_s": [^\n]*')
        assert len(top_level_wall.findall(out)) == 1
        texts.append(top_level_wall.sub("", out))
    assert texts[0] == texts[1]
    assert set(json.loads(out)["training_run"]["goodput"]) == {"mean", "ci95"}  # replicated
    bad = run_cli("run", scenario, "--threads", "0")
    assert bad.returncode == 2 and "--threads" in bad.stderr
