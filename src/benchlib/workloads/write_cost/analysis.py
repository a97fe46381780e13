"""The arithmetic of the write sweep, on plain frames so it is tested with known answers: per
cell the engine's cost per row in the run's cost metric (`results.cost_metric`: CPU seconds, or
instructions where they were counted; only the unit differs), the decomposition of a one-row
transaction into commit, statement and row work, for clusters what replication adds, and the
findings rows that answer the notebook's question."""
from __future__ import annotations

import itertools
import json
import math
from typing import Callable

import pandas as pd

from ...data import findings as F
from ...data import results
from ...host.cgroups import NODE_SCOPE
from ...engines import find_engine, is_cluster, is_server
from ...run.measure import cluster_instance_of
from ...engines import engine_order
from ..reporting import settings
from .workload import CLIENT_VALUES, PHASE, SERVER_GENERATOR

KEYS = ["engine", "rows_per_txn", "rows_per_stmt", "rows_from"]
CELL = ["rows_per_txn", "rows_per_stmt", "rows_from"]
LATENCIES = ["txn_latency_p50", "txn_latency_p95"]
BASE = "postgres"  # the product every ratio is taken against (seed 000's base)

# How a cost per row is shown, by its unit alone: seconds as µs, instructions as they are.
UNIT_SCALE = {"s": (1e-6, "µs"), "instructions": (1.0, "instructions")}

REPLICATION_LINES = 5  # the answer's lines with clusters: their cells, one-row first

# Kinds of findings rows (the `kind` column): each has its own phrase table in the report.
DECOMPOSITION, BULK, REPLICATION = "decomposition", "bulk", "replication"

# Caveat ids the rows cite (the report holds their sentences).
EMBEDDED_DRIVER = "embedded-driver"
COUNTS_NO_WAITS = "counts-no-waits"
SEED_CORNER = "seed-corner"
SEED_METRIC = "seed-metric"
SHARED_CORES = "shared-cores"
# Seed 000's figures are counts of user-space instructions: a ratio of another unit (CPU-seconds) is
# shown beside them but tests nothing (hostile read 46d, 05 clusters #3: a CPU ratio was "within" it).
SEED_UNIT = "instructions"
SEED_OTHER_UNIT = "seed 000 counted instructions; this ratio is of {unit}"
BINARY_LOG = "binary-log"


def writes_binary_log(reading: str) -> bool:
    """Whether a start's durability reading says the engine writes a binary log beside its redo log
    (MySQL's log_bin=1): a second log each commit writes, which PostgreSQL has no counterpart of."""
    return settings(reading).get("log_bin") in ("1", "on")


def _labels(frame: pd.DataFrame) -> pd.DataFrame:
    parsed = [json.loads(x) for x in frame["labels"]]
    return frame.assign(rows_per_txn=[int(p["rows_per_txn"]) for p in parsed],
                        rows_per_stmt=[int(p["rows_per_stmt"]) for p in parsed],
                        rows_from=[p["rows_from"] for p in parsed])


