#!/usr/bin/python3
"""Convert published traces to clustersim's trace CSVs.

  azure-llm  Azure's LLM inference traces (AzurePublicDataset, 2023 and 2024: columns
             TIMESTAMP, ContextTokens, GeneratedTokens; TIMESTAMP a date-time such as
             "2023-11-16 18:15:46.6805900") -> a serving trace: timestamp (seconds from the
             first request), prompt_tokens, output_tokens (workload.arrivals.process "trace").
  helios     SenseTime's Helios cluster logs (HeliosData, cluster_log.csv: job_id, user, vc,
             gpu_num, cpu_num, node_num, state, submit_time, start_time, end_time, duration,
             queue -- `queue` there is the wait in seconds) -> a job trace: submit_time (seconds
             from the first submission), gpus, duration, and with --queue-from vc the virtual
             cluster as the queue (workload.trace).
  philly     Microsoft's Philly trace (philly-traces, cluster_job_log: a JSON list of jobs with
             submitted_time, vc, attempts [{start_time, end_time, detail [{ip, gpus}]}]) -> the
             same job trace: GPUs of the first attempt, duration from the first attempt's start
             to the last one's end.

Rows are sorted by time (the readers need times that never decrease). Rows that cannot be a
request or a job are left out and counted on stderr: no GPUs (CPU jobs), no recorded start or end,
a non-positive duration, a request generating no token. A row that cannot be read at all (a
malformed number or time) is an error naming the file and line (exit 2). The output is written
whole or not at all, and never over the input.
"""
import argparse
import csv
import json
import math
import os
import sys
import tempfile
from datetime import datetime
from pathlib import Path


class TraceError(Exception):
    """A row that cannot be read: names the file and the line."""


def parse_time(text: str, where: str) -> datetime:
    text = text.strip()
    if "." in text:  # Azure writes 7 fractional digits; Python reads at most 6
        head, frac = text.split(".", 1)
        text = head + "." + frac[:6]
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        raise TraceError(f"{where}: expected a date-time such as 2023-11-16 18:15:46.68; got {text!r}") from None


def parse_int(text: str, where: str, what: str) -> int:
    try:
        value = float(text)
    except ValueError:
        raise TraceError(f"{where}: {what}: expected a number; got {text!r}") from None
    if not math.isfinite(value) or value != int(value) or value < 0:
        raise TraceError(f"{where}: {what}: expected a whole number >= 0; got {text!r}")
    return int(value)


