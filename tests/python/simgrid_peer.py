"""SimGrid 3.32 as an independent reference for clustersim's max-min flow model.

`simulate(scenario)` takes a clustersim scenario (topology.kind "custom" whose fabric is a
tree, workload pattern "flows", zero latencies) and returns each flow's absolute completion
time as SimGrid computes it, in the scenario's flow order: the same order and quantity as the
finish_s column of clustersim's flows.csv (`clustersim run FILE --out DIR`), which the test
compares row by row.

SimGrid allows one Engine per process, so each simulation runs in a child process: this
file run as a script reads {"hosts", "links", "routes", "flows", "config"} (and optionally
"latencies": {link: seconds}, used only for experiments) as JSON on stdin and prints
{"finish": [...]} on stdout.

The platform mirrors the clustersim fabric with one SimGrid host per NIC, and every
full-duplex cable as two independent SimGrid links (one per direction, each with the
cable's bandwidth). Routes are explicit lists of directed links in a Full zone, found here
as the unique path in the tree (independently of clustersim's router). The GPU<->NIC PCIe
and GPU hops are left out: the test makes them 1000x faster than any fabric link, so they
never constrain a flow.

SimGrid's default network model (LV08) adds TCP corrections; CM02 with every correction
neutralised is plain max-min fair sharing (see SIMGRID_PLAIN_MAXMIN), but only with zero
latencies: CM02 weights each flow by its route latency (RTT unfairness) even with
weight-S 0, e.g. two flows on one 100 B/s link with 1 ms and 2 ms routes get 2:1 shares.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import deque

# Plain max-min in SimGrid 3.32 (option names from `--help` of an s4u program):
SIMGRID_PLAIN_MAXMIN = [
    "network/model:CM02",            # fluid max-min model (default LV08 = CM02 + TCP factors)
    "network/latency-factor:1",      # no latency correction (latencies are 0 anyway)
    "network/bandwidth-factor:1",    # full nominal bandwidth (LV08: 0.97)
    "network/weight-S:0",            # no RTT-based unfairness: every flow has weight 1
    "network/TCP-gamma:0",           # no TCP window bound on a flow's rate
    "network/crosstraffic:0",        # no ACK load (5% of the rate) on the reverse links
    "maxmin/precision:1e-9",         # rate rounding (bytes/s; default 1e-5)
    "surf/precision:1e-12",          # time/work rounding (s; default 1e-9)
]


def _bandwidth(value) -> float:
    """A bandwidth in bytes/s: the peer only accepts plain numbers (what the test writes)."""
    if isinstance(value, (int, float)):
        return float(value)
    raise ValueError(f"simgrid_peer wants numeric bandwidths (bytes/s), got {value!r}")


def tree_path(adj: dict, src: str, dst: str) -> list[tuple[int, int]]:
    """The unique path src->dst in a tree, as (cable index, direction) with direction 0 = a->b."""
    prev = {src: None}
    q = deque([src])
    while q:
        u = q.popleft()
        if u == dst:
            break
        for v, cable, direction in adj[u]:
            if v not in prev:
                prev[v] = (u, cable, direction)
                q.append(v)
    if dst not in prev:
        raise ValueError(f"no path {src} -> {dst}")
    hops = []
    v = dst
    while prev[v] is not None:
        u, cable, direction = prev[v]
        hops.append((cable, direction))
        v = u
    return hops[::-1]


def platform_from_scenario(scenario: dict) -> dict:
    """Hosts, directed links and routes (for the flows' node pairs) of a custom tree fabric."""
    topo = scenario["topology"]
    cables = topo["links"]
    nodes = int(topo["nodes"])
    vertices = [f"n{i}" for i in range(nodes)] + list(topo["switches"])
    if len(cables) != len(vertices) - 1:
        raise ValueError("simgrid_peer needs a tree fabric (unique routes): "
                         f"{len(vertices)} vertices but {len(cables)} cables")
    adj = {v: [] for v in vertices}
    links = {}
    for i, c in enumerate(cables):
        if c.get("latency", 0) not in (0, "0s"):
            raise ValueError("simgrid_peer expects zero-latency cables")
        bw = _bandwidth(c["bandwidth"])
        adj[c["a"]].append((c["b"], i, 0))
        adj[c["b"]].append((c["a"], i, 1))
        links[f"c{i}.ab"] = bw   # a -> b
        links[f"c{i}.ba"] = bw   # b -> a
    flows = scenario["workload"]["flows"]
    routes = {}
    for f in flows:
        key = f"n{f['src']} n{f['dst']}"
        if key not in routes:
            routes[key] = [f"c{c}.{'ab' if d == 0 else 'ba'}"
                           for c, d in tree_path(adj, f"n{f['src']}", f"n{f['dst']}")]
    return {"hosts": [f"n{i}" for i in range(nodes)], "links": links, "routes": routes,
            "flows": [{"src": f"n{f['src']}", "dst": f"n{f['dst']}", "bytes": int(f["bytes"]),
                       "start": float(f["start"])} for f in flows]}


def run_platform(spec: dict, config=SIMGRID_PLAIN_MAXMIN, timeout=120) -> list[float]:
    """Runs a platform spec in a child SimGrid process; returns each flow's finish time."""
    spec = dict(spec, config=list(config))
    proc = subprocess.run([sys.executable, os.path.abspath(__file__)], input=json.dumps(spec),
                          capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"SimGrid peer failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout)["finish"]


def simulate(scenario: dict, config=SIMGRID_PLAIN_MAXMIN) -> list[float]:
    """Each flow's absolute completion time in SimGrid, in the scenario's flow order."""
    return run_platform(platform_from_scenario(scenario), config)


def _child_main() -> None:
    spec = json.load(sys.stdin)
    import simgrid

    argv = ["simgrid_peer", "--log=root.thres:critical"]
    argv += [f"--cfg={c}" for c in spec["config"]]
    engine = simgrid.Engine(argv)
    zone = simgrid.NetZone.create_full_zone("fabric")
    hosts = {name: zone.create_host(name, 1e9) for name in spec["hosts"]}
    links = {}
    for name, bw in spec["links"].items():
        link = zone.create_link(name, float(bw))
        link.set_latency(float(spec.get("latencies", {}).get(name, 0.0)))
        links[name] = link.seal()
    for key, path in spec["routes"].items():
        src, dst = key.split()
        zone.add_route(hosts[src].netpoint, hosts[dst].netpoint, None, None,
                       [simgrid.LinkInRoute(links[l]) for l in path], False)
    zone.seal()

    finish = [None] * len(spec["flows"])

    def flow(i, f):
        if f["start"] > 0:
            simgrid.this_actor.sleep_until(f["start"])
        simgrid.Comm.sendto(hosts[f["src"]], hosts[f["dst"]], f["bytes"])
        finish[i] = simgrid.Engine.clock

    for i, f in enumerate(spec["flows"]):
        simgrid.Actor.create(f"flow{i}", hosts[f["src"]], flow, i, f)
    engine.run()
    if any(t is None for t in finish):
        raise RuntimeError("some SimGrid flows did not finish")
    json.dump({"finish": finish}, sys.stdout)


if __name__ == "__main__":
    _child_main()
