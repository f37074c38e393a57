"""Money as a planner means it, end to end: reserved capacity billed every hour of the run
whether used or not, owned fleets priced term by term (by hand, with and without a fabric),
cost breakdowns that add up, per-token and per-request costs by hand, and bad ownership fields
named by their path."""
import json

import pytest

import clustersim as cs
from conftest import ROOT, run_cli

BY_HAND = ROOT / "scenarios" / "training_run_by_hand.json"
MMC = ROOT / "scenarios" / "serving_mmc_erlang_c.json"
LLM = ROOT / "scenarios" / "serving_llm_diurnal_hpa.json"
JOBS_ON_FABRIC = ROOT / "scenarios" / "jobs_training_placement.json"
OWNED_1024 = ROOT / "scenarios" / "training_run_owned_1024_h100.json"

# A node bought for $300k, amortized over 3 years, 8% a year of maintenance, 10 kW at load in a
# PUE 1.3 hall at $0.10/kWh, hosted at $150 per kW-month.
OWNERSHIP = {"node_price": "$300000", "years": 3, "maintenance": 0.08, "power": "10kW", "pue": 1.3,
             "energy_price": 0.10, "hosting": 150}
TERMS = {  # $ per node-hour, by hand
    "amortization": 300000 / (3 * 8760),
    "maintenance": 300000 * 0.08 / 8760,
    "energy": 10 * 1.3 * 0.10,
    "hosting": 10 * 150 * 12 / 8760,
}
RATE = sum(TERMS.values())  # $15.76 per node-hour


def owned(path, **extra):
    doc = cs.Scenario.load(path).to_dict()
    doc["fleet"].pop("market", None)
    doc["fleet"]["ownership"] = dict(OWNERSHIP, **extra)
    return cs.Scenario(doc)


def assert_breakdown_adds_up(block):
    assert sum(block["cost_breakdown_usd"].values()) == pytest.approx(block["cost_usd"], rel=1e-12)


def test_an_owned_training_run_costs_the_formula_for_every_hour_of_the_run():
    t = cs.run(owned(BY_HAND)).summary["training_run"]
    # 4 nodes owned for the 9,300 s run, the failed one included while it is replaced.
    hours = 4 * 9300 / 3600
    assert t["wall_time_s"] == 9300
    assert t["cost_usd"] == pytest.approx(hours * RATE)
    for term, per_hour in TERMS.items():
        assert t["cost_breakdown_usd"][term] == pytest.approx(hours * per_hour)
    assert t["cost_breakdown_usd"]["network"] == 0
    assert t["cost_usd_by_market"]["owned"] == pytest.approx(t["cost_usd"])
    assert t["cost_usd_by_market"]["on_demand"] == 0
    assert t["energy_kwh"] == pytest.approx(hours * 10 * 1.3)
    assert_breakdown_adds_up(t)


def test_the_text_report_gives_an_owned_fleets_terms(tmp_path):
    f = tmp_path / "owned.json"
    f.write_text(owned(BY_HAND).to_json())
    text = run_cli("run", f, check=True).stdout
    cost = next(line for line in text.splitlines() if line.strip().startswith("cost"))
    assert "owned: amortization $" in cost and "hosting $" in cost and "MWh" in cost
    assert "node-h" not in cost


def test_an_owned_serving_pool_bills_its_max_replicas_for_the_whole_run():
    sc = owned(MMC).set("run.replications", 1)
    s = cs.run(sc).summary["serving"]
    hours = 130 / 60
    # 8 plain-server replicas (a node each) owned for the whole run.
    assert s["cost_usd"] == pytest.approx(8 * hours * RATE)
    assert s["cost_usd_by_market"]["owned"] == pytest.approx(s["cost_usd"])
    assert s["energy_kwh"] == pytest.approx(8 * hours * 10 * 1.3)
    assert_breakdown_adds_up(s)