def csv_rows(path: Path, required: list):
    """(line number, row dict) of a CSV whose header names `required` (a BOM is allowed)."""
    with open(path, newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        header = [h.strip() for h in (reader.fieldnames or [])]
        missing = [c for c in required if c not in header]
        if missing:
            raise TraceError(f"{path}:1: the header must name {', '.join(required)}; missing {', '.join(missing)}")
        reader.fieldnames = header
        for row in reader:
            yield reader.line_num, row


def azure_llm(path: Path):
    rows, dropped = [], {"no generated token": 0}
    for line, row in csv_rows(path, ["TIMESTAMP", "ContextTokens", "GeneratedTokens"]):
        where = f"{path}:{line}"
        t = parse_time(row["TIMESTAMP"], where)
        prompt = parse_int(row["ContextTokens"], where, "ContextTokens")
        output = parse_int(row["GeneratedTokens"], where, "GeneratedTokens")
        if output == 0:
            dropped["no generated token"] += 1
            continue
        rows.append((t, prompt, output))
    rows.sort(key=lambda r: r[0])
    start = rows[0][0] if rows else None
    out = [(round((t - start).total_seconds(), 6), p, o) for t, p, o in rows]
    return ["timestamp", "prompt_tokens", "output_tokens"], out, dropped


def jobs_out(jobs, queue_from):
    """jobs: (submit datetime, gpus, duration s, vc) -> header and rows with times from the first."""
    jobs.sort(key=lambda j: j[0])
    start = jobs[0][0] if jobs else None
    header = ["submit_time", "gpus", "duration"] + (["queue"] if queue_from == "vc" else [])
    rows = []
    for t, gpus, duration, vc in jobs:
        row = [round((t - start).total_seconds(), 3), gpus, round(duration, 3)]
        if queue_from == "vc":
            row.append(vc)
        rows.append(tuple(row))
    return header, rows


def helios(path: Path, queue_from: str):
    jobs, dropped = [], {"no GPU": 0, "no positive duration": 0}
    for line, row in csv_rows(path, ["vc", "gpu_num", "submit_time", "duration"]):
        where = f"{path}:{line}"
        gpus = parse_int(row["gpu_num"], where, "gpu_num")
        duration = parse_int(row["duration"], where, "duration")
        if gpus == 0:
            dropped["no GPU"] += 1
            continue
        if duration <= 0:
            dropped["no positive duration"] += 1
            continue
        jobs.append((parse_time(row["submit_time"], where), gpus, float(duration), row["vc"].strip()))
    header, rows = jobs_out(jobs, queue_from)
    return header, rows, dropped


def philly(path: Path, queue_from: str):
    try:
        with open(path, encoding="utf-8-sig") as f:
            log = json.load(f)
    except json.JSONDecodeError as e:
        raise TraceError(f"{path}:{e.lineno}: not JSON ({e.msg})") from None
    if not isinstance(log, list):
        raise TraceError(f"{path}:1: expected a JSON list of jobs")
    jobs, dropped = [], {"no attempt with a start and an end": 0, "no GPU": 0, "no positive duration": 0}
    for i, job in enumerate(log):
        where = f"{path}: job {i} ({job.get('jobid', '?') if isinstance(job, dict) else '?'})"
        if not isinstance(job, dict) or "submitted_time" not in job:
            raise TraceError(f"{where}: expected an object with submitted_time")
        attempts = [a for a in job.get("attempts") or [] if a.get("start_time") and a.get("end_time")]
        if not attempts:
            dropped["no attempt with a start and an end"] += 1
            continue
        gpus = sum(len(d.get("gpus") or []) for d in attempts[0].get("detail") or [])
        if gpus == 0:
            dropped["no GPU"] += 1
            continue
        begin = parse_time(attempts[0]["start_time"], where)
        end = parse_time(attempts[-1]["end_time"], where)
        duration = (end - begin).total_seconds()
        if duration <= 0:
            dropped["no positive duration"] += 1
            continue
        jobs.append((parse_time(job["submitted_time"], where), gpus, duration, str(job.get("vc", ""))))
    header, rows = jobs_out(jobs, queue_from)
    return header, rows, dropped


def write_atomically(out: Path, header, rows):
    fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(header)
            w.writerows(rows)
        os.replace(tmp, out)
    except BaseException:
        os.unlink(tmp)
        raise


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("format", choices=["azure-llm", "helios", "philly"])
    ap.add_argument("input", type=Path)
    ap.add_argument("output", type=Path)
    ap.add_argument("--queue-from", choices=["none", "vc"], default="none",
                    help="job traces: the virtual cluster as the queue column (declare the queues in fleet.scheduler.queues)")
    args = ap.parse_args(argv)
    if not args.input.is_file():
        print(f"error: {args.input}: no such file", file=sys.stderr)
        return 2
    if args.output.exists() and args.output.resolve() == args.input.resolve():
        print(f"error: {args.output}: is the input; write the converted trace elsewhere", file=sys.stderr)
        return 2
    if not args.output.parent.is_dir():
        print(f"error: {args.output}: its folder does not exist", file=sys.stderr)
        return 2
    if args.output.is_dir():
        print(f"error: {args.output}: is a directory; name the file to write", file=sys.stderr)
        return 2
    try:
        if args.format == "azure-llm":
            header, rows, dropped = azure_llm(args.input)
        elif args.format == "helios":
            header, rows, dropped = helios(args.input, args.queue_from)
        else:
            header, rows, dropped = philly(args.input, args.queue_from)
    except TraceError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except UnicodeDecodeError as e:
        print(f"error: {args.input}: not UTF-8 text (byte {e.start}): a CSV or JSON file is expected", file=sys.stderr)
        return 2
    if not rows:
        print(f"error: {args.input}: no row is a request or a job", file=sys.stderr)
        return 2
    try:
        write_atomically(args.output, header, rows)
    except OSError as e:
        print(f"error: {args.output}: cannot be written ({e.strerror}); nothing was written", file=sys.stderr)
        return 2
    left_out = ", ".join(f"{n} ({why})" for why, n in dropped.items() if n)
    print(f"{args.output}: {len(rows)} rows" + (f"; left out {left_out}" if left_out else ""), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
