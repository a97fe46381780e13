"""The arithmetic of the clustered-vs-heap notebook, on plain frames so it is tested with known
answers: per-step figures per operation, seed 003's ratios of engine B over engine A with their
geometric means, and seed 001's key-kind table."""
from __future__ import annotations

import json
import math
from typing import Mapping

import numpy as np
import pandas as pd

from ... import results

# Ratio columns of seed 003's spreadsheet: (column, per-step figure, higher is better).
# pages/o and rKB/o are storage reads: what the engine's processes read from storage (read_bytes of
# /proc/<pid>/io, which page-cache hits do not inflate), as the engine's own pages (seed 003's r/o,
# storage reads per operation: a page read directly is one read, so the two agree wherever no
# read-ahead merges pages) and as bytes. The engines' own read counters (PostgreSQL's blks_read
# counts page-cache hits too) are in the absolute table.
RATIO_COLUMNS = (("QPS", "ops_per_s", True), ("cpu/o", "cpu_us_per_op", False),
                 ("pages/o", "storage_reads_per_op", False), ("rKB/o", "storage_kb_per_op", False))
# rKB/o is pages/o again, weighted by page size (8 KiB against 16 KiB): judged once, as pages/o (the
# two coloured the same reads red and green in run 20261124T220530Z-501225).
UNJUDGED_COLUMNS = ("rKB/o",)
THRESHOLD = 0.05  # seed 003 highlights changes beyond ~5%
STORAGE_REACHED = 0.5  # storage reads per operation above which a point query went to storage
# Below this many storage reads per operation (one in a hundred operations) in both engines, a
# storage ratio (r/o, rKB/o) divides two near-zeros (a cached test's stray reads): shown as n/a.
STORAGE_FLOOR = 0.01
STORAGE_COLUMNS = ("pages/o", "rKB/o")
# Per-step figures averaged over repetitions (means, with the spread of the ratio figures).
FIGURES = ("ops", "ops_per_s", "p95_ms", "cpu_us_per_op", "reads_per_op", "engine_read_kb_per_op", "read_kb_per_op",
           "storage_kb_per_op", "storage_reads_per_op", "buffer_hits_per_op", "buffer_pool_bytes", "page_bytes",
           "data_bytes", "pk_index_bytes", "wall_s", "client_cpu_us_per_op", "change_buffer_merges_per_op")


def _labels(df: pd.DataFrame) -> pd.DataFrame:
    parsed = [json.loads(x) if isinstance(x, str) else {} for x in df["labels"]]
    return pd.DataFrame(parsed, index=df.index)


KEYS = ["engine", "labels", "phase", "repetition"]


def _wide(m: pd.DataFrame, window: str, metrics: list[str], scopes: tuple[str, ...]) -> pd.DataFrame:
    rows = m[(m["window"] == window) & m["metric"].isin(metrics) & m["scope"].isin(scopes)]
    # min_count=1: a counter stored as NULL stays NaN (not measured), never becomes 0.
    return rows.groupby([*KEYS, "metric"])["value"].sum(min_count=1).unstack("metric")


SERVER_METRICS = ("engine_reads", "engine_read_bytes", "engine_buffer_hits", "io_read_bytes", "buffer_pool_bytes",
                  "storage_read_bytes", "page_bytes", "data_bytes", "pk_index_bytes", "change_buffer_merges")


