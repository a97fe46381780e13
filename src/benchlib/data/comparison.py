"""Runs compared with runs: each engine, variant and phase of later runs against the first run's,
judged by the one verdict rule (findings.judge). Above results (its statistics) and findings (its
rule), so that neither of those imports the other."""
from __future__ import annotations

from typing import Any, Callable

import pandas as pd

from ..core.errors import ParameterError
from . import findings
from .results import (WINDOW_KEYS, calibrations, contrast, cost_metric, loop_factor, measurements, operation_counts,
                      phase_costs, product_key, run_info, summarize)
from .store import Store


# Throughput and latency readings compared beside the cost where a workload's windows have them.
THROUGHPUT_READINGS = ("tps", "latency_p95")
HIGHER_IS_BETTER_READINGS = frozenset({"tps"})


COMPARISON_COLUMNS = ["run_id", "key", "engine", "base_engine", "labels", "phase", "metric", "unit", "mean", "ci95",
                      "n", "base_mean", "base_ci95", "base_n", "ratio", "ratio_ci95", "ratio_low", "ratio_high",
                      "welch_t", "welch_dof", "host_factor",
                      "beyond_noise", "flagged", "verdict"]


def compare_runs(run_ids: list[str], *, per_operation: Callable[[str], Any], match: str = "engine",
                 threshold: float = 0.05, store: Store | None = None) -> pd.DataFrame:
    """Each run's mean engine cost per operation per engine, variant and phase against the first
    run's: the ratio (with a 95% CI by the delta method), Welch's test of the difference, and its
    `verdict` (findings.judge, with `threshold`: seed 003's 5%; `flagged` where it is better or
    worse), whose drift band between two runs is the engine's median calibration loop in the
    compared run over the base run's (`host_factors`). The loop is the harness's own thread on the
    engine's CPUs, outside its cgroup: a CPU quota does not slow it, so the band does not move with
    the very change it should reveal.
    The operation is the experiment's (`Workload.per_operation`: a row, a transaction, an object):
    a fixed-duration window of a saturated engine costs cores x seconds whatever its throughput,
    so only a cost per operation can show its change. Where the windows report throughput and
    p95 latency (sysbench), they are compared the same way beside the cost. `match="product"`
    pairs engines across versions (postgres@15 in one run with postgres@17 in the other).
    `per_operation`: as `operation_counts` takes it."""
    df = measurements(run_ids, store)
    metric, unit, _ = cost_metric(df)
    timed = findings.drift_applies(unit)
    host = host_factors(df, run_ids, match)
    costs = phase_costs(df, metric)
    costs = costs[~costs["is_baseline"]].copy()
    per = per_operation(run_info(run_ids[0], store)["experiment"])
    if per is not None:
        counts = operation_counts(df, store, per_operation=per_operation)
        costs["value"] = costs["value"].to_numpy() / counts.reindex(
            pd.MultiIndex.from_frame(costs[WINDOW_KEYS])).to_numpy()
        costs = costs[costs["value"].notna()]
        unit = f"{unit} per {per.noun}"
    costs["key"] = [product_key(e) if match == "product" else e for e in costs["engine"]]
    pooled = costs.groupby(["run_id", "key"])["engine"].nunique()
    if (pooled > 1).any():
        run_id, key = pooled[pooled > 1].index[0]
        versions = sorted(set(costs[(costs["run_id"] == run_id) & (costs["key"] == key)]["engine"]))
        raise ParameterError(f"match='product' cannot pair engines across runs: run {run_id} measured several "
                             f"versions of {key} ({', '.join(versions)}); use match='engine'")
    by = ("run_id", "key", "labels", "phase")
    summary = summarize(costs, by=by)
    summary = summary.merge(costs.groupby(["run_id", "key"])["engine"].first().rename("engine_key"),
                            on=["run_id", "key"], how="left")
    extra = {name: _window_reading(df, name, match) for name in THROUGHPUT_READINGS}
    keys = ["key", "labels", "phase"]
    # A variant measured in one run only (a rerun of two engines out of six) has nothing to compare.
    in_runs = summary.groupby(keys, dropna=False)["run_id"].transform("nunique")
    summary = summary[in_runs > 1]
    base = summary[summary["run_id"] == run_ids[0]].set_index(keys)
    rows = []
    for row in summary.to_dict("records"):
        k = (row["key"], row["labels"], row["phase"])
        if k not in base.index:
            continue  # measured in this run only: nothing to compare with
        b = base.loc[k]
        factor = host.get((row["run_id"], row["key"]), float("nan"))
        out = {"run_id": row["run_id"], "key": row["key"], "engine": row["engine_key"],
               "base_engine": b["engine_key"], "labels": row["labels"], "phase": row["phase"], "metric": metric,
               "unit": unit, "host_factor": factor if timed else float("nan"),
               **judged(contrast(b, row, "value", threshold), threshold=threshold,
                        host_factor=factor if timed else None)}
        for name, readings in extra.items():
            mine, theirs = (row["run_id"], *k), (run_ids[0], *k)
            if mine in readings.index and theirs in readings.index:
                c = judged(contrast(readings.loc[theirs], readings.loc[mine], "value", threshold),
                           higher_is_better=name in HIGHER_IS_BETTER_READINGS, threshold=threshold,
                           host_factor=factor)
                out.update({name: c["mean"], f"base_{name}": c["base_mean"], f"{name}_ratio": c["ratio"],
                            f"{name}_ratio_ci95": c["ratio_ci95"], f"{name}_flagged": c["flagged"],
                            f"{name}_verdict": c["verdict"]})
        rows.append(out)
    return pd.DataFrame(rows, columns=COMPARISON_COLUMNS + [f"{p}{n}{s}" for n in THROUGHPUT_READINGS for p, s in
                                                            (("", ""), ("base_", ""), ("", "_ratio"),
                                                             ("", "_ratio_ci95"), ("", "_flagged"),
                                                             ("", "_verdict"))])