def test_the_fabric_is_amortized_with_the_nodes_where_a_topology_is_given():
    s = cs.run(owned(JOBS_ON_FABRIC)).summary
    j, fabric = s["jobs"], s["fabric"]["network_cost_usd"]
    assert fabric > 0
    hours = s["sim_time_s"] / 3600
    assert hours == pytest.approx(48)
    assert j["cost_breakdown_usd"]["network"] == pytest.approx(hours * fabric / (3 * 8760))
    assert j["cost_breakdown_usd"]["amortization"] == pytest.approx(16 * hours * TERMS["amortization"])
    assert j["cost_usd"] == pytest.approx(16 * hours * RATE + hours * fabric / (3 * 8760))
    assert_breakdown_adds_up(j)


def test_reserved_nodes_are_billed_while_failed():
    t = cs.run(cs.Scenario.load(BY_HAND).set("fleet.reserved", 4)).summary["training_run"]
    # All 4 nodes reserved ($52 a node-hour in the catalog): the one that failed at 3,000 s is
    # replaced 600 s later, held 600 s less, and billed all the same.
    assert t["node_hours_by_market"]["reserved"] == pytest.approx((4 * 9300 - 600) / 3600)
    assert t["cost_usd"] == pytest.approx(4 * 9300 / 3600 * 52.0)
    assert t["cost_breakdown_usd"] == {"on_demand": 0, "spot": 0, "reserved": pytest.approx(t["cost_usd"]), "serverless": 0}


def test_reserved_replicas_are_billed_when_idle_and_used_first():
    sc = cs.Scenario.load(MMC).set("run.replications", 1).set("fleet.reserved", 11)
    s = cs.run(sc).summary["serving"]
    hours = 130 / 60
    # 8 replicas run, all reserved (used first); the 11 committed are billed for the whole run.
    assert s["replica_hours_by_market"]["reserved"] == pytest.approx(8 * hours)
    assert s["replica_hours_by_market"]["on_demand"] == 0
    reserved_price = s["cost_usd"] / (11 * hours)
    on_demand = cs.run(cs.Scenario.load(MMC).set("run.replications", 1)).summary["serving"]
    assert reserved_price == pytest.approx(on_demand["cost_usd"] / (8 * hours) * 52.0 / 98.32)
    assert_breakdown_adds_up(s)


def test_cost_per_million_requests_and_tokens_by_hand():
    s = cs.run(cs.Scenario.load(MMC).set("run.replications", 1).set("run.warmup", 0)).summary["serving"]
    # 8 one-GPU replicas of a p5.48xlarge ($98.32 / 8 per replica-hour) for 130 min.
    assert s["cost_usd"] == pytest.approx(8 * 130 / 60 * 98.32 / 8)
    assert s["cost_per_million_requests_usd"] == pytest.approx(s["cost_usd"] / s["completed"] * 1e6)
    assert "cost_per_million_tokens_usd" not in s
    llm = cs.run(cs.Scenario.load(LLM).set("run.until", "2h")).summary["serving"]
    tokens = llm["llm"]["output_tokens"]
    assert tokens == pytest.approx(llm["llm"]["output_tokens_per_s"] * 7200, rel=0.02)
    assert llm["cost_per_million_tokens_usd"] == pytest.approx(llm["cost_usd"] / tokens * 1e6)
    assert "cost_per_million_requests_usd" not in llm


def test_cost_per_billion_tokens_trained_by_hand():
    t = cs.run(cs.Scenario.load(BY_HAND).set("workload.tokens_per_step", 1e6)).summary["training_run"]
    assert t["tokens_trained"] == 3600 * 1e6
    assert t["cost_per_billion_tokens_usd"] == pytest.approx(t["cost_usd"] / 3.6)
    assert "cost_per_billion_tokens_usd" not in cs.run(BY_HAND).summary["training_run"]


