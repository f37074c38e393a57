"""scripts/convert_trace.py: published traces (Azure's LLM inference trace, Helios, Philly) into
clustersim's trace CSVs that serving and jobs replay; rows that cannot be a request or a job are
left out and counted, malformed ones are errors naming the file and line (exit 2), and the output
is never written over the input or left half-written."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

import clustersim as cs

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "convert_trace.py"
AZURE = ROOT / "data" / "azure_llm_2023" / "AzureLLMInferenceTrace_code.csv"


def convert(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True)


def test_the_shipped_azure_trace_converts_to_the_shipped_serving_trace(tmp_path):
    out = tmp_path / "code.csv"
    r = convert("azure-llm", AZURE, out)
    assert r.returncode == 0, r.stderr
    assert "8819 rows" in r.stderr
    assert out.read_text() == (ROOT / "data" / "azure_llm_2023" / "code_trace.csv").read_text()


def test_azure_rows_become_requests_from_the_first_timestamp(tmp_path):
    raw = tmp_path / "azure.csv"
    # Azure's columns and 7-digit fractions; out of order, and one request generating nothing.
    raw.write_text("\ufeffTIMESTAMP,ContextTokens,GeneratedTokens\n"
                   "2023-11-16 18:17:04.5000000,100,5\n"
                   "2023-11-16 18:17:03.2500000,4808,10\n"
                   "2023-11-16 18:17:05.0000000,7,0\n")
    out = tmp_path / "trace.csv"
    r = convert("azure-llm", raw, out)
    assert r.returncode == 0, r.stderr
    assert out.read_text().splitlines() == ["timestamp,prompt_tokens,output_tokens", "0.0,4808,10", "1.25,100,5"]
    assert "left out 1 (no generated token)" in r.stderr


def test_a_malformed_row_names_the_file_and_line_and_writes_nothing(tmp_path):
    raw = tmp_path / "azure.csv"
    raw.write_text("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:04,100,5\nyesterday,1,1\n")
    out = tmp_path / "trace.csv"
    r = convert("azure-llm", raw, out)
    assert r.returncode == 2 and f"{raw}:3" in r.stderr and "date-time" in r.stderr
    raw.write_text("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:04,-100,5\n")
    r = convert("azure-llm", raw, out)
    assert r.returncode == 2 and f"{raw}:2" in r.stderr and "ContextTokens" in r.stderr
    raw.write_text("TIMESTAMP,Tokens\n2023-11-16 18:17:04,100\n")
    r = convert("azure-llm", raw, out)
    assert r.returncode == 2 and "missing ContextTokens, GeneratedTokens" in r.stderr
    assert not out.exists() and not list(tmp_path.glob(".trace.csv.*"))


def test_the_input_is_never_overwritten(tmp_path):
    raw = tmp_path / "azure.csv"
    text = "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:04,100,5\n"
    raw.write_text(text)
    r = convert("azure-llm", raw, raw)
    assert r.returncode == 2 and "is the input" in r.stderr
    assert raw.read_text() == text


HELIOS = ("job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n"
          "3,u1,vcB,8,16,1,COMPLETED,2020-06-09 18:41:27,2020-06-09 18:41:27,2020-06-09 18:42:27,60,0\n"
          "1,u2,vcA,16,32,2,COMPLETED,2020-06-09 18:41:01,2020-06-09 18:41:01,2020-06-09 18:44:21,200,0\n"
          "2,u3,vcA,0,1,1,COMPLETED,2020-06-09 18:41:02,2020-06-09 18:41:02,2020-06-09 18:41:09,7,0\n"
          "4,u4,vcB,8,16,1,FAILED,2020-06-09 18:41:30,2020-06-09 18:41:30,2020-06-09 18:41:30,0,0\n")

PHILLY = [
    {"status": "Pass", "vc": "vcA", "jobid": "a", "submitted_time": "2017-10-07 01:11:39", "user": "x",
     "attempts": [{"start_time": "2017-10-07 01:12:09", "end_time": "2017-10-07 01:13:23",
                   "detail": [{"ip": "m1", "gpus": ["gpu0", "gpu1", "gpu2", "gpu3", "gpu4", "gpu5", "gpu6", "gpu7"]}]},
                  {"start_time": "2017-10-07 01:13:30", "end_time": "2017-10-07 01:15:09",
                   "detail": [{"ip": "m2", "gpus": ["gpu0"]}]}]},
    {"status": "Killed", "vc": "vcB", "jobid": "b", "submitted_time": "2017-10-07 01:11:49", "user": "y",
     "attempts": [{"start_time": "2017-10-07 01:11:50", "end_time": "2017-10-07 01:12:00",
                   "detail": [{"ip": "m3", "gpus": ["gpu0", "gpu1"]}, {"ip": "m4", "gpus": ["gpu0", "gpu1"]}]}]},
    {"status": "Failed", "vc": "vcB", "jobid": "c", "submitted_time": "2017-10-07 01:12:00", "user": "y",
     "attempts": []},
]


def jobs_scenario(trace, queues=None):
    scheduler = {"policy": "fifo"}
    if queues:
        scheduler["queues"] = [{"name": q} for q in queues]
    return cs.Scenario({"name": "converted", "seed": 1, "hardware": {"gpu": "H100-SXM", "node": {"gpus": 8}},
                        "workload": {"kind": "jobs", "trace": str(trace)},
                        "fleet": {"nodes": 2, "failures": {"node_mtbf": "none"}, "scheduler": scheduler}})


@pytest.mark.parametrize("fmt", ["helios", "philly"])
def test_cluster_traces_become_job_traces_the_scheduler_runs(tmp_path, fmt):
    raw = tmp_path / ("log.csv" if fmt == "helios" else "log.json")
    raw.write_text(HELIOS if fmt == "helios" else json.dumps(PHILLY))
    out = tmp_path / "jobs.csv"
    r = convert(fmt, raw, out, "--queue-from", "vc")
    assert r.returncode == 0, r.stderr
    rows = out.read_text().splitlines()
    assert rows[0] == "submit_time,gpus,duration,queue"
    if fmt == "helios":
        # Sorted by submission; the CPU job and the zero-length one are left out and counted.
        assert rows[1:] == ["0.0,16,200.0,vcA", "26.0,8,60.0,vcB"]
        assert "1 (no GPU)" in r.stderr and "1 (no positive duration)" in r.stderr
    else:
        # GPUs of the first attempt; the first attempt's start to the last one's end.
        assert rows[1:] == ["0.0,8,180.0,vcA", "10.0,4,10.0,vcB"]
        assert "1 (no attempt with a start and an end)" in r.stderr
    summary = cs.run(jobs_scenario(out, queues=["vcA", "vcB"])).summary["jobs"]
    assert summary["submitted"] == 2 and summary["completed"] == 2
    assert set(summary["queues"]) == {"vcA", "vcB"}


def test_the_shipped_azure_scenario_replays_every_request():
    summary = cs.run(cs.Scenario.load(ROOT / "scenarios" / "serving_azure_code_trace.json")).summary["serving"]
    assert summary["requests"] == 8819 and summary["completed"] == 8819


AZURE_HEADER = "TIMESTAMP,ContextTokens,GeneratedTokens\n"
# Inputs a hostile user gives: each a clear error (exit 2, `error: <file>...`), no traceback,
# nothing written.
BAD_INPUTS = [
    ("empty.csv", b"", "the header must name"),
    ("columns.csv", b"a,b\n1,2\n", "the header must name"),
    ("time.csv", (AZURE_HEADER + "notatime,100,10\n").encode(), "expected a date-time"),
    ("negative.csv", (AZURE_HEADER + "2023-11-16 18:15:46.68,-5,10\n").encode(), "expected a whole number"),
    ("infinite.csv", (AZURE_HEADER + "2023-11-16 18:15:46.68,1e400,10\n").encode(), "expected a whole number"),
    ("nan.csv", (AZURE_HEADER + "2023-11-16 18:15:46.68,nan,10\n").encode(), "expected a whole number"),
    ("binary.csv", bytes(range(128, 256)), "not UTF-8 text"),
]


@pytest.mark.parametrize("name,content,message", BAD_INPUTS)
def test_a_malformed_input_is_a_clear_error(tmp_path, name, content, message):
    src = tmp_path / name
    src.write_bytes(content)
    out = tmp_path / "out.csv"
    proc = convert("azure-llm", src, out)
    assert proc.returncode == 2 and proc.stderr.startswith("error:") and message in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and not out.exists()


def test_an_output_that_cannot_be_written_is_a_clear_error(tmp_path):
    src = tmp_path / "az.csv"
    src.write_text(AZURE_HEADER + "2023-11-16 18:15:46.68,100,10\n")
    folder = tmp_path / "folder"
    folder.mkdir()
    for out, message in ((folder, "is a directory"), ("/proc/x.csv", "cannot be written"), (tmp_path / "no" / "x.csv", "folder")):
        proc = convert("azure-llm", src, out)
        assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert not any(p.name.endswith(".tmp") for p in tmp_path.iterdir())