def repetitions(measurements: pd.DataFrame) -> pd.DataFrame:
    """One row per engine, regime, battery step and repetition: operations (sysbench events; rows
    for the load), throughput, and per operation the engine's CPU (phase + settle windows, in µs),
    the engine's own reads and read bytes, and what its processes read from storage (phase window):
    KB, and reads of the engine's page size."""
    m = measurements[measurements["labels"].str.contains('"step"', na=False)]
    if "repetition" not in m:
        m = m.assign(repetition=1)
    if m.empty:
        return pd.DataFrame(columns=["engine", "regime", "step", "test", "repetition", *FIGURES])
    engine = results.engine_rows(m)
    client = _wide(m, "phase", ["transactions", "tps", "latency_p95", "cpu_time"], ("client",))
    server = _wide(m, "phase", list(SERVER_METRICS), ("server",))
    cpu = engine[(engine["metric"] == "cpu_time") & engine["window"].isin(["phase", "settle"])]
    cpu = cpu.groupby(KEYS)["value"].sum(min_count=1).rename("engine_cpu_s")
    wall = m[(m["metric"] == "wall_time") & (m["window"] == "phase")].groupby(KEYS)["value"]
    out = client.join(server, how="outer").join(cpu).join(wall.first().rename("wall_s")).reset_index()
    for col in ("transactions", "tps", "latency_p95", "cpu_time", *SERVER_METRICS):
        if col not in out:
            out[col] = np.nan
    labels = _labels(out)
    ops = out["transactions"].where(out["transactions"] > 0)
    frame = pd.DataFrame({
        "engine": out["engine"], "regime": labels["regime"], "step": labels["step"], "test": labels["test"],
        "repetition": out["repetition"],
        "ops": out["transactions"], "ops_per_s": out["tps"], "p95_ms": out["latency_p95"],
        "cpu_us_per_op": out["engine_cpu_s"] * 1e6 / ops,
        "reads_per_op": out["engine_reads"] / ops,
        "engine_read_kb_per_op": out["engine_read_bytes"] / 1024 / ops,
        "read_kb_per_op": out["io_read_bytes"] / 1024 / ops,
        # What the engine's processes read from storage: page-cache hits are not in it.
        "storage_kb_per_op": out["storage_read_bytes"] / 1024 / ops,
        "storage_reads_per_op": out["storage_read_bytes"] / out["page_bytes"] / ops,
        "buffer_hits_per_op": out["engine_buffer_hits"] / ops,
        "buffer_pool_bytes": out["buffer_pool_bytes"], "page_bytes": out["page_bytes"],
        "data_bytes": out["data_bytes"], "pk_index_bytes": out["pk_index_bytes"], "wall_s": out["wall_s"],
        # sysbench's own CPU (children of the harness: its run, or its prepare for the load), which seed
        # 003's cpu/o may include (its article does not say).
        "client_cpu_us_per_op": out["cpu_time"] * 1e6 / ops,
        "change_buffer_merges_per_op": out["change_buffer_merges"] / ops,
    })
    order = (m.drop_duplicates(["engine", "labels"]).reset_index(drop=True).reset_index()
             .set_index(["engine", "labels"])["index"])
    frame["seq"] = [order.get((e, lab), 0) for e, lab in zip(out["engine"], out["labels"])]
    return frame.sort_values(["regime", "engine", "seq", "repetition"]).drop(columns="seq").reset_index(drop=True)


def steps(measurements: pd.DataFrame) -> pd.DataFrame:
    """One row per engine, regime and battery step: the mean of each figure over the step's
    repetitions, `n` of them, and for the ratio figures their standard deviation and 95% CI half
    width (what seed 003's ratios are tested against)."""
    reps = repetitions(measurements)
    keys = ["engine", "regime", "step", "test"]
    stats = [f"{figure}_{x}" for _, figure, _ in RATIO_COLUMNS for x in ("std", "n", "ci95")]
    if reps.empty:
        return pd.DataFrame(columns=[*keys, "n", *FIGURES, *stats])
    grouped = reps.groupby(keys, sort=False, dropna=False)
    out = grouped[list(FIGURES)].mean()
    out["n"] = grouped.size()
    for _, figure, _ in RATIO_COLUMNS:
        n = grouped[figure].count()
        std = grouped[figure].std(ddof=1)
        out[f"{figure}_std"] = std
        out[f"{figure}_n"] = n
        out[f"{figure}_ci95"] = [results.ci95_half_width(sd, k) for k, sd in zip(n, std)]
    return out.reset_index()


RATIO_FIELDS = ["regime", "engine", "base", "step", "column", "ratio", "ratio_low", "ratio_high", "n", "base_n",
                "beyond_noise", "verdict"]


