"""The concurrency-sweep notebook's tables and figures, on the shared report layer."""
from __future__ import annotations

import pandas as pd

from ... import results
from ...plots import engine_title, normalised_curves, throughput_latency
from ...report import RunReport, fmt, fmt_ci
from . import analysis


class SweepReport(RunReport):
    def __init__(self, run_id: str, store=None):
        super().__init__(run_id, store)
        self.steps = analysis.steps(self.measurements)
        self.summary = analysis.summarize(self.steps, int(self.info["cpu_cores"] or 1))
        self.knees = analysis.knee(self.summary)
        self.goal_ms = float(self.param("p95_goal_ms"))
        self.prices = self.param("prices_per_hour") or {}
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
        return p.style.format({c: "{:.4g}" for c in p.columns if c not in ("engine", "test", "threads")},
                              na_rep="n/a").hide(axis="index")

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
        for (engine, test), df in self.summary.groupby(["engine", "test"], sort=False):
            over = df[df["latency_p95"] > self.goal_ms].sort_values("threads")
            if over.empty:
                unbound.append(f"{engine_title(engine)} {test} (p95 at most {fmt(df['latency_p95'].max())} ms, "
                               f"{int(df['threads'].max())} threads)")
            else:
                first = over.iloc[0]
                lines.append(f"**{engine_title(engine)}, {test}:** the p95 goal of {fmt(self.goal_ms)} ms bound at "
                             f"{int(first['threads'])} threads (p95 {fmt(first['latency_p95'])} ms): the price table's "
                             "throughput is the last step under it.")
        if unbound:
            lines.append(f"The p95 goal of {fmt(self.goal_ms)} ms never bound for " + "; ".join(unbound)
                         + ": there the price table's \"max TPS under the goal\" is only the best step run, not a "
                           "capacity the goal set (more threads, or a tighter goal, would be needed to find one).")
        return lines

    def caveats(self, extra=()) -> str:
        notes = [
            f"Useful capacity rule: of the steps whose p95 is at most {analysis.KNEE_FACTOR:g}x the p95 at the lowest "
            "concurrency, the one with the highest throughput.",
            f"Price/performance: the highest throughput with p95 under {fmt(self.goal_ms)} ms, priced at the hourly "
            "rates given as parameters" + (f" ({', '.join(f'{k} ${v}/h' for k, v in self.prices.items())})"
                                            if self.prices else " (none given: only CPU-seconds per million "
                                                                "transactions, which travel between hosts)") + ".",
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
