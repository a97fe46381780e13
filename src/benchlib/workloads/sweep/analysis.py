"""The arithmetic of a concurrency sweep, on plain frames so it is tested with known answers:
per-step figures, the useful-capacity knee, and price/performance."""
from __future__ import annotations

import json
import math

import pandas as pd

from ...data import results
from .workload import WRITE_TESTS

KNEE_MIN_GAIN = 0.10  # the knee: the last step whose throughput gain per doubling of threads was clearly >= this
SECONDS_PER_MONTH = 86_400 * 30  # seed 004's month of operations (86,400 s x 30)
HOURS_PER_MONTH = 730  # seed 004's monthly prices: $11.43/h -> $8,343.90, $13.2509/h -> $9,673.157
# Doubling the threads cannot more than double throughput if a transaction costs the same: beyond
# this ratio per doubling, the lower step ran slow for a reason of its own (here the VM's wake-up
# latency at one client thread: scripts/bench_one_thread_wakeup.py), not the engine's scaling.
FASTER_THAN_LINEAR = 2.2
COMPARED = ("tps", "engine_cpu_ms_per_txn", "cpu_ms_per_txn")  # the step figures findings compare


def steps(measurements: pd.DataFrame) -> pd.DataFrame:
    """One row per engine, test, threads and repetition: the client's readings beside the
    engine's and the client's CPU of the same window (settle window added to the engine's)."""
    m = measurements[measurements["window"].isin(["phase", "settle"]) & measurements["labels"].str.contains('"test"')]
    keys = ["engine", "labels", "repetition"]
    readings = (m[(m["source"] == "sysbench") & (m["window"] == "phase")]
                .pivot_table(index=keys, columns="metric", values="value", aggfunc="first"))
    engine = results.engine_rows(m)[lambda d: d["metric"] == "cpu_time"]
    engine_cpu = engine.groupby(keys)["value"].sum(min_count=1)
    client = m[(m["scope"] == "client") & (m["metric"] == "cpu_time") & (m["source"] != "sysbench")]
    client_cpu = client.groupby(keys)["value"].sum(min_count=1)
    # How busy the host was while the load ran: the phase window's CPU over the phase's wall time
    # (the settle window's CPU belongs to the cost per transaction, not to the load's duration).
    busy = (engine[engine["window"] == "phase"].groupby(keys)["value"].sum(min_count=1).rename("engine_phase_cpu_s"),
            client[client["window"] == "phase"].groupby(keys)["value"].sum(min_count=1).rename("client_phase_cpu_s"))
    wall = m[(m["metric"] == "wall_time") & (m["window"] == "phase")].groupby(keys)["value"].first()
    out = readings.join(engine_cpu.rename("engine_cpu_s")).join(client_cpu.rename("client_cpu_s")).join(list(busy))
    out = out.join(wall.rename("wall_s"))
    # How long the step's connections took to open, before its window (runs whose sysbench threads
    # wait at a gate until the window is open); absent in older runs, whose windows held it.
    connect = m[(m["metric"] == "connect_time") & (m["window"] == "phase")].groupby(keys)["value"].first()
    # Whether the window ended before the disconnections (absent in older runs, whose windows held them).
    events = m[(m["metric"] == "events_time") & (m["window"] == "phase")].groupby(keys)["value"].first()
    out = out.join(connect.rename("connect_s")).join(events.rename("events_s")).reset_index()
    labels = [json.loads(x) for x in out["labels"]]
    out.insert(1, "test", [x["test"] for x in labels])
    out.insert(2, "threads", [int(x["threads"]) for x in labels])
    per_txn = out["transactions"].where(out["transactions"] > 0)
    out["engine_cpu_ms_per_txn"] = out["engine_cpu_s"] * 1e3 / per_txn
    out["client_cpu_ms_per_txn"] = out["client_cpu_s"] * 1e3 / per_txn
    # Engine + client per repetition, so the pair's CI comes from the repetitions themselves.
    out["cpu_ms_per_txn"] = out["engine_cpu_ms_per_txn"] + out["client_cpu_ms_per_txn"]
    return out.drop(columns="labels").sort_values(["engine", "test", "threads", "repetition"]).reset_index(drop=True)


