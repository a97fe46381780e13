"""The arithmetic of the write sweep, on plain frames so it is tested with known answers: per
cell CPU, wall and bytes per row, the ratio to PostgreSQL, the decomposition of a one-row
transaction into commit, statement and row work, and for clusters what replication adds: each
cluster against its single node per cell, and each node's share."""
from __future__ import annotations

import json

import pandas as pd

from ... import results
from ...cgroups import NODE_SCOPE
from ...engines import find_engine, is_cluster
from ...measure import cluster_instance_of

KEYS = ["engine", "rows_per_txn", "rows_per_stmt", "rows_from"]
CELL = ["rows_per_txn", "rows_per_stmt", "rows_from"]
LATENCIES = ["txn_latency_p50", "txn_latency_p95"]


def _labels(frame: pd.DataFrame) -> pd.DataFrame:
    parsed = [json.loads(x) for x in frame["labels"]]
    return frame.assign(rows_per_txn=[int(p["rows_per_txn"]) for p in parsed],
                        rows_per_stmt=[int(p["rows_per_stmt"]) for p in parsed],
                        rows_from=[p["rows_from"] for p in parsed])


def cells(measurements: pd.DataFrame, row_bytes: int) -> pd.DataFrame:
    """One row per engine, repetition and cell. Engine CPU with the idle rate x duration taken
    away, split into the statements' window (`phase`) and the settle window after the commit
    (`after`); the client's CPU and the wall time of the statements' window; log bytes from the
    engine's own counter (NaN with status "not reported" where it has none) and I/O write bytes
    of the engine's scope, both windows together."""
    m = measurements[measurements["phase"] == "insert"]
    if m.empty:
        return pd.DataFrame()
    costs = results.phase_costs(measurements, "cpu_time")  # with the baselines: they give the idle rate
    costs = costs[~costs["is_baseline"]]
    keys = ["engine", "repetition", "labels"]
    checks = m.drop_duplicates("seq").groupby(keys)["check_value"].first()
    client = m[(m["scope"] == "client") & (m["metric"] == "cpu_time") & (m["window"] == "phase")]
    client_cpu = client.groupby(keys)["value"].sum(min_count=1)
    engine = results.engine_rows(m)
    io = engine[engine["metric"] == "io_write_bytes"].groupby(keys)["value"].sum(min_count=1)
    logs = engine[engine["metric"].isin(["engine_log_bytes", "engine_log_bytes_settle"])]
    log_bytes = logs.groupby(keys)["value"].sum(min_count=1)
    log_status = logs.groupby(keys)["status"].agg(lambda s: "ok" if (s == "ok").all() else sorted(set(s) - {"ok"})[0])
    latency = m[(m["scope"] == "client") & m["metric"].isin(LATENCIES) & (m["window"] == "phase")]
    latency = latency.pivot_table(index=keys, columns="metric", values="value", aggfunc="first").reindex(
        columns=LATENCIES)  # NaN for runs stored before transactions were timed
    out = costs.set_index(keys).join(checks.rename("rows")).join(client_cpu.rename("client_cpu_s")).join(latency)
    out = (out.join(io.rename("io_write_bytes")).join(log_bytes.rename("log_bytes"))
           .join(log_status.rename("log_status")))
    out = _labels(out.reset_index())
    rows = out["rows"].where(out["rows"] > 0)
    per_row = 1e6 / rows
    out["phase_us_per_row"] = out["net"] * per_row
    out["after_us_per_row"] = (out["net_with_settle"] - out["net"]) * per_row  # NaN-free: no settle adds 0
    out.loc[out["settle_value"].isna(), "after_us_per_row"] = float("nan")
    out["cpu_us_per_row"] = out["net_with_settle"] * per_row
    out["client_us_per_row"] = out["client_cpu_s"] * per_row
    # One attribution rule for every kind of engine: the write path is the engine and the Python
    # driver that feeds it. An embedded engine's process holds both (its client column is empty);
    # a server's driver is the client scope, added here.
    out["total_us_per_row"] = out["cpu_us_per_row"] + out["client_us_per_row"].fillna(0.0)
    out["wall_us_per_row"] = out["wall_s"] * per_row
    out["after_share"] = (out["after_us_per_row"] / out["cpu_us_per_row"]).where(out["cpu_us_per_row"] > 0)
    out["log_bytes_per_row"] = out["log_bytes"] / rows
    out["io_bytes_per_row"] = out["io_write_bytes"] / rows
    out["log_amplification"] = out["log_bytes_per_row"] / row_bytes
    out["io_amplification"] = out["io_bytes_per_row"] / row_bytes
    return out


