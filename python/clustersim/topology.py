"""Topology: the network a scenario describes, as `clustersim topo` reports it."""
from __future__ import annotations

import json

from . import _core


class Topology:
    """The topology of a scenario: its report (counts, diameter, bisection, cost, power),
    routes between ranks, and its graph as networkx. Built by the C++ core on demand."""

    def __init__(self, doc_json: str):
        self._doc = doc_json
        self.report: dict = json.loads(_core.topology_report(doc_json))
        self._graph = None

    @classmethod
    def from_scenario(cls, sc) -> "Topology":
        """From a clustersim.Scenario (its current values, overrides included)."""
        return cls(sc.to_json())

    # Counts, as in the report.
    @property
    def gpus(self) -> int:
        return self.report["gpus"]

    @property
    def nodes(self) -> int:
        return self.report["nodes"]

    @property
    def nics(self) -> int:
        return self.report["nics"]

    @property
    def switches(self) -> int:
        return self.report["switches"]

    @property
    def links(self) -> int:
        return self.report["links"]

    def route(self, src_rank: int, dst_rank: int, flow_key: int = 0) -> list[str]:
        """The links ("a->b" vertex names) from GPU src_rank to GPU dst_rank under the
        scenario's routing, for the flow `flow_key`: hashed routings (ecmp, valiant) pick a path
        per flow, and a traffic workload's flow i has key i, as flows.csv's route column shows.
        Load-aware routings (adaptive, ugal, ugal_packet) answer for an idle fabric; spray,
        which splits a flow over all its equal-cost paths, gives the first of them;
        valiant_packet gives its g - 2 paths (one per intermediate group) one after another,
        ugal_packet its 4 (g - 2) lanes (on an idle fabric every one the minimal path)."""
        return list(_core.route_links(self._doc, int(src_rank), int(dst_rank), int(flow_key)))

    def graph(self) -> dict:
        """{"vertices": [{name, kind, tier, node}], "cables": [{a, b, kind, bandwidth_Bps,
        latency_s}]}."""
        if self._graph is None:
            self._graph = json.loads(_core.topology_graph(self._doc))
        return self._graph

    def to_networkx(self):
        """A networkx.MultiGraph: vertices with kind/tier/node attributes, one edge per cable
        with kind, bandwidth_Bps (per direction) and latency_s."""
        import networkx as nx

        g = nx.MultiGraph()
        data = self.graph()
        for v in data["vertices"]:
            g.add_node(v["name"], kind=v["kind"], tier=v["tier"], node=v["node"])
        for c in data["cables"]:
            g.add_edge(c["a"], c["b"], kind=c["kind"], bandwidth_Bps=c["bandwidth_Bps"],
                       latency_s=c["latency_s"])
        return g

    def plot(self, ax=None, max_vertices: int = 2000, aggregate: bool | None = None):
        """Draw the topology with matplotlib. Small fabrics (at most `max_vertices` vertices,
        unless aggregate=True): every vertex, switches by tier on top, nodes below. Larger
        ones (or aggregate=True): one box per fat-tree tier or dragonfly group (the nodes as
        one box), lines between boxes for the cables joining them, labelled with their count
        and bandwidth; boxes say how many switches and cables they hold."""
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots(figsize=(10, 6))
        data = self.graph()
        if aggregate is None:
            aggregate = len(data["vertices"]) > max_vertices
        if aggregate:
            self._plot_groups(ax, data)
        else:
            self._plot_vertices(ax)
        ax.set_title(f"{self.report['kind']}: {self.gpus} GPUs, {self.switches} switches")
        ax.set_axis_off()
        return ax

    def _plot_vertices(self, ax):
        import networkx as nx

        g = self.to_networkx()
        layer = {"gpu": 0, "node_switch": 1, "nic": 2}
        for name, attrs in g.nodes(data=True):
            attrs["layer"] = layer.get(attrs["kind"], 3 + attrs["tier"])
        pos = nx.multipartite_layout(g, subset_key="layer", align="horizontal")
        colors = {"gpu": "tab:green", "node_switch": "tab:olive", "nic": "tab:blue",
                  "switch": "tab:red"}
        nx.draw_networkx(g, pos, ax=ax, with_labels=g.number_of_nodes() <= 64, node_size=60,
                         font_size=6, node_color=[colors[a["kind"]] for _, a in g.nodes(data=True)],
                         edge_color="0.7")

    def _group_of(self, v) -> str:
        """The box a vertex is drawn in: the nodes (GPUs, NICs, node switches), a fat-tree
        tier (leaf, spine, core), a dragonfly group (g<i>), or the fabric's switches."""
        if v["kind"] != "switch":
            return "nodes"
        name, kind = v["name"], self.report["kind"]
        if kind == "fat_tree":
            return name.rstrip("0123456789")
        if kind == "dragonfly":
            return name.split(".")[0]
        return "switches"

    def _plot_groups(self, ax, data):
        import math
        from collections import Counter, defaultdict

        group = {v["name"]: self._group_of(v) for v in data["vertices"]}
        members = Counter(g for v, g in group.items() if g != "nodes")
        inside = Counter()
        between = defaultdict(lambda: [0, 0.0])
        for c in data["cables"]:
            a, b = group[c["a"]], group[c["b"]]
            if a == b:
                inside[a] += 1
            else:
                key = tuple(sorted((a, b)))
                between[key][0] += 1
                between[key][1] += c["bandwidth_Bps"]
        boxes = sorted(members) + ["nodes"]
        kind = self.report["kind"]
        pos = {}
        if kind == "dragonfly":
            n = len(members)
            for i, g in enumerate(sorted(members, key=lambda x: int(x[1:]))):
                pos[g] = (math.cos(2 * math.pi * i / n), math.sin(2 * math.pi * i / n))
            pos["nodes"] = (0.0, -1.45)  # beside the ring: each group's own nodes
        else:
            order = {"leaf": 1, "spine": 2, "core": 3}
            tiers = sorted(members, key=lambda t: order.get(t, 9))
            for i, t in enumerate(tiers):
                pos[t] = (0.0, float(i + 1))
            pos["nodes"] = (0.0, 0.0)
        widest = max((n for n, _ in between.values()), default=1)
        for (a, b), (n, bw) in between.items():
            if kind == "dragonfly" and "nodes" in (a, b):
                continue  # every group's own nodes: said in its label
            (x0, y0), (x1, y1) = pos[a], pos[b]
            ax.plot([x0, x1], [y0, y1], color="0.6", lw=0.5 + 3 * math.log1p(n) / math.log1p(widest), zorder=1)
            if kind != "dragonfly" or len(members) <= 16:
                ax.annotate(f"{n} x {bw / n * 8 / 1e9:.0f}G", ((x0 + x1) / 2, (y0 + y1) / 2), fontsize=7,
                            ha="center", color="0.3")
        for b in boxes:
            if b == "nodes":
                label = f"{self.nodes} nodes\n{self.gpus} GPUs, {self.nics} NICs"
                if kind == "dragonfly":
                    label += f"\n{self.nodes // max(len(members), 1)} per group"
            else:
                label = f"{b}\n{members[b]} switches" + (f"\n{inside[b]} cables inside" if inside[b] else "")
            x, y = pos[b]
            ax.text(x, y, label, ha="center", va="center", fontsize=7, zorder=2,
                    bbox={"boxstyle": "round", "fc": "tab:blue" if b == "nodes" else "mistyrose", "ec": "0.4"})
        xs = [p[0] for p in pos.values()]
        ys = [p[1] for p in pos.values()]
        ax.set_xlim(min(xs) - 0.6, max(xs) + 0.6)
        ax.set_ylim(min(ys) - 0.6, max(ys) + 0.6)

    def __repr__(self) -> str:
        r = self.report
        return (f"Topology({r['kind']}: {r['gpus']} GPUs, {r['nodes']} nodes, "
                f"{r['switches']} switches)")