def summarize(step_rows: pd.DataFrame, cores: int) -> pd.DataFrame:
    """Mean over repetitions per engine, test and threads; TPS with its 95% CI; host CPU use."""
    g = step_rows.groupby(["engine", "test", "threads"], sort=False)
    cols = ["tps", "qps", "latency_avg", "latency_p95", "latency_p99", "errors", "reconnects",
            "engine_cpu_ms_per_txn", "client_cpu_ms_per_txn", "cpu_ms_per_txn", "engine_cpu_s", "client_cpu_s", "wall_s",
            "engine_phase_cpu_s", "client_phase_cpu_s"]
    out = g[cols + [c for c in ("connect_s", "events_s") if c in step_rows]].mean()
    out = out.join(results.spread(g, COMPARED))  # what findings' contrast reads beside each mean
    # The p95 goal is judged on the median of the repetitions (one slow repetition does not decide
    # it), with the range beside it to show where repetitions disagree.
    p95 = g["latency_p95"]
    out["latency_p95_median"], out["latency_p95_min"], out["latency_p95_max"] = p95.median(), p95.min(), p95.max()
    # NaN where the client's CPU was not measured: a share of the host is not guessed from half of it.
    out["host_cpu_util"] = (out["engine_phase_cpu_s"] + out["client_phase_cpu_s"]) / (out["wall_s"] * cores)
    return out.reset_index()


def slow_start(threads, tps) -> int:
    """How many leading steps ran slow for a reason of their own: each more than doubled its
    throughput per doubling of threads to the next (FASTER_THAN_LINEAR), which no engine's scaling
    does if a transaction costs the same."""
    skip = 0
    while skip + 1 < len(tps) and 1 + gain_per_doubling(tps[skip], tps[skip + 1], threads[skip],
                                                         threads[skip + 1]) > FASTER_THAN_LINEAR:
        skip += 1
    return skip


def knee(summary: pd.DataFrame, min_gain: float = KNEE_MIN_GAIN, step_rows: pd.DataFrame | None = None) -> pd.DataFrame:
    """Useful capacity per engine and test, by the diminishing-returns rule read with its
    uncertainty: walking up the thread steps, each step's throughput gain per doubling of threads
    (steps that are not doublings, e.g. bisected ones, normalised as (TPS ratio) ** (1 / log2(threads
    ratio)) - 1) with its 95% CI. The knee is the last step reached while every gain's CI lower
    bound was at least `min_gain`, and only where the next step's gain is clearly below it (CI
    upper bound under `min_gain`). Otherwise the knee is not determined: `knee_threads` is NaN and
    `knee_low` / `knee_high` bracket it (`knee_high` NaN: at or beyond the last step run).
    With `step_rows` (one row per repetition, `steps()`), a gain's CI comes from each repetition's
    own ratio between the two steps (paired: a repetition the host ran slow moves both its steps,
    and cancels), where at least two repetitions ran both; else from the two means' CIs.
    The walk starts after a slow start (`slow_start`): `slow_start_threads` is the last step left
    out (NaN: none)."""
    rows = []
    for (engine, test), df in summary.sort_values("threads").groupby(["engine", "test"], sort=False):
        df = df.reset_index(drop=True)
        skip = slow_start(df["threads"].to_numpy(), df["tps"].to_numpy())
        slow = int(df["threads"].iloc[skip - 1]) if skip else float("nan")
        df = df.iloc[skip:].reset_index(drop=True)
        threads, tps = df["threads"].to_numpy(), df["tps"].to_numpy()
        ci = df["tps_ci95"].to_numpy() if "tps_ci95" in df else [float("nan")] * len(df)
        reps = (step_rows[(step_rows["engine"] == engine) & (step_rows["test"] == test)]
                .pivot_table(index="repetition", columns="threads", values="tps") if step_rows is not None
                else pd.DataFrame())

        def gain(i: int) -> tuple[float, float, float]:
            before, after = int(threads[i - 1]), int(threads[i])
            if before in reps and after in reps:
                paired = gain_ci_paired(reps[before], reps[after], before, after)
                if paired[1] == paired[1]:
                    return paired
            return gain_ci(tps[i - 1], ci[i - 1], tps[i], ci[i], threads[i - 1], threads[i])

        gains = [(float("nan"),) * 3] + [gain(i) for i in range(1, len(df))]
        # The first step whose gain is not clearly at least min_gain (a NaN bound is not clear either).
        stop = next((i for i in range(1, len(df)) if not gains[i][1] >= min_gain), len(df))
        low = stop - 1
        determined = stop < len(df) and gains[stop][2] < min_gain
        # Undetermined: the knee lies at or after the last clear step, before the first clearly flat one.
        flat = next((i for i in range(stop, len(df)) if gains[i][2] < min_gain), None)
        high = low if determined else (flat - 1 if flat is not None else None)
        at = low if determined else None
        gain, gain_low, gain_high = gains[stop] if stop < len(df) else (float("nan"),) * 3
        rows.append({"engine": engine, "test": test,
                     "knee_threads": int(threads[at]) if at is not None else float("nan"),
                     "knee_low": int(threads[low]), "knee_high": int(threads[high]) if high is not None else float("nan"),
                     "knee_tps": tps[at] if at is not None else float("nan"),
                     # The median of the repetitions' p95, as the goal and the price table judge it.
                     "knee_p95_ms": df["latency_p95_median"].iloc[at] if at is not None else float("nan"),
                     "gain_after_knee": gain, "gain_after_low": gain_low, "gain_after_high": gain_high,
                     "gain_steps": f"{int(threads[stop - 1])} to {int(threads[stop])}" if stop < len(df) else "",
                     "peak_tps": df["tps"].max(), "peak_threads": int(df.loc[df["tps"].idxmax(), "threads"]),
                     "slow_start_threads": slow})
    out = pd.DataFrame(rows)
    return out.sort_values(["engine", "test"]).reset_index(drop=True) if not out.empty else out