def ratios(step_rows: pd.DataFrame, base: str, threshold: float = THRESHOLD,
           drift: Mapping[str, float] | None = None) -> pd.DataFrame:
    """Seed 003's spreadsheet, long form: per regime, step and engine other than `base`, each
    ratio column as engine / base (QPS > 1: faster than base; per-op columns > 1: costs more), with
    its 95% CI and Welch's test over the repetitions (results.contrast) and the cell's verdict;
    `drift`: per regime, and per (regime, step) where loops ran beside a step, how far the host's own
    speed differed between the engines (see `verdict`); a cell takes the larger of the two."""
    drift = drift or {}
    rows = []
    for regime, df in step_rows.groupby("regime", sort=False):
        b = df[df["engine"] == base].set_index("step")
        for engine in [e for e in dict.fromkeys(df["engine"]) if e != base]:
            e = df[df["engine"] == engine].set_index("step")
            for step in [s for s in b.index if s in e.index]:
                floor = below_storage_floor(b.loc[step]) and below_storage_floor(e.loc[step])
                for column, figure, _ in RATIO_COLUMNS:
                    if floor and column in STORAGE_COLUMNS:
                        rows.append({"regime": regime, "engine": engine, "base": base, "step": step,
                                     "column": column, "ratio": np.nan, "ratio_low": np.nan, "ratio_high": np.nan,
                                     "beyond_noise": None, "verdict": "floor"})
                        continue
                    rows.append({"regime": regime, "engine": engine, "base": base, "step": step, "column": column,
                                 **_contrast(b.loc[step], e.loc[step], figure, threshold)})
    out = pd.DataFrame(rows, columns=RATIO_FIELDS)
    out["verdict"] = [v if v == "floor" else "unjudged" if c in UNJUDGED_COLUMNS else
                      verdict(c, r, noise, threshold, max(drift.get(g, 0.0), drift.get((g, st), 0.0)), (lo, hi))
                      for c, r, noise, v, g, st, lo, hi in zip(out["column"], out["ratio"], out["beyond_noise"],
                                                               out["verdict"], out["regime"], out["step"],
                                                               out["ratio_low"], out["ratio_high"])]
    return out


def confound(ratio_rows: pd.DataFrame, regime: str) -> pd.DataFrame:
    """The regime's verdicts replaced by "confounded" (its engines cached unequally): every ratio
    stays, no cell of it is called better, worse or a tie."""
    out = ratio_rows.copy()
    judged = (out["regime"] == regime) & ~out["verdict"].isin(["floor", "n/a", "unjudged"])
    out.loc[judged, "verdict"] = "confounded"
    return out


def binlog_confound(ratio_rows: pd.DataFrame, steps: set[str]) -> pd.DataFrame:
    """Verdicts of the write `steps` on throughput and CPU per operation replaced by "binlog" (the
    base alone synced a binary log at every commit: a second fsync and a two-phase commit the other
    engine never does); the ratios stay."""
    out = ratio_rows.copy()
    judged = (out["step"].isin(steps) & out["column"].isin(["QPS", "cpu/o"])
              & out["verdict"].isin(["better", "worse", "same"]))
    out.loc[judged, "verdict"] = "binlog"
    return out


def deferred_cleanup(ratio_rows: pd.DataFrame, steps: set[str], engines: set[str]) -> pd.DataFrame:
    """Verdicts of `engines` on `steps` (updates and deletes) that favour them ("better", or a tie)
    replaced by "deferred": those engines leave dead rows to a vacuum no window ran, so their figures
    miss cleanup the base paid in its settle windows, and its purge shared the base's windows with the
    test (run 20261124T220530Z-501225 coloured PostgreSQL's IO-bound delete 1.88x green). A "worse"
    stands: it is a loss in spite of that help. The ratios stay."""
    out = ratio_rows.copy()
    judged = (out["step"].isin(steps) & out["engine"].isin(engines) & out["verdict"].isin(["better", "same"]))
    out.loc[judged, "verdict"] = "deferred"
    return out


def below_storage_floor(step: pd.Series) -> bool:
    """Fewer than STORAGE_FLOOR storage reads per operation (in the engine's pages; in 16 KiB
    units where the engine has no fixed page): a storage ratio against it means nothing."""
    reads = step.get("storage_reads_per_op", np.nan)
    if not pd.notna(reads):
        kb = step.get("storage_kb_per_op", np.nan)
        reads = kb / 16 if pd.notna(kb) else np.nan
    return bool(pd.notna(reads) and reads < STORAGE_FLOOR)


