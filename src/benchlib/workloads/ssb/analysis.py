"""The arithmetic of the SSB notebook, on plain frames so it is tested with known answers: loads
and sizes per engine and table, per query the cold run and the hot runs' mean with its 95% CI,
geometric means over all queries and per flight, and the findings: each column store against the
row store (findings.finding: one noise rule), the seed's ratios beside."""
from __future__ import annotations

import json
from typing import Callable, Iterable, Mapping

import numpy as np
import pandas as pd

from ...data import findings as F
from ...data import results
from .. import reporting
from .dialects import FLAT
from .queries import NAMES
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
    for column in ("table", "query", "run", "dropped", "settings", "variant"):
        out[column] = labels.get(column)
    out["variant"] = out["variant"].fillna("")  # "": the start's own settings
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


# The queries whose filter is finer than a year (a month, a week): where a table sorted by order date
# reads a small share of its rows, at a scale with enough granules to skip.
FINER_THAN_A_YEAR = ("Q1.2", "Q1.3", "Q3.4")
SMALL_SHARE = 0.5  # under this share of the table read, the sort key skipped something


def sort_key_skips(shares: pd.DataFrame) -> bool | None:
    """Whether the sort key skipped rows in the queries filtered finer than a year (share_read's
    rows); None where none of them reports rows read."""
    finer = shares[shares["query"].isin(FINER_THAN_A_YEAR)]["share"].dropna()
    return None if finer.empty else bool((finer < SMALL_SHARE).all())


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
    """Per engine, variant ("" for the start's own settings) and query: the cold run's wall and CPU
    and storage reads, the hot runs' mean wall with its 95% CI, their standard deviation and count
    (for Welch), the mean CPU, rows read (where reported) and answer rows."""
    cols = ["engine", "variant", "query", "cold_s", "cold_cpu_s", "cold_storage_read_bytes", "cold_rows_read",
            "dropped", "hot_s", "hot_ci95", "hot_std", "n", "hot_cpu_s", "rows_read", "result_rows", "order_matches"]
    if w.empty or "run" not in w or not w["run"].isin([COLD, HOT]).any():
        return pd.DataFrame(columns=cols)
    q = w[w["run"].isin([COLD, HOT])]  # the floor's `select 1` is not a query of the benchmark
    if "variant" not in q:
        q = q.assign(variant="")
    keys = ["engine", "variant", "query"]
    hot = q[q["run"] == HOT].groupby(keys, sort=False)
    out = pd.DataFrame({"hot_s": hot["wall_s"].mean(), "hot_std": hot["wall_s"].std(ddof=1), "n": hot.size(),
                        "hot_cpu_s": hot["cpu_s"].mean(), "rows_read": hot["rows_read"].mean(),
                        "result_rows": hot["result_rows"].max(), "order_matches": q.groupby(
                            keys, sort=False)["answer_order_matches"].min()})
    out["hot_ci95"] = [results.ci95_half_width(sd, n) for sd, n in zip(out["hot_std"], out["n"])]
    cold = q[q["run"] == COLD].groupby(keys, sort=False)
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


def share_read(per_query: pd.DataFrame, engine: str, table_rows: float) -> pd.DataFrame:
    """Rows `engine` read in each query's cold run (where it reports them), as a share of
    lineorder_flat's rows: what the table's layout skips, no cache of an earlier run helping."""
    q = per_query[(per_query["engine"] == engine) & (per_query["variant"] == "") & per_query["cold_rows_read"].notna()]
    return pd.DataFrame({"query": q["query"], "rows_read": q["cold_rows_read"],
                         "share": q["cold_rows_read"] / table_rows})


# -- findings: each engine against the row store ---------------------------------------------------------
def flight(query: str) -> str:
    """SSB's flights: Q1.1-Q1.3 are flight Q1, and so on."""
    return f"flight {query.split('.')[0]}"


def query_groups(queries) -> dict[str, list[str]]:
    """The groups a geometric mean is taken over: all queries run, then each flight."""
    ran = [q for q in NAMES if q in set(queries)]
    groups = {f"all {len(ran)} queries": ran}
    for q in ran:
        groups.setdefault(flight(q), []).append(q)
    return groups


