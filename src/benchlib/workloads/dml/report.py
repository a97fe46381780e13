"""The DML notebook's tables and figures, on top of the shared report layer."""
from __future__ import annotations

import pandas as pd

from ... import results
from ...plots import bars_by_phase, engine_title
from ...report import RunReport, fmt, fmt_ci
from .dialects import NOTES
from .workload import PHASES


class DmlReport(RunReport):
    def __init__(self, run_id: str, store=None):
        super().__init__(run_id, store)
        costs = results.phase_costs(self.measurements, self.metric)
        self.summary = results.summarize(costs, by=("engine", "phase"))
        task_clock = results.summarize(results.phase_costs(self.measurements, "task_clock"), by=("engine", "phase"))
        user = results.summarize(results.phase_costs(self.measurements, "cpu_user_time"), by=("engine", "phase"))
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
        numeric = [c for c in out.columns[2:-1] if c != "CV"]
        return (out.style.format("{:.4g}", na_rep="n/a", subset=numeric)
                .format("{:.1%}", na_rep="n/a", subset=["CV"]).hide(axis="index"))

    def reference_comparison(self, base_engine: str = "postgres") -> pd.DataFrame:
        """Cost relative to PostgreSQL per phase: this run's engines, then seed 000's eight
        engines as published (instructions:u there; this run's cost metric here)."""
        return self.ratio_comparison(self.summary, "value", results.reference(), "instructions_gi",
                                     base_engine=base_engine, columns=[p for p in PHASES[1:]],
                                     reference_name="seed 000")

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
    def caveats(self, extra=()) -> str:
        notes = [f"**{engine_title(k)}:** {NOTES[k]}" for k in self.engines if k in NOTES]
        rows = self.param("rows")
        notes.append(f"Rows: {rows:,}; the article used 2,000,000 on an 8-vCPU Xeon host, so absolute figures "
                     "differ; compare ratios.")
        return super().caveats([*notes, *extra])
