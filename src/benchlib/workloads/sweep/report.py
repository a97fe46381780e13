"""The concurrency-sweep notebook's report: findings (each engine against the base engine at its
useful capacity and at the p95 goal), the one chart, the step, knee and price tables, and seed
004's settings and prices beside this run's, on the shared report layer."""
from __future__ import annotations

import pandas as pd

from ...data import findings as F
from ...data import results
from ...run.measure import SettlePolicy
from ...engines import engine_title
from ...present.plots import normalised_curves, throughput_latency
from ...present.report import RunReport, fmt, fmt_ci
from . import analysis, prices
from .workload import WORKLOAD, WRITE_TESTS

# Two warm-ups that are easy to confuse: the sweep's own (warmup_seconds) and the driver's (warmup).
WARMUP_APART = (" (the sysbench warm-up, warmup_seconds: unrecorded load before each test's first step in the "
                "first repetition only, so a later repetition's first step follows the previous test's last, largest "
                "step; the driver's warmup parameter, a whole discarded repetition, is another mechanism)")
SEED_SERVER_VCPUS = 48  # seed 004's database side: 3 nodes x 16 vCPU per system
OVERLAY_MIN_STEPS = 4  # thread steps an engine needs before its curve is set beside seed 004's

PHRASES = F.Phrases(
    default="{subject}, {step}, {regime}: {value}, {ratio} {base}'s {base_value} ({words})",
    templates={
        F.Verdict.NOT_COMPARABLE.value: "{subject}, {step}, {regime}: {value} against {base}'s {base_value} "
                                        "({words})",
        F.Verdict.NA.value: "{subject}, {step}, {regime}: not measured on both sides",
        F.WIDE: "{subject}, {step}, {regime}: {value} against {base}'s {base_value}{mark} ({words}, CI over 10x wide)",
    })
# What a transaction costs where a capacity line compares (hostile read 46b, 03 #1): its cost row,
# appended to the line, and each side's USD per million transactions where those steps are priced.
COST_CLAUSE = F.Phrases(
    default="; {metric} {value}, {ratio} {base}'s {base_value} ({words})",
    templates={F.Verdict.NOT_COMPARABLE.value: "; {metric} {value} against {base}'s {base_value} ({words})",
               F.Verdict.NA.value: "",
               F.WIDE: "; {metric} {value} against {base}'s {base_value} ({words}, CI over 10x wide)"})
USD_CLAUSE = "; USD per M txn {value} against {base}'s {base_value}"
# Where no knee was located, the answer's one clause: why, and the set that sweeps far enough.
NO_KNEE = ("No knee: {steps} thread steps ({threads}) on {cores} cores locate none; `--set {answering}` "
           "sweeps {answering_threads} threads.")
KNEE_NOT_LOCATED = ("Useful capacity not located for {missing} of {pairs} engine x test pairs: {why}; their rows "
                    "compare each side's best step within the p95 goal.")
# Why, per group of those pairs: the host saturated at the engine's peak (analysis.saturated_at_peak,
# hostile read 46b, 03 #2), else the steps too short for TPS CIs that locate one.
NOT_LOCATED_WHY = {
    True: "the {cores}-core host, shared with sysbench, saturates at the engine's peak threads ({where})",
    False: "TPS CIs of {seconds} s steps too wide ({where})"}
ANSWERING_SET, ANSWERING_THREADS = "default", "1-128"  # papermill_params/03-concurrency-sweep/default.yaml


# A price table column at another host class's prices (a managed service's beside a bare instance's),
# whose prices the appendix's price table lists.
ALTERNATIVE_PRICE = "USD per M txn as a {offering} ({klass}, appendix: Prices)"


def _offering(rows) -> str:
    """The one kind of offering a host class prices (prices.for_host checks there is one)."""
    return next(iter(rows.values())).offering if rows else "n/a"


# The price table's "goal bound": whether the goal excluded a step with more throughput (analysis.price_performance).
GOAL_BOUND_WORDS = {True: "yes", False: "peak (the goal never bound)"}
# Why a knee's next gain is blank: no knee located, or no step run after it.
NO_GAIN = {False: "n/a: no knee", True: "n/a: no step after the knee"}


