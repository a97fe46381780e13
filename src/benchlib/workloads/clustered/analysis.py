"""The arithmetic of the clustered-vs-heap notebook, on plain frames so it is tested with known
answers: per-step figures per operation, seed 003's ratios of engine B over engine A with their
geometric means, and seed 001's key-kind table."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd

from ... import results

# Ratio columns of seed 003's spreadsheet: (column, per-step figure, higher is better)
# r/o and rKB/o come from the engine's own counters: on this kind of host cgroup v1 blkio counts
# nothing for containers (the storage KB from the cgroup is shown beside, not used for ratios).
RATIO_COLUMNS = (("QPS", "ops_per_s", True), ("cpu/o", "cpu_us_per_op", False), ("r/o", "reads_per_op", False),
                 ("rKB/o", "engine_read_kb_per_op", False))
THRESHOLD = 0.05  # seed 003 highlights changes beyond ~5%


def _labels(df: pd.DataFrame) -> pd.DataFrame:
    parsed = [json.loads(x) if isinstance(x, str) else {} for x in df["labels"]]
    return pd.DataFrame(parsed, index=df.index)


def _wide(m: pd.DataFrame, window: str, metrics: list[str], scopes: tuple[str, ...]) -> pd.DataFrame:
    rows = m[(m["window"] == window) & m["metric"].isin(metrics) & m["scope"].isin(scopes)]
    # min_count=1: a counter stored as NULL stays NaN (not measured), never becomes 0.
    return rows.groupby(["engine", "labels", "phase", "metric"])["value"].sum(min_count=1).unstack("metric")


def steps(measurements: pd.DataFrame) -> pd.DataFrame:
    """One row per engine, regime and battery step: operations (sysbench events; rows for the
    load), throughput, and per operation the engine's CPU (phase + settle windows, in µs), the
    engine's own reads and read bytes, and the storage bytes its cgroup read (phase window)."""
    m = measurements[measurements["labels"].str.contains('"step"', na=False)]
    if m.empty:
        return pd.DataFrame(columns=["engine", "regime", "step", "test", "ops", "ops_per_s"])
    engine = results.engine_rows(m)
    client = _wide(m, "phase", ["transactions", "tps", "latency_p95"], ("client",))
    server = _wide(m, "phase", ["engine_reads", "engine_read_bytes", "engine_buffer_hits", "io_read_bytes",
                                "buffer_pool_bytes", "storage_read_bytes"], ("server",))
    cpu = engine[(engine["metric"] == "cpu_time") & engine["window"].isin(["phase", "settle"])]
    cpu = cpu.groupby(["engine", "labels", "phase"])["value"].sum(min_count=1).rename("engine_cpu_s")
    wall = m[(m["metric"] == "wall_time") & (m["window"] == "phase")].groupby(["engine", "labels", "phase"])["value"]
    out = client.join(server, how="outer").join(cpu).join(wall.first().rename("wall_s")).reset_index()
    for col in ("transactions", "tps", "latency_p95", "engine_reads", "engine_read_bytes", "engine_buffer_hits",
                "io_read_bytes", "buffer_pool_bytes", "storage_read_bytes"):
        if col not in out:
            out[col] = np.nan
    labels = _labels(out)
    ops = out["transactions"].where(out["transactions"] > 0)
    frame = pd.DataFrame({
        "engine": out["engine"], "regime": labels["regime"], "step": labels["step"], "test": labels["test"],
        "ops": out["transactions"], "ops_per_s": out["tps"], "p95_ms": out["latency_p95"],
        "cpu_us_per_op": out["engine_cpu_s"] * 1e6 / ops,
        "reads_per_op": out["engine_reads"] / ops,
        "engine_read_kb_per_op": out["engine_read_bytes"] / 1024 / ops,
        "read_kb_per_op": out["io_read_bytes"] / 1024 / ops,
        # What the engine's processes read from storage: page-cache hits are not in it.
        "storage_kb_per_op": out["storage_read_bytes"] / 1024 / ops,
        "buffer_hits_per_op": out["engine_buffer_hits"] / ops,
        "buffer_pool_bytes": out["buffer_pool_bytes"], "wall_s": out["wall_s"],
        "seq": out["phase"],  # replaced below by the order the steps ran in
    })
    order = (m.drop_duplicates(["engine", "labels"]).reset_index(drop=True).reset_index()
             .set_index(["engine", "labels"])["index"])
    frame["seq"] = [order.get((e, lab), 0) for e, lab in zip(out["engine"], out["labels"])]
    return frame.sort_values(["regime", "engine", "seq"]).drop(columns="seq").reset_index(drop=True)