def gain_ci(tps_before: float, ci_before: float, tps_after: float, ci_after: float,
            threads_before: int, threads_after: int) -> tuple[float, float, float]:
    """The gain per doubling between two steps and its 95% CI (low, high): the log of the TPS
    ratio carries the two means' relative CI half widths combined in quadrature (the delta
    method), then goes through the same per-doubling normalisation. NaN bounds without CIs."""
    gain = gain_per_doubling(tps_before, tps_after, threads_before, threads_after)
    if gain != gain:
        return gain, float("nan"), float("nan")
    half = math.hypot(ci_before / tps_before, ci_after / tps_after)  # NaN propagates: no CI, no bounds
    log_ratio, doublings = math.log(tps_after / tps_before), math.log2(threads_after / threads_before)
    return (gain, math.exp((log_ratio - half) / doublings) - 1, math.exp((log_ratio + half) / doublings) - 1)


def gain_ci_paired(tps_before: pd.Series, tps_after: pd.Series, threads_before: int, threads_after: int
                   ) -> tuple[float, float, float]:
    """The gain per doubling between two steps from each repetition's own TPS ratio (the two series
    indexed by repetition): the mean log ratio and its Student-t 95% CI over the repetitions that
    ran both, through the per-doubling normalisation. NaN bounds with fewer than two."""
    ratios = (tps_after / tps_before).dropna()
    logs = [math.log(r) for r in ratios if r > 0]
    doublings = math.log2(threads_after / threads_before)
    if len(logs) < 2 or doublings <= 0:
        return float("nan"), float("nan"), float("nan")
    mean = sum(logs) / len(logs)
    sd = math.sqrt(sum((x - mean) ** 2 for x in logs) / (len(logs) - 1))
    half = results.ci95_half_width(sd, len(logs))
    return (math.exp(mean / doublings) - 1, math.exp((mean - half) / doublings) - 1,
            math.exp((mean + half) / doublings) - 1)


def gain_per_doubling(tps_before: float, tps_after: float, threads_before: int, threads_after: int) -> float:
    """The throughput gain between two thread steps as if the threads had doubled: 0.25 is 25% more
    TPS per doubling. NaN where a throughput is missing or not positive."""
    if not (tps_before > 0 and tps_after > 0) or threads_after <= threads_before:
        return float("nan")
    return (tps_after / tps_before) ** (1 / math.log2(threads_after / threads_before)) - 1


PRICE_COLUMNS = ["engine", "test", "goal_bound", "threads", "n", "max_tps_under_goal", "tps_ci95", "p95_ms",
                 "repetitions split at threads", "ops_per_day", "ops_per_30_days", "usd_per_hour",
                 "usd_per_million_txn", "usd_per_million_txn_ci_low", "usd_per_million_txn_ci_high",
                 "cpu_s_per_million_txn", "cpu_s_per_million_txn_ci95", "engine_cpu_s_per_million_txn"]