def test_an_accelerator_no_instance_holds_needs_its_price_not_another_instances():
    # MI325X is in no instance of data/instance_prices.json: a p5's price would be a wrong bill.
    proc = run_cli("run", BY_HAND, "--set", "hardware.gpu=MI325X")
    assert proc.returncode == 2 and proc.stdout == "", proc.stderr
    assert proc.stderr.startswith("error: fleet.prices.on_demand: required: no instance"), proc.stderr
    given = cs.Scenario.load(BY_HAND).set("hardware.gpu", "MI325X").set("fleet.prices.on_demand", "$60/h")
    t = cs.run(given).summary["training_run"]
    assert t["cost_usd"] == pytest.approx((4 * 9300 - 600) / 3600 * 60, rel=1e-9)  # 10.1667 node-h


def test_mi300x_runs_are_billed_at_the_first_instance_holding_it():
    # azure.ND96isr_MI300X_v5: 8 x MI300X at $48/h (data/instance_prices.json); vultr's at $14.80/h.
    mi = cs.Scenario.load(BY_HAND).set("hardware.gpu", "MI300X")
    assert cs.run(mi).summary["training_run"]["cost_usd"] == pytest.approx((4 * 9300 - 600) / 3600 * 48, rel=1e-9)
    vultr = cs.run(mi.set("fleet.instance", "vultr.mi300x_8x")).summary["training_run"]
    assert vultr["cost_usd"] == pytest.approx((4 * 9300 - 600) / 3600 * 14.8, rel=1e-9)


def test_the_owned_1024_gpu_scenario_states_its_hourly_rate():
    doc = json.loads(OWNED_1024.read_text())
    t = cs.run(cs.Scenario(doc)).summary["training_run"]
    rate = 250000 / (4 * 8760) + 25000 / 8760 + 10.2 * 1.58 * 0.08 + 10.2 * 160 * 12 / 8760
    assert round(rate, 2) == 13.51 and "$13.51 per hour held" in doc["description"]
    assert t["cost_usd"] == pytest.approx(128 * t["wall_time_s"] / 3600 * rate)
    assert t["cost_per_billion_tokens_usd"] == pytest.approx(t["cost_usd"] / (26e6 * 4194304 / 1e9))


@pytest.mark.parametrize("path, value, where, says", [
    ("fleet.ownership.pue", 0.9, "fleet.ownership.pue", "from 1 to 5"),
    ("fleet.ownership.years", 0, "fleet.ownership.years", "from 0.1 to 50"),
    ("fleet.ownership.power", "10kB", "fleet.ownership.power", "10.2kW"),
    ("fleet.ownership.power", "-3kW", "fleet.ownership.power", "above 0 and at most 10 MW"),
    ("fleet.ownership.node_price", "-5", "fleet.ownership.node_price", "money"),
    ("fleet.ownership.maintenance", 2, "fleet.ownership.maintenance", "from 0 to 1"),
    ("fleet.ownership.energy_price", "cheap", "fleet.ownership.energy_price", "number"),
    ("fleet.market", "spot", "fleet.market", "rents nothing"),
    ("fleet.reserved", 2, "fleet.reserved", "rents nothing"),
])
def test_bad_ownership_fields_name_their_path(path, value, where, says, tmp_path):
    sc = owned(BY_HAND).set(path, value)
    with pytest.raises(cs.ScenarioError, match=rf"^error: {where}") as err:
        cs.run(sc)
    assert says in str(err.value)
    doc = sc.to_dict()
    f = tmp_path / "owned.json"
    f.write_text(json.dumps(doc))
    proc = run_cli("run", f, "--out", tmp_path / "o")
    assert proc.returncode == 2 and proc.stderr.startswith(f"error: {where}")


@pytest.mark.parametrize("path, doc_path, value, where, says", [
    (BY_HAND, "fleet.reserved", 5, "fleet.reserved", "from 0 to 4"),
    (BY_HAND, "fleet.market", {"spot": 0.5}, "fleet.reserved", "at most 2"),
    (MMC, "fleet.market", {"reserved": 0.5}, "fleet.market", "fleet.reserved"),
    (MMC, "hardware.gpu", "B200", "fleet.ownership.node_price", "required"),
])
def test_bad_commitments_name_their_path(path, doc_path, value, where, says):
    sc = cs.Scenario.load(path)
    if where == "fleet.ownership.node_price":
        sc = owned(path)
        doc = sc.to_dict()
        del doc["fleet"]["ownership"]["node_price"]
        sc = cs.Scenario(doc)
    elif doc_path == "fleet.market" and path == BY_HAND:
        sc.set("fleet.reserved", 3)
    sc.set(doc_path, value)
    with pytest.raises(cs.ScenarioError, match=rf"^error: {where}") as err:
        cs.run(sc)
    assert says in str(err.value)


