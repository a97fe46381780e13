"""The arithmetic of the SSB notebook, on plain frames so it is tested with known answers: loads
and sizes per engine and table, per query the cold run and the hot runs' mean with its 95% CI,
ratios between engines with Welch's test, and this run beside seed 001's figures."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd

from ... import results
from .queries import FINE_GRAINED
from .workload import BACKGROUND, BUILD_FLAT, COLD, FLOOR, HOT, LOAD, MAINTENANCE, SIZE

ROW_STORE, COLUMN_STORE = "row store", "column store"


def _labels(frame: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame([json.loads(x) if isinstance(x, str) else {} for x in frame["labels"]], index=frame.index)


# Readings of the engine (its scope: the container, or this process when embedded); the others are
# the client's. A server's client process has storage reads of its own, never added to the engine's.
ENGINE_READINGS = ("table_bytes", "rows_read", "storage_read_bytes")


def _reading(m: pd.DataFrame, metric: str) -> pd.Series:
    scopes = results.ENGINE_SCOPES if metric in ENGINE_READINGS else ("client",)
    rows = m[(m["window"] == "phase") & (m["metric"] == metric) & m["scope"].isin(scopes)]
    return rows.groupby(["instance_id", "repetition", "phase"])["value"].sum(min_count=1)


def windows(m: pd.DataFrame) -> pd.DataFrame:
    """One row per measured window of the run (baselines left out): engine, phase, repetition,
    labels as columns, wall seconds, the engine's CPU seconds (phase, and with its settle window),
    net of the idle rate, and the readings the workload stores (rows, bytes, rows read, answer
    rows, storage reads)."""
    if m.empty:
        return pd.DataFrame()
    costs = results.phase_costs(m, "cpu_time")
    costs = costs[~costs["is_baseline"]].reset_index(drop=True)
    key = pd.MultiIndex.from_frame(costs[["instance_id", "repetition", "phase"]])
    out = pd.DataFrame({"engine": costs["engine"], "phase": costs["phase"], "repetition": costs["repetition"],
                        "wall_s": costs["wall_s"], "cpu_s": costs["value"], "cpu_with_settle_s": costs["with_settle"],
                        "net_cpu_s": costs["net_with_settle"]})
    for metric in ("rows", "staged_bytes", "table_bytes", "rows_read", "result_rows", "storage_read_bytes",
                   "answer_order_matches"):
        out[metric] = _reading(m, metric).reindex(key).to_numpy() if metric in set(m["metric"]) else np.nan
    labels = _labels(costs)
    for column in ("table", "query", "run", "dropped", "settings"):
        out[column] = labels.get(column)
    return out


def loads(w: pd.DataFrame) -> pd.DataFrame:
    """Per engine, each load window, the flat build and the maintenance: rows, wall, rows/s, the
    engine's CPU with its settle window, and CPU per row."""
    if w.empty:
        return pd.DataFrame(columns=["engine", "step", "table", "rows", "wall_s", "rows_per_s", "cpu_s",
                                     "cpu_us_per_row"])
    steps = w[w["phase"].str.startswith(f"{LOAD} ") | w["phase"].isin([BUILD_FLAT, MAINTENANCE, BACKGROUND])].copy()
    steps["step"] = steps["phase"]
    steps["rows_per_s"] = steps["rows"] / steps["wall_s"]
    steps["cpu_us_per_row"] = steps["cpu_with_settle_s"] * 1e6 / steps["rows"]
    return steps[["engine", "step", "table", "rows", "wall_s", "rows_per_s", "cpu_with_settle_s",
                  "cpu_us_per_row"]].rename(columns={"cpu_with_settle_s": "cpu_s"}).reset_index(drop=True)