def hot_geomeans(w: pd.DataFrame) -> pd.DataFrame:
    """Per engine, variant, repetition and query group: the geometric mean of that repetition's hot
    run times (s) over the group's queries, where every one of them ran: one value per repetition,
    so a group's mean has a CI over repetitions like a single query's."""
    hot = w[w["run"] == HOT] if "run" in w else w.iloc[0:0]
    rows = []
    for (engine, variant, repetition), g in hot.groupby(["engine", "variant", "repetition"], sort=False):
        times = g.set_index("query")["wall_s"]
        for group, members in query_groups(hot["query"]).items():
            if set(members) <= set(times.index):
                rows.append({"engine": engine, "variant": variant, "repetition": repetition, "group": group,
                             "seconds": results.geometric_mean(times[members])})
    return pd.DataFrame(rows, columns=["engine", "variant", "repetition", "group", "seconds"])


def cold_geomeans(per_query: pd.DataFrame) -> pd.DataFrame:
    """Per engine and query group: the geometric mean of the cold runs (one each) over the group,
    where every one of its first runs read from storage: a first run that read nothing found its
    data in a cache, and is not cold (a group holding one has no cold figure)."""
    first = per_query[(per_query["variant"] == "") & per_query["cold_s"].notna()]
    groups = query_groups(first["query"])
    cold = first[first["cold_storage_read_bytes"].fillna(0) > 0] if "cold_storage_read_bytes" in first else first
    rows = []
    for engine, g in cold.groupby("engine", sort=False):
        times = g.set_index("query")["cold_s"]
        for group, members in groups.items():
            if set(members) <= set(times.index):
                rows.append({"engine": engine, "group": group, "seconds": results.geometric_mean(times[members])})
    return pd.DataFrame(rows, columns=["engine", "group", "seconds"])


def _summary(values) -> pd.Series:
    """Mean, standard deviation, 95% CI half width and count of a sample, as results.contrast reads them."""
    v = pd.Series(values, dtype=float).dropna()
    sd = v.std(ddof=1) if len(v) > 1 else float("nan")
    return pd.Series({"value": v.mean(), "value_std": sd, "value_ci95": results.ci95_half_width(sd, len(v)),
                      "n": len(v)})


# The first run of a query after the load: cold only where it read from storage (its caveat says
# where it did not), so it is named for what it is, and never headlined.
HOT_RUN, COLD_RUN = "hot", "first run"
LOAD_STEP, FLAT_BYTES, LINEORDER_BYTES = "load lineorder", f"{FLAT} on disk", "lineorder on disk"
# An engine's smallest table on disk is about its allocation unit (DuckDB's 256 KiB block holds a
# 4-row table); a size within this many of them measures allocation, not compression: no ratio.
ALLOCATION_UNITS = 4


def allocation_bound(size_rows: pd.DataFrame) -> set[tuple[str, str]]:
    """(engine, table) whose bytes on disk are within ALLOCATION_UNITS of the engine's smallest
    table (its allocation unit, as near as the run shows it), where it measured more than one table."""
    if size_rows.empty:
        return set()
    unit = size_rows.groupby("engine")["table_bytes"].transform("min")
    tables = size_rows.groupby("engine")["table"].transform("nunique")
    bound = (tables > 2) & (size_rows["table_bytes"] <= ALLOCATION_UNITS * unit)
    return set(zip(size_rows.loc[bound, "engine"], size_rows.loc[bound, "table"]))

# A group's row is a geometric mean over its queries: said in its line (hostile read 46e, 08 #3:
# "all 13 queries (hot): 40.3 ms" read as a total).
MEAN_WORDS = ", geometric mean per query"
# The answer's mean also without the queries filtered finer than a year: there a column store's sort
# key reads 1-2% of the table while PostgreSQL's extract() predicates cannot use its date index, so
# they measure a sort key against an unused index, not columns against rows (hostile read 46e, 08 #1).
WITHOUT_FINER = "; without {queries} (filtered finer than a year): {value} against {base_value} ms"


