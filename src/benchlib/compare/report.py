"""The cross-run comparison's tables, figures and narrative: seed 003's spreadsheet (ratios to a
base run, geometric mean per column, changes beyond ±5% highlighted), with each change tested
against the runs' own repetition noise."""
from __future__ import annotations

import json

import pandas as pd

from .. import results
from ..findings import VERDICT_WORDS, Verdict
from ..plots import bars_by_phase, engine_order, engine_title
from ..report import RunReport, fmt, fmt_ci, fmt_ratio_ci, host_label, known
from .selection import differ_by_time_only

THROUGHPUT_TITLES = {"tps": "TPS", "latency_p95": "p95 latency (ms)"}
# Highlights: only changes judged better or worse (findings.judge) are coloured; one the test
# tells apart but within the threshold (same) is shaded, so a reader sees it is real but minor.
_SLOWER, _FASTER, _MINOR = "background-color: #f4c7c3", "background-color: #c8e6c9", "background-color: #eeeeee"


class ComparisonReport:
    def __init__(self, run_ids: list[str], *, match: str = "engine", threshold: float = 0.05, store=None):
        self.run_ids = list(run_ids)
        self.match, self.threshold = match, threshold
        self.reports = [RunReport(r, store) for r in self.run_ids]
        self.base = self.reports[0]
        self.comparison = results.compare_runs(self.run_ids, match=match, threshold=threshold, store=store)
        self.compared = self.comparison[self.comparison["run_id"] != self.run_ids[0]]
        first = self.comparison.iloc[0] if not self.comparison.empty else None
        self.metric = first["metric"] if first is not None else self.base.metric
        self.unit = first["unit"] if first is not None else self.base.metric_unit

    # -- tables ------------------------------------------------------------------------------------
    def runs_table(self):
        """What was compared: each run's host, code and the parameters that differ from the base."""
        base_params = self.base.info["parameters"]
        rows = []
        for position, report in enumerate(self.reports):
            i = report.info
            params = i["parameters"]
            differs = {k: v for k, v in params.items() if k != "skipped" and base_params.get(k) != v}
            rows.append({
                "run": i["run_id"], "role": "base" if position == 0 else f"compared #{position}",
                "notebook": i["notebook"], "started (UTC)": f"{i['started_at']:%Y-%m-%d %H:%M}", "status": i["status"],
                "host": f"{i['hostname']}: {i['cpu_model']} ({i['cpu_cores']} cores), kernel {i['kernel']}",
                "host class": host_label(i),
                "benchlib": f"{i['benchlib_version']} ({str(i['git_sha'])[:10]}{'+' if i['git_dirty'] else ''})",
                "parameters differing from the base": "none" if position == 0 or not differs else
                ", ".join(f"{k}={json.dumps(v)}" for k, v in differs.items()),
            })
        return pd.DataFrame(rows).style.hide(axis="index").set_properties(**{"text-align": "left"})

    def versions_table(self):
        """Server versions per engine and run: what "other versions" means in this comparison."""
        frames = [r.instances.drop_duplicates("engine").assign(run=r.run_id) for r in self.reports]
        inst = pd.concat(frames, ignore_index=True)
        table = inst.pivot_table(index="engine", columns="run", values="server_version", aggfunc="first")
        table = table.reindex(columns=[r for r in self.run_ids if r in table.columns])
        table.index = [engine_title(e) for e in table.index]
        return table

    def _cells(self) -> pd.DataFrame:
        """Compared cells in catalog engine order and the base run's phase order."""
        c = self.compared.copy()
        c["row"] = [self._row_name(e, lab) for e, lab in zip(c["key"], c["labels"])]
        engines = {e: i for i, e in enumerate(engine_order(c["key"]))}
        phases = {p: i for i, p in enumerate(dict.fromkeys(self.base.measurements["phase"]))}
        c["_order"] = [(engines[e], phases.get(p, len(phases))) for e, p in zip(c["key"], c["phase"])]
        return c.sort_values("_order", kind="stable").drop(columns="_order")

    @staticmethod
    def _row_name(key: str, labels) -> str:
        variant = "" if labels in (None, "{}") else f" {labels}"
        return f"{engine_title(key)}{variant}"

    def ratio_table(self):
        """Compared run / base run per engine (rows) and phase (columns), one block of columns per
        compared run, with the geometric mean per column; cells judged worse are red (dearer),
        better green (cheaper), same grey."""
        c = self._cells()
        if c.empty:
            return pd.DataFrame({"": ["no engine and phase measured in both runs"]})
        multi = len(self.run_ids) > 2
        c["column"] = [f"{p} (#{self.run_ids.index(r)})" if multi else p for p, r in zip(c["phase"], c["run_id"])]
        values = c.pivot_table(index="row", columns="column", values="ratio", sort=False)
        geo = pd.DataFrame([{col: results.geometric_mean(values[col]) for col in values.columns}],
                           index=["geometric mean"])
        table = pd.concat([values, geo])

        def colour(frame: pd.DataFrame) -> pd.DataFrame:
            styles = pd.DataFrame("", index=frame.index, columns=frame.columns)
            for cell in c.itertuples():  # from the cells themselves: untested ones (None) stay uncoloured
                if cell.flagged:
                    styles.at[cell.row, cell.column] = _SLOWER if cell.ratio > 1 else _FASTER
                elif cell.verdict == Verdict.SAME.value:
                    styles.at[cell.row, cell.column] = _MINOR
            return styles

        return table.style.format("{:.3f}", na_rep="n/a").apply(colour, axis=None)

    def detail_table(self):
        """Every compared cell: both means with their 95% CIs, the ratio with its CI, Welch's t
        and degrees of freedom, and the verdict."""
        c = self._cells()
        unit = self.unit

        def verdict(row) -> str:
            words = VERDICT_WORDS[Verdict(row.verdict)]
            return f"{'dearer' if row.ratio > 1 else 'cheaper'}, {words}" if row.flagged else words

        table = pd.DataFrame({
            "engine": c["row"], "phase": c["phase"], "run": c["run_id"],
            f"base ({unit})": [fmt_ci(m, h) for m, h in zip(c["base_mean"], c["base_ci95"])],
            f"compared ({unit})": [fmt_ci(m, h) for m, h in zip(c["mean"], c["ci95"])],
            "ratio": [fmt_ratio_ci(r, lo, hi) for r, lo, hi in zip(c["ratio"], c["ratio_low"], c["ratio_high"])],
            "Welch t": [fmt(t) for t in c["welch_t"]], "dof": [fmt(d, digits=2) for d in c["welch_dof"]],
            "n (base, compared)": [f"{a}, {b}" for a, b in zip(c["base_n"], c["n"])],
            "verdict": [verdict(r) for r in c.itertuples()],
        })
        for name, title in THROUGHPUT_TITLES.items():
            if c[f"{name}_ratio"].notna().any():
                table[f"{title}: base → compared (ratio)"] = [
                    "n/a" if r != r else f"{fmt(b)} → {fmt(m)} ({fmt_ci(r, h)}x{', flagged' if f else ''})"
                    for b, m, r, h, f in zip(c[f"base_{name}"], c[name], c[f"{name}_ratio"],
                                             c[f"{name}_ratio_ci95"], c[f"{name}_flagged"])]
        return table.style.hide(axis="index")

    # -- figures -----------------------------------------------------------------------------------
    def figures(self):
        """Per compared run: the ratio per phase and engine with its 95% CI; 1 is no change."""
        out = []
        for run_id in self.run_ids[1:]:
            df = self.compared[self.compared["run_id"] == run_id].assign(engine=lambda d: d["key"])
            df = df[df["labels"].isin([None, "{}"])] if df["labels"].nunique() > 1 else df
            if df.empty:
                continue
            fig = bars_by_phase(df, "ratio", error="ratio_ci95", unit=f"ratio of {self.metric}",
                                name=f"compare-{run_id}",
                                title=f"{run_id} / {self.run_ids[0]}: engine cost per phase (error bars: 95% CI)")
            fig.add_hline(y=1.0, line_dash="dot", line_color="#555")
            out.append(fig)
        return out

    # -- narrative ---------------------------------------------------------------------------------
    def findings(self) -> str:
        c = self._cells()
        if c.empty:
            return "- No engine and phase was measured in both runs: nothing to compare."
        tested = c[c["beyond_noise"].notna()]
        flagged = c[c["flagged"]]
        minor = c[c["verdict"] == Verdict.SAME.value]
        lines = [f"{len(c)} engine-phase cells compared; {len(tested)} could be tested (both runs with ≥ 2 "
                 f"repetitions); **{len(flagged)}** changed by more than {self.threshold:.0%} "
                 f"({VERDICT_WORDS[Verdict.WORSE]}), {len(minor)} by less ({VERDICT_WORDS[Verdict.SAME]})."]
        for row in flagged.reindex(flagged["ratio"].sub(1).abs().sort_values(ascending=False).index).itertuples():
            lines.append(f"{row.row}, {row.phase}: {row.ratio:.2f}x the base "
                         f"({fmt_ci(row.base_mean, row.base_ci95)} → {fmt_ci(row.mean, row.ci95)} {self.unit}; "
                         f"Welch t = {row.welch_t:.2f}, {row.welch_dof:.1f} dof)")
        for name, title in THROUGHPUT_TITLES.items():
            moved = c[c[f"{name}_flagged"] == True]  # noqa: E712 (NaN where the windows had no such reading)
            for row in moved.itertuples():
                lines.append(f"{row.row}, {row.phase}: {title} {getattr(row, name + '_ratio'):.2f}x the base "
                             f"({fmt(getattr(row, 'base_' + name))} → {fmt(getattr(row, name))}), "
                             f"{getattr(row, name + '_verdict')}: {VERDICT_WORDS[Verdict(getattr(row, name + '_verdict'))]}.")
        for run_id in self.run_ids[1:]:
            geo = results.geometric_mean(c[c["run_id"] == run_id]["ratio"])
            lines.append(f"Geometric mean of all ratios for {run_id}: {geo:.3f}.")
        if self._is_rerun():
            quiet = len(tested) - len(flagged) - len(minor)
            subset = set(self.reports[1].info["parameters"].get("engines") or []) < \
                set(self.reports[0].info["parameters"].get("engines") or [])
            lines.append(f"This is a rerun with identical parameters on the same host"
                         + (" (of some of the base run's engines)" if subset else "")
                         + ": every flagged cell is run-to-"
                         f"run variation the per-run CIs did not capture (drift, first-run effects, background "
                         f"work); {quiet} of {len(tested)} tested cells stayed within noise.")
        return "\n".join(f"- {line}" for line in lines)

    def _is_rerun(self) -> bool:
        """Same parameters, host, benchlib code and server builds: only time differs. The rerun may
        take some of the base run's engines (notebook 06's rerun_engines), each on the same build."""
        if len(self.reports) != 2:
            return False
        base, rerun = self.reports
        return differ_by_time_only(base.info, base.instances, rerun.info, rerun.instances)

    def caveats(self) -> str:
        lines = [f"**Metric:** {self.base.metric_explanation}, per operation ({self.unit}): ratios are compared run "
                 "/ base run of the engine's phase window divided by the operations it held (the settle window is "
                 "not included). A fixed-duration window of a saturated engine costs cores x seconds whatever its "
                 "throughput, so per window a real change would read as 1.0.",
                 "**Test:** Welch's unequal-variances t test on the repetitions of each run, two-sided at 5%; with 2–3 "
                 "repetitions per run it only detects large changes, and untested cells (1 repetition) say so.",
                 f"**Highlight:** red (worse) or green (better) by the one verdict rule (findings.judge: Welch's "
                 f"test, then a change larger than {self.threshold:.0%}, seed 003's rule for its spreadsheets); grey: "
                 f"{VERDICT_WORDS[Verdict.SAME]}."]
        hosts = {(r.info["hostname"], r.info["cpu_model"]) for r in self.reports}
        fingerprints = {known(r.info.get("host_fingerprint")) for r in self.reports} - {None}
        if len(fingerprints) > 1:
            lines.append(f"**Unlike hosts:** the runs come from {len(fingerprints)} host fingerprints (CPU model, cores, "
                         "memory, kernel, cgroup layout, PMU; the runs table's host class column): absolute costs "
                         "depend on them, so these ratios mix the engine change with the host change.")
        elif len(hosts) > 1:
            lines.append("**Different hosts:** absolute CPU seconds depend on the CPU; ratios between hosts mix the "
                         "engine change with the hardware change." if not fingerprints else
                         "**Different hosts, one fingerprint:** the runs ran on several hosts of identical hardware, "
                         "kernel and cgroup layout (like with like).")
        if self.match == "product":
            lines.append("**Pairing:** engines are paired by product across versions (postgres@15 in one run with "
                         "postgres@17 in another).")
        missing = set(self.comparison["key"]) if not self.comparison.empty else set()
        for report in self.reports[1:]:
            only = {results.product_key(e) if self.match == "product" else e for e in report.engines} - missing
            if only:
                lines.append(f"Measured only in {report.run_id}: {', '.join(sorted(only))} (no base to compare with).")
        return "\n".join(f"- {line}" for line in lines)
