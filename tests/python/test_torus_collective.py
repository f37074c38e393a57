"""The torus algorithm (XLA's per-dimension bidirectional rings) on a TPU slice, end to end."""
import json

import pytest

import clustersim as cs

S = 2**30


def slice_of(shape, model="flow", **workload):
    doc = {"name": "t", "seed": 1, "hardware": {"gpu": "TPU-v5p"},
           "topology": {"kind": "tpu_slice", "shape": shape},
           "network": {"model": model, "protocol": "none"},
           "workload": {"kind": "collective", "sizes": [S], **workload}}
    return cs.Scenario.from_json(json.dumps(doc))


def times(sc):
    return {r["algorithm"]: r["time_s"] for r in cs.run(sc).summary["collective"]["results"]}


@pytest.mark.parametrize("model", ["flow", "analytical"])
def test_torus_all_reduce_is_the_closed_form_and_beats_the_ring(model):
    # v5p: 100 GB/s per ICI link each way; a neighbour step crosses PCIe, NIC, torus and NIC
    # cables of the tpu_slice's 0.5 us each way: 2.5 us.
    b, hop = 100e9, 2.5e-6
    t = times(slice_of([4, 4, 4], model, op="all_reduce", algorithm=["ring", "torus"]))
    share = 2 * (3 / 4 + 3 / 16 + 3 / 64)
    assert t["torus"] == pytest.approx(share * S / (2 * b) + 2 * 3 * 3 * hop, rel=1e-6)
    # One direction of one link per hop against both directions of every dimension's links.
    assert 1.9 < t["ring"] / t["torus"] < 2.1
    rs = times(slice_of([4, 4, 4], model, op="reduce_scatter", algorithm="torus"))["torus"]
    assert rs == pytest.approx(t["torus"] / 2, rel=1e-6)


def input_error(cli, tmp_path, doc):
    """The stderr of `clustersim run` on `doc`, which must exit 2 (invalid input)."""
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(doc))
    proc = cli("run", f)
    assert proc.returncode == 2, proc.stderr
    return proc.stderr


def test_torus_off_a_torus_is_an_input_error(cli, tmp_path):
    stderr = input_error(cli, tmp_path, {"name": "t", "hardware": {"node": {"gpus": 8}},
                                         "topology": {"kind": "single_node"},
                                         "workload": {"kind": "collective", "algorithm": "torus"}})
    assert "error: workload.algorithm:" in stderr and "torus fabric" in stderr
    assert "hint: use topology.kind tpu_slice or torus" in stderr


def test_auto_picks_the_torus_on_a_slice():
    res = cs.run(slice_of([4, 4, 4], op="all_reduce", algorithm="auto").set("network.protocol", "simple"))
    assert [r["algorithm"] for r in res.summary["collective"]["results"]] == ["torus"]


@pytest.mark.parametrize("model", ["flow", "analytical"])
def test_multislice_all_reduce_adds_the_dcn_ring_to_the_slices_rings(model):
    # Two v5e 4x4 slices: 50 GB/s ICI links each way, 25 Gb/s of DCN per chip. The slice's
    # reduce-scatters, a ring through the two chips at each position over the DCN on 1/16 of
    # the data, the slice's all-gathers. A DCN step: PCIe, NIC cable, up to the DCN switch and
    # down, NIC cable, PCIe: 6 x 0.5 us.
    sc = slice_of([4, 4], model, op="all_reduce", algorithm="torus")
    sc.set("hardware.gpu", "TPU-v5e").set("topology.slices", 2)
    b, dcn, hop, dcn_hop = 50e9, 25e9 / 8, 2.5e-6, 3e-6
    ici = 2 * (3 / 4 + 3 / 16) * S / (2 * b) + 2 * (3 + 3) * hop
    across = 2 * (1 / 2) * S / 16 / dcn + 2 * dcn_hop
    assert times(sc)["torus"] == pytest.approx(ici + across, rel=1e-6)


def test_multislice_needs_a_dcn_figure_where_none_is_built_in(cli, tmp_path):
    stderr = input_error(cli, tmp_path, {"name": "t", "hardware": {"gpu": "TPU-v4"},
                                         "topology": {"kind": "tpu_slice", "shape": [4, 4, 4], "slices": 2},
                                         "workload": {"kind": "collective", "algorithm": "torus"}})
    assert "error: topology.dcn_bandwidth:" in stderr and "hint:" in stderr
