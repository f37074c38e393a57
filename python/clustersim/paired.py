"""Paired comparisons of variants of one scenario (autoscaling policies, schedulers, fleets)
under common random numbers: every variant runs at the same seeds, so the difference is
measured seed by seed and its 95% interval is the paired one. The C++ core runs it
(sim/studies/paired.hpp)."""
from __future__ import annotations

import json
import warnings
from typing import TYPE_CHECKING, Mapping

from . import _core
from .scenario import Scenario, scenario_error, whole_number

if TYPE_CHECKING:
    import os
    from typing import Any, Iterable


class PairedComparison:
    """What `paired` returns. result: the whole comparison (dict); variants: a DataFrame, one
    row per variant and key (label, key, mean, ci95); differences: a DataFrame, one row per
    key and variant against the baseline (the first variant): mean and ci95 of the per-seed
    difference, conclusive (its interval excludes 0), lower/higher/equal (seeds where the
    variant's number was below, above or equal to the baseline's); warnings: the differences
    whose seeds disagree while the interval covers 0 (also raised as UserWarning)."""

    def __init__(self, result_json: str):
        self.result = json.loads(result_json)
        self.warnings = list(self.result["warnings"])

    @property
    def variants(self):
        import pandas as pd

        return pd.DataFrame([{"label": v["label"], "key": key, "mean": n["mean"], "ci95": n["ci95"]}
                             for v in self.result["variants"] for key, n in v["numbers"].items()])

    @property
    def differences(self):
        import pandas as pd

        return pd.DataFrame(self.result["differences"])

    def __repr__(self) -> str:
        lines = [f"{d['key']}: {d['variant']} - {d['baseline']} = {d['mean']:.6g} +- {d['ci95']:.3g} "
                 f"(95%, {self.result['replications']} common seeds){'' if d['conclusive'] else ', inconclusive'}"
                 for d in self.result["differences"]]
        return "\n".join(lines + [f"warning: {w}" for w in self.warnings])


def paired(scenario: Scenario | str | os.PathLike, variants: Mapping[str, Mapping[str, Any]],
           keys: Iterable[str] | str, replications: int = 10, jobs: int = 0) -> PairedComparison:
    """Run each variant ({label: {path: value}}, the first the baseline) at the scenario's
    seed, seed + 1, ..., seed + replications - 1 (one replication per run) and compare each
    summary number in `keys` ("serving.cost_usd", ...) seed by seed: per variant its mean and
    95% interval, per variant against the baseline the paired difference's mean and 95%
    interval. A difference whose seeds disagree while its interval covers 0 is warned about
    (UserWarning): a conclusion from one seed would rest on chance. jobs: runs at once (0:
    every core); the same result for any value."""
    if isinstance(keys, str):
        keys = [keys]
    if not isinstance(variants, Mapping):
        raise scenario_error("paired", f"variants: a dict {{label: {{path: value}}}}; got {type(variants).__name__}")
    base = scenario if isinstance(scenario, Scenario) else Scenario.load(scenario)
    pairs = [[str(label), [[path, value] for path, value in dict(point).items()]] for label, point in variants.items()]
    # Whole numbers, as the other calls' counts (a float 2.5 or a billion seeds is a mistake).
    # 0 reaches the C++ check (a ScenarioError naming what it takes); at most 10,000 seeds.
    replications = whole_number("replications", replications, 0, 10_000)
    jobs = whole_number("jobs", jobs, 0, 1024)
    result = PairedComparison(_core.paired(base.to_json(), json.dumps(pairs), [str(k) for k in keys],
                                           replications, jobs))
    for w in result.warnings:
        warnings.warn(w, UserWarning, stacklevel=2)
    return result