def without_finer(table: pd.DataFrame, overall: list[str]) -> pd.DataFrame:
    """`table` with `mean_words` (MEAN_WORDS on a geometric mean's row) and `without` (WITHOUT_FINER
    on a headline row: the geometric mean of its engine's and its base's per-query hot rows in the
    table, FINER_THAN_A_YEAR left out, where every other query of the group has its row) on every row."""
    if table.empty:
        return table.assign(mean_words=pd.Series(dtype=object), without=pd.Series(dtype=object))
    rest = [q for q in overall if q not in FINER_THAN_A_YEAR]
    left_out = [q for q in FINER_THAN_A_YEAR if q in overall]
    each = table[(table["regime"] == HOT_RUN) & table["step"].isin(rest)]
    without = []
    for engine, lead in zip(table["engine"], table["headline"] == True):  # noqa: E712 (object column)
        mine = each[each["engine"] == engine]
        text = ""
        if lead and left_out and rest and len(mine) == len(rest) and (mine["verdict"] != F.Verdict.NOT_COMPARABLE.value).all():
            text = WITHOUT_FINER.format(queries=", ".join(left_out),
                                        value=F.fmt_number(results.geometric_mean(mine["value"])),
                                        base_value=F.fmt_number(results.geometric_mean(mine["base_value"])))
        without.append(text)
    words = [MEAN_WORDS if m == "geometric mean time" else "" for m in table["metric"]]
    return table.assign(mean_words=words, without=without)


# The seed's query times of one system's column store and its row store: (row store's metric,
# column store's), by metric name in data/reference/seed001_ssb.csv.
SEED_QUERY = ("_wall_ms_row_store", "_wall_ms_columnar_engine")


def seed_query_ratios(reference: pd.DataFrame) -> dict[str, float]:
    """Query -> the seed's column store time over its row store's, where the reference has both."""
    by = reference.set_index("metric")["value"]
    out = {}
    for metric in by.index:
        query, found, _ = metric.partition(SEED_QUERY[0])
        if found and f"{query}{SEED_QUERY[1]}" in by.index and by[metric] > 0:
            out[query] = float(by[f"{query}{SEED_QUERY[1]}"] / by[metric])
    return out


def seed_question_rows(found: pd.DataFrame) -> pd.DataFrame:
    """The rows the answer's seed line counts: those asking the page's question (query times), not
    the load rate, which the seed measured on another pair of systems' bulk paths."""
    return found[found["step"] != LOAD_STEP] if not found.empty else found


ONE_LOAD, AFTER_LOAD = "one load", "after the load"  # the regimes of a load's and a size's rows