def price_performance(summary: pd.DataFrame, p95_goal_ms: float, prices_per_hour: dict[str, float]) -> pd.DataFrame:
    """Seed 004's reading: the highest throughput whose p95 (the median of the repetitions) meets the goal, operations per day and
    per 30 days, and cost per million transactions at the given hourly price; plus CPU-seconds per
    million transactions (engine + client), which travels between hosts where prices do not.
    `goal_bound`: whether the goal excluded a step with more throughput than the one priced (a step
    over it with less bound nothing: hostile read 46b, 03 #4); where it did not, the throughput
    priced is only the peak of the steps run, not a capacity the goal set."""
    rows = []
    for (engine, test), df in summary.groupby(["engine", "test"], sort=False):
        df = df.sort_values("threads")
        ok = df[df["latency_p95_median"] <= p95_goal_ms]
        over = df[df["latency_p95_median"] > p95_goal_ms]
        bound = bool(len(over)) if ok.empty else bool((over["tps"] > ok["tps"].max()).any())
        split = goal_split(df, p95_goal_ms)
        if ok.empty:
            rows.append({"engine": engine, "test": test, "goal_bound": bound, "max_tps_under_goal": float("nan"),
                         "repetitions split at threads": split})
            continue
        best = ok.loc[ok["tps"].idxmax()]
        tps, tps_ci = best["tps"], best.get("tps_ci95", float("nan"))
        price = prices_per_hour.get(engine)
        usd = usd_per_million(price, tps)
        # The USD figure is price / TPS: its CI comes from the TPS CI's two ends (a TPS CI that
        # reaches zero leaves the upper end unbounded: NaN).
        usd_low = usd_per_million(price, tps + tps_ci)
        usd_high = usd_per_million(price, tps - tps_ci) if tps - tps_ci > 0 else float("nan")
        # Engine + client, or NaN when the client's CPU is missing: never the engine's alone as the sum.
        cpu_per_txn_s = best.get("cpu_ms_per_txn", best["engine_cpu_ms_per_txn"] + best["client_cpu_ms_per_txn"]) / 1e3
        rows.append({
            "engine": engine, "test": test, "goal_bound": bound, "threads": int(best["threads"]),
            # Its CIs' repetitions: two give a CI whose width rests on one difference, said beside it.
            "n": best.get("n", float("nan")),
            "max_tps_under_goal": tps, "tps_ci95": tps_ci,
            "p95_ms": best["latency_p95_median"], "repetitions split at threads": split,
            "ops_per_day": tps * 86_400, "ops_per_30_days": tps * SECONDS_PER_MONTH,
            "usd_per_hour": price, "usd_per_million_txn": usd,
            "usd_per_million_txn_ci_low": usd_low if price else float("nan"),
            "usd_per_million_txn_ci_high": usd_high if price else float("nan"),
            "cpu_s_per_million_txn": cpu_per_txn_s * 1e6,
            "cpu_s_per_million_txn_ci95": best.get("cpu_ms_per_txn_ci95", float("nan")) * 1e3,
            # The database side alone, as seed 004 priced it: sysbench shares this host's cores.
            "engine_cpu_s_per_million_txn": best["engine_cpu_ms_per_txn"] * 1e3,
        })
    return pd.DataFrame(rows, columns=PRICE_COLUMNS)


def goal_split(steps_of_one_test: pd.DataFrame, p95_goal_ms: float) -> str:
    """The thread steps where repetitions disagree about the goal (some p95 under it, some over),
    as text; '' where every step's repetitions agree."""
    df = steps_of_one_test
    split = df[(df["latency_p95_min"] <= p95_goal_ms) & (df["latency_p95_max"] > p95_goal_ms)]
    return ", ".join(str(int(t)) for t in split["threads"])


def usd_per_million(price_per_hour: float | None, tps: float) -> float:
    """USD per million transactions at an hourly price and a throughput (NaN without a price)."""
    return cost_per_operation(price_per_hour * HOURS_PER_MONTH, tps) * 1e6 if price_per_hour else float("nan")


def cost_per_operation(monthly_usd: float, tps: float) -> float:
    """Seed 004's formula: the monthly cost over the operations of 30 days at `tps`."""
    return monthly_usd / (tps * SECONDS_PER_MONTH)


