"""The DML notebook's tables and figures, on top of the shared report layer."""
from __future__ import annotations

import math

import pandas as pd

from ... import results
from ...plots import bars_by_phase, engine_title
from ...report import RunReport, fmt, fmt_ci, fmt_ratio_ci
from ...engines import get_engine
from ...errors import UnknownEngineError
from .dialects import NOTES, key_note
from .workload import PHASES


class DmlReport(RunReport):
    def __init__(self, run_id: str, store=None):
        super().__init__(run_id, store)
        costs = results.phase_costs(self.measurements, self.metric)
        self.summary = results.summarize(costs, by=("engine", "phase"))
        # The same costs with each repetition scaled by the host's speed then (results.normalised):
        # offered beside the raw figure, never instead of it.
        self.normalised = results.summarize(results.normalised(costs, self.measurements), by=("engine", "phase"))
        task_clock = results.summarize(results.phase_costs(self.measurements, "task_clock"), by=("engine", "phase"))
        user = results.summarize(results.phase_costs(self.measurements, "cpu_user_time"), by=("engine", "phase"))
        self.user_summary = user
        self.maintenance = results.summarize(results.phase_costs(self.measurements, "maintenance_cpu_time"),
                                             by=("engine", "phase"))
        client = results.summarize(results.phase_costs(self._client_rows(), "cpu_time"), by=("engine", "phase")) \
            if (self.measurements["scope"] == "client").any() else None
        keys = ["engine", "phase"]
        self.summary = self.summary.merge(task_clock[keys + ["value"]].rename(columns={"value": "task_clock_s"}),
                                          on=keys, how="left")
        self.summary = self.summary.merge(user[keys + ["value"]].rename(columns={"value": "user_s"}), on=keys,
                                          how="left")
        if client is not None:
            self.summary = self.summary.merge(client[keys + ["value"]].rename(columns={"value": "client_s"}),
                                              on=keys, how="left")
        else:
            self.summary["client_s"] = float("nan")
        order = {(e, p): i for i, (e, p) in enumerate((e, p) for e in self.engines for p in PHASES)}
        self.summary = (self.summary.assign(_pos=[order.get(k, len(order)) for k in
                                                  zip(self.summary["engine"], self.summary["phase"])])
                        .sort_values("_pos").drop(columns="_pos").reset_index(drop=True))
        # Instructions are shown in billions (Gi), as in seed 000; CPU time in seconds.
        counted = self.metric == "instructions_user"
        self.scale, self.unit, self.unit_label = (1e9, "Gi", "billion instructions (Gi)") if counted else \
            (1.0, "s", "CPU seconds")

    def _client_rows(self) -> pd.DataFrame:
        # The client's rows read as the engine's so the same arithmetic applies (baseline included).
        m = self.measurements
        return m[m["scope"] == "client"].assign(scope="server")

    # -- tables ------------------------------------------------------------------------------------
    def article_table(self):
        """Seed 000's summary layout: per engine and phase, cost ± 95% CI / wall seconds."""
        s = self.summary
        cells = s.assign(cell=[f"{fmt_ci(v / self.scale, ci / self.scale, self.unit)} / {fmt(w, 's')}"
                               for v, ci, w in zip(s["value"], s["value_ci95"], s["wall_s"])])
        table = cells.pivot(index="engine", columns="phase", values="cell")
        table = table.reindex(columns=[p for p in PHASES if p in table.columns], index=self.engines)
        table.index = pd.Index([engine_title(e) for e in table.index], name="engine")
        return table

    def detail_table(self):
        """Mean per engine and phase with CI, CV, user CPU, client CPU, settle window and
        baseline-subtracted figures."""
        s, scale, unit = self.summary, self.scale, self.unit
        out = pd.DataFrame({
            "engine": [engine_title(e) for e in s["engine"]], "phase": s["phase"],
            f"phase ({unit})": s["value"] / scale, "± 95% CI": s["value_ci95"] / scale, "CV": s["value_cv"],
            "user CPU (s)": s["user_s"], "client CPU (s)": s["client_s"],
            f"settle ({unit})": s["settle_value"] / scale,
            f"phase+settle − idle ({unit})": s["net_with_settle"] / scale,
            "wall (s)": s["wall_s"], "settle wall (s)": s["settle_wall_s"],
            "perf task-clock (s)": s["task_clock_s"], "n": s["n"],
        })
        if not self.normalised.empty:
            norm = self.normalised.set_index(["engine", "phase"])
            keys = list(zip(s["engine"], s["phase"]))
            out.insert(5, f"host-normalised ({unit})", [norm["value"].get(k, float("nan")) / scale for k in keys])
            out.insert(6, "± 95% CI (normalised)", [norm["value_ci95"].get(k, float("nan")) / scale for k in keys])
        numeric = [c for c in out.columns[2:-1] if c != "CV"]
        return (out.style.format("{:.4g}", na_rep="n/a", subset=numeric)
                .format("{:.1%}", na_rep="n/a", subset=["CV"]).hide(axis="index"))

    def reference_comparison(self, base_engine: str = "postgres") -> pd.DataFrame:
        """Cost relative to PostgreSQL per phase: this run's engines, then seed 000's eight
        engines as published (instructions:u there; this run's cost metric here)."""
        return self.ratio_comparison(self.summary, "value", results.reference(), "instructions_gi",
                                     base_engine=base_engine, columns=[p for p in PHASES[1:]],
                                     reference_name="seed 000")

    def engine_contrasts(self, base_engine: str | None = None, threshold: float = 0.05) -> pd.DataFrame:
        """Each engine against `base_engine` (the first PostgreSQL of the run by default) per
        phase: the ratio of their costs with its 95% CI and Welch's test on the repetitions."""
        base_engine = base_engine or self._first_of_family("postgres")
        rows = []
        if base_engine is None:
            return pd.DataFrame(rows)
        s = self.summary.set_index(["engine", "phase"])
        for (engine, phase), row in s.iterrows():
            if engine == base_engine or phase == PHASES[0] or (base_engine, phase) not in s.index:
                continue
            rows.append({"engine": engine, "base_engine": base_engine, "phase": phase,
                         **results.contrast(s.loc[(base_engine, phase)], row, "value", threshold)})
        return pd.DataFrame(rows)

    def contrast_table(self, base_engine: str | None = None):
        c = self.engine_contrasts(base_engine)
        if c.empty:
            return pd.DataFrame({"": ["no PostgreSQL in this run to compare with"]})

        def verdict(r) -> str:
            if r.beyond_noise is None:
                return "untested (1 repetition)"
            return "beyond noise" if r.beyond_noise else "within noise"

        cells = c.assign(cell=[f"{fmt_ratio_ci(r.ratio, r.ratio_low, r.ratio_high, 'x')}, {verdict(r)}"
                                for r in c.itertuples()])
        table = cells.pivot(index="engine", columns="phase", values="cell")
        table = table.reindex(columns=[p for p in PHASES if p in table.columns],
                              index=[e for e in self.engines if e in table.index])
        table.index = pd.Index([engine_title(e) for e in table.index],
                               name=f"engine / {engine_title(c['base_engine'].iloc[0])}")
        return table

    def _first_of_family(self, family: str) -> str | None:
        return next((e for e in self.engines if _family(e) == family), None)

    # -- why this host disagrees with the article ----------------------------------------------------
    def disagreement(self) -> pd.DataFrame:
        """PostgreSQL / MySQL-family cost per DML phase: as published, then this run under each
        hypothesis the run can test on its own data (which MySQL-family server, user-mode CPU only,
        PostgreSQL without the VACUUM seed 000 counted in each phase, deferred work included, idle
        cost subtracted). Long format: hypothesis, pair, phase, ratio, ratio_ci95."""
        pg = self._first_of_family("postgres")
        others = [e for e in self.engines if _family(e) == "mysql"]
        ref = results.reference()
        ref = ref.set_index(["engine", "phase"])["instructions_gi"]
        rows = []
        phases = PHASES[1:]
        for phase in phases:
            if ("postgres", phase) in ref.index and ("mysql", phase) in ref.index:
                rows.append(("seed 000 as published: instructions:u", "PostgreSQL 16 / MySQL 8.4", phase,
                             ref[("postgres", phase)] / ref[("mysql", phase)], float("nan")))
        if pg is None or not others:
            return pd.DataFrame(rows, columns=["hypothesis", "pair", "phase", "ratio", "ratio_ci95"])
        total = self.summary.set_index(["engine", "phase"])
        user = self.user_summary.set_index(["engine", "phase"])
        maint = self.maintenance.set_index(["engine", "phase"])
        for other in others:
            pair = f"{engine_title(pg)} / {engine_title(other)}"
            for phase in phases:
                if (pg, phase) not in total.index or (other, phase) not in total.index:
                    continue
                def add(hypothesis: str, column: str, frame=total, minus=None) -> None:
                    x, y = frame.loc[(pg, phase)], frame.loc[(other, phase)]
                    num = x[column] - (minus if minus is not None else 0.0)
                    ratio = num / y[column] if y[column] else float("nan")
                    rel = ((x[f"{column}_ci95"] / num) ** 2 + (y[f"{column}_ci95"] / y[column]) ** 2) ** 0.5 \
                        if f"{column}_ci95" in x and num and y[column] else float("nan")
                    rows.append((hypothesis, pair, phase, ratio, abs(ratio * rel)))

                add("this run: total CPU (user + system)" if self.metric == "cpu_time" else
                    f"this run: {self.metric_explanation.split(' (')[0]}", "value")
                add("user-mode CPU only (seed 000 counted user-space instructions)", "value", user)
                vacuum = maint.loc[(pg, phase), "value"] if (pg, phase) in maint.index else float("nan")
                if vacuum == vacuum and self.metric == "cpu_time":  # the VACUUM reading is in CPU seconds
                    add("PostgreSQL without the VACUUM inside the phase", "value", minus=vacuum)
                add("deferred work included (phase + settle)", "with_settle")
                add("idle cost subtracted (phase + settle − idle)", "net_with_settle")
        return pd.DataFrame(rows, columns=["hypothesis", "pair", "phase", "ratio", "ratio_ci95"])

    def disagreement_table(self):
        d = self.disagreement()
        if d.empty:
            return pd.DataFrame({"": ["seed 000's reference is missing"]})
        d = d.assign(cell=[fmt_ci(r, h) if h == h else fmt(r) for r, h in zip(d["ratio"], d["ratio_ci95"])])
        table = d.pivot_table(index=["pair", "hypothesis"], columns="phase", values="cell", aggfunc="first", sort=False)
        # No reading for that phase (PostgreSQL runs no VACUUM after its select): not applicable.
        return table.reindex(columns=[p for p in PHASES[1:] if p in table.columns]).fillna("–")

    def disagreement_heading(self) -> str:
        """The section's heading, from the numbers: the article's ratios may well lie within this
        run's CIs, and a fixed "why this host disagrees" would then be false."""
        d = self.disagreement()
        published = d[d["hypothesis"].str.startswith("seed 000")].set_index("phase")["ratio"]
        ours = d[d["hypothesis"].str.startswith("this run") & d["phase"].isin(published.index)]
        ours = ours[ours["ratio"] == ours["ratio"]]
        if ours.empty:
            return "### The article's ratios (this run measured no pair to test them against)"
        within = sum(abs(r.ratio - published[r.phase]) <= r.ratio_ci95 for r in ours.itertuples())
        if within == len(ours):
            return f"### This host agrees with the article: all {len(ours)} ratios within their 95% CI"
        if within == 0:
            return f"### Why this host disagrees with the article on all {len(ours)} ratios"
        return (f"### Where this host disagrees with the article: {len(ours) - within} of {len(ours)} ratios beyond "
                "their 95% CI")

    def disagreement_findings(self) -> str:
        """Per pair and phase: how far this run's ratio is from the article's, and which
        hypothesis moves it furthest toward it; what remains is said to be unexplained."""
        d = self.disagreement()
        published = d[d["hypothesis"].str.startswith("seed 000")].set_index("phase")["ratio"]
        lines = []
        for (pair, phase), group in d[~d["hypothesis"].str.startswith("seed 000")].groupby(["pair", "phase"],
                                                                                           sort=False):
            if phase not in published.index:
                continue
            target = published[phase]
            base = group[group["hypothesis"].str.startswith("this run")]["ratio"]
            if base.empty or not base.iloc[0] == base.iloc[0]:
                continue
            ours = base.iloc[0]
            ours_ci = group[group["hypothesis"].str.startswith("this run")]["ratio_ci95"].iloc[0]
            distance = lambda r: abs(_log(r) - _log(target))  # noqa: E731 (ratios compare on a log scale)
            best = group.loc[group["ratio"].map(distance).idxmin()]
            moved = distance(ours) - distance(best["ratio"])
            line = (f"**{pair}, {phase}:** article {target:.2f}, this run {fmt_ci(ours, ours_ci)} "
                    f"({ours / target:.1f}x the article's ratio).")
            if abs(ours - target) <= ours_ci:
                line += " The article's ratio lies within this run's 95% CI: no disagreement beyond noise."
            elif best["hypothesis"].startswith("this run") or moved < 0.05:
                line += " None of the hypotheses tested here moves it toward the article's: unexplained."
            else:
                line += (f" Closest under *{best['hypothesis']}*: {best['ratio']:.2f}, "
                         f"{best['ratio'] / target:.1f}x the article's; what remains is not explained by what this "
                         f"run can test.")
            lines.append(line)
        lines.append("Not testable within one run, and left to runs with other parameters compared in notebook 06: "
                     "WAL and fsync settings (`engine_config`, e.g. `{'postgres': {'synchronous_commit': 'off'}}`), "
                     "the row generator, and hardware counters (this host has no PMU: `instructions:u` cannot be "
                     "counted, so CPU time stands in for instructions).")
        return "\n".join(f"- {line}" for line in lines)

    # -- figures ----------------------------------------------------------------------------------
    def cost_figure(self, value: str = "value", title: str | None = None):
        ci = f"{value}_ci95"
        df = self.summary.assign(v=self.summary[value] / self.scale,
                                 err=(self.summary[ci] if ci in self.summary else 0) / self.scale)
        df = df[df["phase"] != PHASES[0]] if value.startswith("net") else df
        label = {"value": "phase", "with_settle": "phase + settle", "net_with_settle": "phase + settle − idle"}[value]
        what = "instructions" if self.scale > 1 else "CPU"
        return bars_by_phase(df, "v", error="err", unit=self.unit_label, name=f"dml-{value.replace('_', '-')}",
                             phases=PHASES, title=title or f"Engine {what} per phase ({label}; error bars: 95% CI)")

    def reference_figure(self):
        return bars_by_phase(results.reference(), "instructions_gi", unit="billion instructions (Gi)", log_y=True,
                             phases=PHASES, name="seed000-reference",
                             title="Seed 000 as published: instructions:u per phase (2M rows, log scale)")

    # -- narrative -------------------------------------------------------------------------------------
    def normalisation_note(self) -> str:
        """Whether scaling each repetition by the host's speed tightens the costly phases' CIs."""
        if self.normalised.empty:
            return ""
        keys = ["engine", "phase"]
        both = self.summary.merge(self.normalised, on=keys, suffixes=("", "_norm"))
        both = both[(both["phase"] != PHASES[0]) & (both["n"] > 1) & (both["value"] > 0)]
        if both.empty:
            return ""
        raw = both["value_ci95"] / both["value"]
        norm = both["value_ci95_norm"] / both["value_norm"]
        narrower = int((norm < raw).sum())
        return (f"**Host-normalised costs** (each repetition scaled by the run's median calibration loop time over "
                f"that repetition's): narrower CI on {narrower} of {len(both)} engine-phases; median relative CI "
                f"±{raw.median():.1%} raw against ±{norm.median():.1%} normalised. "
                + ("Host drift explains part of the spread: the normalised column is offered beside the raw one, "
                   "which stays the published figure." if norm.median() < raw.median() else
                   "Host drift does not explain the spread here: the raw figures stand as they are."))

    def caveats(self, extra=()) -> str:
        notes = [f"**{engine_title(k)}:** {NOTES[k]}" for k in self.engines if k in NOTES]
        notes.append(self.normalisation_note())
        notes.append(key_note(self.engines, self.param("pk_kind", "uuid")))
        rows = self.param("rows")
        notes.append(f"Rows: {rows:,}; the article used 2,000,000 on an 8-vCPU Xeon host, so absolute figures "
                     "differ; compare ratios.")
        return super().caveats([*notes, *extra])


def _family(key: str) -> str | None:
    try:
        return get_engine(key).family
    except UnknownEngineError:  # a run stored by a benchlib that had this engine
        return None


def _log(value: float) -> float:
    return math.log(value) if value and value > 0 else float("nan")