def findings(w: pd.DataFrame, per_query: pd.DataFrame, load_rows: pd.DataFrame, size_rows: pd.DataFrame, *,
             base: str, subjects, host: Mapping[str, float], seed: Mapping[tuple[str, str, str], float],
             caveats: Callable[[str, str, str], Iterable[str]] = lambda engine, step, regime: (),
             wrong: Iterable[tuple[str, str]] = (), floors: Mapping[str, float] | None = None) -> pd.DataFrame:
    """Each of `subjects` against the row store `base`, then `base` under each of its variants
    against itself: the geometric mean over all queries and per flight, hot (a CI over repetitions)
    and cold (one run each); each query hot; the lineorder load's rate and the bytes on disk (one
    each). A query whose answer differed from the reference (`wrong`: engine, query) is not
    compared, nor is any group that holds it. `seed`: (engine, step, regime) -> the seed's ratio;
    `caveats`: (engine, step, regime) -> the ids of the caveats that bear on the row; `floors`:
    engine -> its `select 1` through the same path (s), set beside the answer's rows (`floor`,
    `base_floor`, ms): a fixed cost under every query, whatever the layout. The answer: each column
    store hot over all queries, never the row store against itself under a setting."""
    wrong = set(wrong)
    groups = query_groups(per_query["query"])
    hot, cold = hot_geomeans(w), cold_geomeans(per_query).set_index(["engine", "group"])["seconds"]
    main = per_query[per_query["variant"] == ""].set_index(["engine", "query"])
    variants = [v for v in dict.fromkeys(per_query[per_query["engine"] == base]["variant"]) if v]

    def row(engine: str, step: str, regime: str, metric: str, unit: str, contrast: dict, *, queries=(),
            higher_is_better: bool = False, headline: bool = False) -> dict:
        bad = any((e, q) in wrong for e in (engine, base) for q in queries)
        return F.finding(engine=engine, base_engine=base, step=step, regime=regime, metric=metric, unit=unit,
                         contrast=contrast, higher_is_better=higher_is_better, host_factor=host.get(engine),
                         seed_ratio=seed.get((engine, step, regime)), caveats=caveats(engine, step, regime),
                         headline=headline, verdict=F.Verdict.NOT_COMPARABLE if bad else None)

    def hot_contrast(engine: str, variant: str, group: str) -> dict | None:
        mine = hot[(hot["engine"] == engine) & (hot["variant"] == variant) & (hot["group"] == group)]["seconds"]
        theirs = hot[(hot["engine"] == base) & (hot["variant"] == "") & (hot["group"] == group)]["seconds"]
        if mine.empty or theirs.empty:
            return None
        return results.contrast(_summary(theirs * 1e3), _summary(mine * 1e3), "value")

    rows = []
    runs = [(e, "") for e in subjects] + [(base, v) for v in variants]
    overall = next(iter(groups), None)
    for regime_of, on in ((HOT_RUN, True), (COLD_RUN, False)):
        for group in groups:
            for engine, variant in runs:
                if not on and variant:
                    continue  # a variant runs hot only
                regime = ", ".join(filter(None, (regime_of, variant)))
                if on:
                    c = hot_contrast(engine, variant, group)
                elif (engine, group) in cold.index and (base, group) in cold.index:
                    c = reporting.one_each(cold[(base, group)] * 1e3, cold[(engine, group)] * 1e3)
                else:
                    c = None
                if c is not None:
                    lead = on and group == overall and not variant
                    rows.append(row(engine, group, regime, "geometric mean time", "ms", c, queries=groups[group],
                                    headline=lead)
                                | ({"floor": floors.get(engine, np.nan) * 1e3, "base_floor": floors.get(base, np.nan)
                                    * 1e3} if lead and floors else {}))
    for engine in subjects:
        for query in groups.get(overall, []):
            if (engine, query) in main.index and (base, query) in main.index:
                pair = [main.loc[(e, query)] for e in (base, engine)]
                c = results.contrast(*[pd.Series({"value": p["hot_s"] * 1e3, "value_std": p["hot_std"] * 1e3,
                                                  "value_ci95": p["hot_ci95"] * 1e3, "n": p["n"]}) for p in pair], "value")
                rows.append(row(engine, query, HOT_RUN, "time", "ms", c, queries=[query]))
    loaded = load_rows[load_rows["step"] == LOAD_STEP].set_index("engine")["rows_per_s"]
    coarse = allocation_bound(size_rows)
    kept = size_rows[pd.Series([(e, t) not in coarse for e, t in zip(size_rows["engine"], size_rows["table"])],
                               index=size_rows.index, dtype=bool)]
    on_disk = {LINEORDER_BYTES: kept[kept["table"] == "lineorder"].set_index("engine")["table_bytes"],
               FLAT_BYTES: kept[kept["table"] == FLAT].set_index("engine")["table_bytes"]}
    for engine in subjects:
        if engine in loaded.index and base in loaded.index:
            rows.append(row(engine, LOAD_STEP, ONE_LOAD, "load rate", "rows/s",
                            reporting.one_each(loaded[base], loaded[engine]), higher_is_better=True))
        for step, sizes in on_disk.items():
            if engine in sizes.index and base in sizes.index:
                rows.append(row(engine, step, AFTER_LOAD, "bytes on disk", "bytes",
                                reporting.exact(sizes[base], sizes[engine])))
    # The answer: the geometric means over all queries first (marked in the loop above), hot then cold.
    table = without_finer(F.table(rows), groups.get(overall, []))
    order = table["headline"].map({True: 0, False: 1}).astype(int)
    return table.loc[order.sort_values(kind="stable").index].reset_index(drop=True)