def _contrast(base: pd.Series, other: pd.Series, figure: str, threshold: float) -> dict:
    num, den = other[figure], base[figure]
    n, base_n = int(other.get(f"{figure}_n", 1) or 0), int(base.get(f"{figure}_n", 1) or 0)
    if not (pd.notna(num) and pd.notna(den)):
        return {"ratio": np.nan, "ratio_low": np.nan, "ratio_high": np.nan, "n": n, "base_n": base_n,
                "beyond_noise": None}
    if den == 0:
        # Neither read anything: equal, not unknown (and no difference to test).
        ratio = 1.0 if num == 0 else np.nan
        return {"ratio": ratio, "ratio_low": np.nan, "ratio_high": np.nan, "n": n, "base_n": base_n,
                "beyond_noise": False if num == 0 else None}

    def summary(row: pd.Series, k: int) -> dict:
        return {figure: row[figure], f"{figure}_ci95": row.get(f"{figure}_ci95", np.nan),
                f"{figure}_std": row.get(f"{figure}_std", np.nan), "n": k}

    c = results.contrast(summary(base, base_n), summary(other, n), figure, threshold)
    return {"ratio": c["ratio"], "ratio_low": c["ratio_low"], "ratio_high": c["ratio_high"], "n": n, "base_n": base_n,
            "beyond_noise": c["beyond_noise"]}


def spreadsheet(ratio_rows: pd.DataFrame, regime: str, steps_order: list[str], value: str = "ratio") -> pd.DataFrame:
    """Wide: steps down, (engine, column) across; for ratios the geometric mean as the last row."""
    r = ratio_rows[ratio_rows["regime"] == regime]
    if r.empty:
        return pd.DataFrame()
    table = r.pivot_table(index="step", columns=["engine", "column"], values=value, sort=False, dropna=False,
                          aggfunc="first")
    table = table.reindex(index=[s for s in steps_order if s in table.index])
    cols = [(e, c) for e in dict.fromkeys(r["engine"]) for c, _, _ in RATIO_COLUMNS if (e, c) in table.columns]
    table = table.reindex(columns=pd.MultiIndex.from_tuples(cols))
    if value == "ratio":
        table.loc["geometric mean"] = [results.geometric_mean(table[c]) for c in table.columns]
    else:
        table.loc["geometric mean"] = ""
    return table


VERDICTS = {"better": "better", "worse": "worse", "same": "within 5%", "noise": "undetermined (within noise)",
            "drift": "undetermined (within the host's drift)",
            "untested": "one repetition: noise unknown", "n/a": "n/a",
            "confounded": "confounded by unequal cache",
            "binlog": "not comparable: the base alone synced a binary log at every commit",
            "deferred": "not comparable: this engine left its dead rows to a vacuum no window ran, while the base "
                        "purges its own in the background as it goes (not measured here; a loss would stand, a win or "
                        "a tie cannot be told from that help)",
            "unjudged": "not judged: pages/o again in bytes (8 KiB pages against 16 KiB)",
            "floor": f"n/a: both engines below {STORAGE_FLOOR} storage reads per operation"}


def verdict(column: str, ratio: float, beyond_noise: bool | None = None, threshold: float = THRESHOLD,
            drift: float = 0.0, ci: tuple[float, float] | None = None) -> str:
    """Noise first: "untested" (one repetition: no noise estimate) or "noise" (Welch over the
    repetitions cannot tell the engines apart: undetermined, whatever the ratio); then, beyond
    noise, on the log scale so that 1.74x and 1/1.74x are the same distance from a tie: "same"
    (within seed 003's ~5% `threshold`), "drift" (the ratio's 95% CI, `ci`, reaches into how far
    the host's speed differed between the two engines' starts, `drift`: undetermined, since the
    host alone could make it), or "better" / "worse" for engine B against the base."""
    if ratio is None or not pd.notna(ratio):
        return "n/a"
    higher_better = next(h for c, _, h in RATIO_COLUMNS if c == column)
    if beyond_noise is None or beyond_noise != beyond_noise:
        return "untested"
    if not beyond_noise:
        return "noise"
    distance = abs(math.log(ratio)) if ratio > 0 else math.inf
    if distance <= math.log1p(threshold) + 1e-12:  # 1/1.05 is exactly as far as 1.05
        return "same"
    low, high = ci if ci is not None else (ratio, ratio)
    nearest = ratio if not (pd.notna(low) and pd.notna(high)) else (low if ratio > 1 else high)
    near = abs(math.log(nearest)) if nearest > 0 and (nearest > 1) == (ratio > 1) else 0.0
    if drift > 0 and near <= math.log1p(drift):
        return "drift"
    return "better" if (ratio > 1) == higher_better else "worse"