def cells(measurements: pd.DataFrame, row_bytes: int, metric: str | None = None) -> pd.DataFrame:
    """One row per engine, repetition and cell, costs per row in `metric`'s unit (default: the
    run's cost metric). The engine's cost net of its idle rate, split into the statements' window
    (`phase_per_row`) and the settle window after the commit (`after_per_row`); the client's cost
    in the same metric (NaN where the client was not counted in it; an embedded engine has no
    client: its driver is in its process); the wall time of the statements' window; log bytes from
    the engine's own counter (NaN with status "not reported" where it has none) and I/O write bytes
    of the engine's scope, both windows together."""
    m = measurements[measurements["phase"] == PHASE]
    if m.empty:
        return pd.DataFrame()
    metric = metric or results.cost_metric(measurements)[0]
    costs = results.phase_costs(measurements, metric)  # with the baselines: they give the idle rate
    noise = idle_noise(costs)
    costs = costs[~costs["is_baseline"]]
    keys = ["engine", "repetition", "labels"]
    checks = m.drop_duplicates("seq").groupby(keys)["check_value"].first()
    client = m[(m["scope"] == "client") & (m["window"] == "phase")]
    client_cost = client[client["metric"] == metric].groupby(keys)["value"].sum(min_count=1)
    driven = client.groupby(keys).size().rename("driven") > 0  # a server: its driver measured apart
    engine = results.engine_rows(m)
    io = engine[engine["metric"] == "io_write_bytes"].groupby(keys)["value"].sum(min_count=1)
    logs = engine[engine["metric"].isin(["engine_log_bytes", "engine_log_bytes_settle"])]
    log_bytes = logs.groupby(keys)["value"].sum(min_count=1)
    log_status = logs.groupby(keys)["status"].agg(lambda s: "ok" if (s == "ok").all() else sorted(set(s) - {"ok"})[0])
    latency = m[(m["scope"] == "client") & m["metric"].isin(LATENCIES) & (m["window"] == "phase")]
    latency = latency.pivot_table(index=keys, columns="metric", values="value", aggfunc="first").reindex(
        columns=LATENCIES)  # NaN for runs stored before transactions were timed
    out = (costs.set_index(keys).join(checks.rename("rows")).join(client_cost.rename("client_cost")).join(driven)
           .join(latency).join(io.rename("io_write_bytes")).join(log_bytes.rename("log_bytes"))
           .join(log_status.rename("log_status")))
    out = _labels(out.reset_index())
    rows = out["rows"].where(out["rows"] > 0)
    out["phase_per_row"] = out["net"] / rows
    out["after_per_row"] = (out["net_with_settle"] - out["net"]) / rows
    out.loc[out["settle_value"].isna(), "after_per_row"] = float("nan")  # no settle window: not zero
    # What the idle rate's own spread makes of a settle window this long, per row: work after the
    # commit below it is not resolved (NaN where fewer than two idle windows give no spread).
    out["after_noise_per_row"] = out["engine"].map(noise) * out["settle_wall_s"] / rows
    # One figure per cell for every table, chart and findings row: the statements' work, plus the
    # work after the commit only where it is resolved (resolved_after, over the cell's repetitions).
    # Unresolved settle work is no term of it, of either sign: net of the idle rate it read
    # -7.4 µs/row for MySQL at 100/txn, and 29.8 against the answer's 37.2 (hostile read 43, 05 #1).
    out["after_counted"] = _after_counted(out)
    out["engine_per_row"] = out["phase_per_row"] + out["after_per_row"].where(out["after_counted"], 0.0)
    out["client_per_row"] = out["client_cost"] / rows
    # The write path is the engine and the Python driver that feeds it: an embedded engine's process
    # holds both; a server's driver is the client scope, added where it was counted in this metric.
    out["total_per_row"] = out["engine_per_row"] + out["client_per_row"].where(out["driven"].fillna(False), 0.0)
    out["wall_per_row"] = out["wall_s"] / rows
    out["after_share"] = (out["after_per_row"] / out["engine_per_row"]).where(out["engine_per_row"] > 0)
    out["log_bytes_per_row"] = out["log_bytes"] / rows
    out["io_bytes_per_row"] = out["io_write_bytes"] / rows
    out["log_amplification"] = out["log_bytes_per_row"] / row_bytes
    out["io_amplification"] = out["io_bytes_per_row"] / row_bytes
    return out


def _after_counted(rows: pd.DataFrame) -> pd.Series:
    """Per row, whether its cell's work after the commit is resolved over the cell's repetitions."""
    g = rows.groupby(KEYS, sort=False)
    after = g["after_per_row"]
    half = after.transform(lambda s: results.ci95_half_width(s.std(ddof=1), int(s.count())))
    args = zip(after.transform("mean"), half, g["phase_per_row"].transform("mean"),
               g["after_noise_per_row"].transform("mean"))
    return pd.Series([resolved_after(*a) == resolved_after(*a) for a in args], index=rows.index, dtype=bool)


VALUES = ["engine_per_row", "total_per_row", "phase_per_row", "after_per_row", "client_per_row", "wall_per_row",
          "after_share", "log_bytes_per_row", "io_bytes_per_row", "log_amplification", "io_amplification"]


def base_of(engines) -> str | None:
    """The run's PostgreSQL (any version), when exactly one ran: the base of every ratio."""
    found = {e for e in engines if results.product_key(e) == BASE}
    return found.pop() if len(found) == 1 else None


