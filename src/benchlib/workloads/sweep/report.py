"""The concurrency-sweep notebook's tables and figures, on the shared report layer."""
from __future__ import annotations

import pandas as pd

from ... import results
from ...plots import engine_title, normalised_curves, throughput_latency
from ...measure import SettlePolicy
from ...report import RunReport, fmt, fmt_ci
from . import analysis, prices
from .workload import WRITE_TESTS, connection_config


# Two warm-ups that are easy to confuse: the sweep's own (warmup_seconds) and the driver's (warmup).
WARMUP_APART = (" (the sysbench warm-up, warmup_seconds: unrecorded load before each test's first step in the "
                "first repetition only, so a later repetition's first step follows the previous test's last, largest "
                "step; the driver's warmup parameter, a whole discarded repetition, is another mechanism)")
SEED_SERVER_VCPUS = 48  # seed 004's database side: 3 nodes x 16 vCPU per system


class SweepReport(RunReport):
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

    def step_table(self):
        s = self.summary
        out = pd.DataFrame({
            "engine": [engine_title(e) for e in s["engine"]], "test": s["test"], "threads": s["threads"],
            "TPS (± 95% CI)": [fmt_ci(v, ci) for v, ci in zip(s["tps"], s["tps_ci95"])],
            "QPS": s["qps"], "avg ms": s["latency_avg"], "p95 ms, mean of reps": s["latency_p95"],
            "p95 ms, median of reps": s["latency_p95_median"], "p99 ms": s["latency_p99"],
            "engine CPU ms/txn": s["engine_cpu_ms_per_txn"], "client CPU ms/txn": s["client_cpu_ms_per_txn"],
            "engine + sysbench CPU (share of host cores)": s["host_cpu_util"], "errors (mean count per step)": s["errors"], "n": s["n"],
        })
        numeric = ["QPS", "avg ms", "p95 ms, mean of reps", "p95 ms, median of reps", "p99 ms", "engine CPU ms/txn", "client CPU ms/txn", "errors (mean count per step)"]
        return (out.style.format("{:.4g}", na_rep="n/a", subset=numeric).format("{:.0%}", subset=["engine + sysbench CPU (share of host cores)"])
                .hide(axis="index"))

    def knee_table(self):
        k = self.knees
        return pd.DataFrame({
            "engine": [engine_title(e) for e in k["engine"]], "test": k["test"],
            "useful capacity (threads)": [knee_text(r) for r in k.itertuples()],
            "TPS there": k["knee_tps"].map(fmt), "p95 there (ms, median of reps)": k["knee_p95_ms"].map(fmt),
            f"TPS gain per doubling of the first step not clearly gaining {analysis.KNEE_MIN_GAIN:.0%} (95% CI)": [
                f"{fmt(g * 100, '%', 2)} ({fmt(lo * 100, '%', 2)} to {fmt(hi * 100, '%', 2)}), threads {steps}"
                if steps else "none: every step run gained"
                for g, lo, hi, steps in zip(k["gain_after_knee"], k["gain_after_low"], k["gain_after_high"],
                                            k["gain_steps"])],
            "peak TPS": k["peak_tps"].map(fmt), "at threads": k["peak_threads"],
        }).style.hide(axis="index")

    def price_table(self):
        p = self.price_perf
        out = pd.DataFrame({
            "engine": [engine_title(e) for e in p["engine"]], "test": p["test"],
            "TPS priced is": [self.tps_basis(bound, engine, test)
                              for bound, engine, test in zip(p["goal_bound"], p["engine"], p["test"])],
            "threads": p["threads"],
            "TPS (± 95% CI)": [fmt_ci(v, ci) for v, ci in zip(p["max_tps_under_goal"], p["tps_ci95"])],
            "p95 ms (median of reps)": p["p95_ms"],
            "repetitions split at threads": p["repetitions split at threads"].replace("", "none"),
            "ops per day": p["ops_per_day"], "ops per 30 days": p["ops_per_30_days"],
            "USD per hour": p["usd_per_hour"],
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
            out[f"USD per M txn priced as {klass}"] = [fmt(v) for v in usd]
        numeric = ["p95 ms (median of reps)", "ops per day", "ops per 30 days", "USD per hour"]
        return out.style.format("{:.4g}", na_rep="n/a", subset=numeric).hide(axis="index")

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

    def tps_basis(self, goal_bound: bool, engine: str, test: str) -> str:
        """What the priced throughput is: a capacity the p95 goal set, or only the peak of the steps run."""
        ran = self.summary[(self.summary["engine"] == engine) & (self.summary["test"] == test)]
        if goal_bound:
            under = ran[ran["latency_p95_median"] <= self.goal_ms] if "latency_p95_median" in ran else ran.iloc[:0]
            if not under.empty and under["tps"].max() >= ran["tps"].max():
                # The goal cut nothing: the step priced is the peak of every step run.
                return (f"max TPS within the p95 goal of {fmt(self.goal_ms)} ms, also the peak of every step run "
                        f"(the goal bound only past it)")
            return f"max TPS within the p95 goal of {fmt(self.goal_ms)} ms"
        crossed = ran[ran["latency_p95_max"] > self.goal_ms] if "latency_p95_max" in ran else ran.iloc[:0]
        if not crossed.empty:
            return (f"peak TPS: the median p95 stayed under the goal up to {int(ran['threads'].max())} threads, but a "
                    f"repetition crossed it at {', '.join(str(int(t)) for t in crossed['threads'])} threads")
        return f"peak TPS: the goal never bound up to {int(ran['threads'].max())} threads"

    def price_source_table(self):
        """The hourly price used per engine, with what it includes and where it is from."""
        if not self.price_rows:
            return pd.DataFrame({"prices": [f"none (host_class {self.host_class or 'not set'}; prices given as "
                                            f"parameters: {self.prices or 'none'})"]})
        # A Styler, not a bare frame: pandas cuts a frame's cells at 50 characters in HTML.
        return pd.DataFrame([{"engine": engine_title(k), "host class": p.host_class, "USD per hour": p.usd_per_hour,
                              "basis": p.basis_text, "offering": p.offering, "instance": p.instance,
                              "includes": p.includes, "source": p.source}
                             for k, p in self.price_rows.items()]).style.hide(axis="index")

    def price_sentence(self) -> str:
        """What the prices are: declared or published, per engine, and what they include; the settings
        the engines' write rows differ in travel with their prices."""
        text = self._price_sentence()
        if set(self.summary["test"]) & WRITE_TESTS:
            text += (" A write test's price compares engines that committed under their own durability and isolation "
                     "settings (the findings and the caveats give each): part of a gap between their prices is those "
                     "settings, not the engine.")
        return text

    def _price_sentence(self) -> str:
        if not self.price_rows:
            given = ", ".join(f"{k} ${v}/h" for k, v in self.prices.items())
            return "Price/performance: " + (f"at the hourly rates given as parameters ({given})." if self.prices else
                                            "no prices (host_class none): only CPU-seconds per million transactions "
                                            "on this host at that step.")
        offering = next(iter(self.price_rows.values())).offering  # one per host class (prices.for_host)
        per_engine = "; ".join(f"{engine_title(k)} ${p.usd_per_hour:g}/h, {p.instance} ({p.includes}; "
                               f"{p.basis_text})" for k, p in self.price_rows.items())
        return (f"Price/performance on host class `{self.host_class}`: every engine is priced as the same kind of "
                f"offering ({offering}), so the ranking compares engines, not ways of buying them; the hourly prices "
                f"are not measured on this host: {per_engine}. USD per million transactions is that price x "
                f"{analysis.HOURS_PER_MONTH} h a month (seed 004's month) over 30 days of the throughput priced "
                f"({analysis.SECONDS_PER_MONTH // 3600} h: seed 004's own mismatch, kept so its published costs "
                f"recompute; it puts USD {analysis.HOURS_PER_MONTH / (analysis.SECONDS_PER_MONTH / 3600) - 1:.1%} "
                "high against one consistent month), as "
                "if this host's throughput ran on that instance; its 95% CI is the price over the TPS CI's two ends."
                + self.one_price_text())

    def one_price_text(self) -> str:
        """Where every engine has the same price, USD per transaction is only 1 / TPS scaled: say so."""
        if len({p.usd_per_hour for p in self.price_rows.values()}) != 1 or len(self.price_rows) < 2:
            return ""
        text = (" With one price for every engine, the USD column adds nothing beyond TPS: it is 1 / TPS times the "
                "same constant, so it ranks the engines exactly as their throughput does.")
        others = self.alternative_prices()
        if others:
            text += (" The columns priced as " + ", ".join(f"`{k}`" for k in others) + " use that class's per-engine "
                     "prices (" + "; ".join(f"{engine_title(e)} ${r.usd_per_hour:g}/h" for rows in others.values()
                                            for e, r in rows.items())
                     + "; n/a where it has no price for an engine), which can rank engines differently.")
        return text

    def reference_price_table(self) -> pd.DataFrame:
        """Seed 004's price/performance, recomputed from its own inputs with this notebook's
        formula (the published and recomputed costs must agree)."""
        ref = results.reference("seed004_prices")
        ref["recomputed_cost_per_operation_usd"] = [analysis.cost_per_operation(m, t) for m, t in
                                                    zip(ref["monthly_usd"], ref["published_max_tps_under_60ms"])]
        ref["usd_per_million_txn"] = ref["recomputed_cost_per_operation_usd"] * 1e6
        # The seed calls CockroachDB's cost "355.66% more" than Xpand's: its own figures give 3.56x, i.e.
        # 255.66% more; the ratio is shown so a reader can check.
        ref["cost_vs_cheapest"] = ref["recomputed_cost_per_operation_usd"] / ref["recomputed_cost_per_operation_usd"].min()
        return ref.drop(columns=["configuration"]).rename(columns={
            "system": "seed 004 system", "hourly_usd": "USD/h", "monthly_usd": "USD/month (its 720 h)",
            "published_max_tps_under_60ms": "max TPS under 60 ms (published)",
            "published_cost_per_operation_usd": "USD/operation (published)",
            "recomputed_cost_per_operation_usd": "USD/operation (recomputed here)",
            "usd_per_million_txn": "USD per million transactions (seed's cloud clusters: not comparable with this "
                                   "host's)",
            "cost_vs_cheapest": "cost per operation / the cheaper system's (the seed writes 355.66% more: 3.56x is "
                                "255.66% more)"})

    def figures(self):
        return [throughput_latency(self.summary[self.summary["test"] == test], knees=self.knees[self.knees["test"] == test],
                                   title=f"{test}: throughput (solid, ± 95% CI) and p95 latency (dotted) by threads (log scale)",
                                   name=f"sweep-{test.replace('_', '-')}")
                for test in dict.fromkeys(self.summary["test"])]

    def reference_figures(self):
        """Seed 004's curves beside this run's, against threads per server vCPU: its clusters had
        48 vCPUs a side (32-1024 threads), this host has its own few cores, so concurrency is only
        comparable relative to the cores that serve it."""
        ref = results.reference("seed004_sysbench")
        cores = int(self.info["cpu_cores"] or 1)
        figs = []
        for test in dict.fromkeys(self.summary["test"]):
            ours = self.summary[self.summary["test"] == test]
            theirs = ref[ref["workload"] == test]
            if theirs.empty:
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
                                          title=f"{test}: throughput relative to each system's peak",
                                          x_title=f"threads per server vCPU (log scale; seed 004: "
                                                  f"{SEED_SERVER_VCPUS}, this run: {cores}, shared with sysbench)"))
        return figs

    def findings(self) -> str:
        """Narrative drawn from the numbers: per engine and test, where capacity ends and what a
        transaction costs the server and the client there."""
        lines = []
        if len(self.knees) and self.knees["knee_threads"].isna().all():
            n = int(self.summary["n"].max()) if len(self.summary) else 0
            lines.append(f"**No knee determined at this precision:** with n = {n} repetitions of "
                         f"{self.param('step_seconds')} s steps, no engine's gains per doubling have CIs narrow enough "
                         f"to show where they fall below {analysis.KNEE_MIN_GAIN:.0%}; each line below gives the bracket "
                         "the knee lies in and the peak of the means.")
        for k in self.knees.itertuples():
            if k.knee_threads != k.knee_threads:
                lines.append(f"**{engine_title(k.engine)}, {k.test}:** useful capacity {knee_text(k)}: the gains' CIs "
                             f"do not show where the gain per doubling falls below {analysis.KNEE_MIN_GAIN:.0%}; peak "
                             f"{fmt(k.peak_tps)} TPS at {k.peak_threads} threads.")
                continue
            row = self.summary[(self.summary["engine"] == k.engine) & (self.summary["test"] == k.test)
                               & (self.summary["threads"] == k.knee_threads)].iloc[0]
            client = row["client_cpu_ms_per_txn"]
            share = client / (client + row["engine_cpu_ms_per_txn"]) if client == client else float("nan")
            lowest = int(self.summary[(self.summary["engine"] == k.engine)
                                      & (self.summary["test"] == k.test)]["threads"].min())
            at_edge = "; the lowest step run, so capacity may end at fewer threads" if k.knee_threads == lowest else ""
            lines.append(
                f"**{engine_title(k.engine)}, {k.test}:** useful capacity at {int(k.knee_threads)} threads "
                f"({fmt(k.knee_tps)} TPS, median p95 {fmt(k.knee_p95_ms)} ms{at_edge}); peak {fmt(k.peak_tps)} TPS at "
                f"{k.peak_threads} threads. There a transaction costs the engine {fmt(row['engine_cpu_ms_per_txn'])} "
                f"ms of CPU and sysbench {fmt(client)} ms ({fmt(share * 100, '%', 2)} of the pair), and the two "
                f"together used {fmt(row['host_cpu_util'] * 100, '%', 2)} of the host's cores over the step (not the "
                "host's whole load: other processes are not counted).")
        lines += self._goal_lines()
        if note := self.write_durability_note():
            lines.append(note)
        lines.append(self.superlinear_line())
        cores = self.info["cpu_cores"]
        lines.append(f"Client and server share this host's {cores} cores, so the knee here says as much about the "
                     f"host as about the engine: past about {cores} busy threads a test whose threads never wait "
                     "(point selects) can only queue, while one whose commits wait for the disk can still gain.")
        return "\n".join(f"- {line}" for line in lines if line)

    def superlinear_line(self, limit: float = 2.2) -> str:
        """Steps where doubling the threads more than doubled throughput: more than the added thread can
        do if a transaction costs the same, so the lower step ran slow for a reason of its own (run
        20261124T220931Z-461d23: point selects 5.6-6.5x from 1 to 2 threads, with 2.6-2.9x the engine CPU
        per transaction at 1 thread)."""
        parts = []
        for (engine, test), df in self.summary.groupby(["engine", "test"], sort=False):
            df = df.sort_values("threads").reset_index(drop=True)
            for a, b in zip(df.itertuples(), df.iloc[1:].itertuples()):
                if 1 + analysis.gain_per_doubling(a.tps, b.tps, a.threads, b.threads) > limit:
                    cpu = (f"; engine CPU per transaction {fmt(a.engine_cpu_ms_per_txn)} ms against "
                           f"{fmt(b.engine_cpu_ms_per_txn)} ms" if pd.notna(a.engine_cpu_ms_per_txn) else "")
                    parts.append(f"{engine_title(engine)} {test} {int(a.threads)} to {int(b.threads)} threads "
                                 f"{fmt(b.tps / a.tps)}x{cpu}")
        if not parts:
            return ""
        return ("**Faster than linear:** " + "; ".join(parts) + ". Adding threads cannot more than double throughput "
                "per doubling if a transaction costs the same, so the lower step ran slow for a reason of its own, "
                "not measured here (with one client thread the engine's CPU per transaction was higher too); the "
                "knee walk and the normalised curves start from it.")

    def _goal_lines(self) -> list[str]:
        """Whether the p95 goal bound: seed 004 priced the highest throughput a latency goal allows,
        which says something only where a step crossed it."""
        unbound, lines = [], []
        bound_threads = max(self.param("threads") or [0]) or int(self.summary["threads"].max())
        for (engine, test), df in self.summary.groupby(["engine", "test"], sort=False):
            df = df.sort_values("threads")
            over = df[df["latency_p95_median"] > self.goal_ms]
            if over.empty and (df["latency_p95_max"] > self.goal_ms).any():
                # The median stayed under the goal, but some repetition crossed it (run 20261124T220931Z-461d23
                # called MariaDB's read/write "never bound" with one 128-thread repetition over 60 ms).
                peak = df.loc[df["tps"].idxmax()]
                lines.append(f"**{engine_title(engine)}, {test}:** the median p95 stayed under the goal of "
                             f"{fmt(self.goal_ms)} ms up to {int(df['threads'].max())} threads, but not every "
                             "repetition did." + self._split_text(df) + f" The price table prices the peak of the steps "
                             f"run, {fmt(peak['tps'])} TPS at {int(peak['threads'])} threads, whose median p95 was "
                             f"{fmt(peak['latency_p95_median'])} ms: where the goal binds is not located.")
                continue
            if over.empty:
                unbound.append(f"{engine_title(engine)} {test} (median p95 at most "
                               f"{fmt(df['latency_p95_median'].max())} ms, {int(df['threads'].max())} threads)")
                continue
            first = over.iloc[0]
            under = df[df["latency_p95_median"] <= self.goal_ms]
            best_threads = int(under.loc[under["tps"].idxmax(), "threads"]) if not under.empty else 0
            within = (f"the highest throughput within it, {fmt(under['tps'].max())} TPS at {best_threads} "
                      f"thread{'s' if best_threads != 1 else ''}, is what the price table prices"
                      if not under.empty else "no step met it, so nothing is priced")
            if not under.empty and under["tps"].max() >= df["tps"].max():
                # The goal only matters where it cuts the curve before its peak.
                if best_threads < int(under["threads"].max()):
                    within += ", the highest mean of every step run: " + self._fall_after(engine, test, best_threads)
                else:
                    within += (", the last step under the goal and the highest mean of every step run: whether "
                               "throughput would have gone on rising up to the crossing was not measured")
                within += " (a maximum over means whose CIs may overlap: the step table gives each CI)"
            where = f"bound at {int(first['threads'])} threads"
            below = under[under["threads"] < first["threads"]]
            last_under = int(below["threads"].max()) if not below.empty else 0
            if last_under and int(first["threads"]) > 2 * last_under:
                bisected = set(df["threads"]) - set(self.param("threads") or [])
                why = ("the first repetition to cross bisected another bracket" if bisected else
                       "no step between them was run")
                where = (f"was crossed between {last_under} thread{'s' if last_under != 1 else ''} (median p95 under "
                         f"it) and {int(first['threads'])} (over it), where it binds was not located ({why})")
            lines.append(f"**{engine_title(engine)}, {test}:** the p95 goal of {fmt(self.goal_ms)} ms {where} "
                         f"(median p95 at {int(first['threads'])} threads of {int(first.get('n', 1))} repetition(s) "
                         f"{fmt(first['latency_p95_median'])} ms, from {fmt(first['latency_p95_min'])} to "
                         f"{fmt(first['latency_p95_max'])} ms): {within}." + self._split_text(df))
        if unbound:
            lines.append(f"The p95 goal of {fmt(self.goal_ms)} ms never bound for " + "; ".join(unbound)
                         + f", with the sweep's bound at {bound_threads} threads: there the price table prices the "
                           "peak TPS of the steps run, not a capacity the goal set (more threads, or a tighter goal, "
                           "would be needed to find one).")
        return lines

    def _fall_after(self, engine: str, test: str, best_threads: int) -> str:
        """Whether throughput fell past its best step under the goal, judged as the knee is: from each
        repetition's own TPS ratio to the next step run (a fall claimed only where its CI is below 0)."""
        rows = self.steps[(self.steps["engine"] == engine) & (self.steps["test"] == test)]
        later = sorted(t for t in rows["threads"].unique() if t > best_threads)
        if not later:
            return "no step past it was run"
        by_rep = rows.set_index(["threads", "repetition"])["tps"]
        gain, low, high = analysis.gain_ci_paired(by_rep.xs(best_threads), by_rep.xs(later[0]), best_threads, later[0])
        if high != high:  # NaN: fewer than two repetitions ran both steps
            return f"whether throughput fell past it is not shown (fewer than two repetitions ran {later[0]} threads)"
        span = f"{fmt(gain * 100, '%', 2)} per doubling to {later[0]} threads, 95% CI {fmt(low * 100, '%', 2)} to " \
               f"{fmt(high * 100, '%', 2)}, paired by repetition"
        if high < 0:
            return (f"throughput fell past it ({span}) before p95 reached the goal, so the goal did not change the "
                    "throughput priced")
        return f"whether throughput fell past it is not shown ({span})"

    def write_durability_note(self) -> str:
        """Tests that write commit under each server's own durability defaults, which differ: a
        binary log synced at commit is a cost only some engines' write rows carry."""
        from ..load_fetch.analysis import commit_text, settings

        writing = [t for t in dict.fromkeys(self.summary["test"]) if t in WRITE_TESTS]
        if not writing:
            return ""
        readings = self.durability()
        engines = [e for e in dict.fromkeys(self.summary["engine"]) if settings(readings.get(e, ""))]
        if not engines:
            return ""
        texts = {e: commit_text(readings[e]) for e in engines}
        differ = len(set(texts.values())) > 1
        return (f"Durability on {', '.join(writing)} (each server's default, as read at its start): "
                + "; ".join(f"{engine_title(e)} ({readings[e]}): {texts[e]}" for e in engines) + "."
                + (" The engines commit under different settings, so their write throughput and CPU per transaction "
                   "compare different work, not only different engines." if differ else ""))

    def _split_text(self, df) -> str:
        """Where repetitions disagree about the goal: the bracket the crossing lies in."""
        split = df[(df["latency_p95_min"] <= self.goal_ms) & (df["latency_p95_max"] > self.goal_ms)]
        if split.empty:
            return ""
        all_under = df[df["latency_p95_max"] <= self.goal_ms]["threads"]
        all_over = df[df["latency_p95_min"] > self.goal_ms]["threads"]
        at = "; ".join(f"{int(r.threads)} threads (p95 {fmt(r.latency_p95_min)} to {fmt(r.latency_p95_max)} ms)"
                       for r in split.itertuples())
        if not all_under.empty and not all_over.empty:
            bracket = f"between {int(all_under.max())} and {int(all_over.min())} threads"
        else:
            bracket = (f"between {f'{int(all_under.max())} threads' if not all_under.empty else 'below the lowest step'}"
                       f" and {f'{int(all_over.min())} threads' if not all_over.empty else 'beyond the last step run'}")
        return f" Repetitions disagree at {at}: by every repetition the goal is crossed {bracket}."

    def knee_rule_sentence(self) -> str:
        return (f"Useful capacity (the knee), per engine and test: walking up the thread steps, the last step reached "
                f"while every step's throughput gain per doubling of threads was at least "
                f"{analysis.KNEE_MIN_GAIN:.0%} by its 95% CI's lower bound, and only where the next step's gain is "
                f"clearly below {analysis.KNEE_MIN_GAIN:.0%} (its CI's upper bound); otherwise the knee is reported as "
                "not determined, between the last step that clearly gained and the step before the first that clearly "
                "did not. A step that is not a doubling is normalised: (TPS ratio) ^ (1 / log2 of the threads ratio) "
                "- 1; the gain's CI is Student's t over each repetition's own log TPS ratio between the two steps "
                "(paired: a repetition the host ran slow moves both its steps, and cancels; where fewer than two "
                "repetitions ran both, the two TPS CIs in quadrature instead). "
                "This is the usual diminishing-returns reading of a scalability curve, not seed 004's (it read the "
                "knee off the latency chart by eye); the knee table gives the gain of the step after the knee.")

    def noise_sentence(self) -> str:
        """What the repetitions can and cannot tell apart (with n = 2 the CI's t is 12.7, with 3 it is 4.3)."""
        counts = self.summary["n"].astype(int).value_counts() if len(self.summary) else pd.Series(dtype=int)
        if counts.empty or counts.index.max() < 2:
            return ("Each step ran once: no CI, and no difference between steps or engines is claimed beyond the "
                    "numbers.")
        # The usual n, not the least: a bisected step one repetition ran (n = 1) is named, not made the rule
        # (run 20261124T220931Z-461d23 said "each step ran once" of 50 steps with n = 3 and one with n = 1).
        n = int(counts.idxmax())
        fewer = self.summary[self.summary["n"] < n]
        t = results.t_quantile_975(n - 1)
        text = (f"Steps have n = {n} repetitions"
                + (" except " + ", ".join(f"{engine_title(r.engine)} {r.test} at {int(r.threads)} threads (n = "
                                          f"{int(r.n)}{': no CI' if r.n < 2 else ''})" for r in fewer.itertuples())
                   if not fewer.empty else "")
                + f": their 95% CIs use Student's t = {t:.3g}")
        if n == 2:
            return (text + ", so they are wide and say little. Nothing in this report is coloured, and no difference "
                    "between engines or steps within the CIs is claimed: the knees and the prices are read from the "
                    "means, and two engines whose CIs overlap are not ranked by them.")
        return text + "; differences within the CIs are not claimed."

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

    def connection_note(self) -> str:
        """How sysbench's connections were opened and counted, after the one server setting the sweep
        changes from each server's default: its connection limit, raised to the largest step."""
        raised = connection_config([int(t) for t in (self.param("threads") or [0])])
        limit = (f"Every server's max_connections was raised to {raised['max_connections']} (the largest step plus "
                 "the harness's own sessions; PostgreSQL's default is 100, MySQL's and MariaDB's 151): the one server "
                 "setting the sweep changes. " if raised else "")
        return limit + self._connections_text()

    def _connections_text(self) -> str:
        """Each step is a new sysbench process. Since its window opens once sysbench's threads are
        connected, connection set-up is outside the cost per transaction: stated with how long it
        took at each engine's largest step. Runs from before that held it in the window: stated
        with each engine's CPU per transaction at the largest step beside its lowest."""
        connected = self.summary.dropna(subset=["connect_s"]) if "connect_s" in self.summary else self.summary.iloc[:0]
        if not connected.empty:
            top = connected.loc[connected.groupby("engine", sort=False)["threads"].idxmax()]
            times = "; ".join(f"{engine_title(r.engine)} {fmt(r.connect_s)} s for {int(r.threads)} threads"
                              for r in top.itertuples())
            closed_outside = "events_s" in connected and connected["events_s"].notna().all()
            closing = ("The window ends when every thread has done its last event, before the threads disconnect: "
                       "closing the connections is outside too." if closed_outside else
                       "Closing the connections at the step's end is inside.")
            return ("Connection set-up is outside each measured window: every step starts a new sysbench process, whose "
                    "threads connect (on PostgreSQL a forked backend and a scram-sha-256 handshake each) and then wait "
                    f"until the window is open before their first transaction. {closing} Opening them took, at the "
                    f"largest step (mean of repetitions): {times}.")
        parts = []
        for (engine, test), df in self.summary.groupby(["engine", "test"], sort=False):
            df = df.dropna(subset=["engine_cpu_ms_per_txn"]).sort_values("threads")
            if len(df) < 2:
                continue
            top, low = df.iloc[-1], df.loc[df["engine_cpu_ms_per_txn"].idxmin()]
            if top["threads"] == low["threads"]:
                continue
            parts.append(f"{engine_title(engine)} {test} {fmt(top['engine_cpu_ms_per_txn'])} ms at "
                         f"{int(top['threads'])} threads against {fmt(low['engine_cpu_ms_per_txn'])} ms at "
                         f"{int(low['threads'])} ({fmt(top['engine_cpu_ms_per_txn'] / low['engine_cpu_ms_per_txn'])}x)")
        text = ("Connection set-up is inside each measured window of this run: every step starts a new sysbench "
                "process, which opens its threads' connections (on PostgreSQL a forked backend and a scram-sha-256 "
                f"handshake each) within the {self.param('step_seconds')} s it is measured over, so a step with more "
                "threads carries more set-up per transaction, and none of it is subtracted.")
        if parts:
            text += " Engine CPU per transaction at the largest step against the lowest of any step: " + \
                "; ".join(parts) + "."
        return text

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

    def precision_sentence(self) -> str:
        """How many steps' CPU per transaction (engine + client) reached the CI target, counted
        here, and whether the adaptive rule could add repetitions at all."""
        target = float(self.param("ci_target") or 0.05)
        rel = (self.summary["cpu_ms_per_txn_ci95"] / self.summary["cpu_ms_per_txn"]).dropna()
        text = (f"Precision: of {len(rel)} steps with a CI, {int((rel <= target).sum())} have a 95% CI of CPU per "
                f"transaction (engine + client) within ±{target:.0%} of the mean and {int((rel <= 2 * target).sum())} "
                f"within ±{2 * target:.0%}.")
        low, high = self.param("repetitions"), self.param("max_repetitions")
        if high is not None and low is not None and high <= low:
            return text + (f" max_repetitions = repetitions = {low}: the adaptive rule (more repetitions while a "
                           "step's CI is wider than the target) could add none.")
        return text + (f" Repetitions were added, up to {high}, while a step's CI was wider than the target; the run "
                       "note says how many.")

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

    def p95_window_sentence(self) -> str:
        """How much a step's p95 rests on: its window's length and transactions, against seed 004's steps."""
        if not len(self.summary) or self.param("step_seconds") is None:
            return ""
        seconds = float(self.param("step_seconds"))
        top = self.summary[self.summary["threads"] == self.summary["threads"].max()]
        fewest = top.loc[top["tps"].idxmin()]
        return (f"Each p95 comes from one {fmt(seconds)} s window per repetition: at {int(fewest['threads'])} threads "
                f"the fewest transactions in one was about {fmt(fewest['tps'] * seconds)} ({engine_title(fewest['engine'])} "
                f"{fewest['test']}), so its slowest 5% are about {fmt(0.05 * fewest['tps'] * seconds)} transactions, "
                "and the first transactions of threads that start together are among them. A stall that comes every tens of seconds (a checkpoint, "
                "a flush, a compaction) may or may not fall in a window this short; seed 004's read/write steps ran "
                "300 s. The goal's verdicts rest on these p95s.")

    def sweep_rule_sentence(self) -> str:
        """How far each test's thread steps went, as the run was asked to."""
        threads = self.param("threads") or []
        if not self.param("until_p95_goal"):
            return f"Thread steps: {', '.join(map(str, threads))}, every step run (until_p95_goal off)."
        return (f"Thread steps: {', '.join(map(str, threads))}; each test's steps ended, per repetition, after the "
                f"first whose p95 was over the {fmt(self.goal_ms)} ms goal (but never before the furthest step an "
                f"earlier repetition of the same start ran), else at the bound of {max(threads or [0])} threads. A "
                "step run by fewer repetitions has n below the others in the step table."
                + (f" Where a test first crossed the goal, up to {self.param('bisect_steps')} thread count(s) between "
                   "the last step under it and the first over it were bisected (geometric mean, then the half that "
                   "still holds the crossing) by the first repetition to cross, and measured again by the later "
                   "ones; where the median p95 crosses in another bracket, the goal findings say its binding point "
                   "was not located."
                   if self.param("bisect_steps") else ""))

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
            self.knee_rule_sentence(),
            self.noise_sentence(),
            f"Throughput priced: the highest with p95 under {fmt(self.goal_ms)} ms where a step went over the goal, "
            "else the peak of the steps run (the price table says which). The highest of several noisy step means "
            "is biased upward (the largest of them is more likely one the noise raised), so a priced figure is "
            "somewhat optimistic, by up to its step's CI half-width in the step table. " + self.price_sentence(),
            "Order: each engine runs in one start, one engine after another, with its repetitions back to back "
            "(each walking every test's thread steps); engines are not interleaved, so a difference between two "
            "engines also carries how the host's speed moved between their turns (the host-speed lines give each "
            "engine's calibration loops), and a step's CI is spread within one start only. Nothing is vacuumed, "
            "reloaded or waited out between repetitions beyond the settle windows: a write test's later "
            "repetitions meet the rows, and PostgreSQL the dead row versions awaiting autovacuum, that its earlier "
            "ones left.",
            self.sweep_rule_sentence(),
            self.p95_window_sentence(),
            self.connection_note(),
            self.table_options_sentence(),
            "Seed 004 measured 3-node cloud clusters (48 vCPUs each side) driven from a 32-vCPU client, 300 s per "
            "read/write step (its point-select command sets no --time: sysbench's default, 10 s), one run per step; "
            "absolute figures cannot travel to this host, so its curves are drawn normalised to each system's peak "
            f"against threads per server vCPU ({SEED_SERVER_VCPUS} there, {self.info['cpu_cores']} here); "
            "the table of seed 004's settings gives every one not reproduced here.",
            f"Steps: {self.param('step_seconds')} s each after a {self.param('warmup_seconds')} s warm-up"
            f"{WARMUP_APART}, "
            f"{self.param('tables')} table(s) x {self.param('table_size'):,} rows, at least "
            f"{self.param('repetitions')} repetition(s) per step, each repetition walking every test's thread steps "
            "in turn. " + self.precision_sentence(),
            f"Access distribution: sysbench `--rand-type={self.param('rand_type') or 'special'}` on every step"
            + ("" if self.param("rand_type") else " (not set by this older run: Debian sysbench 1.0.20's default, "
               "`special`, sends most accesses to ~1% of the rows)") + ".",
        ]
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


def knee_text(knee) -> str:
    """A knee's thread count, or where an undetermined one lies."""
    if knee.knee_threads == knee.knee_threads:
        return str(int(knee.knee_threads))
    low = int(knee.knee_low)  # the columns are floats wherever another row holds NaN
    if knee.knee_high != knee.knee_high:
        return f"not determined (at {low} thread{'s' if low != 1 else ''} or beyond, up to the last step run)"
    return f"not determined (between {low} and {int(knee.knee_high)} threads)"