def start_settings(measurements: pd.DataFrame, regime: str | None = None) -> dict[str, dict[str, str]]:
    """Per engine, the server settings its starts read (the battery windows' `settings` label,
    "name=value, ..."), every distinct value of a setting joined by " / "; `regime`: only that
    regime's starts."""
    out: dict[str, dict[str, list[str]]] = {}
    m = measurements[measurements["labels"].str.contains('"settings"', na=False)].drop_duplicates(["engine", "labels"])
    for engine, labels in zip(m["engine"], m["labels"]):
        found = json.loads(labels)
        if regime is not None and found.get("regime") != regime:
            continue
        for pair in str(found.get("settings", "")).split(", "):
            name, eq, value = pair.partition("=")
            if eq and value not in out.setdefault(engine, {}).setdefault(name, []):
                out[engine][name].append(value)
    return {e: {k: " / ".join(v) for k, v in found.items()} for e, found in out.items()}


def key_kinds(measurements: pd.DataFrame) -> pd.DataFrame:
    """Seed 001's table: per engine, layout, key kind and insert order, what a row cost to insert
    (engine CPU µs, phase + settle), rows per second, bytes per row of table and indexes (the
    engine's own size functions), and the engine CPU of a lookup by secondary index."""
    m = measurements[measurements["labels"].str.contains('"key_kind"', na=False)]
    if m.empty:
        return pd.DataFrame()
    if "repetition" not in m:
        m = m.assign(repetition=1)
    engine = results.engine_rows(m)
    keys = ["engine", "labels", "phase"]

    def per_repetition_mean(rows: pd.DataFrame, by: list[str], how: str) -> pd.Series:
        # Each repetition's own figure (a window's phase + settle CPU summed), then their mean.
        one = rows.groupby([*by, "repetition"])["value"].agg(how) if how == "first" else \
            rows.groupby([*by, "repetition"])["value"].sum(min_count=1)
        return one.groupby(level=list(range(len(by)))).mean()

    cpu = engine[(engine["metric"] == "cpu_time") & engine["window"].isin(["phase", "settle"])]
    cpu = per_repetition_mean(cpu, keys, "sum").unstack("phase")
    wall = per_repetition_mean(m[(m["metric"] == "wall_time") & (m["window"] == "phase")], keys, "first").unstack("phase")
    n = per_repetition_mean(m[(m["metric"] == "transactions") & (m["window"] == "phase")], keys, "first").unstack("phase")
    size = m[m["metric"].isin(["table_bytes", "index_bytes"]) & (m["window"] == "phase")]
    size = per_repetition_mean(size, ["engine", "labels", "metric"], "first").unstack("metric")
    out = pd.DataFrame(index=cpu.index)
    rows = n.get("key-insert")
    out["rows"] = rows
    out["insert_cpu_us_per_row"] = cpu.get("key-insert") * 1e6 / rows
    out["rows_per_s"] = rows / wall.get("key-insert")
    out["table_bytes_per_row"] = size.get("table_bytes") / rows
    out["index_bytes_per_row"] = size.get("index_bytes") / rows
    out["bytes_per_row"] = out["table_bytes_per_row"] + out["index_bytes_per_row"].fillna(0)
    out["lookup_cpu_us"] = cpu.get("key-lookup") * 1e6 / n.get("key-lookup")
    out = out.reset_index()
    labels = _labels(out)
    for col in ("layout", "key_kind", "order"):
        out.insert(1, col, labels[col])
    out["regime"] = labels["regime"] if "regime" in labels else None
    out = out.drop(columns="labels")[["engine", "regime", "layout", "key_kind", "order", "rows", "insert_cpu_us_per_row",
                                      "rows_per_s", "table_bytes_per_row", "index_bytes_per_row", "bytes_per_row",
                                      "lookup_cpu_us"]]
    # Relative to the same engine and layout's sequential bigint in key order, where it ran.
    base = out[(out["key_kind"] == "bigint") & (out["order"] == "key")].set_index(["engine", "layout"])
    idx = list(zip(out["engine"], out["layout"]))
    for col, ref in (("insert_cost_vs_bigint", "insert_cpu_us_per_row"), ("size_vs_bigint", "bytes_per_row")):
        out[col] = [v / base[ref].get(k, np.nan) if k in base.index else np.nan for v, k in zip(out[ref], idx)]
    return out