def summarize(cell_rows: pd.DataFrame) -> pd.DataFrame:
    """Mean over repetitions per engine and cell, with the 95% CI of the engine's cost per row,
    and the ratio of engine + driver cost per row to PostgreSQL's in the same cell: the one
    attribution under which an embedded engine (its driver inside its process) and a server
    compare."""
    if cell_rows.empty:
        return pd.DataFrame(columns=[*KEYS, *VALUES, "engine_per_row_ci95", "n", "log_status", "ratio_to_postgres"])
    g = cell_rows.groupby(KEYS, sort=False)
    out = g[VALUES].mean()
    out["n"] = g.size()
    out["engine_per_row_ci95"] = [results.ci95_half_width(sd, n) for sd, n in
                                  zip(g["engine_per_row"].std(ddof=1), out["n"])]
    # Work after the commit is a share of the cost only where it is resolved above the idle rate
    # (cells: the same rule that puts it in engine_per_row).
    out["after_resolved"] = g["after_counted"].all()
    out["log_status"] = g["log_status"].first()
    out = out.reset_index()
    base = base_of(out["engine"])
    ref = out[out["engine"] == base].set_index(CELL)["total_per_row"]
    out["ratio_to_postgres"] = [v / ref.get(tuple(k), float("nan")) for v, k in
                                zip(out["total_per_row"], out[CELL].itertuples(index=False))]
    return out


PARTS = ("commit", "statement", "row")


def part_repetitions(cell_rows: pd.DataFrame, value: str = "engine_per_row", rows_from: str = CLIENT_VALUES
                     ) -> pd.DataFrame:
    """Per engine and repetition, the cost per row of a one-row transaction (1 row per statement)
    split along the sweep: `commit` = 1-row transactions minus the largest transactions (both
    1-row statements), `statement` = 1-row statements minus the largest statements (both in the
    largest transactions), `row` = what is left in the largest statement of the largest
    transaction. Each part includes its share of the work after the commit where resolved (cells).
    The parts are taken within a repetition: one engine start measured every cell."""
    rows = []
    for engine, df in cell_rows[cell_rows["rows_from"] == rows_from].groupby("engine", sort=False):
        big_txn = int(df["rows_per_txn"].max())
        big_stmt = int(df[df["rows_per_txn"] == big_txn]["rows_per_stmt"].max())
        for repetition, rep in df.groupby("repetition"):
            cell = rep.set_index(["rows_per_txn", "rows_per_stmt"])[value]
            one = cell.get((1, 1), float("nan"))
            many_single = cell.get((big_txn, 1), float("nan")) if big_txn > 1 else float("nan")
            floor = cell.get((big_txn, big_stmt), float("nan")) if big_stmt > 1 else float("nan")
            rows.append({"engine": engine, "repetition": repetition, "largest_txn": big_txn, "largest_stmt": big_stmt,
                         "one_row_txn": one, "commit": one - many_single, "statement": many_single - floor,
                         "row": floor})
    return pd.DataFrame(rows, columns=["engine", "repetition", "largest_txn", "largest_stmt", "one_row_txn", *PARTS])


def decompose(cell_rows: pd.DataFrame, value: str = "engine_per_row", rows_from: str = CLIENT_VALUES
              ) -> pd.DataFrame:
    """Per engine: each part of a one-row transaction (part_repetitions) as its mean over the
    repetitions with the 95% CI, one row per engine."""
    reps = part_repetitions(cell_rows, value, rows_from)
    if reps.empty:
        return pd.DataFrame()
    out = []
    for engine, df in reps.groupby("engine", sort=False):
        row = {"engine": engine, "n": int(df["one_row_txn"].notna().sum()), "largest_txn": df["largest_txn"].iloc[0],
               "largest_stmt": df["largest_stmt"].iloc[0]}
        for name in ("one_row_txn", *PARTS):
            row[name] = df[name].mean()
            row[f"{name}_ci95"] = results.ci95_half_width(df[name].std(ddof=1), int(df[name].notna().sum()))
        out.append(row)
    return pd.DataFrame(out)


