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

    def route(self, src_rank: int, dst_rank: int) -> list[str]:
        """The links ("a->b" vertex names) from GPU src_rank to GPU dst_rank under the
        scenario's routing."""
        return list(_core.route_links(self._doc, int(src_rank), int(dst_rank)))

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

    def plot(self, ax=None, max_vertices: int = 2000):
        """Draw a small topology with matplotlib: switches by tier on top, nodes below."""
        import matplotlib.pyplot as plt
        import networkx as nx

        g = self.to_networkx()
        if g.number_of_nodes() > max_vertices:
            raise ValueError(f"{g.number_of_nodes()} vertices: too many to draw "
                             f"(max_vertices={max_vertices})")
        if ax is None:
            _, ax = plt.subplots(figsize=(10, 6))
        layer = {"gpu": 0, "node_switch": 1, "nic": 2}
        for name, attrs in g.nodes(data=True):
            attrs["layer"] = layer.get(attrs["kind"], 3 + attrs["tier"])
        pos = nx.multipartite_layout(g, subset_key="layer", align="horizontal")
        colors = {"gpu": "tab:green", "node_switch": "tab:olive", "nic": "tab:blue",
                  "switch": "tab:red"}
        nx.draw_networkx(g, pos, ax=ax, with_labels=g.number_of_nodes() <= 64, node_size=60,
                         font_size=6, node_color=[colors[a["kind"]] for _, a in g.nodes(data=True)],
                         edge_color="0.7")
        ax.set_title(f"{self.report['kind']}: {self.gpus} GPUs, {self.switches} switches")
        ax.set_axis_off()
        return ax

    def __repr__(self) -> str:
        r = self.report
        return (f"Topology({r['kind']}: {r['gpus']} GPUs, {r['nodes']} nodes, "
                f"{r['switches']} switches)")