def ratios(step_rows: pd.DataFrame, base: str) -> pd.DataFrame:
    """Seed 003's spreadsheet, long form: per regime, step and engine other than `base`, each
    ratio column as engine / base (QPS > 1: faster than base; per-op columns > 1: costs more)."""
    rows = []
    for regime, df in step_rows.groupby("regime", sort=False):
        b = df[df["engine"] == base].set_index("step")
        for engine in [e for e in dict.fromkeys(df["engine"]) if e != base]:
            e = df[df["engine"] == engine].set_index("step")
            for step in [s for s in b.index if s in e.index]:
                for column, figure, _ in RATIO_COLUMNS:
                    num, den = e.at[step, figure], b.at[step, figure]
                    ratio = num / den if pd.notna(num) and pd.notna(den) and den > 0 else np.nan
                    if pd.notna(num) and pd.notna(den) and den == 0 and num == 0:
                        ratio = 1.0  # neither read anything: equal, not unknown
                    rows.append({"regime": regime, "engine": engine, "base": base, "step": step,
                                 "column": column, "ratio": ratio})
    return pd.DataFrame(rows, columns=["regime", "engine", "base", "step", "column", "ratio"])


def spreadsheet(ratio_rows: pd.DataFrame, regime: str, steps_order: list[str]) -> pd.DataFrame:
    """Wide: steps down, (engine, column) across, the geometric mean as the last row."""
    r = ratio_rows[ratio_rows["regime"] == regime]
    if r.empty:
        return pd.DataFrame()
    table = r.pivot_table(index="step", columns=["engine", "column"], values="ratio", sort=False, dropna=False)
    table = table.reindex(index=[s for s in steps_order if s in table.index])
    cols = [(e, c) for e in dict.fromkeys(r["engine"]) for c, _, _ in RATIO_COLUMNS if (e, c) in table.columns]
    table = table.reindex(columns=pd.MultiIndex.from_tuples(cols))
    table.loc["geometric mean"] = [results.geometric_mean(table[c]) for c in table.columns]
    return table


def verdict(column: str, ratio: float, threshold: float = THRESHOLD) -> str:
    """"better", "worse" or "same" for engine B against the base, per seed 003's ~5% rule."""
    if ratio is None or not pd.notna(ratio):
        return "n/a"
    higher_better = next(h for c, _, h in RATIO_COLUMNS if c == column)
    if abs(ratio - 1) <= threshold:
        return "same"
    return "better" if (ratio > 1) == higher_better else "worse"


def key_kinds(measurements: pd.DataFrame) -> pd.DataFrame:
    """Seed 001's table: per engine, layout, key kind and insert order, what a row cost to insert
    (engine CPU µs, phase + settle), rows per second, bytes per row of table and indexes (the
    engine's own size functions), and the engine CPU of a lookup by secondary index."""
    m = measurements[measurements["labels"].str.contains('"key_kind"', na=False)]
    if m.empty:
        return pd.DataFrame()
    engine = results.engine_rows(m)
    keys = ["engine", "labels", "phase"]
    cpu = engine[(engine["metric"] == "cpu_time") & engine["window"].isin(["phase", "settle"])]
    cpu = cpu.groupby(keys)["value"].sum(min_count=1).unstack("phase")
    wall = m[(m["metric"] == "wall_time") & (m["window"] == "phase")].groupby(keys)["value"].first().unstack("phase")
    n = m[(m["metric"] == "transactions") & (m["window"] == "phase")].groupby(keys)["value"].first().unstack("phase")
    size = m[m["metric"].isin(["table_bytes", "index_bytes"]) & (m["window"] == "phase")]
    size = size.groupby(["engine", "labels", "metric"])["value"].first().unstack("metric")
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
    out = out.drop(columns="labels")[["engine", "layout", "key_kind", "order", "rows", "insert_cpu_us_per_row",
                                      "rows_per_s", "table_bytes_per_row", "index_bytes_per_row", "bytes_per_row",
                                      "lookup_cpu_us"]]
    # Relative to the same engine and layout's sequential bigint in key order, where it ran.
    base = out[(out["key_kind"] == "bigint") & (out["order"] == "key")].set_index(["engine", "layout"])
    idx = list(zip(out["engine"], out["layout"]))
    for col, ref in (("insert_cost_vs_bigint", "insert_cpu_us_per_row"), ("size_vs_bigint", "bytes_per_row")):
        out[col] = [v / base[ref].get(k, np.nan) if k in base.index else np.nan for v, k in zip(out[ref], idx)]
    return out