def paired(base: pd.Series, other: pd.Series, *, exact: bool = False) -> dict:
    """`other` against `base`, two figures measured in the same repetitions (two parts of one
    engine start's cells), in `results.contrast`'s fields. Their difference is tested within each
    repetition (Student's t on the repetitions' log ratios), since parts taken from shared cells
    are not independent; the ratio is the geometric mean of the repetitions' ratios, its CI
    exp(mean ± t·se) on the log scale. Where a part is not positive in every repetition, the
    test is on the differences and the ratio is that of the means, without a CI."""
    both = pd.concat([base.rename("a"), other.rename("b")], axis=1).dropna()
    a, b, n = both["a"], both["b"], len(both)
    out = {"mean": b.mean(), "ci95": results.ci95_half_width(b.std(ddof=1), n), "n": n,
           "base_mean": a.mean(), "base_ci95": results.ci95_half_width(a.std(ddof=1), n), "base_n": n,
           "ratio": b.mean() / a.mean() if n and a.mean() > 0 else float("nan"),
           "ratio_low": float("nan"), "ratio_high": float("nan"), "welch_t": float("nan"), "welch_dof": float("nan"),
           "beyond_noise": None}
    if n < 2:
        return out
    positive = bool((a > 0).all() and (b > 0).all())
    diffs = (b / a).map(math.log) if positive else b - a
    se = diffs.std(ddof=1) / math.sqrt(n)
    if not se > 0:
        if not exact:  # identical repetitions: resolution, not certainty (as results.welch says)
            return out
        # Counts that repeat exactly: the repetitions agree, and their ratio is certain.
        same = diffs.mean() == 0
        out.update(welch_t=0.0 if same else math.copysign(math.inf, diffs.mean()), welch_dof=float(n - 1),
                   beyond_noise=not same)
        if positive:
            out.update(ratio=math.exp(diffs.mean()), ratio_low=math.exp(diffs.mean()),
                       ratio_high=math.exp(diffs.mean()))
        return out
    t, q = diffs.mean() / se, results.t_quantile_975(n - 1)
    out.update(welch_t=t, welch_dof=float(n - 1), beyond_noise=bool(abs(t) > q))
    if positive:
        out.update(ratio=math.exp(diffs.mean()), ratio_low=math.exp(diffs.mean() - q * se),
                   ratio_high=math.exp(diffs.mean() + q * se))
    return out


# Which pairs of parts a one-row insert's findings test: the largest resolved part against the next,
# and each overhead against the row (hostile read 46c, 05 #2: on every server the row is ~10x below
# the statement and the commit, which largest-vs-next never said).
LARGEST, VS_ROW = "largest", "row"
NO_PAIR = "under two parts resolved"  # the step of an engine's row where no pair could be tested


def _resolved_parts(df: pd.DataFrame) -> dict[str, float]:
    """Each part of `part_repetitions`' rows of one engine: its mean where its 95% CI is above
    zero, else NaN (a part not resolved is no cost, and is never called largest)."""
    return {part: df[part].mean() if above_zero(df[part].mean(), results.ci95_half_width(
        df[part].std(ddof=1), int(df[part].notna().sum()))) else float("nan") for part in PARTS}


def _size(df: pd.DataFrame, parts: list[str]) -> dict[str, float]:
    """Each part's size by the statistic `paired`'s ratio uses: the geometric mean over the
    repetitions where every part is positive in each of them (its ratio is then the geometric mean
    of the repetitions' ratios), else the mean (the ratio of the means)."""
    both = df[parts].dropna()
    if not both.empty and bool((both > 0).all().all()):
        return {p: math.exp(both[p].map(math.log).mean()) for p in parts}
    return {p: both[p].mean() for p in parts}


def _oriented(df: pd.DataFrame, a: str, b: str, exact: bool) -> tuple[str, str, dict]:
    """`paired` of the larger of two parts over the smaller: (larger, smaller, contrast), its ratio
    never below 1."""
    c = paired(df[b], df[a], exact=exact)
    if c["ratio"] == c["ratio"] and c["ratio"] < 1:
        return b, a, paired(df[a], df[b], exact=exact)
    return a, b, c