# -- findings ---------------------------------------------------------------------------------------
# What the rows compare, engine against the base engine in each test: throughput and the engine's
# CPU per transaction where each engine's useful capacity ends (its knee), and price/performance
# (seed 004's: the highest throughput whose p95 meets the goal, priced).
CAPACITY, COST, PRICE = "capacity", "cost", "price"


def capacity_threads(knee_row) -> tuple[int, bool]:
    """The step a row compares at: the knee where determined, else the last step that clearly
    gained (a lower bound of the capacity); and whether the knee is determined."""
    determined = knee_row["knee_threads"] == knee_row["knee_threads"]
    return int(knee_row["knee_threads"] if determined else knee_row["knee_low"]), determined


def best_step(price_row, knee_row) -> int:
    """Where a side compares without a knee: its priced step (the highest throughput whose median
    p95 meets the goal, the peak where the goal never bound), else its peak."""
    t = price_row["threads"]
    return int(t) if t == t else int(knee_row["peak_threads"])


def no_knee(knees: pd.DataFrame) -> pd.Series:
    """Per engine and test (the rows of `knee`), whether no knee was located: not one, nor a step
    it lies at or under (the steps run were too few, or all still gaining)."""
    return knees["knee_threads"].isna() & knees["knee_high"].isna() if not knees.empty else pd.Series(dtype=bool)


# A step where engine + sysbench used at least this share of the host's cores: the host, not only the
# engine, is saturated, and what a transaction costs includes waiting for and sharing the cores.
SATURATED_SHARE = 0.9
SATURATED = "host-saturated"
SATURATED_REGIME = ", host saturated with sysbench"  # said in the row's regime, so its answer line says it too


def saturated_at_peak(summary: pd.DataFrame, knees: pd.DataFrame) -> pd.Series:
    """Per row of `knees`, whether engine + sysbench used SATURATED_SHARE or more of the host's cores
    at that engine's peak step: past it the host, not the engine, sets the throughput."""
    util = summary.set_index(["engine", "test", "threads"])["host_cpu_util"]
    return pd.Series([bool(util.get((e, t, int(p)), 0) >= SATURATED_SHARE) if p == p else False
                      for e, t, p in zip(knees["engine"], knees["test"], knees["peak_threads"])], index=knees.index,
                     dtype=bool)


# An engine whose own repetitions met the host at speeds further apart than this (its calibration
# loops' slowest over fastest): much of its figures' CI width is the host's. Cited per engine.
UNSTEADY_SPREAD = 1.10
UNSTEADY = "host-unsteady"


def unsteady(calibrations: pd.DataFrame) -> dict[str, float]:
    """Per engine whose calibration loops (results.calibrations) span over UNSTEADY_SPREAD, their
    slowest over their fastest."""
    c = calibrations.dropna(subset=["calibration_s"])
    spread = c.groupby("engine")["calibration_s"].agg(lambda s: s.max() / s.min() if s.min() > 0 else float("nan"))
    return {e: float(x) for e, x in spread.items() if x > UNSTEADY_SPREAD}


