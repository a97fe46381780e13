"""The cross-run comparison's report: did anything change, by the one noise rule, between runs of one
experiment? Its findings are `comparison.compare_runs` rows (each engine, variant and phase of a
compared run against the base run: the ratio with its 95% CI and Welch's test), and beside them
the throughput and p95 latency of windows that report them; every verdict is `findings.judge`'s.
Seed 003's spreadsheet (ratios per engine and phase, a geometric mean per column) is drawn from
the same rows."""
from __future__ import annotations

import json
import math

import pandas as pd

from ..data import findings as F
from ..data import comparison, results
from ..engines import engine_order, engine_title
from ..present.plots import ratio_chart
from ..present.report import RunReport, fmt, host_label, known
from ..workloads import by_experiment, per_operation
from ..workloads.reporting import finite
from .selection import differ_by_time_only

# Readings of a window compared beside its cost, and which way is better.
READINGS = {"tps": ("TPS", True), "latency_p95": ("p95 latency", False)}
RERUN, UNLIKE_HOSTS = "rerun", "unlike-hosts"
# Spreadsheet cells by verdict (the legend under the table names the colours drawn).
_COLOURS = {F.Verdict.WORSE.value: ("background-color: #f4c7c3", "red: dearer"),
            F.Verdict.BETTER.value: ("background-color: #c8e6c9", "green: cheaper"),
            F.Verdict.SAME.value: ("background-color: #eeeeee", "grey: told apart but within the threshold, no change "
                                                                "called"),
            F.Verdict.FALSE_POSITIVE.value: ("background-color: #fff3c4", "yellow: flagged on a rerun, a "
                                                                         "false positive")}
BASE_RUN = "the base run"
# A rerun's caveat: what differs between the runs (a rerun may start fewer engines).
RERUN_NOTES = {"same": "Same work per engine, host, code and builds: only time differs.",
               "fewer": "Same work per engine, host, code and builds: only time and the engine set differ (the rerun "
                        "started {rerun} of the base run's {base} engines)."}
# What a comparison with nothing flagged could have seen: a change is flagged where its ratio's CI
# clears 1, so the smallest one a cell can flag is its CI's half span on the log scale.
DETECTABLE = "Changes under ~{smallest} cannot be told from noise here (the narrowest CI; the median cell's: ~{median})."


# Identical reruns with too few tested cells: the count, never a rate (0 of 8 bounds it only below ~37%).
FEW_CELLS_LINE = ("{flagged} of {n} flagged on {on}: too few cells to estimate a false-positive rate "
                  "(95% upper bound {upper:.0%})")
# What a rerun of fewer engines than the base run is called where identical reruns would be.
FEWER_ENGINES = "a rerun of {rerun} of the base run's {base} engines"
# Beside the false-positive count: each run's host speed, and the ratios' common shift where it is the host's.
HOST_LINE = "Host speed (median calibration loop): {runs}{shift}."
COMMON_SHIFT = "; the ratios' common shift, {shift:.3g}x (geometric mean), lies within it"
GEOMETRIC_MEAN = "geometric mean (this engine's phases, 95% CI)"
RATE_BOUND = 0.10  # a rate is stated where its 95% upper bound is under twice the rule's 5% level


def rate_upper_bound(flagged: int, n: int, alpha: float = 0.05) -> float:
    """The exact (Clopper-Pearson) upper 95% bound of a rate seen as `flagged` of `n`: the p at
    which `flagged` or fewer has probability alpha/2, by bisection on the binomial CDF."""
    if n <= 0 or flagged >= n:
        return 1.0
    low, high = flagged / n, 1.0
    for _ in range(60):
        p = (low + high) / 2
        cdf = sum(math.comb(n, k) * p ** k * (1 - p) ** (n - k) for k in range(flagged + 1))
        low, high = (p, high) if cdf > alpha / 2 else (low, p)
    return high


def rerun_line(found: pd.DataFrame, on: str = F.IDENTICAL_RERUNS) -> str:
    """The rerun's answer: the shared false-positive line where the cells bound the rate under
    RATE_BOUND, else FEW_CELLS_LINE; `on`: what the runs were (FEWER_ENGINES)."""
    tested = found[~found["verdict"].isin([v.value for v in F.UNTESTABLE])]
    flagged = int((tested["verdict"] == F.Verdict.FALSE_POSITIVE.value).sum())
    upper = rate_upper_bound(flagged, len(tested))
    if upper < RATE_BOUND:
        return F.false_positive_line(found, on)
    return FEW_CELLS_LINE.format(flagged=flagged, n=len(tested), upper=upper, on=on)