def load_totals(load_rows: pd.DataFrame) -> pd.DataFrame:
    """Per engine: the five tables' loads, the flat build and the maintenance summed (wall, CPU)."""
    if load_rows.empty:
        return pd.DataFrame(columns=["engine", "load_wall_s", "flat_wall_s", "maintenance_wall_s", "total_wall_s",
                                     "total_cpu_s"])
    kind = np.where(load_rows["step"].str.startswith(f"{LOAD} "), "load",
                    np.where(load_rows["step"] == BUILD_FLAT, "flat", "maintenance"))
    wall = load_rows.assign(kind=kind).pivot_table(index="engine", columns="kind", values="wall_s", aggfunc="sum",
                                                   sort=False)
    cpu = load_rows.groupby("engine", sort=False)["cpu_s"].sum()
    out = pd.DataFrame({"load_wall_s": wall.get("load"), "flat_wall_s": wall.get("flat"),
                        "maintenance_wall_s": wall.get("maintenance")})
    out["total_wall_s"] = out.sum(axis=1, min_count=1)
    out["total_cpu_s"] = cpu
    return out.reset_index()


def sizes(w: pd.DataFrame) -> pd.DataFrame:
    """Per engine and table: bytes on disk, the staged file's bytes, their ratio (compression
    against the staged text), bytes per row."""
    if w.empty:
        return pd.DataFrame(columns=["engine", "table", "rows", "table_bytes", "staged_bytes", "compression",
                                     "bytes_per_row"])
    s = w[w["phase"].str.startswith(f"{SIZE} ")].copy()
    s["compression"] = s["staged_bytes"] / s["table_bytes"]
    s["bytes_per_row"] = s["table_bytes"] / s["rows"]
    return s[["engine", "table", "rows", "table_bytes", "staged_bytes", "compression", "bytes_per_row"]
             ].reset_index(drop=True)


def queries(w: pd.DataFrame) -> pd.DataFrame:
    """Per engine and query: the cold run's wall and CPU and storage reads, the hot runs' mean
    wall with its 95% CI, their standard deviation and count (for Welch), the mean CPU, rows read
    (where reported) and answer rows."""
    cols = ["engine", "query", "cold_s", "cold_cpu_s", "cold_storage_read_bytes", "cold_rows_read", "dropped", "hot_s",
            "hot_ci95", "hot_std", "n", "hot_cpu_s", "rows_read", "result_rows", "order_matches"]
    if w.empty or "run" not in w or not w["run"].isin([COLD, HOT]).any():
        return pd.DataFrame(columns=cols)
    q = w[w["run"].isin([COLD, HOT])]  # the floor's `select 1` is not a query of the benchmark
    hot = q[q["run"] == HOT].groupby(["engine", "query"], sort=False)
    out = pd.DataFrame({"hot_s": hot["wall_s"].mean(), "hot_std": hot["wall_s"].std(ddof=1), "n": hot.size(),
                        "hot_cpu_s": hot["cpu_s"].mean(), "rows_read": hot["rows_read"].mean(),
                        "result_rows": hot["result_rows"].max(), "order_matches": q.groupby(
                            ["engine", "query"], sort=False)["answer_order_matches"].min()})
    out["hot_ci95"] = [results.ci95_half_width(sd, n) for sd, n in zip(out["hot_std"], out["n"])]
    cold = q[q["run"] == COLD].groupby(["engine", "query"], sort=False)
    out = out.join(pd.DataFrame({"cold_s": cold["wall_s"].first(), "cold_cpu_s": cold["cpu_s"].first(),
                                 "cold_storage_read_bytes": cold["storage_read_bytes"].first(),
                                 "cold_rows_read": cold["rows_read"].first(),
                                 "dropped": cold["dropped"].first()}), how="outer")
    return out.reset_index()[cols]


def floors(w: pd.DataFrame) -> pd.DataFrame:
    """Per engine, `select 1` through the queries' path: mean wall and CPU over its runs."""
    if w.empty or "run" not in w:
        return pd.DataFrame(columns=["engine", "floor_s", "floor_cpu_s", "n"])
    f = w[w["run"] == FLOOR].groupby("engine", sort=False)
    return pd.DataFrame({"floor_s": f["wall_s"].mean(), "floor_cpu_s": f["cpu_s"].mean(), "n": f.size()}).reset_index()