def host_factors(df: pd.DataFrame, run_ids: list[str], match: str = "engine") -> dict[tuple[str, str], float]:
    """(run, engine key) -> that engine's median calibration loop in the run over its loop in the
    first run (results.loop_factor: 1.2, the run's host ran 1.2x slower for it), for every later
    run and engine calibrated in both."""
    loops = calibrations(df)
    if loops.empty:
        return {}
    loops = loops.assign(key=[product_key(e) if match == "product" else e for e in loops["engine"]])
    out = {}
    for run_id, key in loops[["run_id", "key"]].drop_duplicates().itertuples(index=False):
        factor = loop_factor(loops, (run_id, key), (run_ids[0], key), by=["run_id", "key"])
        if run_id != run_ids[0] and factor == factor:
            out[(run_id, key)] = factor
    return out


def judged(c: dict, *, higher_is_better: bool = False, threshold: float = 0.05,
           host_factor: float | None = None) -> dict:
    """A `contrast` dict with its verdict (findings.judge, the one noise rule) and `flagged`
    (the verdict is better or worse) from that verdict."""
    verdict = findings.judge(c["ratio"], c["ratio_low"], c["ratio_high"], c["beyond_noise"],
                    higher_is_better=higher_is_better, threshold=threshold, host_factor=host_factor, n=c.get("n"),
                    base_n=c.get("base_n"))
    return {**c, "verdict": verdict.value, "flagged": verdict in (findings.Verdict.BETTER, findings.Verdict.WORSE)}


def _window_reading(df: pd.DataFrame, name: str, match: str) -> pd.DataFrame:
    """summarize() of a reading of the phase windows per run, engine key, variant and phase."""
    rows = df[(df["metric"] == name) & (df["window"] == "phase")]
    if rows.empty:
        return pd.DataFrame()
    rows = rows.assign(key=[product_key(e) if match == "product" else e for e in rows["engine"]])
    per_rep = rows.groupby(["run_id", "key", "labels", "phase", "repetition"], dropna=False)["value"].sum(min_count=1)
    return summarize(per_rep.reset_index(), columns=("value",), by=("run_id", "key", "labels", "phase")
                     ).set_index(["run_id", "key", "labels", "phase"])