VALUES = ["cpu_us_per_row", "total_us_per_row", "phase_us_per_row", "after_us_per_row", "client_us_per_row", "wall_us_per_row",
          "after_share", "log_bytes_per_row", "io_bytes_per_row", "log_amplification", "io_amplification"]


def summarize(cell_rows: pd.DataFrame) -> pd.DataFrame:
    """Mean over repetitions per engine and cell, the spread of CPU per row, and the ratio of
    engine + driver CPU per row to PostgreSQL's in the same cell: the one attribution under which an
    embedded engine (its driver inside its process) and a server compare."""
    g = cell_rows.groupby(KEYS, sort=False)
    out = g[VALUES].mean()
    out["cpu_us_per_row_std"] = g["cpu_us_per_row"].std(ddof=1)
    out["log_status"] = g["log_status"].first()
    out["n"] = g.size()
    out = out.reset_index()
    base = out[out["engine"].str.partition("@")[0] == "postgres"]
    if base["engine"].nunique() == 1:
        ref = base.set_index(KEYS[1:])["total_us_per_row"]
        out["ratio_to_postgres"] = [v / ref.get(tuple(k), float("nan")) for v, k in
                                    zip(out["total_us_per_row"], out[KEYS[1:]].itertuples(index=False))]
    else:
        out["ratio_to_postgres"] = float("nan")
    return out


PARTS = ("commit", "statement", "row")


def decompose(cell_rows: pd.DataFrame, rows_from: str = "client VALUES", value: str = "cpu_us_per_row"
              ) -> pd.DataFrame:
    """Per engine, the CPU per row of a one-row transaction (1 row per statement) split along the
    sweep: `commit` = 1-row transactions minus the largest transactions (both 1-row statements),
    `statement` = 1-row statements minus the largest statements (both in the largest
    transactions), `row` = what is left in the largest statement of the largest transaction.
    Each part includes its share of the work after the commit. The parts are taken within each
    repetition (one engine start measured every cell), then averaged with a 95% CI: a part is
    only called dominant when its CI clears the next largest part's."""
    rows = []
    for engine, df in cell_rows[cell_rows["rows_from"] == rows_from].groupby("engine", sort=False):
        big_txn = int(df["rows_per_txn"].max())
        big_stmt = int(df[df["rows_per_txn"] == big_txn]["rows_per_stmt"].max())
        per_rep = []
        for _, rep in df.groupby("repetition"):
            cell = rep.set_index(["rows_per_txn", "rows_per_stmt"])[value]
            one = cell.get((1, 1), float("nan"))
            many_single = cell.get((big_txn, 1), float("nan"))
            floor = cell.get((big_txn, big_stmt), float("nan"))
            per_rep.append({"one_row_txn": one, "commit": one - many_single, "statement": many_single - floor,
                            "row": floor})
        reps = pd.DataFrame(per_rep)
        n = int(reps["one_row_txn"].notna().sum())
        out = {"engine": engine, "n": n, "largest_txn": big_txn, "largest_stmt": big_stmt,
               "after_share": df["after_share"].mean()}
        for name in ("one_row_txn", *PARTS):
            mean = reps[name].mean()
            out[f"{name}_us"] = mean
            out[f"{name}_ci95"] = results.ci95_half_width(reps[name].std(ddof=1), n)
        out["dominant"] = _dominant(out)
        rows.append(out)
    return pd.DataFrame(rows)


def _dominant(parts: dict) -> str:
    known = sorted(((parts[f"{p}_us"], parts[f"{p}_ci95"], p) for p in PARTS if parts[f"{p}_us"] == parts[f"{p}_us"]),
                   reverse=True)
    if not known:
        return "n/a"
    if len(known) == 1:
        return known[0][2]
    (top, top_ci, name), (second, second_ci, _) = known[0], known[1]
    if top_ci != top_ci or second_ci != second_ci:
        return f"{name} (one repetition: untested)"
    return name if top - top_ci > second + second_ci else "not separable at this precision"
