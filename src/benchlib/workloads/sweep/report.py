"""The concurrency-sweep notebook's tables and figures, on the shared report layer."""
from __future__ import annotations

import pandas as pd

from ... import results
from ...plots import engine_title, normalised_curves, throughput_latency
from ...report import RunReport, fmt, fmt_ci
from . import analysis, prices


class SweepReport(RunReport):
    def __init__(self, run_id: str, store=None):
        super().__init__(run_id, store)
        self.steps = analysis.steps(self.measurements)
        self.summary = analysis.summarize(self.steps, int(self.info["cpu_cores"] or 1))
        self.knees = analysis.knee(self.summary)
        self.goal_ms = float(self.param("p95_goal_ms"))
        self.host_class = self.param("host_class")
        # A run from before the price table carries its own prices_per_hour parameter instead.
        self.price_rows = prices.for_host(self.host_class, list(dict.fromkeys(self.summary["engine"]))) \
            if self.host_class else {}
        self.prices = ({k: p.usd_per_hour for k, p in self.price_rows.items()} if self.host_class
                       else self.param("prices_per_hour") or {})
        self.price_perf = analysis.price_performance(self.summary, self.goal_ms, self.prices)

    def step_table(self):
        s = self.summary
        out = pd.DataFrame({
            "engine": [engine_title(e) for e in s["engine"]], "test": s["test"], "threads": s["threads"],
            "TPS (± 95% CI)": [fmt_ci(v, ci) for v, ci in zip(s["tps"], s["tps_ci95"])],
            "QPS": s["qps"], "avg ms": s["latency_avg"], "p95 ms": s["latency_p95"], "p99 ms": s["latency_p99"],
            "engine CPU ms/txn": s["engine_cpu_ms_per_txn"], "client CPU ms/txn": s["client_cpu_ms_per_txn"],
            "host CPU": s["host_cpu_util"], "errors": s["errors"], "n": s["n"],
        })
        numeric = ["QPS", "avg ms", "p95 ms", "p99 ms", "engine CPU ms/txn", "client CPU ms/txn", "errors"]
        return (out.style.format("{:.4g}", na_rep="n/a", subset=numeric).format("{:.0%}", subset=["host CPU"])
                .hide(axis="index"))

    def knee_table(self):
        k = self.knees
        return pd.DataFrame({
            "engine": [engine_title(e) for e in k["engine"]], "test": k["test"],
            "useful capacity (threads)": k["knee_threads"], "TPS there": k["knee_tps"].map(fmt),
            "p95 there (ms)": k["knee_p95_ms"].map(fmt), "p95 limit (ms)": k["p95_limit_ms"].map(fmt),
            "peak TPS": k["peak_tps"].map(fmt), "at threads": k["peak_threads"],
        }).style.hide(axis="index")

    def price_table(self):
        p = self.price_perf.copy()
        p.insert(0, "engine", [engine_title(e) for e in p.pop("engine")])
        p.insert(2, "TPS priced is", [self.tps_basis(bound, engine, test) for bound, engine, test in
                                      zip(p.pop("goal_bound"), self.price_perf["engine"], p["test"])])
        text = ("engine", "test", "threads", "TPS priced is")
        return p.style.format({c: "{:.4g}" for c in p.columns if c not in text}, na_rep="n/a").hide(axis="index")

    def tps_basis(self, goal_bound: bool, engine: str, test: str) -> str:
        """What the priced throughput is: a capacity the p95 goal set, or only the peak of the steps run."""
        if goal_bound:
            return f"max TPS within the p95 goal of {fmt(self.goal_ms)} ms"
        ran = self.summary[(self.summary["engine"] == engine) & (self.summary["test"] == test)]
        return f"peak TPS: the goal never bound up to {int(ran['threads'].max())} threads"

    def price_source_table(self):
        """The hourly price used per engine, with what it includes and where it is from."""
        if not self.price_rows:
            return pd.DataFrame({"prices": [f"none (host_class {self.host_class or 'not set'}; prices given as "
                                            f"parameters: {self.prices or 'none'})"]})
        # A Styler, not a bare frame: pandas cuts a frame's cells at 50 characters in HTML.
        return pd.DataFrame([{"engine": engine_title(k), "host class": p.host_class, "USD per hour": p.usd_per_hour,
                              "basis": p.basis, "instance": p.instance, "includes": p.includes, "source": p.source,
                              "as of": p.as_of} for k, p in self.price_rows.items()]).style.hide(axis="index")

    def price_sentence(self) -> str:
        """What the prices are: declared or published, per engine, and what they include."""
        if not self.price_rows:
            given = ", ".join(f"{k} ${v}/h" for k, v in self.prices.items())
            return "Price/performance: " + (f"at the hourly rates given as parameters ({given})." if self.prices else
                                            "no prices (host_class none): only CPU-seconds per million transactions, "
                                            "which travel between hosts.")
        basis = sorted({p.basis for p in self.price_rows.values()})
        per_engine = "; ".join(f"{engine_title(k)} ${p.usd_per_hour:g}/h, {p.instance} ({p.includes}; {p.basis}, "
                               f"as of {p.as_of})" for k, p in self.price_rows.items())
        return (f"Price/performance on host class `{self.host_class}`: the hourly prices are "
                f"{' and '.join(basis)} list prices, not measured on this host: {per_engine}. USD per million "
                "transactions is that price over the throughput priced, as if this host's throughput ran on that "
                "instance.")

    def reference_price_table(self) -> pd.DataFrame:
        """Seed 004's price/performance, recomputed from its own inputs with this notebook's
        formula (the published and recomputed costs must agree)."""
        ref = results.reference("seed004_prices")
        ref["recomputed_cost_per_operation_usd"] = [analysis.cost_per_operation(m, t) for m, t in
                                                    zip(ref["monthly_usd"], ref["published_max_tps_under_60ms"])]
        ref["usd_per_million_txn"] = ref["recomputed_cost_per_operation_usd"] * 1e6
        return ref.drop(columns=["configuration"])

    def figures(self):
        return [throughput_latency(self.summary[self.summary["test"] == test], knees=self.knees[self.knees["test"] == test],
                                   title=f"{test}: throughput (bars, ± 95% CI) and p95 latency (dotted) by threads",
                                   name=f"sweep-{test.replace('_', '-')}")
                for test in dict.fromkeys(self.summary["test"])]

    def reference_figures(self):
        ref = results.reference("seed004_sysbench")
        figs = []
        for test in dict.fromkeys(self.summary["test"]):
            ours = self.summary[self.summary["test"] == test]
            theirs = ref[ref["workload"] == test]
            if theirs.empty:
                continue
            curves = pd.concat([
                pd.DataFrame({"system": ours["engine"], "source": "this run", "threads": ours["threads"],
                              "relative_tps": ours["tps"] / ours.groupby("engine")["tps"].transform("max")}),
                pd.DataFrame({"system": theirs["system"], "source": "seed 004", "threads": theirs["concurrency"],
                              "relative_tps": theirs["throughput_tps"]
                              / theirs.groupby("system")["throughput_tps"].transform("max")}),
            ], ignore_index=True)
            figs.append(normalised_curves(curves, name=f"sweep-reference-{test.replace('_', '-')}",
                                          title=f"{test}: throughput relative to each system's peak"))
        return figs

    def findings(self) -> str:
        """Narrative drawn from the numbers: per engine and test, where capacity ends and what a
        transaction costs the server and the client there."""
        lines = []
        for k in self.knees.itertuples():
            row = self.summary[(self.summary["engine"] == k.engine) & (self.summary["test"] == k.test)
                               & (self.summary["threads"] == k.knee_threads)].iloc[0]
            client = row["client_cpu_ms_per_txn"]
            share = client / (client + row["engine_cpu_ms_per_txn"]) if client == client else float("nan")
            lines.append(
                f"**{engine_title(k.engine)}, {k.test}:** useful capacity at {k.knee_threads} threads "
                f"({fmt(k.knee_tps)} TPS, p95 {fmt(k.knee_p95_ms)} ms); peak {fmt(k.peak_tps)} TPS at "
                f"{k.peak_threads} threads. There a transaction costs the engine {fmt(row['engine_cpu_ms_per_txn'])} "
                f"ms of CPU and sysbench {fmt(client)} ms ({fmt(share * 100, '%', 2)} of the pair), and the host's "
                f"CPU is {fmt(row['host_cpu_util'] * 100, '%', 2)} busy.")
        lines += self._goal_lines()
        cores = self.info["cpu_cores"]
        lines.append(f"Client and server share this host's {cores} cores: past about {cores} busy threads more "
                     "concurrency only queues, so the knee here says as much about the host as about the engine.")
        return "\n".join(f"- {line}" for line in lines)

    def _goal_lines(self) -> list[str]:
        """Whether the p95 goal bound: seed 004 priced the highest throughput a latency goal allows,
        which says something only where a step crossed it."""
        unbound, lines = [], []
        bound_threads = max(self.param("threads") or [0]) or int(self.summary["threads"].max())
        for (engine, test), df in self.summary.groupby(["engine", "test"], sort=False):
            over = df[df["latency_p95"] > self.goal_ms].sort_values("threads")
            if over.empty:
                unbound.append(f"{engine_title(engine)} {test} (p95 at most {fmt(df['latency_p95'].max())} ms, "
                               f"{int(df['threads'].max())} threads)")
                continue
            first = over.iloc[0]
            under = df[df["latency_p95"] <= self.goal_ms]
            best_threads = int(under.loc[under["tps"].idxmax(), "threads"]) if not under.empty else 0
            within = (f"the highest throughput within it, {fmt(under['tps'].max())} TPS at {best_threads} "
                      f"thread{'s' if best_threads != 1 else ''}, is what the price table prices"
                      if not under.empty else "no step met it, so nothing is priced")
            lines.append(f"**{engine_title(engine)}, {test}:** the p95 goal of {fmt(self.goal_ms)} ms bound at "
                         f"{int(first['threads'])} threads (mean p95 {fmt(first['latency_p95'])} ms): {within}.")
        if unbound:
            lines.append(f"The p95 goal of {fmt(self.goal_ms)} ms never bound for " + "; ".join(unbound)
                         + f", with the sweep's bound at {bound_threads} threads: there the price table prices the "
                           "peak TPS of the steps run, not a capacity the goal set (more threads, or a tighter goal, "
                           "would be needed to find one).")
        return lines

    def sweep_rule_sentence(self) -> str:
        """How far each test's thread steps went, as the run was asked to."""
        threads = self.param("threads") or []
        if not self.param("until_p95_goal"):
            return f"Thread steps: {', '.join(map(str, threads))}, every step run (until_p95_goal off)."
        return (f"Thread steps: {', '.join(map(str, threads))}; each test's steps ended, per repetition, after the "
                f"first whose p95 was over the {fmt(self.goal_ms)} ms goal (but never before the furthest step an "
                f"earlier repetition of the same start ran), else at the bound of {max(threads or [0])} threads. A "
                "step run by fewer repetitions has n below the others in the step table.")

    def table_options_sentence(self) -> str:
        """Seed 004's point-select options, as this run created its tables."""
        if self.param("create_secondary") is None:
            return ("Tables: sysbench's defaults (this older run did not record create_secondary / auto_inc: a "
                    "secondary index on k, server-generated ids).")
        flags = (f"`--create_secondary={str(bool(self.param('create_secondary'))).lower()} "
                 f"--auto_inc={str(bool(self.param('auto_inc'))).lower()}`")
        seed = not self.param("create_secondary") and not self.param("auto_inc")
        return (f"Tables prepared with {flags}" + (" (seed 004's options for oltp_point_select)" if seed else "")
                + ": in Debian's sysbench 1.0.20 both act when oltp_common.lua creates the tables, so every test of "
                  "the run reads " + ("tables without the secondary index on k" if not self.param("create_secondary")
                                      else "tables with the secondary index on k")
                + (" and with ids written by sysbench (no AUTO_INCREMENT / SERIAL)" if not self.param("auto_inc")
                   else " and server-generated ids") + "; every run states the same options.")

    def caveats(self, extra=()) -> str:
        notes = [
            f"Useful capacity rule: of the steps whose p95 is at most {analysis.KNEE_FACTOR:g}x the p95 at the lowest "
            "concurrency, the one with the highest throughput.",
            f"Throughput priced: the highest with p95 under {fmt(self.goal_ms)} ms where a step went over the goal, "
            "else the peak of the steps run (the price table says which). " + self.price_sentence(),
            self.sweep_rule_sentence(),
            self.table_options_sentence(),
            "Seed 004 measured 3-node cloud clusters (48 vCPUs each side) driven from a 32-vCPU client, 300 s per "
            "step, one run per step; absolute figures cannot travel to this host, so its curves are drawn "
            "normalised to each system's peak.",
            f"Steps: {self.param('step_seconds')} s each after a {self.param('warmup_seconds')} s warm-up, "
            f"{self.param('tables')} table(s) x {self.param('table_size'):,} rows, at least "
            f"{self.param('repetitions')} repetition(s) per step (up to {self.param('max_repetitions') or '-'} while "
            "the CPU per transaction of a step had a 95% CI wider than the target; the run note says how many), each "
            "repetition walking every test's thread steps in turn.",
            f"Access distribution: sysbench `--rand-type={self.param('rand_type') or 'special'}` on every step"
            + ("" if self.param("rand_type") else " (not set by this older run: Debian sysbench 1.0.20's default, "
               "`special`, sends most accesses to ~1% of the rows)") + ".",
        ]
        if self.param("engine_cpus"):
            notes.append(f"Each engine's container was limited to {self.param('engine_cpus'):g} core(s) by a CFS quota "
                         "(docker --cpus): a smaller instance, throttled every 100 ms period it exceeds its share.")
        return super().caveats([*notes, *extra])