class SweepReport(RunReport):
    workload = WORKLOAD
    seed_set = "seed-like"
    phrases = PHRASES

    def __init__(self, run_id: str, store=None):
        super().__init__(run_id, store)
        self.steps = analysis.steps(self.measurements)
        self.summary = analysis.summarize(self.steps, int(self.info["cpu_cores"] or 1))
        self.knees = analysis.knee(self.summary, step_rows=self.steps)
        self.goal_ms = float(self.param("p95_goal_ms"))
        self.host_class = self.param("host_class")
        # A run from before the price table carries its own prices_per_hour parameter instead.
        self.price_rows = prices.for_host(self.host_class, list(dict.fromkeys(self.summary["engine"]))) \
            if self.host_class else {}
        self.prices = ({k: p.usd_per_hour for k, p in self.price_rows.items()} if self.host_class
                       else self.param("prices_per_hour") or {})
        self.price_perf = analysis.price_performance(self.summary, self.goal_ms, self.prices)
        self.base_engine = next((e for e in self.engines if e in set(self.summary["engine"])), None)
        self.unsteady = analysis.unsteady(self.calibrations)
        self.found = F.table([]) if self.base_engine is None else analysis.findings(
            self.summary, self.knees, self.price_perf, base_engine=self.base_engine, goal_ms=self.goal_ms,
            prices=self.prices, commits=self.commits(),
            host=self.host_factor,
            unsteady_engines=frozenset(self.unsteady))

    # -- findings ----------------------------------------------------------------------------------
    def findings(self) -> pd.DataFrame:
        return self.found

    def answer_lines(self) -> list[str]:
        """The headline rows' lines; where no knee was located, a last line says so (the headline
        rows are then each engine's CPU per transaction: analysis.findings)."""
        found = self.findings()
        lines = [F.render(row, self.phrases) + self.cost_text(row)
                 for row in F.headline(found, self.answer_limit).to_dict("records")]
        if self.knees.empty:
            return lines
        threads = sorted({int(t) for t in self.summary["threads"]})
        # Too few steps for a curve's shape (the overlay's bound): the set that sweeps far enough is named.
        if analysis.no_knee(self.knees).all() and len(threads) < OVERLAY_MIN_STEPS:
            lines.append(NO_KNEE.format(steps=len(threads), threads=", ".join(map(str, threads)),
                                        cores=int(self.info["cpu_cores"] or 1), answering=ANSWERING_SET,
                                        answering_threads=ANSWERING_THREADS))
            return lines
        # Hostile read 44 (03 #2): a sweep that ran enough steps and still located few knees says so,
        # and why: the host saturated at the engine's peak, or steps too short for its TPS CIs.
        missing = self.knees["knee_threads"].isna()
        if missing.any():
            saturated = analysis.saturated_at_peak(self.summary, self.knees)
            groups = {flag: self.knees.loc[missing & (saturated == flag), ["engine", "test"]] for flag in (True, False)}
            why = [NOT_LOCATED_WHY[flag].format(
                cores=int(self.info["cpu_cores"] or 1), seconds=f"{self.param('step_seconds'):g}",
                where=", ".join(f"{engine_title(e)} {t}" for e, t in pairs.itertuples(index=False)))
                for flag, pairs in groups.items() if len(pairs)]
            lines.append(KNEE_NOT_LOCATED.format(missing=int(missing.sum()), pairs=len(self.knees), why="; ".join(why)))
        return lines

    def cost_text(self, row) -> str:
        """After a capacity row's line: its cost row (each side's CPU per transaction, the row's
        ratio and verdict) and each side's USD per million transactions at those steps, where priced."""
        if row.get("kind") != analysis.CAPACITY:
            return ""
        cost = analysis.same_steps(self.found, row, analysis.COST)
        text = F.render(cost, COST_CLAUSE) if cost else ""
        priced = self.price_perf.set_index(["engine", "test"])
        sides = [(e, t) for e, t in ((row["engine"], row["threads"]), (row["base_engine"], row["base_threads"]))
                 if (e, row["step"]) in priced.index and priced.loc[(e, row["step"]), "threads"] == t]
        if len(sides) == 2:
            usd = [priced.loc[(e, row["step"]), "usd_per_million_txn"] for e, _ in sides]
            if all(u == u for u in usd):
                text += USD_CLAUSE.format(value=fmt(usd[0]), base=engine_title(row["base_engine"]),
                                          base_value=fmt(usd[1]))
        return text

    def commits(self) -> dict[str, tuple]:
        """Per engine, what a commit waits for by its start's reading (log flush, binary log synced):
        write tests' rows between engines that differ in it say so."""
        from ..load_fetch.analysis import binlog_synced, commit_waits

        return {e: (commit_waits(r), binlog_synced(r)) for e, r in self.durability().items()}

    def caveat_notes(self) -> list[F.Caveat]:
        top = int(self.summary["threads"].max()) if len(self.summary) else 0
        return [
            F.Caveat("knee-undetermined", "A knee not located on both sides (knee table): each side at its "
                                          "highest throughput within the p95 goal (price table)."),
            F.Caveat("slow-start", "The knee walk starts after a step that more than doubled its TPS per doubling of "
                                   "threads: at 1 thread each round trip waits for one vCPU to wake the other, the VM's "
                                   "latency, not the engine's (on this host scripts/bench_one_thread_wakeup.py ran it "
                                   "pinned to one CPU at 2.1x its TPS pinned apart)."),
            F.Caveat("goal-never-bound", f"The {self.goal_ms:g} ms p95 goal excluded no step with more throughput "
                                         f"on a side (steps run up to {top} threads): its throughput priced is the "
                                         "peak of the steps run, not a capacity the goal set."),
            F.Caveat("goal-split", "Repetitions disagree about the goal at a step (some p95 under it, some over): "
                                   "where it binds is not located."),
            F.Caveat(analysis.SATURATED, f"Engine + sysbench used {analysis.SATURATED_SHARE:.0%} or more of the "
                                         "host's cores here (sysbench shares them): CPU per transaction includes "
                                         "contention for the cores."),
            F.Caveat("one-price", "One hourly price for both: the USD ratio is the inverse of the throughput ratio."),
            F.Caveat("durability", "A write test whose servers commit under different durability defaults (appendix): "
                                   "part of the gap is those settings."),
            *(F.Caveat(f"{analysis.UNSTEADY}:{e}", f"{engine_title(e)}'s repetitions met the host at speeds "
                                                   f"{x:.2f}x apart (calibration loop): much of this CI's width is "
                                                   "the host's.") for e, x in self.unsteady.items()),
        ]

    def headline_figure(self):
        return throughput_latency(self.summary, knees=self.knees, goal_ms=self.goal_ms, name="sweep-throughput-p95",
                                  title="TPS and p95 latency by threads")

    def appendix_parts(self):
        return [*super().appendix_parts(), ("Seed 004's settings beside this run's", self.seed_settings_table()),
                ("Prices", self.price_source_table())]

    # -- tables ------------------------------------------------------------------------------------
    def knee_table(self):
        """Per engine and test: the knee, or the bracket it lies in, the gain after it, the peak."""
        k = self.knees
        return pd.DataFrame({
            "engine": [engine_title(e) for e in k["engine"]], "test": k["test"],
            "knee (threads)": k["knee_threads"], "lies between (threads)": [
                "" if knee == knee else f"{int(lo)} and {int(hi)}" if hi == hi else "not located in the steps run"
                for knee, lo, hi in zip(k["knee_threads"], k["knee_low"], k["knee_high"])],
            "TPS at knee": k["knee_tps"], "p95 ms at knee (median)": k["knee_p95_ms"],
            "next gain per doubling (95% CI)": [gain_ci(g, lo, hi) if s else NO_GAIN[knee == knee] for g, lo, hi, s, knee
                                                in zip(k["gain_after_knee"], k["gain_after_low"], k["gain_after_high"],
                                                       k["gain_steps"], k["knee_threads"])],
            "between threads": k["gain_steps"], "left out up to (threads)": k["slow_start_threads"],
            "peak TPS": k["peak_tps"], "at threads": k["peak_threads"],
        }).style.format("{:,.0f}", na_rep="n/a", subset=["TPS at knee", "peak TPS"]) \
            .format("{:.3g}", na_rep="n/a", subset=["p95 ms at knee (median)"]) \
            .format("{:.0f}", na_rep="n/a", subset=["knee (threads)", "left out up to (threads)"]).hide(axis="index")

    def price_table(self):
        """Seed 004's price/performance per engine and test: the highest TPS whose median p95 meets
        the goal (the peak where the goal never bound), per day, per 30 days and per million
        transactions, with the CPU seconds a million transactions cost on this host there."""
        p = self.price_perf
        out = pd.DataFrame({
            "engine": [engine_title(e) for e in p["engine"]], "test": p["test"],
            "goal bound": p["goal_bound"].map(GOAL_BOUND_WORDS),
            "threads": p["threads"], "repetitions": p["n"],
            "TPS (± 95% CI)": [fmt_ci(v, ci, positive=True) for v, ci in zip(p["max_tps_under_goal"], p["tps_ci95"])],
            "p95 ms (median of reps)": p["p95_ms"],
            "repetitions split at threads": p["repetitions split at threads"].replace("", "none"),
            "billion ops per 30 days": p["ops_per_30_days"] / 1e9, "USD per hour": p["usd_per_hour"],
            "USD per M txn (95% CI)": [ci_range(v, lo, hi) for v, lo, hi in
                                       zip(p["usd_per_million_txn"], p["usd_per_million_txn_ci_low"],
                                           p["usd_per_million_txn_ci_high"])],
            "engine + sysbench CPU-s per M txn (± 95% CI)": [fmt_ci(v, ci) for v, ci in
                                                            zip(p["cpu_s_per_million_txn"],
                                                                p["cpu_s_per_million_txn_ci95"])],
            "engine CPU-s per M txn": [fmt(v) for v in p["engine_cpu_s_per_million_txn"]],
        })
        for klass, rows in self.alternative_prices().items():
            usd = [analysis.usd_per_million(rows[e].usd_per_hour, tps) if e in rows else float("nan")
                   for e, tps in zip(p["engine"], p["max_tps_under_goal"])]
            out[ALTERNATIVE_PRICE.format(offering=_offering(rows), klass=klass)] = [fmt(v) for v in usd]
        return out.style.format("{:.4g}", na_rep="n/a", subset=["p95 ms (median of reps)", "USD per hour"]) \
            .format("{:.3g}", na_rep="n/a", subset=["billion ops per 30 days"]) \
            .format("{:.0f}", na_rep="n/a", subset=["repetitions"]).hide(axis="index")

    def reference_price_table(self):
        table = analysis.seed_price_table()
        # Three significant digits: a cost of 0.00004 USD per transaction reads 4e-05, never 0.0000.
        return table.style.format(lambda v: fmt(v) if isinstance(v, float) else v).hide(axis="index")

    def step_table(self):
        s = self.summary
        out = pd.DataFrame({
            "engine": [engine_title(e) for e in s["engine"]], "test": s["test"], "threads": s["threads"],
            "TPS (± 95% CI)": [fmt_ci(v, ci, positive=True) for v, ci in zip(s["tps"], s["tps_ci95"])],
            "QPS": s["qps"], "avg ms": s["latency_avg"], "p95 ms, mean of reps": s["latency_p95"],
            "p95 ms, median of reps": s["latency_p95_median"], "p99 ms": s["latency_p99"],
            "engine CPU ms/txn": s["engine_cpu_ms_per_txn"], "client CPU ms/txn": s["client_cpu_ms_per_txn"],
            "engine + sysbench CPU (share of host cores)": s["host_cpu_util"], "errors (mean count per step)": s["errors"], "n": s["n"],
        })
        if not (s["n"] > 2).any():  # the median of two is their mean: one column says it
            out = out.drop(columns=["p95 ms, median of reps"]).rename(columns={"p95 ms, mean of reps": "p95 ms"})
        numeric = [c for c in ("avg ms", "p95 ms", "p95 ms, mean of reps", "p95 ms, median of reps", "p99 ms",
                               "engine CPU ms/txn", "client CPU ms/txn", "errors (mean count per step)") if c in out]
        return (out.style.format("{:.4g}", na_rep="n/a", subset=numeric).format("{:,.0f}", na_rep="n/a", subset=["QPS"])
                .format("{:.0%}", subset=["engine + sysbench CPU (share of host cores)"]).hide(axis="index"))

    def alternative_prices(self) -> dict:
        """Classes beside this run's whose prices differ per engine (e.g. managed RDS), per engine."""
        if not self.host_class or self.host_class == prices.NO_PRICES:
            return {}
        engines = list(dict.fromkeys(self.summary["engine"]))
        return {k: prices.prices_on(k, engines) for k in prices.per_engine_classes(self.host_class)}

    def priced_as(self) -> str | None:
        # The instance's name without its parenthesised details ("Amazon EC2 m5.large (2 vCPU, 8 GiB), ...").
        instances = sorted({p.instance.split(" (")[0].split(",")[0] for p in self.price_rows.values()})
        return f"{' / '.join(instances)}, price host_class {self.host_class}" if instances else None

    def price_source_table(self):
        """The hourly price used per engine, with what it includes and where it is from."""
        if not self.price_rows:
            return pd.DataFrame({"prices": [f"none (host_class {self.host_class or 'not set'}; prices given as "
                                            f"parameters: {self.prices or 'none'})"]})
        # A Styler, not a bare frame: pandas cuts a frame's cells at 50 characters in HTML.
        # The price table's other classes (ALTERNATIVE_PRICE) too: each column's prices are stated here.
        rows = [*self.price_rows.items(), *(kp for c in self.alternative_prices().values() for kp in c.items())]
        return pd.DataFrame([{"engine": engine_title(k), "host class": p.host_class,
                              "USD per hour": p.usd_per_hour, "basis": p.basis_text, "offering": p.offering,
                              "instance": p.instance, "includes": p.includes, "source": p.source}
                             for k, p in rows]).style.hide(axis="index")

    def reference_figures(self):
        """Seed 004's curves beside this run's, against threads per server vCPU: its clusters had
        48 vCPUs a side (32-1024 threads), this host has its own few cores, so concurrency is only
        comparable relative to the cores that serve it. None for a test where an engine of this run
        has fewer than OVERLAY_MIN_STEPS steps: two points beside a seed's curve show no shape."""
        ref = results.reference("seed004_sysbench")
        cores = int(self.info["cpu_cores"] or 1)
        figs = []
        for test in dict.fromkeys(self.summary["test"]):
            ours = self.summary[self.summary["test"] == test]
            theirs = ref[ref["workload"] == test]
            if theirs.empty or ours.groupby("engine")["threads"].nunique().min() < OVERLAY_MIN_STEPS:
                continue
            curves = pd.concat([
                pd.DataFrame({"system": ours["engine"], "source": "this run", "threads": ours["threads"] / cores,
                              "relative_tps": ours["tps"] / ours.groupby("engine")["tps"].transform("max")}),
                pd.DataFrame({"system": theirs["system"], "source": "seed 004",
                              "threads": theirs["concurrency"] / SEED_SERVER_VCPUS,
                              "relative_tps": theirs["throughput_tps"]
                              / theirs.groupby("system")["throughput_tps"].transform("max")}),
            ], ignore_index=True)
            figs.append(normalised_curves(curves, name=f"sweep-reference-{test.replace('_', '-')}",
                                          title=f"{test}: throughput relative to each system's peak<br><sup>"
                                                "seed 004's clusters dashed: where each curve flattens relative to "
                                                "its cores, not that the engines scale alike</sup>",
                                          x_title=f"threads per server vCPU (log scale; seed 004: "
                                                  f"{SEED_SERVER_VCPUS}, this run: {cores}, shared with sysbench)"))
        return figs

    def seed_settings_table(self):
        """Seed 004's settings, in the seed's own words, beside this run's: what was reproduced and what not."""
        threads = self.param("threads") or []
        ran = sorted(set(int(t) for t in self.summary["threads"]))
        bisected = sorted(set(ran) - set(threads))
        tables, size = self.param("tables") or 1, self.param("table_size") or 0
        seed_from = int(results.reference("seed004_sysbench")["concurrency"].min())
        rows = [
            ("systems", "CockroachDB 21.2.5 (3 nodes) and SkySQL Xpand 6.0.2 (3 nodes, 3 replicas), both managed "
                        "cloud services, AWS us-west-2",
             ", ".join(engine_title(e) for e in dict.fromkeys(self.summary["engine"])) + ": one single-node "
             "container each, no replication"),
            ("hardware", "3 x 16 vCPU / 64 GiB per system, 900 GiB EBS, 13500 IOPS; driver 32 vCPU, 128 GB",
             f"one host of {self.info['cpu_cores']} cores shared by the engine and sysbench"),
            ("client", "sysbench 1.1.0-b73ae9a over the network with TLS (--mysql-ssl-ca, --pgsql-sslmode=verify-ca)",
             f"Debian's sysbench 1.0.20 on the same host, TLS not set, reaching {self.client_path_text()}"),
            ("tests", "oltp_point_select; oltp_read_write --point-selects=9 --range-selects=false --index-updates=0 "
                      "--non-index-updates=1 --delete-inserts=0",
             ", ".join(self.param("tests") or []) + " (the 90:10 mix with the seed's options)"),
            ("table options", "--create_secondary=false --auto_inc=false (point select; its read/write command "
                              "gives none, so sysbench's defaults: a secondary index on k, auto-increment ids)",
             f"--create_secondary={str(bool(self.param('create_secondary'))).lower()} "
             f"--auto_inc={str(bool(self.param('auto_inc'))).lower()} (every test: the read/write tables differ "
             "from the seed's)"),
            ("data", "--tables=10 --table-size=1000000", f"--tables={tables} --table-size={size}"),
            ("threads", "8 16 32 64 128 256 512 1024 (its commands; its CockroachDB bottleneck script 32 64 128 256 512; "
                        f"its published data start at {seed_from} threads)",
             " ".join(map(str, threads)) + (f", bisected where the goal bound: {' '.join(map(str, bisected))}"
                                            if bisected else "")
             + ("; each test's steps ended after the first whose p95 was over the goal, where one was"
                if self.param("until_p95_goal") else "")),
            ("step length", "read/write --time=300; point select gives no --time (sysbench's default, 10 s)",
             f"{self.param('step_seconds')} s per step after a {self.param('warmup_seconds')} s warm-up per test"
             + WARMUP_APART),
            ("between steps", "sleep 60", self.settle_text()),
            ("access distribution", "--rand-type=uniform (read/write); point select gives none",
             f"--rand-type={self.param('rand_type') or 'special (not set)'} on every step"),
            ("random seed", "--rand-seed=1234567 (read/write)",
             "not set: sysbench 1.0.20 then seeds from the clock, so each repetition draws other keys (a fixed seed "
             "would replay one key sequence in every repetition and step, and the CIs would miss that variation)"),
            ("repetitions", "one run per step", f"at least {self.param('repetitions')} per step, 95% CIs given"),
            ("latency goal", "p95 above 60ms is unacceptable", f"p95 goal {fmt(self.goal_ms)} ms"),
            ("consistency", "\"With the exception of changes required to ensure the same level of consistency for an "
                            "equal comparison, we left both products in default configurations\"",
             "each engine at its own default isolation, as read at its start (the caveats give each level): not "
             "matched, so engines at different levels are not at the seed's equal consistency"),
            ("prices", "console prices of the two clusters: $11.43/h and $13.2509/h (estimated total)",
             f"host class {self.host_class or 'none'}: declared list prices, not verified here"),
            ("price arithmetic", "monthly total = hourly x 730 h ($8,343.90, $9,673.157); cost per operation = "
                                 "monthly total / (max TPS under 60 ms x 86,400 x 30)",
             f"the same: hourly x {analysis.HOURS_PER_MONTH} h over the operations of 30 days "
             f"({analysis.SECONDS_PER_MONTH // 3600} h), so USD is "
             f"{analysis.HOURS_PER_MONTH / (analysis.SECONDS_PER_MONTH / 3600) - 1:.1%} high, as the seed's is"),
        ]
        # A Styler, not a bare frame: pandas cuts a frame's cells at 50 characters in HTML.
        return pd.DataFrame(rows, columns=["setting", "seed 004 (its text)", "this run"]).style.hide(axis="index")

    def client_path_text(self) -> str:
        """How sysbench reached each server, as each start recorded it (never assumed to be loopback)."""
        paths = self._started("client_path")
        if not paths:
            return "the server by a path this run did not record"
        return "; ".join(f"{engine_title(k)} at {' / '.join(v)}" for k, v in paths.items())

    def problems(self, extra=()) -> str:
        return super().problems([self.client_errors_line(), *extra])

    def client_errors_line(self) -> str:
        """Errors sysbench counted and went on past (it restarts the transaction): a count per
        step window, named with the codes its driver ignores by default."""
        steps = self.steps.dropna(subset=["errors"])
        erred = steps[steps["errors"] > 0]
        if erred.empty:
            return ""
        per = erred.groupby(["engine", "test"])["errors"].agg(["sum", "count"])
        where = "; ".join(f"{engine_title(e)} {t}: {int(r['sum']):,} in {int(r['count'])} step window(s)"
                          for (e, t), r in per.iterrows())
        return (f"**Errors sysbench went on past:** {where} (of {len(steps)} step windows). sysbench counts an "
                "ignored error and restarts the transaction; its MySQL driver ignores 1213 (deadlock), 1020 (record "
                "changed) and 1205 (lock wait timeout) by default (`--mysql-ignore-errors`, sysbench 1.0.20); its "
                "PostgreSQL driver has no option for it and decides in its own code which SQLSTATEs it retries. The "
                "step table's errors column is a mean count per step "
                f"window of {self.param('step_seconds')} s, not a rate.")

    def settle_text(self) -> str:
        """Where settle windows were taken and how many ended at their bound rather than on quiet."""
        bound = float(self.param("max_settle_seconds") or 0)
        if bound <= 0:
            return "no settle window (max_settle_seconds = 0): deferred work is charged to later steps"
        if self.param("settle_after_writes") is False:
            return ("no settle window after any step (settle_after_writes false): deferred work is charged to later "
                    "steps; where it was measured (run 20261124T124310Z-df05c2) the settle windows after read/write "
                    "steps held 0.24% of the steps' engine CPU")
        m = self.measurements
        walls = m[(m["window"] == "settle") & (m["metric"] == "wall_time")]["value"]
        policy = SettlePolicy()
        engine = results.engine_rows(m) if "scope" in m else m.iloc[:0]
        engine = engine[engine["metric"] == "cpu_time"].groupby("window")["value"].sum()
        share = (f"; settle windows held {engine.get('settle', 0) / engine['phase']:.1%} of the engine CPU the "
                 "steps' windows held" if engine.get("phase", 0) > 0 else "")
        text = (f"after each step that writes ({', '.join(sorted(WRITE_TESTS))}; none after reads, which defer no "
                f"work), a settle window of at most {bound:g} s that ends early once the engine's CPU over the last "
                f"{policy.quiet_seconds:g} s is near its idle rate")
        if bound < policy.quiet_seconds + 2 * policy.poll_seconds:
            # A window must see a whole quiet interval before it can end on quiet: at this bound its
            # length cannot tell quiet from the bound.
            return text + (f": with the bound this close to the quiet interval, a window's length ({len(walls)} of "
                           "them) cannot tell an engine that went quiet from one still busy" + share)
        at_bound = int((walls >= bound - policy.poll_seconds / 2).sum())  # one ending on quiet ends a poll or more earlier
        return text + (f": {at_bound} of {len(walls)} ended at the bound, so deferred work still running then is "
                       "charged to the next step" + share)


    def caveats(self, extra=()) -> str:
        notes = []
        if self.param("engine_cpus"):
            notes.append(f"Each engine's container was limited to {self.param('engine_cpus'):g} core(s) by a CFS quota "
                         "(docker --cpus): a smaller instance, throttled every 100 ms period it exceeds its share.")
        return super().caveats([*notes, *extra])


def ci_range(value: float, low: float, high: float) -> str:
    """`0.05 (0.04 to 0.07)`: a figure whose CI is not symmetric, as its two ends."""
    if value != value:
        return "n/a"
    if low != low and high != high:
        return fmt(value)
    return f"{fmt(value)} ({fmt(low)} to {fmt(high) if high == high else 'unbounded'})"


def gain_ci(gain: float, low: float, high: float) -> str:
    """`+5% (-2% to +12%)`: a gain per doubling with its 95% CI."""
    return f"{gain:+.0%} ({low:+.0%} to {high:+.0%})" if low == low and high == high else f"{gain:+.0%}"