def separability(cell_rows: pd.DataFrame, value: str = "engine_per_row", *, exact: bool = False) -> list[dict]:
    """Per engine, pairs of the resolved parts of a one-row transaction measured in the same
    repetitions (`paired`), each the larger over the smaller: the statement and the commit against
    the row (VS_ROW), then the largest against the next (LARGEST), by the statistic the ratio uses;
    a pair against the row that is also the largest against the next is that LARGEST pair. A part not resolved above zero is in no pair."""
    reps = part_repetitions(cell_rows, value)
    out = []
    for engine, df in reps.groupby("engine", sort=False):
        shown = _resolved_parts(df)  # every part beside the test, in PARTS order
        resolved = [p for p in PARTS if shown[p] == shown[p]]
        pairs = [(VS_ROW, part, "row") for part in ("statement", "commit") if {part, "row"} <= set(resolved)]
        if len(resolved) >= 2:
            size = _size(df, resolved)
            top, second = sorted(resolved, key=lambda p: -size[p])[:2]
            # A pair against the row that is also the largest against the next is tested as the largest
            # (hostile read 47, 05: the Method says the largest is tested against the next).
            same = [i for i, (_, a, b) in enumerate(pairs) if {top, second} == {a, b}]
            if same:
                pairs[same[0]] = (LARGEST, *pairs[same[0]][1:])
            else:
                pairs.append((LARGEST, top, second))
        for pair, a, b in pairs:
            top, second, c = _oriented(df, a, b, exact)
            out.append({"engine": engine, "pair": pair, "top": top, "second": second, **c, "parts": shown})
        if not pairs:  # the engine's parts are still its answer's line: no pair, no ratio (n/a)
            out.append({"engine": engine, "pair": None, "top": None, "second": None, "n": len(df), "parts": shown})
    return out


def idle_noise(costs: pd.DataFrame) -> pd.Series:
    """Per engine, twice the standard deviation of its idle windows' rates (metric per second): how
    far one window's idle cost strays from the rate it is net of (~95%); NaN under two windows."""
    idle = costs[costs["is_baseline"]]
    rates = idle["value"] / idle["wall_s"].where(idle["wall_s"] > 0)
    return 2 * rates.groupby(idle["engine"]).std(ddof=1)


def resolved_after(value: float, half: float, during: float, noise: float) -> float:
    """Work after the commit per row where it is resolved, else NaN: above zero, over 0.1% of the
    statements' work (a net of two near-equal rates is no figure), and over the idle noise of its
    settle window (`after_noise_per_row`; unknown noise does not blank it)."""
    resolved = above_zero(value, half) and value > 1e-3 * during and not value <= noise
    return value if resolved else float("nan")


def above_zero(value: float, half: float) -> bool:
    """Whether a cost net of an idle rate is a cost: its 95% CI above zero (one repetition, no CI:
    the value itself). A cost not above zero is never drawn or printed as one."""
    low = value - half if half == half else value
    return bool(value == value and low > 0)


# The parts that are differences of two cells (part_repetitions): of any sign, whatever was measured.
SUBTRACTED = ("commit", "statement")


def positive_parts(parts: pd.DataFrame, *, raw: bool = False) -> pd.DataFrame:
    """`decompose`'s table with each part that is not above zero blanked (NaN), its CI with it.
    `raw`: a cost measured as it is (a driver's CPU, no idle rate subtracted) cannot be at or
    below zero; only its parts that are differences (SUBTRACTED) are tested (hostile read 44, 05 #1:
    MariaDB's driver one-row txn, a cost, printed "not above 0")."""
    out = parts.copy()
    for name in SUBTRACTED if raw else ("one_row_txn", *PARTS):
        if name in out:
            keep = [above_zero(v, h) for v, h in zip(out[name], out[f"{name}_ci95"])]
            out[name] = out[name].where(keep)
            out[f"{name}_ci95"] = out[f"{name}_ci95"].where(keep)
    return out




def seed_cell(summary: pd.DataFrame) -> pd.DataFrame:
    """The cells closest to seed 000's insert: the largest transaction, rows generated by the
    server in one statement (else the largest client statement)."""
    if summary.empty:
        return summary
    big = summary[summary["rows_per_txn"] == summary["rows_per_txn"].max()]
    pick = big[big["rows_from"] == SERVER_GENERATOR]
    return pick if not pick.empty else big[big["rows_per_stmt"] == big["rows_per_stmt"].max()]


def cell_label(row) -> str:
    """`3,000/txn · server-generated` or `1/txn · 1/stmt`."""
    stmt = "server-generated" if row["rows_from"] == SERVER_GENERATOR else f"{int(row['rows_per_stmt']):,}/stmt"
    return f"{int(row['rows_per_txn']):,}/txn · {stmt}"


