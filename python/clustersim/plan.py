"""Plan search: every valid parallel plan of a training scenario, simulated and ranked."""
from __future__ import annotations

import json
from typing import TYPE_CHECKING

from . import _core
from .result import as_scenario
from .scenario import whole_number

if TYPE_CHECKING:
    import os

    from .scenario import Scenario


def plan(scenario: Scenario | dict | str | os.PathLike, jobs: int = 1, refine: int = 10, only: dict | None = None,
         memory_headroom: float | None = None, max_time: float | str = "1h"):
    """Every valid parallel plan (tp, pp, dp, cp, ep, micro-batch, ZeRO stage, schedule,
    recomputation) of the scenario's training model on its cluster, as `clustersim plan`: plans
    that do not fit in the GPU's memory less its headroom are dropped (`memory_headroom`, the
    share kept free, 0 to 0.5; None: the scenario's workload.memory_headroom, 0.05 by default), the rest ranked (`jobs` at once; the result
    does not depend on it): every plan bounded without a simulation (compute and pipeline
    bubble, communication free), those whose bound could reach the top screened without
    contention, the best `refine` simulated whole on the scenario's network; ranked by tokens/s.
    Returns a pandas DataFrame, one row per fitting plan, best first (the columns of
    `clustersim plan --out`; "simulation" says "network", "screening" or "bound", whose
    screening_tokens_per_s is NaN), with the counts in DataFrame.attrs: plans_valid,
    plans_dropped, plans_dropped_in_headroom (within the GPU's memory but not its headroom),
    memory_headroom, plans_simulated (the rows), plans_screened, plans_refined, model, gpus, gpu,
    global_batch.
    `only` narrows the plans, as `clustersim plan --only`: {"schedule": ["1f1b", "interleaved"],
    "zero": [1], "recompute": ["selective"], "micro": [1, 2], "virtual_stages": [2, 4], "max_cp": 2};
    a bad key or value raises ScenarioError with path "only". `jobs` (1-1024) and `refine` (>= 0)
    are whole numbers, as the CLI's options: anything else is a ValueError. A search estimated
    to take longer than `max_time` (seconds, or a duration such as "30min"; `--max-time`) is
    refused before it starts: ScenarioError with path "max_time", the estimate and how to
    narrow it."""
    import pandas as pd

    scenario = as_scenario(scenario)
    if memory_headroom is not None:  # as `clustersim plan --memory-headroom`
        scenario = scenario.copy().set("workload.memory_headroom", memory_headroom)
    # The CLI's ranges (clustersim plan -j, --refine).
    jobs = whole_number("jobs", jobs, 1, 1024)
    refine = whole_number("refine", refine, 0, 1 << 30)
    restrictions = []
    for key, values in (only or {}).items():
        values = values if isinstance(values, (list, tuple)) else [values]
        restrictions.append(f"{key}=" + ",".join(str(v) for v in values))
    if isinstance(max_time, bool) or not isinstance(max_time, (int, float, str)):
        raise ValueError(f"max_time: expected seconds or a duration such as \"30min\"; got {max_time!r}")
    result = json.loads(_core.plan(scenario.to_json(), jobs, refine, restrictions, str(max_time)))
    columns = ["rank", "tokens_per_s", "step_time_s", "mfu", "model_tflops_per_gpu", "tflops_per_gpu",
               "bubble_fraction", "compute_s", "exposed_comm_s", "memory_per_gpu_bytes", "tp", "pp", "dp", "cp",
               "ep", "zero", "sequence_parallel", "schedule", "virtual_stages", "micro_batch", "micro_batches",
               "recompute", "simulation", "screening_tokens_per_s"]
    df = pd.DataFrame(result["plans"], columns=columns)
    for key in ("plans_valid", "plans_dropped", "plans_dropped_in_headroom", "memory_headroom", "plans_simulated", "plans_screened", "plans_refined", "model", "gpus", "gpu",
                "global_batch"):
        df.attrs[key] = result[key]
    return df