def smallest_detectable(found: pd.DataFrame) -> tuple[float, float] | None:
    """The smallest change (as a factor, 1.45 for 45%) the narrowest and the median of the rows'
    95% CIs could flag: sqrt(high / low), never under the threshold's 1.05; None without a CI."""
    spans = [(h / lo) ** 0.5 for lo, h in zip(found["ratio_low"], found["ratio_high"])
             if finite(lo) and finite(h) and lo > 0] if not found.empty else []
    if not spans:
        return None
    floor = 1 + F.THRESHOLD
    return max(min(spans), floor), max(float(pd.Series(spans).median()), floor)


def _change(factor: float) -> str:
    """A factor as a change: `45%` under 2x, `11x` from there."""
    return f"{(factor - 1) * 100:.2g}%" if factor < 2 else f"{factor:.2g}x"


class ComparisonReport(RunReport):
    """Runs of one experiment against the first (the base). The shared report layer draws the
    answer, the findings table and the appendix from `findings()`."""

    def __init__(self, run_ids: list[str], *, match: str = "engine", threshold: float = 0.05, store=None):
        self.run_ids = list(run_ids)
        super().__init__(self.run_ids[0], store)
        self.match, self.threshold = match, threshold
        self.reports = [self] + [RunReport(r, store) for r in self.run_ids[1:]]
        self.base = self
        self.comparison = comparison.compare_runs(self.run_ids, per_operation=per_operation, match=match,
                                               threshold=threshold, store=store)
        self.compared = self.comparison[self.comparison["run_id"] != self.run_ids[0]]
        per = getattr(by_experiment(self.info["experiment"]).WORKLOAD, "per_operation", None) \
            if self._known_experiment() else None
        self.noun = per.noun if per is not None else "window"
        # The metric's own unit (seconds, instructions): how its values are shown, per operation.
        self.cost_unit = dict(results.COST_METRICS).get(self.metric, self.metric_unit)
        self.phrases = F.Phrases(
            default="{subject}, {step}: {ratio} the base run ({base_value} → {value}, {words})",
            unit_scale={"s": (1e-6, f"µs/{self.noun}"), "instructions": (1.0, f"instructions/{self.noun}"),
                        "ms": (1.0, "ms"), "1/s": (1.0, "/s")})
        self._findings = self._build_findings()

    def _known_experiment(self) -> bool:
        try:
            by_experiment(self.info["experiment"])
            return True
        except Exception:  # a run of an experiment this benchlib does not have (imported, or a test's)
            return False

    # -- findings ------------------------------------------------------------------------------------
    def findings(self) -> pd.DataFrame:
        return self._findings

    def _step(self, phase: str, labels, run_id: str) -> str:
        parsed = json.loads(labels) if isinstance(labels, str) else {}
        variant = f" ({', '.join(f'{k}={v}' for k, v in parsed.items())})" if parsed else ""
        run = f" (run #{self.run_ids.index(run_id)})" if len(self.run_ids) > 2 else ""
        return f"{phase}{variant}{run}"

    def _caveats(self) -> tuple[str, ...]:
        return tuple(c.id for c in self.caveat_notes())

    def _build_findings(self) -> pd.DataFrame:
        """One row per compared cell's cost, then one per window reading (TPS, p95) where the
        windows report them, each with its engine's host factor between the runs
        (comparison.host_factors). A cost row keeps compare_runs' verdict where it carries one."""
        caveats = self._caveats()
        rows = []
        for c in self._ordered(self.compared).to_dict("records"):
            given = c.get("verdict")
            rows.append(F.finding(
                engine=c["key"], base_engine=c["key"], step=self._step(c["phase"], c["labels"], c["run_id"]),
                metric=self.cost_label(), unit=self.cost_unit, contrast=c, threshold=self.threshold,
                caveats=caveats, host_factor=c.get("host_factor"),
                verdict=F.Verdict(given) if isinstance(given, str) else None)
                | {"run_id": c["run_id"], "base_label": BASE_RUN})
        rows += self._reading_findings(caveats)
        found = F.table(rows)
        return F.false_positives(found) if self.is_rerun() and not found.empty else found

    def _reading_findings(self, caveats: tuple[str, ...]) -> list[dict]:
        """TPS and p95 latency of each compared cell against the base run's, where windows report them."""
        m = self.all_measurements()
        rows = m[m["metric"].isin(list(READINGS)) & (m["window"] == "phase")]
        if rows.empty:
            return []
        rows = rows.assign(key=[results.product_key(e) if self.match == "product" else e for e in rows["engine"]])
        per_rep = (rows.groupby(["metric", "run_id", "key", "labels", "phase", "repetition"], dropna=False)["value"]
                   .sum(min_count=1).reset_index())
        host = comparison.host_factors(m, self.run_ids, self.match)
        out = []
        for metric, df in per_rep.groupby("metric", sort=False):
            stats = results.summarize(df, columns=("value",), by=("run_id", "key", "labels", "phase"))
            stats = stats.set_index(["run_id", "key", "labels", "phase"])
            title, higher = READINGS[metric]
            unit = rows[rows["metric"] == metric]["unit"].iloc[0]
            for (run_id, key, labels, phase), row in stats.iterrows():
                if run_id == self.run_ids[0] or (self.run_ids[0], key, labels, phase) not in stats.index:
                    continue
                c = results.contrast(stats.loc[(self.run_ids[0], key, labels, phase)], row, "value", self.threshold)
                out.append(F.finding(engine=key, base_engine=key, step=f"{self._step(phase, labels, run_id)}, {title}",
                                     metric=metric, unit=unit, contrast=c, higher_is_better=higher,
                                     threshold=self.threshold, caveats=caveats, host_factor=host.get((run_id, key)))
                           | {"run_id": run_id, "base_label": BASE_RUN})
        return out

    def all_measurements(self) -> pd.DataFrame:
        return pd.concat([r.measurements for r in self.reports], ignore_index=True)

    def _ordered(self, cells: pd.DataFrame) -> pd.DataFrame:
        """Cells in catalog engine order and the base run's phase order."""
        if cells.empty:
            return cells
        engines = {e: i for i, e in enumerate(engine_order(cells["key"]))}
        phases = {p: i for i, p in enumerate(dict.fromkeys(self.measurements["phase"]))}
        order = [(engines[e], phases.get(p, len(phases))) for e, p in zip(cells["key"], cells["phase"])]
        return cells.assign(_order=order).sort_values("_order", kind="stable").drop(columns="_order")

    def is_rerun(self) -> bool:
        """Same parameters, host, benchlib code and server builds: only time differs. The rerun may
        take some of the base run's engines (notebook 06's rerun_engines), each on the same build."""
        if len(self.reports) != 2:
            return False
        base, rerun = self.reports
        return differ_by_time_only(base.info, base.instances, rerun.info, rerun.instances)

    def caveat_notes(self) -> list[F.Caveat]:
        fingerprints = {known(r.info.get("host_fingerprint")) for r in self.reports} - {None}
        hosts = {(r.info["hostname"], r.info["cpu_model"]) for r in self.reports}
        if len(fingerprints) > 1 or (len(hosts) > 1 and not fingerprints):
            return [F.Caveat(UNLIKE_HOSTS, "The runs come from unlike hosts: a ratio mixes the engine's change with "
                                           "the host's.")]
        if self.is_rerun():
            base, rerun = self._engine_sets()
            key = "fewer" if rerun < base else "same"
            return [F.Caveat(RERUN, RERUN_NOTES[key].format(rerun=len(rerun), base=len(base)))]
        return []

    def _engine_sets(self) -> tuple[set, set]:
        return tuple({*r.instances["engine"]} for r in self.reports[:2])

    def rerun_words(self) -> str:
        """What the two runs were, for the false-positive count: identical reruns, or a rerun of fewer engines."""
        base, rerun = self._engine_sets()
        return FEWER_ENGINES.format(rerun=len(rerun), base=len(base)) if rerun < base else F.IDENTICAL_RERUNS

    def host_line(self) -> str | None:
        """Each run's median calibration loop (the host's speed), the compared runs' as a factor of
        the base run's, and, where every cost ratio of a compared run moved together within that
        factor's band (their geometric mean between 1 and it), that common shift: the host's, not
        the engines'. Over the compared engines' loops only; None where a run has none."""
        compared = set(self.comparison["engine"]) | set(self.comparison["base_engine"])
        loops = results.calibrations(self.all_measurements()).dropna(subset=["calibration_s"])
        loops = loops[loops["engine"].isin(compared)].groupby("run_id")["calibration_s"].median()
        if any(r not in loops for r in self.run_ids):
            return None
        names = [BASE_RUN] + ([f"run #{i}" for i in range(1, len(self.run_ids))] if len(self.run_ids) > 2 else
                              ["the rerun" if self.is_rerun() else "the compared run"])
        runs, shifts = [], []
        found = self.findings()
        for position, (run_id, name) in enumerate(zip(self.run_ids, names)):
            factor = loops[run_id] / loops[self.run_ids[0]]
            runs.append(f"{name} {loops[run_id] * 1e3:.0f} ms" + (f" ({factor:.2f}x)" if position else ""))
            if position and not found.empty:
                ratios = found[(found["run_id"] == run_id) & (found["metric"] == self.cost_label())]["ratio"]
                shift = results.geometric_mean(ratios[ratios > 0])
                if finite(shift) and (shift > 1) == (factor > 1) and abs(math.log(shift)) <= abs(math.log(factor)):
                    shifts.append(shift)
        shift = COMMON_SHIFT.format(shift=shifts[0]) if len(self.run_ids) == 2 and shifts else ""
        return HOST_LINE.format(runs=", ".join(runs), shift=shift)

    def answer_lines(self) -> list[str]:
        """Identical reruns: the smallest change the rerun could flag leads (its limit: 0 flagged
        says nothing of a change under it; hostile read 46d, 06 #3), then the rule's false-positive
        count, no flagged row."""
        if self.is_rerun() and not self.findings().empty:
            found = self.findings()
            detectable = smallest_detectable(found[found["metric"] == self.cost_label()])
            return ([DETECTABLE.format(smallest=_change(detectable[0]), median=_change(detectable[1]))]
                    if detectable else []) + [rerun_line(found, self.rerun_words())] + [
                line for line in [self.host_line()] if line]
        return super().answer_lines() + [line for line in [self.host_line()] if line]

    def counts_shown(self) -> bool:
        """A rerun's count line counts the rows the certainty line would again (hostile read 46d, 06 #4)."""
        return not (self.is_rerun() and not self.findings().empty)

    def headline_figure(self):
        figures = self.figures()
        return figures[0] if figures else None

    # -- figures -----------------------------------------------------------------------------------
    def figures(self):
        """Per compared run: each engine's cost per operation over the base run's, per phase,
        with its 95% CI; 1 is no change."""
        out = []
        found = self.findings()
        if found.empty:
            return out
        for position, run_id in enumerate(self.run_ids[1:], start=1):
            df = found[(found["run_id"] == run_id) & (found["metric"] == self.cost_label())]
            if df.empty:
                continue
            which = f"Run #{position}" if len(self.run_ids) > 2 else ("The rerun" if self.is_rerun() else
                                                                        "The compared run")
            out.append(ratio_chart(
                df, y=lambda r: engine_title(r["engine"]),
                series=lambda r: r["step"].rpartition(" (run #")[0] or r["step"], name=f"compare-run-{position}",
                axis_title="× the base run (< 1: cheaper)",
                title=f"{which} over the base run: engine {self.metric_unit_words()} per {self.noun}, per phase"))
        return out

    def cost_label(self) -> str:
        """The cost rows' metric in words (the findings table prints it)."""
        return f"engine {self.metric_unit_words()}"

    def metric_unit_words(self) -> str:
        return {"s": "CPU time", "instructions": "instructions"}.get(self.cost_unit, self.metric)

    def ratio_table(self):
        """Seed 003's spreadsheet: compared run / base run per engine (rows) and phase (columns),
        one block of columns per compared run, each engine's geometric mean over its own phases
        (never across engines); cells coloured by their finding's verdict."""
        found = self.findings()
        found = found[found["metric"] == self.cost_label()]
        if found.empty:
            return None
        found = found.assign(row=[engine_title(e) for e in found["engine"]])
        # No index or column name: the engines and phases name themselves (a stray "row" header otherwise).
        table = found.pivot_table(index="row", columns="step", values="ratio", sort=False).rename_axis(
            index=None, columns=None)
        # With its CI over the phases' ratios: without one, 1.16 read as +16% (hostile read 46d, 06 #2).
        # Each cell's own CI carried into the mean's (hostile read 47, 06: the phases' spread alone was too narrow).
        ends = {end: found.pivot_table(index="row", columns="step", values=end, sort=False, dropna=False)
                .reindex(index=table.index, columns=table.columns) for end in ("ratio_low", "ratio_high")}
        table[GEOMETRIC_MEAN] = [F.fmt_ratio(*results.geometric_mean_ci(
            r.dropna(), ends["ratio_low"].loc[row, r.dropna().index], ends["ratio_high"].loc[row, r.dropna().index]))
            for row, r in table.iterrows()]

        def colour(frame: pd.DataFrame) -> pd.DataFrame:
            styles = pd.DataFrame("", index=frame.index, columns=frame.columns)
            for cell in found.itertuples():
                styles.at[cell.row, cell.step] = _COLOURS.get(cell.verdict, ("", ""))[0]
            return styles

        drawn = [words for verdict, (_, words) in _COLOURS.items() if verdict in set(found["verdict"])]
        return (table.style.format("{:.3g}", na_rep="n/a", subset=list(table.columns[:-1])).apply(colour, axis=None)
                .set_caption("Compared run / base run. " + ("; ".join(drawn) + "; " if drawn else "")
                             + "uncoloured: not told apart."))

    def left_out(self) -> str | None:
        """One line naming the engines not in every run: only the common set is compared."""
        compared = set(self.comparison["key"]) if not self.comparison.empty else set()
        keyed = lambda r: {results.product_key(e) if self.match == "product" else e for e in r.engines}  # noqa: E731
        missing = sorted({e for r in self.reports for e in keyed(r)} - compared)
        if not missing:
            return None
        groups: dict[str, list[str]] = {}
        for e in missing:
            runs = ", ".join(f"run #{i}" if i else "the base run" for i, r in enumerate(self.reports) if e in keyed(r))
            groups.setdefault(runs, []).append(engine_title(e))
        return ("Compared: the engines every run measured. Left out: "
                + "; ".join(f"{', '.join(titles)} (only in {runs})" for runs, titles in groups.items()) + ".")

    # -- appendix ------------------------------------------------------------------------------------
    def runs_table(self):
        """What was compared: each run's host, code, server versions and the parameters that differ
        from the base."""
        base_params = self.info["parameters"]
        rows = []
        for position, report in enumerate(self.reports):
            i = report.info
            differs = {k: v for k, v in i["parameters"].items() if k != "skipped" and base_params.get(k) != v}
            versions = report.instances.drop_duplicates("engine").dropna(subset=["server_version"])
            rows.append({
                "run": i["run_id"], "role": "base" if position == 0 else f"compared #{position}",
                "started (UTC)": f"{i['started_at']:%Y-%m-%d %H:%M}", "status": i["status"],
                "host": f"{i['hostname']}: {i['cpu_model']} ({i['cpu_cores']} cores), kernel {i['kernel']}",
                "host class": host_label(i),
                "benchlib": f"{i['benchlib_version']} ({str(i['git_sha'])[:10]}{'+' if i['git_dirty'] else ''})",
                "servers": ", ".join(sorted(f"{engine_title(e)} {v}" for e, v in zip(versions["engine"],
                                                                                     versions["server_version"]))),
                "parameters differing from the base": "none" if position == 0 or not differs else
                ", ".join(f"{k}={json.dumps(v)}" for k, v in differs.items()),
            })
        return pd.DataFrame(rows).style.hide(axis="index").set_properties(**{"text-align": "left"})

    def detail_table(self):
        """Every compared cell: both means with their 95% CIs (in the shown unit), the ratio with
        its CI, Welch's t and degrees of freedom, the verdict."""
        found = self.findings()
        out = []
        for row in found.to_dict("records"):
            f = F.fields_of(row, self.phrases)
            out.append({"engine": f["subject"], "step": row["step"], "base": f["base_value"], "compared": f["value"],
                        "ratio (95% CI)": f["ratio"], "Welch t": fmt(row["welch_t"]), "dof": fmt(row["welch_dof"], digits=2),
                        "n (base, compared)": f"{row['base_n']}, {row['n']}", "verdict": f["words"]})
        return pd.DataFrame(out).style.hide(axis="index") if out else pd.DataFrame({"": ["no cell compared"]})

    def rules(self) -> str:
        lines = [f"**Metric:** {self.metric_explanation}, per {self.noun}: the engine's phase window divided by the "
                 f"{self.noun}s it held.",
                 "**Pairing:** " + ("engines by product across versions (postgres@15 with postgres@17)."
                                    if self.match == "product" else "the same engine key in every run.")]
        return "\n".join(f"- {line}" for line in lines)

    def appendix_parts(self) -> list:
        return [("Runs compared", self.runs_table()), ("How cells are compared", self.rules()),
                ("Every compared cell", self.detail_table()),
                *[(f"Problems of {r.run_id}", r.problems()) for r in self.reports]]