def seed_ratios(reference: pd.DataFrame, phase: str = PHASE) -> dict[str, float]:
    """Seed 000's insert of each engine relative to its PostgreSQL's, from its instruction counts."""
    counts = reference[reference["phase"] == phase].set_index("engine")["instructions_gi"]
    return {k: float(v / counts[BASE]) for k, v in counts.items() if k != BASE} if BASE in counts else {}


def _stats(rows: pd.DataFrame, value: str, by=("engine", *CELL)) -> pd.DataFrame:
    """Mean, standard deviation, n and 95% CI half width of `value` per engine and cell."""
    return results.summarize(rows[[*by, value]].rename(columns={value: "value"}), columns=("value",), by=by)


def bulk_findings(cell_rows: pd.DataFrame, summary: pd.DataFrame, host: Callable[[str, str], float], *, metric: str,
                  unit: str, seed: dict[str, float], readings: dict[str, str] | None = None,
                  timed: bool = True) -> list[dict]:
    """Each server engine against PostgreSQL in the cell nearest seed 000's insert: the engine's
    own cost per row (the seed's figure is the server's work), and the wall time per row beside it
    where `timed` (not under valgrind: its wall time is valgrind's, no verdict of the engine's).
    `readings`: each engine's durability reading at its start; a subject that writes a binary log
    the base does not cites BINARY_LOG. `host`: (subject, base) -> results.host_factor."""
    corner = seed_cell(summary)
    base = base_of(cell_rows["engine"]) if not cell_rows.empty else None
    if corner.empty or base is None:
        return []
    cell = tuple(corner.iloc[0][CELL])
    single_servers = cell_rows["engine"].map(lambda e: is_server(e) and not is_cluster(e))
    rows = cell_rows[(cell_rows[CELL].apply(tuple, axis=1) == cell) & single_servers]
    where = cell_label(corner.iloc[0])
    out = []
    # The cell's engine cost, the figure its table and heatmap show; the part of it after the commit
    # (where resolved: cells) is named beside it.
    after = rows["after_per_row"].where(rows["after_counted"]).groupby(rows["engine"]).mean()
    for value, name, metric_unit, label, is_cost in (
            ("engine_per_row", metric, unit, f"bulk insert ({where})", True),
            ("wall_per_row", "wall_time", "s", f"bulk insert's wall time ({where})", False))[:2 if timed else 1]:
        stats = _stats(rows, value, by=("engine",)).set_index("engine")
        if base not in stats.index:
            continue
        for engine in [e for e in stats.index if e != base]:
            c = results.contrast(stats.loc[base], stats.loc[engine], "value", exact=metric_unit in F.COUNTED_UNITS)
            binlog = [writes_binary_log((readings or {}).get(e, "")) for e in (engine, base)]
            out.append(F.finding(
                engine=engine, base_engine=base, step=label, metric=name, unit=metric_unit, contrast=c,
                host_factor=host(engine, base),
                seed_ratio=seed.get(results.product_key(engine)) if is_cost else None,
                seed_comparable=metric_unit == SEED_UNIT,
                caveats=((BINARY_LOG,) if binlog[0] and not binlog[1] else ())
                + ((SEED_CORNER, SEED_METRIC) if is_cost and results.product_key(engine) in seed else ()))
                | {"kind": BULK, "seed_reason": SEED_OTHER_UNIT.format(unit=F.METRIC_WORDS.get(name, name))
                   if metric_unit != SEED_UNIT else "",
                   "after": after.get(engine, float("nan")) if is_cost else float("nan"),
                   "base_after": after.get(base, float("nan")) if is_cost else float("nan")})
    return out