def findings(summary: pd.DataFrame, knees: pd.DataFrame, price_perf: pd.DataFrame, *, base_engine: str,
             goal_ms: float, prices: dict[str, float] | None = None, host=lambda engine, base: None,
             commits: dict[str, str] | None = None, headline_limit: int = 5,
             unsteady_engines=frozenset()) -> pd.DataFrame:
    """Every engine against `base_engine` in each test, as findings rows (findings.FINDING_COLUMNS,
    plus `kind` and the two sides' thread steps): capacity and cost at each side's knee, and
    price/performance at each side's priced step. Verdicts come from findings.judge; where a side's
    knee is not determined, each side's rows compare its best step (`best_step`). `host(engine, base)`: the
    engine's calibration loop over the base's (results.host_factor); `commits`: each engine's
    durability as a comparable value (write tests' rows say where two differ); `unsteady_engines`:
    those whose repetitions met the host at speeds far apart (`unsteady`), cited on their rows."""
    from ...data import findings as F

    step_of = summary.set_index(["engine", "test", "threads"]).sort_index()
    knee_of = knees.set_index(["engine", "test"])
    price_of = price_perf.set_index(["engine", "test"])
    prices, commits = prices or {}, commits or {}
    rows = []
    for test in dict.fromkeys(summary["test"]):
        if (base_engine, test) not in knee_of.index:
            continue
        for engine in dict.fromkeys(summary[summary["test"] == test]["engine"]):
            if engine == base_engine or (engine, test) not in knee_of.index:
                continue
            ke, kb = knee_of.loc[(engine, test)], knee_of.loc[(base_engine, test)]
            (te, de), (tb, db) = capacity_threads(ke), capacity_threads(kb)
            common = []
            if test in WRITE_TESTS and commits.get(engine) and commits.get(base_engine) \
                    and commits[engine] != commits[base_engine]:
                common.append("durability")
            at_knee = ([] if de and db else ["knee-undetermined"]) + (
                ["slow-start"] if ke["slow_start_threads"] == ke["slow_start_threads"]
                or kb["slow_start_threads"] == kb["slow_start_threads"] else [])
            if not (de and db):
                # No capacity to set beside the other's: each side at its own best step, never at the most
                # threads both ran, which is past one side's capacity (hostile read 44, 03 #1).
                te, tb = best_step(price_of.loc[(engine, test)], ke), best_step(price_of.loc[(base_engine, test)], kb)
            se, sb = step_of.loc[(engine, test, te)], step_of.loc[(base_engine, test, tb)]
            shared = dict(engine=engine, base_engine=base_engine, step=test, host_factor=host(engine, base_engine))
            # The regime names the metric too: the findings table shows no metric column.
            where = (f"at useful capacity ({te} vs {tb} threads)" if de and db
                     else f"at each side's best within the p95 goal ({te} vs {tb} threads)")
            for kind, metric, column, unit, better in ((CAPACITY, "throughput", "tps", "TPS", True),
                                                       (COST, "engine CPU per transaction", "engine_cpu_ms_per_txn",
                                                        "ms", False)):
                # Both sides' steps: a clause one side's 82% belies is not said (hostile read 47, 03).
                saturated = kind == COST and all(
                    (x.get("host_cpu_util") or 0) >= SATURATED_SHARE for x in (se, sb))
                rows.append({**F.finding(**shared, metric=metric, unit=unit, higher_is_better=better,
                                         contrast=results.contrast(sb, se, column),
                                         regime=f"{metric} {where}" + SATURATED_REGIME * saturated,
                                         caveats=at_knee + common + [SATURATED] * saturated),
                             "kind": kind, "threads": te, "base_threads": tb})
            price = _price_row(shared, price_of.loc[(engine, test)], price_of.loc[(base_engine, test)], step_of,
                               goal_ms, prices, common)
            # One price at the capacity rows' steps: its USD ratio is the throughput ratio inverted,
            # the same comparison counted twice (the price table keeps the figures).
            if not ("one-price" in price["caveats"] and (price["threads"], price["base_threads"]) == (te, tb)):
                rows.append(price)
    out = F.table(rows)
    if out.empty:
        return out
    out["caveats"] = [(*ids, *(f"{UNSTEADY}:{e}" for e in (engine, base) if e in unsteady_engines))
                      for ids, engine, base in zip(out["caveats"], out["engine"], out["base_engine"])]
    # The answer states capacity and price rows: all of them where they fit, else the decided ones
    # furthest from 1 (every row stays in the findings table).
    # A price where the goal never bound prices the peak of the steps run, not a capacity: not an answer.
    priced_at_goal = out["caveats"].map(lambda c: "goal-never-bound" not in c)
    pool = out[(out["kind"] == CAPACITY) | ((out["kind"] == PRICE) & priced_at_goal)]
    if not no_knee(knees).empty and no_knee(knees).all():
        # No capacity was located anywhere: what a transaction costs is what the sweep answers.
        pool = out[out["kind"] == COST]
    decided = pool["verdict"].isin([v.value for v in F.Verdict if v.decided])
    distance = pool["ratio"].map(lambda r: abs(math.log(r)) if r == r and r and r > 0 else 0.0)
    ranked = pool.assign(_d=decided, _x=distance).sort_values(["_d", "_x"], ascending=False)
    out["headline"] = out.index.isin(ranked.index[:headline_limit])
    return out


