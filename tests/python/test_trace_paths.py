"""Trace paths in a scenario file are relative to the file's folder (so a scenario runs from any
working directory); absolute paths stay as they are; paths given from Python dicts or --set are
relative to the working directory, where the user typed them."""
import json
import os
import subprocess
from pathlib import Path

import clustersim as cs

ROOT = Path(__file__).resolve().parents[2]
CLI = Path(os.environ.get("CLUSTERSIM_BUILD", ROOT / "build")) / "clustersim"


def jobs_doc(trace):
    return {"name": "paths", "seed": 1, "hardware": {"gpu": "H100-SXM", "node": {"gpus": 8}},
            "workload": {"kind": "jobs", "trace": trace},
            "fleet": {"nodes": 1, "failures": {"node_mtbf": "none"}, "scheduler": {"policy": "fifo"}}}


def make_project(tmp_path):
    """project/scenario.json naming traces/jobs.csv (relative to project/)."""
    project = tmp_path / "project"
    (project / "traces").mkdir(parents=True)
    (project / "traces" / "jobs.csv").write_text("submit_time,gpus,duration\n0,8,100\n10,8,50\n")
    scenario = project / "scenario.json"
    scenario.write_text(json.dumps(jobs_doc("traces/jobs.csv")))
    return project, scenario


def test_the_cli_reads_a_files_traces_from_its_folder_whatever_the_working_directory(tmp_path):
    project, scenario = make_project(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for cwd in (elsewhere, project, tmp_path):
        r = subprocess.run([str(CLI), "run", str(scenario.relative_to(tmp_path)) if cwd == tmp_path else str(scenario),
                            "--json"], cwd=cwd, capture_output=True, text=True)
        assert r.returncode == 0, (cwd, r.stderr)
        assert json.loads(r.stdout)["jobs"]["completed"] == 2


def test_python_load_resolves_from_the_files_folder_and_dicts_from_the_working_directory(tmp_path, monkeypatch):
    project, scenario = make_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert cs.run(cs.Scenario.load(scenario)).summary["jobs"]["completed"] == 2
    # A dict (no file) names paths from the working directory: tmp_path here.
    assert cs.run(cs.Scenario(jobs_doc("project/traces/jobs.csv"))).summary["jobs"]["completed"] == 2
    # --set's value too.
    r = subprocess.run([str(CLI), "run", str(scenario), "--set", "workload.trace=project/traces/jobs.csv", "--json"],
                       cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_a_missing_relative_trace_names_where_it_looked_and_the_rule(tmp_path):
    project, scenario = make_project(tmp_path)
    scenario.write_text(json.dumps(jobs_doc("traces/missing.csv")))
    r = subprocess.run([str(CLI), "validate", str(scenario)], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 2
    assert "workload.trace" in r.stderr and str(Path("project/traces/missing.csv")) in r.stderr
    assert "relative to its folder" in r.stderr


def test_an_absolute_path_is_kept(tmp_path):
    project, scenario = make_project(tmp_path)
    scenario.write_text(json.dumps(jobs_doc(str(project / "traces" / "jobs.csv"))))
    assert cs.run(cs.Scenario.load(scenario)).summary["jobs"]["completed"] == 2