def decomposition_findings(cell_rows: pd.DataFrame, *, metric: str, unit: str) -> list[dict]:
    """Per engine, its one-row transaction's pairs of parts (`separability`); `lead` marks the one
    its answer line states: the first decided, else the largest against the next, else the first."""
    out = []
    for engine, pairs in itertools.groupby(separability(cell_rows, exact=unit in F.COUNTED_UNITS),
                                           key=lambda s: s["engine"]):
        rows = []
        for s in pairs:
            largest = s["pair"] == LARGEST
            step = f"{s['top']}{' (largest)' * largest} vs {s['second']}" if s["pair"] else NO_PAIR
            rows.append(F.finding(
                engine=engine, base_engine=engine, step=step,
                metric=metric, unit=unit, contrast=s, caveats=(() if is_server(engine) else (EMBEDDED_DRIVER,))
                + (COUNTS_NO_WAITS,))
                | {"kind": DECOMPOSITION, "pair": s["pair"], "part": s["top"], "base_part": s["second"],
                   "base_label": s["second"], "embedded": not is_server(engine), **s["parts"]})
        decided = [r for r in rows if F.Verdict(r["verdict"]).decided]
        lead = (decided or [r for r in rows if r["pair"] == LARGEST] or rows)[0]
        out.extend(r | {"lead": r is lead} for r in rows)
    return out


def replication_findings(replicated: pd.DataFrame, host: Callable[[str, str], float], *, metric: str, unit: str
                         ) -> list[dict]:
    """Each cluster against its single node, cell by cell (`replication`), its one-row cell first
    (a commit per row: what replication adds to a row write). `host`: as bulk_findings'."""
    out = []
    if replicated.empty:
        return out
    one_row = (replicated["rows_per_txn"] == 1) & (replicated["rows_per_stmt"] == 1)
    for r in pd.concat([replicated[one_row], replicated[~one_row]]).to_dict("records"):
        out.append(F.finding(engine=r["cluster"], base_engine=r["single"], step=cell_label(r), metric=metric,
                             unit=unit, contrast=r,
                             host_factor=host(r["cluster"], r["single"]),
                             caveats=(SHARED_CORES,)) | {"kind": REPLICATION, **{c: r[c] for c in CELL},
                                                         # what a synchronous replica adds is time, not CPU
                                                         # (hostile read 44, 05 clusters #1): beside each line
                                                         "wall_us": F.fmt_number(r["cluster_wall_per_row"] * 1e6),
                                                         "base_wall_us": F.fmt_number(r["single_wall_per_row"] * 1e6)})
    return out


def findings(cell_rows: pd.DataFrame, summary: pd.DataFrame, replicated: pd.DataFrame,
             host: Callable[[str, str], float], *, metric: str, unit: str, seed: dict[str, float], answer_limit: int = 5,
             readings: dict[str, str] | None = None, timed: bool = True) -> pd.DataFrame:
    """The findings table: with clusters, what replication adds per cell (headline: the one-row
    and bulk cells); then per engine whether its one-row write's parts separate, and the server
    engines against PostgreSQL in seed 000's corner (headline without clusters: the decomposition
    of each engine, then MySQL in bulk beside the seed). `host`: (subject, base) -> the pair's host
    factor (RunReport.host_factor, its calibrations taken once)."""
    order = {e: i for i, e in enumerate(engine_order(cell_rows["engine"]))} if not cell_rows.empty else {}
    in_order = lambda rows: sorted(rows, key=lambda r: order.get(r["engine"], len(order)))  # noqa: E731 (stable)
    rows = (replication_findings(replicated, host, metric=metric, unit=unit)
            + in_order(decomposition_findings(cell_rows[[not is_cluster(e) for e in cell_rows["engine"]]],
                                              metric=metric, unit=unit))
            + in_order(bulk_findings(cell_rows, summary, host, metric=metric, unit=unit, seed=seed,
                                     readings=readings, timed=timed)))
    found = F.table(rows)
    if found.empty:
        return found
    costs = found["metric"] == metric
    if (found["kind"] == REPLICATION).any():
        # One-row cells first (replication_findings' order), then the decided cells before the undecided
        # (hostile read 44, 05 clusters #3: a within-noise line took the place of decided ones).
        rep = found[found["kind"] == REPLICATION]
        one_row = (rep["rows_per_txn"] == 1) & (rep["rows_per_stmt"] == 1)
        undecided = ~rep["verdict"].map(lambda v: F.Verdict(v).decided)
        lead = rep.assign(_one=~one_row, _open=undecided).sort_values(["_one", "_open"], kind="stable").index[
            :REPLICATION_LINES]
    else:
        seeded = found[(found["kind"] == BULK) & costs & found["seed_ratio"].notna()].index[:1]
        # One line per engine: its lead pair (decomposition_findings).
        lead_rows = found["lead"].eq(True) if "lead" in found else False
        parts = found[(found["kind"] == DECOMPOSITION) & lead_rows].index[:answer_limit - len(seeded)]
        lead = parts.append(seeded)
    found["headline"] = found.index.isin(lead[:answer_limit])
    return found