def same_steps(found: pd.DataFrame, row, kind: str):
    """The findings row of `kind` that compares the same pair and test at the same two steps as
    `row` (a capacity row's cost row), or None."""
    match = found[(found["kind"] == kind) & (found["engine"] == row["engine"])
                  & (found["base_engine"] == row["base_engine"]) & (found["step"] == row["step"])
                  & (found["threads"] == row["threads"]) & (found["base_threads"] == row["base_threads"])]
    return match.iloc[0].to_dict() if len(match) else None


def _price_row(shared: dict, pe, pb, step_of: pd.DataFrame, goal_ms: float, prices: dict[str, float],
               common: list[str]) -> dict:
    """Price/performance of one engine against the base: USD per million transactions at each
    side's priced step (1 / TPS times its hourly price, so its CI and test are the throughput's,
    inverted), or the throughput itself where nothing is priced."""
    from ...data import findings as F

    engine, base = shared["engine"], shared["base_engine"]
    caveats = list(common)
    if not (pe["goal_bound"] and pb["goal_bound"]):
        caveats.append("goal-never-bound")
    if pe["repetitions split at threads"] or pb["repetitions split at threads"]:
        caveats.append("goal-split")
    priced = bool(prices.get(engine) and prices.get(base))
    if not (pe["max_tps_under_goal"] > 0 and pb["max_tps_under_goal"] > 0):
        contrast, te, tb = {}, float("nan"), float("nan")
    else:
        te, tb = int(pe["threads"]), int(pb["threads"])
        contrast = results.contrast(step_of.loc[(base, shared["step"], tb)], step_of.loc[(engine, shared["step"], te)],
                                    "tps")
    if priced and contrast:
        scale = prices[engine] / prices[base]
        if scale == 1:
            caveats.append("one-price")
        c = contrast
        contrast = {**c, "mean": pe["usd_per_million_txn"], "base_mean": pb["usd_per_million_txn"],
                    "ci95": _half(pe["usd_per_million_txn_ci_low"], pe["usd_per_million_txn_ci_high"]),
                    "base_ci95": _half(pb["usd_per_million_txn_ci_low"], pb["usd_per_million_txn_ci_high"]),
                    "ratio": scale / c["ratio"], "ratio_low": scale / c["ratio_high"],
                    "ratio_high": scale / c["ratio_low"], "welch_t": -c["welch_t"]}
    metric, short, unit, better = (("USD per million transactions", "USD per M transactions", "USD", False)
                                   if priced else ("throughput within the p95 goal", "throughput", "TPS", True))
    regime = f"{short} at p95 ≤ {goal_ms:g} ms" + (f" ({te} vs {tb} threads)" if te == te else "")
    return {**F.finding(**shared, metric=metric, unit=unit, higher_is_better=better, contrast=contrast,
                        regime=regime, caveats=caveats),
            "kind": PRICE, "threads": te, "base_threads": tb}


def _half(low: float, high: float) -> float:
    return (high - low) / 2 if low == low and high == high else float("nan")


def seed_price_table() -> pd.DataFrame:
    """Seed 004's price/performance recomputed from its own inputs with this notebook's formula
    (the published and recomputed costs must agree), and each system's cost over the cheaper's:
    the seed calls CockroachDB's "355.66% more", its own figures give 3.56x, i.e. 255.66% more."""
    ref = results.reference("seed004_prices")
    ref["recomputed_cost_per_operation_usd"] = [cost_per_operation(m, t) for m, t in
                                                zip(ref["monthly_usd"], ref["published_max_tps_under_60ms"])]
    ref["usd_per_million_txn"] = ref["recomputed_cost_per_operation_usd"] * 1e6
    ref["cost_vs_cheapest"] = ref["recomputed_cost_per_operation_usd"] / ref["recomputed_cost_per_operation_usd"].min()
    return ref.drop(columns=["configuration"]).rename(columns={
        "system": "seed 004 system", "hourly_usd": "USD/h", "monthly_usd": f"USD/month (hourly x {HOURS_PER_MONTH} h)",
        "published_max_tps_under_60ms": "max TPS under 60 ms (published)",
        "published_cost_per_operation_usd": "USD/operation (published)",
        "recomputed_cost_per_operation_usd": "USD/operation (recomputed here)",
        "usd_per_million_txn": "USD per million transactions", "cost_vs_cheapest": "cost / the cheaper system's"})