def test_the_schema_states_data_ownership_json_defaults():
    data = json.loads((ROOT / "data" / "ownership.json").read_text())
    props = json.loads((ROOT / "scenarios" / "schema.json").read_text())["properties"]["fleet"]["properties"]
    fields = props["ownership"]["properties"]
    for key in ("years", "maintenance", "pue", "energy_price", "hosting"):
        assert fields[key]["default"] == data[key]["value"], key
        assert data[key]["source"]
    assert "575 W" in fields["power"]["description"] and data["host_power_per_gpu_w"]["value"] == 575


def test_disaggregated_serving_bills_its_fabric_once():
    doc = cs.Scenario.load(ROOT / "scenarios" / "serving_disaggregated.json").to_dict()
    doc["fleet"]["ownership"] = {"years": 3}
    s = cs.run(cs.Scenario(doc)).summary
    hours, fabric = s["sim_time_s"] / 3600, s["fabric"]["network_cost_usd"]
    # Prefill and decode pools share one topology: its bill is amortized once.
    assert s["serving"]["cost_breakdown_usd"]["network"] == pytest.approx(hours * fabric / (3 * 8760))
    assert_breakdown_adds_up(s["serving"])


def test_a_job_clusters_reserved_nodes_are_billed_for_the_whole_run():
    s = cs.run(cs.Scenario.load(JOBS_ON_FABRIC).set("fleet.reserved", 4)).summary
    j, hours = s["jobs"], s["sim_time_s"] / 3600
    # 4 of the 16 nodes reserved at the catalog's $52, the other 12 on demand at $98.32.
    assert j["cost_usd_by_market"]["reserved"] == pytest.approx(4 * hours * 52.0)
    assert j["cost_usd_by_market"]["on_demand"] == pytest.approx(j["node_hours_by_market"]["on_demand"] * 98.32)
    assert j["node_hours_by_market"]["reserved"] <= 4 * hours + 1e-9
    assert_breakdown_adds_up(j)


def test_an_owned_mi300x_node_costs_data_ownership_json_s_estimate_by_hand():
    # data/ownership.json: 8 x MI300X at $175,000 (an estimate), 8 x (750 W board + 575 W host).
    doc = cs.Scenario.load(BY_HAND).set("hardware.gpu", "MI300X").to_dict()
    doc["fleet"].pop("market", None)
    doc["fleet"]["ownership"] = {}
    t = cs.run(cs.Scenario(doc)).summary["training_run"]
    kw = 8 * (750 + 575) / 1000
    rate = 175000 / (5 * 8760) + 17500 / 8760 + kw * 1.58 * 0.08 + kw * 160 * 12 / 8760
    assert t["cost_usd"] == pytest.approx(4 * t["wall_time_s"] / 3600 * rate, rel=1e-9)


@pytest.mark.parametrize("gpu, instance", [("TPU-v5e", "gcp.tpu-v5e"), ("Trainium2", "aws.trn2.48xlarge"),
                                           ("Inferentia2", "aws.inf2.24xlarge")])
def test_accelerators_only_rented_cannot_be_owned_even_at_a_given_price(gpu, instance, tmp_path):
    doc = owned(BY_HAND).set("hardware.gpu", gpu).to_dict()
    f = tmp_path / "owned.json"
    f.write_text(json.dumps(doc))
    proc = run_cli("run", f)
    assert proc.returncode == 2 and proc.stdout == "", proc.stderr
    assert proc.stderr.startswith(f"error: fleet.ownership: {gpu} cannot be owned: "), proc.stderr
    assert "only" in proc.stderr and f"fleet.instance {instance}" in proc.stderr