def node_cells(measurements: pd.DataFrame, instances: pd.DataFrame, metric: str | None = None) -> pd.DataFrame:
    """One row per cluster node, repetition and cell: the node's own engine cost per row (its idle
    rate subtracted, its settle window included, as for the cluster's sum) and the bytes through
    its network interface per row, received and sent."""
    nodes = instances[instances["kind"] == NODE_SCOPE]
    m = measurements[measurements["scope"] == NODE_SCOPE]
    if nodes.empty or m.empty:
        return pd.DataFrame()
    metric = metric or results.cost_metric(measurements)[0]
    config = {i: json.loads(c) for i, c in zip(nodes["instance_id"], nodes["config"])}
    costs = results.phase_costs(m, metric, scopes=(NODE_SCOPE,))
    costs = costs[~costs["is_baseline"] & (costs["phase"] == PHASE)]
    keys = ["instance_id", "repetition", "labels"]
    insert = m[m["phase"] == PHASE]
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
    out["engine_per_row"] = out["net_with_settle"] / rows
    out["net_rx_per_row"] = out["net_rx_bytes"] / rows
    out["net_tx_per_row"] = out["net_tx_bytes"] / rows
    return out


def node_summary(node_rows: pd.DataFrame) -> pd.DataFrame:
    """Per cluster, cell and node: means over repetitions, and the node's share of its cluster's
    cost (the sum over its nodes in the same repetition and cell)."""
    if node_rows.empty:
        return pd.DataFrame()
    rows = node_rows.copy()
    total = rows.groupby(["cluster_instance", "labels"])["engine_per_row"].transform("sum")
    rows["share"] = rows["engine_per_row"] / total.where(total > 0)
    keys = ["engine", *CELL, "node", "role"]
    return (rows.groupby(keys, sort=False)[["engine_per_row", "share", "net_rx_per_row", "net_tx_per_row"]]
            .mean().reset_index())


def single_node_of(cluster: str, engines) -> str | None:
    """The run's engine a cluster is compared with: the one it is a variant of (same name, any
    version pinned in the run)."""
    engine = find_engine(cluster)
    if engine is None:
        return None
    single = engine.variant_of
    return next((e for e in engines if e.partition("@")[0] == single), None)


def replication(cell_rows: pd.DataFrame) -> pd.DataFrame:
    """Per cluster and cell: its engine cost per row (summed over nodes) against its single
    node's in the same cell, both with 95% CIs over repetitions, in `results.contrast`'s fields
    (ratio with its CI, Welch's test), what replication adds per row and per commit, and the
    client's transaction latency (p50, p95) on both."""
    if cell_rows.empty:
        return pd.DataFrame()
    engines = list(dict.fromkeys(cell_rows["engine"]))
    clusters = [e for e in engines if is_cluster(e)]
    stats = _stats(cell_rows, "engine_per_row").set_index(["engine", *CELL])
    timed = [*LATENCIES, "wall_per_row"]  # NaN where a frame has no wall time (not zero)
    latency = cell_rows.reindex(columns=["engine", *CELL, *timed]).groupby(["engine", *CELL])[timed].mean()
    out = []
    for cluster in clusters:
        single = single_node_of(cluster, engines)
        if single is None:
            continue
        for cell in stats.loc[cluster].index:
            if (single, *cell) not in stats.index:
                continue
            c = results.contrast(stats.loc[(single, *cell)], stats.loc[(cluster, *cell)], "value")
            per_txn = cell[0]
            out.append({
                "cluster": cluster, "single": single, **dict(zip(CELL, cell)), **c,
                "added_per_row": c["mean"] - c["base_mean"], "added_per_commit": (c["mean"] - c["base_mean"]) * per_txn,
                **{f"single_{k}": latency.loc[(single, *cell), k] for k in (*LATENCIES, "wall_per_row")},
                **{f"cluster_{k}": latency.loc[(cluster, *cell), k] for k in (*LATENCIES, "wall_per_row")},
            })
    return pd.DataFrame(out)