def _summary_row(row) -> pd.Series:
    return pd.Series({"value": row["hot_s"], "value_ci95": row["hot_ci95"], "value_std": row["hot_std"],
                      "n": row["n"]})


def contrast(per_query: pd.DataFrame, base: str, other: str) -> pd.DataFrame:
    """Per query, `other`'s hot time over `base`'s with the ratio's 95% CI and Welch's verdict
    (results.contrast: one test on the log scale)."""
    a = per_query[per_query["engine"] == base].set_index("query")
    b = per_query[per_query["engine"] == other].set_index("query")
    rows = []
    for query in [q for q in a.index if q in b.index]:
        c = results.contrast(_summary_row(a.loc[query]), _summary_row(b.loc[query]), "value")
        rows.append({"query": query, "base": base, "other": other, "ratio": c["ratio"], "low": c["ratio_low"],
                     "high": c["ratio_high"], "beyond_noise": c["beyond_noise"]})
    return pd.DataFrame(rows, columns=["query", "base", "other", "ratio", "low", "high", "beyond_noise"])


# Seed 001's fine-grained queries beside the query of the same shape filtered by year only: the
# comparison the layout decides (same columns, same work per row; only the filter's grain differs).
MATCHED_PAIRS = (("Q1.1", "Q1.2"), ("Q1.1", "Q1.3"), ("Q3.3", "Q3.4"))


def matched_pairs(ratios: pd.DataFrame) -> pd.DataFrame:
    """For each matched pair, the ratio on the year-grained query and on the fine-grained one,
    and whether the fine one's ratio is the larger with their CIs apart."""
    r = ratios.set_index("query")
    rows = []
    for coarse, fine in MATCHED_PAIRS:
        if coarse in r.index and fine in r.index:
            a, b = r.loc[coarse], r.loc[fine]
            rows.append({"coarse": coarse, "fine": fine, "coarse_ratio": a["ratio"], "fine_ratio": b["ratio"],
                         "grows": bool(b["ratio"] > a["ratio"]), "apart": bool(b["low"] > a["high"])})
    return pd.DataFrame(rows, columns=["coarse", "fine", "coarse_ratio", "fine_ratio", "grows", "apart"])


def fine_grained_advantage(ratios: pd.DataFrame) -> dict:
    """Seed 001's reading, as a test on one pair: is `other` over `base` (a ratio per query) larger
    on the fine-grained queries (a filter finer than a year: Q1.2, Q1.3, Q3.4) than on the rest?
    The geometric means of each group, and whether every fine-grained ratio exceeds every other."""
    fine = ratios[ratios["query"].isin(FINE_GRAINED)]
    rest = ratios[~ratios["query"].isin(FINE_GRAINED)]
    if fine.empty or rest.empty:
        return {"fine": float("nan"), "rest": float("nan"), "separated": None, "n_fine": len(fine),
                "n_rest": len(rest)}
    return {"fine": results.geometric_mean(fine["ratio"]), "rest": results.geometric_mean(rest["ratio"]),
            "separated": bool(fine["ratio"].min() > rest["ratio"].max()), "n_fine": len(fine), "n_rest": len(rest)}


def share_read(per_query: pd.DataFrame, engine: str, table_rows: float) -> pd.DataFrame:
    """Rows `engine` read in each query's cold run (where it reports them), as a share of
    lineorder_flat's rows: what the table's layout skips, no cache of an earlier run helping."""
    q = per_query[(per_query["engine"] == engine) & per_query["cold_rows_read"].notna()]
    return pd.DataFrame({"query": q["query"], "rows_read": q["cold_rows_read"],
                         "share": q["cold_rows_read"] / table_rows})