def node_cells(measurements: pd.DataFrame, instances: pd.DataFrame) -> pd.DataFrame:
    """One row per cluster node, repetition and cell: the node's own engine CPU per row (its idle
    rate subtracted, its settle window included, as for the cluster's sum) and the bytes through
    its network interface per row, received and sent."""
    nodes = instances[instances["kind"] == NODE_SCOPE]
    m = measurements[measurements["scope"] == NODE_SCOPE]
    if nodes.empty or m.empty:
        return pd.DataFrame()
    config = {i: json.loads(c) for i, c in zip(nodes["instance_id"], nodes["config"])}
    costs = results.phase_costs(m, "cpu_time", scopes=(NODE_SCOPE,))
    costs = costs[~costs["is_baseline"] & (costs["phase"] == "insert")]
    keys = ["instance_id", "repetition", "labels"]
    insert = m[m["phase"] == "insert"]
    checks = insert.drop_duplicates(["instance_id", "seq"]).groupby(keys)["check_value"].first()
    net = (insert[insert["metric"].isin(["net_rx_bytes", "net_tx_bytes"])]
           .pivot_table(index=keys, columns="metric", values="value", aggfunc="sum")
           .reindex(columns=["net_rx_bytes", "net_tx_bytes"]))
    out = costs.set_index(keys).join(checks.rename("rows")).join(net).reset_index()
    out = _labels(out)
    rows = out["rows"].where(out["rows"] > 0)
    out["cluster_instance"] = [cluster_instance_of(i) for i in out["instance_id"]]
    out["node"] = [config.get(i, {}).get("node") for i in out["instance_id"]]
    out["role"] = [config.get(i, {}).get("role") for i in out["instance_id"]]
    out["cpu_us_per_row"] = out["net_with_settle"] * 1e6 / rows
    out["net_rx_per_row"] = out["net_rx_bytes"] / rows
    out["net_tx_per_row"] = out["net_tx_bytes"] / rows
    return out


def node_summary(node_rows: pd.DataFrame) -> pd.DataFrame:
    """Per cluster, cell and node: means over repetitions, and the node's share of its cluster's
    CPU (the sum over its nodes in the same repetition and cell)."""
    if node_rows.empty:
        return pd.DataFrame()
    rows = node_rows.copy()
    total = rows.groupby(["cluster_instance", "labels"])["cpu_us_per_row"].transform("sum")
    rows["share"] = rows["cpu_us_per_row"] / total.where(total > 0)
    keys = ["engine", *CELL, "node", "role"]
    return (rows.groupby(keys, sort=False)[["cpu_us_per_row", "share", "net_rx_per_row", "net_tx_per_row"]]
            .mean().reset_index())


def single_node_of(cluster: str, engines) -> str | None:
    """The run's engine a cluster is compared with: the one it is a variant of (same name, any
    version pinned in the run)."""
    engine = find_engine(cluster)
    if engine is None:
        return None
    single = engine.variant_of
    return next((e for e in engines if e.partition("@")[0] == single), None)


def _stats(rows: pd.DataFrame, value: str) -> pd.DataFrame:
    """Mean, standard deviation, n and 95% CI half width of `value` per engine and cell."""
    return results.summarize(rows[["engine", *CELL, value]].rename(columns={value: "value"}), columns=("value",),
                             by=("engine", *CELL))


def replication(cell_rows: pd.DataFrame) -> pd.DataFrame:
    """Per cluster and cell: its engine CPU per row (summed over nodes) against its single node's
    in the same cell, both with 95% CIs over repetitions, the ratio with its CI and Welch's test
    (results.contrast), what replication adds per row and per commit, and the client's
    transaction latency (p50, p95) on both."""
    if cell_rows.empty:
        return pd.DataFrame()
    engines = list(dict.fromkeys(cell_rows["engine"]))
    clusters = [e for e in engines if is_cluster(e)]
    stats = _stats(cell_rows, "cpu_us_per_row").set_index(["engine", *CELL])
    latency = cell_rows.groupby(["engine", *CELL])[LATENCIES].mean()
    out = []
    for cluster in clusters:
        single = single_node_of(cluster, engines)
        if single is None:
            continue
        for cell in stats.loc[cluster].index:
            if (single, *cell) not in stats.index:
                continue
            base, other = stats.loc[(single, *cell)], stats.loc[(cluster, *cell)]
            c = results.contrast(base, other, "value")
            per_txn = cell[0]
            out.append({
                "cluster": cluster, "single": single, **dict(zip(CELL, cell)),
                "single_us": c["base_mean"], "single_ci95": c["base_ci95"],
                "cluster_us": c["mean"], "cluster_ci95": c["ci95"], "n": c["n"], "single_n": c["base_n"],
                "ratio": c["ratio"], "ratio_ci95": c["ratio_ci95"], "ratio_low": c["ratio_low"],
                "ratio_high": c["ratio_high"], "beyond_noise": c["beyond_noise"],
                "added_us_per_row": c["mean"] - c["base_mean"],
                "single_us_per_commit": c["base_mean"] * per_txn, "cluster_us_per_commit": c["mean"] * per_txn,
                "added_us_per_commit": (c["mean"] - c["base_mean"]) * per_txn,
                **{f"single_{k}": latency.loc[(single, *cell), k] for k in LATENCIES},
                **{f"cluster_{k}": latency.loc[(cluster, *cell), k] for k in LATENCIES},
            })
    return pd.DataFrame(out)
