"""The DML notebook's report: each engine's cost per phase relative to PostgreSQL as findings
(benchlib.data.findings), seed 000's ratios beside them, and the tables and figures under them."""
from __future__ import annotations

from functools import cached_property

import pandas as pd

from ...data import findings as F
from ...data import results
from ...engines import get_engine
from ...core.errors import UnknownEngineError
from ...run.driver import PRECISION_FLOOR_SECONDS
from ...present.plots import bars_by_phase, ratio_chart, subsystem_bars
from ...engines import engine_title
from ...present.report import RunReport, fmt, fmt_ci
from .dialects import NOTES, NOTE_PHASES, key_note
from .workload import PHASES, WORKLOAD

DML_PHASES = PHASES[1:]  # the idle baseline (sleep) is subtracted, not compared
BASE_PRODUCT = "postgres"  # seed 000 reads every engine against PostgreSQL
SEED_ROWS = 2_000_000
NO_SEED_LINE = "Seed 000 ran {seed}, not {engines}: no ratio to compare."
SEED_PAIR = "mysql"  # the pair seed 000's numbers disagree on: PostgreSQL against MySQL (family and product)
# Where a run has more engines than the answer has lines, the rest are in the findings table.
PHRASES = F.Phrases(line_by="engine", line="{subject} / {base}: {items}", unit_scale={"instructions": (1e9, "Gi")})
# Every ratio of this report is an engine's cost over PostgreSQL's: the axis and captions say which way is cheaper.
RATIO_AXIS = "{what} ÷ {base}'s (< 1: cheaper than {base})"
COUNTERS = {"valgrind": "valgrind's callgrind, threads serialised", "perf": "perf", "cgroup": "CPU accounting"}
SETTLE_AT_CAP = "settle windows: {hit} of {total} ran to the {cap:g} s cap"
# The base's label where it is set beside an embedded engine: its engine and its Python driver, the
# scope an embedded engine's one process holds.
WITH_DRIVER = "{base} engine + driver"
CHART_LINE = "{engine} (÷ {base})"
HYPOTHESES_HEADING = "Why the ratios differ from the seed's"
EMBEDDED_LABEL = "{engine} + driver"  # an embedded engine's cost holds its Python driver (one process)
HYPOTHESES_CAPTION = "{other} / {base} per phase, read each way this run can, beside seed 000's ratio ({seeds})"
USER_READING = "user-mode CPU only"
# PostgreSQL's phase less its VACUUM: the seed ran VACUUM too, so this reading names VACUUM's fixed
# cost at a scale under the seed's, not work the seed left out; at the seed's scale it tests nothing.
VACUUM_READING = "PostgreSQL less VACUUM's fixed cost at {rows:,} rows"
# Where the hypotheses grid has no user-CPU row: the host counts user CPU in ticks, so a phase
# under the precision floor does not resolve it.
USER_POINTER = "the hypotheses table's user-CPU row is the one to set beside it"
USER_UNRESOLVED = "user CPU alone, counted in the host's ticks, is not resolved under {floor:g} s"
# A row with some phases only (hostile read 46a, 01 default #3: the pointer sent readers to "–" cells).
USER_POINTER_PART = USER_POINTER + " for {shown}; for {missing}, " + USER_UNRESOLVED + " on a side"
# A phase whose settle window holds more than this share of its own cost left that much work behind
# (InnoDB's purge after a delete), which the phase's ratio does not count: its row says the ratio with it.
SETTLE_HEAVY = 0.5
SETTLE_NOTE = ("{heavy}'s {phase} settle window holds over {share:.0%} of its phase's cost (work the phase left "
               "behind, counted after it): with its settle window, {engine} / {base} {phase} is {ratio}x.")


class DmlReport(RunReport):
    workload = WORKLOAD
    seed_set = "article"
    phrases = PHRASES

    def __init__(self, run_id: str, store=None):
        super().__init__(run_id, store)
        costs = results.phase_costs(self.measurements, self.metric)
        keys = ["engine", "phase"]
        self.summary = results.summarize(costs, by=keys)
        # The same costs with each repetition scaled by the host's speed then (results.normalised):
        # offered beside the raw figure, never instead of it; none for a count, which the host's speed
        # does not move (`host_moves_cost`).
        self.normalised = results.summarize(results.normalised(costs if self.host_moves_cost else costs.iloc[0:0],
                                                               self.measurements), by=keys)
        self.user_summary = results.summarize(results.phase_costs(self.measurements, "cpu_user_time"), by=keys)
        self.maintenance = results.summarize(results.phase_costs(self.measurements, "maintenance_cpu_time"), by=keys)
        extra = {"task_clock_s": results.summarize(results.phase_costs(self.measurements, "task_clock"), by=keys),
                 "user_s": self.user_summary}
        if (self.measurements["scope"] == "client").any():
            # The client's rows read as the engine's so the same arithmetic applies (baseline included).
            client = self.measurements[self.measurements["scope"] == "client"].assign(scope="server")
            extra["client_s"] = results.summarize(results.phase_costs(client, "cpu_time"), by=keys)
        for name, frame in extra.items():
            self.summary = self.summary.merge(frame[keys + ["value"]].rename(columns={"value": name}), on=keys,
                                              how="left")
        if "client_s" not in self.summary:
            self.summary["client_s"] = float("nan")
        order = {(e, p): i for i, (e, p) in enumerate((e, p) for e in self.engines for p in PHASES)}
        self.summary = (self.summary.assign(_pos=[order.get(k, len(order)) for k in
                                                  zip(self.summary["engine"], self.summary["phase"])])
                        .sort_values("_pos").drop(columns="_pos").reset_index(drop=True))
        # Instructions are shown in billions (Gi), as in seed 000; CPU time in seconds.
        self.scale, self.unit = PHRASES.unit_scale.get(self.metric_unit, (1.0, self.metric_unit))
        self.base_engine = next((e for e in self.engines if results.product_key(e) == BASE_PRODUCT), None)

    # -- findings ------------------------------------------------------------------------------------
    def findings(self) -> pd.DataFrame:
        return self._findings

    @cached_property
    def _findings(self) -> pd.DataFrame:
        """Each engine against PostgreSQL per DML phase, with seed 000's ratio where the seed ran
        that engine; the answer states the first `answer_limit` engines."""
        base = self.base_engine
        if base is None:
            return F.table([])
        seed = seed_ratios()
        others = [e for e in self.engines if e != base]
        with_driver = self._with_driver()
        frames = []
        for engine in others:
            # An embedded engine's cost is its engine and its driver in one process: the base's is
            # set beside it with its driver too, so both sides hold the same scope.
            matched = _embedded(engine) and with_driver is not None
            base_side = with_driver if matched else self.summary
            pair = pd.concat([base_side[base_side["engine"] == base], self.summary[self.summary["engine"] == engine]],
                             ignore_index=True)
            found = F.compare(
                pair, base_engine=base, metric=self.metric, unit=self.metric_unit, steps=DML_PHASES,
                host_factor=self.host_factor(engine, base), floor=self._floor(),
                seed={(engine, p): seed.get((results.product_key(engine), p)) for p in DML_PHASES},
                caveats=lambda engine, phase: self._caveat_ids(engine, phase, seed))
            frames.append(found.assign(base_label=WITH_DRIVER.format(base=engine_title(base)) if matched else None))
        found = pd.concat([f for f in frames if not f.empty], ignore_index=True) if frames else F.table([])
        if found.empty:
            return F.table([])
        found["headline"] = found["engine"].isin(others[:self.answer_limit])
        # A ratio whose CI misses the seed's is either explained by a reading this run takes (the
        # hypotheses) or said to be unexplained: a mark beside the number, never a silent gap.
        missed = found["seed"].isin([a.value for a in F.SEED_MISSED])
        found.loc[missed, "caveats"] = [(*row.caveats, self._seed_explanation(row.engine, row.step))
                                        for row in found[missed].itertuples()]
        return found

    def seed_line(self, found: pd.DataFrame) -> str:
        """Where no engine of this run has a seed 000 figure, the seed line says which engines the seed
        ran instead (hostile read 44, 01 more-engines #2: the line was missing)."""
        line = super().seed_line(found)
        if line or found.empty:
            return line
        ran = sorted({e for e, _ in seed_ratios()} - {BASE_PRODUCT})
        missing = [e for e in dict.fromkeys(found["engine"]) if results.product_key(e) not in ran]
        # The seed's engines of the same family where it ran any (MongoDB beside FerretDB), else all of them.
        ran = [e for e in ran if _family(e) in {_family(m) for m in missing}] or ran
        return NO_SEED_LINE.format(seed=", ".join(engine_title(e) for e in ran),
                                   engines=", ".join(engine_title(e) for e in missing))

    def _floor(self) -> float | None:
        """The CPU floor of a window (findings.CPU_FLOOR_SECONDS) where the cost is CPU time; counted
        instructions have none."""
        return F.CPU_FLOOR_SECONDS if self.metric == "cpu_time" else None

    def _with_driver(self) -> pd.DataFrame | None:
        """Per engine and phase, the engine's cost plus its client's (the Python driver),
        repetition by repetition; None where no client was measured in the cost metric."""
        keys = ["instance_id", "repetition", "phase"]
        m = self.measurements
        # Counted under valgrind, the server alone is: its client has CPU rows, no instructions.
        client = m[(m["scope"] == "client") & (m["metric"] == self.metric)].assign(scope="server")
        driver = results.phase_costs(client, self.metric)[keys + ["value"]].dropna() if not client.empty else None
        if driver is None or driver.empty:
            return None
        both = results.phase_costs(self.measurements, self.metric).merge(
            driver.rename(columns={"value": "driver"}), on=keys)
        return results.summarize(both.assign(value=both["value"] + both["driver"]), columns=("value",),
                                 by=("engine", "phase"))

    def _seed_explanation(self, engine: str, phase: str) -> str:
        """The caveat id of what explains `engine`'s ratio missing seed 000's in `phase`: the first
        hypothesis reading that brings the seed inside its CI, else unexplained."""
        if results.product_key(engine) == SEED_PAIR or _family(engine) == SEED_PAIR:
            h = self.hypotheses
            if not h.empty:
                within = h[(h["step"] == phase) & h["seed"].isin([a.value for a in F.SEED_AGREES])
                           & (h["metric"] != "as measured")]
                if not within.empty:
                    return f"seed-read-as:{within['metric'].iloc[0]}"
        return f"seed-unexplained:{phase}"

    def _caveat_ids(self, engine: str, phase: str, seed: dict) -> list[str]:
        compared = (results.product_key(engine), phase) in seed
        ids = ["cpu-not-instructions"] if compared and self.metric != "instructions_user" else []
        if _embedded(engine):
            ids.append("embedded")
        if engine in NOTES and phase in NOTE_PHASES.get(engine, DML_PHASES):
            ids.append(f"note-{engine}")
        if phase == "insert" and self.param("pk_kind", "uuid") == "uuid":
            ids.append("keys")
        if (engine, phase) in self.settle_heavy:
            ids.append(f"settle:{engine}:{phase}")
        return ids

    @cached_property
    def settle_heavy(self) -> dict[tuple[str, str], F.Caveat]:
        """Per (engine, phase) compared against the base where either side's settle window holds over
        SETTLE_HEAVY of its phase's cost, the caveat giving the ratio with the settle windows; none
        where every settle window ran to its cap (a settle figure then holds idle noise) or for an
        embedded engine (no settle window; its base is set beside it with its driver)."""
        hit, total = self.settle_at_cap()
        base = self.base_engine
        if base is None or (total and hit == total):
            return {}
        s = self.summary.set_index(["engine", "phase"])
        heavy = lambda k: bool(s.loc[k, "settle_value"] > SETTLE_HEAVY * s.loc[k, "value"])  # noqa: E731
        notes = {}
        for engine, phase in s.index:
            if engine == base or _embedded(engine) or (base, phase) not in s.index or phase not in DML_PHASES:
                continue
            sides = [e for e in (engine, base) if heavy((e, phase))]
            ratio = s.loc[(engine, phase), "with_settle"] / s.loc[(base, phase), "with_settle"]
            if sides and ratio > 0:
                notes[(engine, phase)] = F.Caveat(f"settle:{engine}:{phase}", SETTLE_NOTE.format(
                    heavy=" and ".join(engine_title(e) for e in sides), phase=phase, share=SETTLE_HEAVY,
                    engine=engine_title(engine), base=engine_title(base), ratio=F.fmt_number(ratio)))
        return notes

    def caveat_notes(self) -> list[F.Caveat]:
        rows = self.param("rows")
        notes = [F.Caveat("cpu-not-instructions", f"Seed 000 counted user-space instructions (kernel time left out) "
                                                  f"at {SEED_ROWS:,} rows; this is user + kernel CPU at {rows:,} rows: "
                                                  f"{self._user_pointer()}."),
                 F.Caveat("embedded", "An embedded engine's cost includes its Python driver (one process), as does "
                                      "the base's beside it; it has no settle window."),
                 F.Caveat("keys", key_note(self.engines, self.param("pk_kind", "uuid")))]
        notes += [F.Caveat(f"note-{k}", NOTES[k]) for k in self.engines if k in NOTES]
        notes += list(self.settle_heavy.values())
        # Per phase: a footnote shared by rows of several phases did not say which ratio it meant
        # (hostile read 44, 01 default #1).
        notes += [F.Caveat(f"seed-unexplained:{p}", f"Seed 000's {p} ratio is outside this CI and no reading this run "
                                                    "takes (the hypotheses table) brings it inside: unexplained.")
                  for p in DML_PHASES]
        notes += [F.Caveat(f"seed-read-as:{reading}", f"Seed 000's ratio is inside this run's CI when read as "
                                                     f"'{reading}' (hypotheses table).")
                  for reading in dict.fromkeys(self.hypotheses["metric"]) if reading != "as measured"] \
            if not self.hypotheses.empty else []
        return notes

    def headline_figure(self):
        found = self.findings()
        if found.empty:
            return None
        what = F.METRIC_WORDS.get(self.metric, self.metric)
        found = found.assign(_o=found["step"].map({p: i for i, p in enumerate(DML_PHASES)})).sort_values(
            "_o", kind="stable")
        axis = RATIO_AXIS.format(what=what, base=engine_title(self.base_engine))
        # A row against the base with its driver (an embedded engine's) names that base on its line.
        label = lambda r: CHART_LINE.format(engine=engine_title(r["engine"]), base=r["base_label"]) \
            if isinstance(r.get("base_label"), str) else engine_title(r["engine"])  # noqa: E731
        return ratio_chart(found, y=label, series=lambda r: r["step"],
                           title=f"{what[0].upper()}{what[1:]} per phase ÷ {engine_title(self.base_engine)}'s "
                                 f"({COUNTERS[self.counter]})",
                           name="dml-ratios", axis_title=axis)

    @property
    def counter(self) -> str:
        """What counted the cost metric: valgrind, perf or the engine's CPU accounting (COUNTERS)."""
        return ("valgrind" if results.counted_by_valgrind(self.measurements, self.metric)
                else "perf" if self.metric == "instructions_user" else "cgroup")

    def settle_line(self) -> str:
        """How many settle windows ran to the cap, said once beside the settle figures (the
        hypotheses grid, else the appendix's table of every figure)."""
        hit, total = self.settle_at_cap()
        return SETTLE_AT_CAP.format(hit=hit, total=total, cap=self.param("max_settle_seconds", 60)) if total else ""

    def settle_at_cap(self) -> tuple[int, int]:
        """(windows, of all settle windows) that ran to the `max_settle_seconds` cap instead of
        ending on quiet: a settle figure holds whatever deferred work fell inside that cap."""
        m = results.engine_rows(self.measurements)
        walls = m[(m["window"] == "settle") & (m["metric"] == "wall_time")]["value"]
        return int((walls >= self.param("max_settle_seconds", 60)).sum()), len(walls)

    # -- why this run's ratios differ from the seed's ------------------------------------------------
    @cached_property
    def hypotheses(self) -> pd.DataFrame:
        """MySQL (else the run's first MySQL-family engine) against PostgreSQL per DML phase, the
        same way round as every ratio of the report, as findings rows whose metric names a reading
        this run can test against seed 000's ratio on its own data: the cost as measured,
        user-mode CPU only (the seed counted user-space instructions; a cell where either side's
        user CPU is under the precision floor is left out: tick-quantised, it is no reading),
        PostgreSQL less VACUUM's fixed cost (the seed ran VACUUM too, at a scale where that cost
        is spread thin: under the seed's rows only), deferred work included, idle cost subtracted."""
        pg = self.base_engine
        family = [e for e in self.engines if _family(e) == SEED_PAIR]
        mysqls = [e for e in family if results.product_key(e) == SEED_PAIR][:1] or family[:1]
        if pg is None or not mysqls:
            return F.table([])
        seed = seed_ratios()
        readings = [("as measured", self.summary, "value"), (USER_READING, self.user_summary, "value")]
        hit, total = self.settle_at_cap()
        # Every settle window at its cap: the detector never saw quiet, and a settle reading holds idle noise.
        if not (total and hit == total):
            readings += [("phase + settle", self.summary, "with_settle"),
                         ("phase + settle − idle", self.summary, "net_with_settle")]
        scale = self.param("rows", SEED_ROWS)
        # VACUUM's reading is CPU seconds.
        if self.metric == "cpu_time" and self.maintenance["value"].notna().any() and scale < SEED_ROWS:
            readings.insert(2, (VACUUM_READING.format(rows=scale), self._without_vacuum(), "value"))
        rows = []
        for other in mysqls:
            host = self.host_factor(other, pg)
            for label, frame, column in readings:
                s = frame.set_index(["engine", "phase"])
                for phase in DML_PHASES:
                    if (pg, phase) not in s.index or (other, phase) not in s.index or \
                            s.loc[[(pg, phase), (other, phase)], column].isna().any():  # a reading this run lacks
                        continue
                    if frame is self.user_summary and \
                            (s.loc[[(pg, phase), (other, phase)], column] < PRECISION_FLOOR_SECONDS).any():
                        continue  # user CPU is split off in ticks: under the floor it is quantisation
                    contrast = results.contrast(s.loc[(pg, phase)], s.loc[(other, phase)], column)
                    rows.append(F.finding(engine=other, base_engine=pg, step=phase, metric=label,
                                          unit=self.metric_unit if frame is not self.user_summary else "s",
                                          contrast=contrast, host_factor=host, floor=self._floor(),
                                          seed_ratio=seed.get((SEED_PAIR, phase))))
        return F.table(rows)

    def _user_pointer(self) -> str:
        """Where the user-CPU reading is to be read: its row of the hypotheses grid, or why it has none."""
        h = self.hypotheses
        shown = list(h.loc[h["metric"] == USER_READING, "step"].drop_duplicates()) if self.shows_hypotheses() else []
        if not shown:
            return USER_UNRESOLVED.format(floor=PRECISION_FLOOR_SECONDS)
        # The phases the grid reads another way and not in user CPU: the tick floor left them out.
        missing = [p for p in dict.fromkeys(h["step"]) if p not in shown]
        if not missing:
            return USER_POINTER
        return USER_POINTER_PART.format(shown=", ".join(shown), missing=", ".join(missing),
                                        floor=PRECISION_FLOOR_SECONDS)

    def _without_vacuum(self) -> pd.DataFrame:
        """Per engine and phase, the phase's cost less the VACUUM reading inside it, repetition by
        repetition (an engine without one keeps its cost)."""
        keys = ["instance_id", "repetition", "phase"]
        costs = results.phase_costs(self.measurements, self.metric)
        vacuum = results.phase_costs(self.measurements, "maintenance_cpu_time")[keys + ["value"]]
        both = costs.merge(vacuum.rename(columns={"value": "vacuum"}), on=keys, how="left")
        both["value"] = both["value"] - both["vacuum"].fillna(0.0)
        return results.summarize(both, columns=("value",), by=("engine", "phase"))

    def shows_hypotheses(self) -> bool:
        """Whether the hypotheses grid is drawn: not where every ratio in it says nothing
        (findings.all_wide: each CI over 10x wide, or at the floor)."""
        return not self.hypotheses.empty and not F.all_wide(self.hypotheses)

    def hypotheses_table(self):
        """The hypotheses as a grid (reading x phase) under its heading, each cell its findings
        row's ratio and how it stands against seed 000's; None where `shows_hypotheses` is not."""
        from IPython.display import HTML

        found = self.hypotheses
        if not self.shows_hypotheses():
            return None
        seed = seed_ratios()
        other, pg = found["engine"].iloc[0], found["base_engine"].iloc[0]
        settle = self.settle_line()
        seeds = ", ".join(f"{p} {seed[(SEED_PAIR, p)]:.2f}x" for p in DML_PHASES if (SEED_PAIR, p) in seed)
        grid = self.findings_grid(found, index="metric", columns="step",
                                  caption=HYPOTHESES_CAPTION.format(other=engine_title(other), base=engine_title(pg),
                                                                    seeds=seeds) + (f"; {settle}" if settle else ""))
        return HTML(f"<h3>{HYPOTHESES_HEADING}</h3>{grid.data}")

    # -- tables and figures ----------------------------------------------------------------------------
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

    def article_table(self):
        """Seed 000's summary layout: per engine and phase, cost ± 95% CI / wall seconds."""
        s = self.summary
        cells = s.assign(cell=[f"{fmt_ci(v / self.scale, ci / self.scale, self.unit)} / {fmt(w, 's')}"
                               for v, ci, w in zip(s["value"], s["value_ci95"], s["wall_s"])])
        table = cells.pivot(index="engine", columns="phase", values="cell")
        table = table.reindex(columns=[p for p in PHASES if p in table.columns], index=self.engines)
        table.index = pd.Index([engine_title(e) for e in table.index], name="engine")
        return table

    def cost_figure(self, value: str = "value"):
        ci = f"{value}_ci95"
        df = self.summary.assign(v=self.summary[value] / self.scale,
                                 err=(self.summary[ci] if ci in self.summary else 0) / self.scale)
        df = df[df["phase"] != PHASES[0]]  # the idle baseline: a sliver beside any phase, and subtracted in net
        label = {"value": "phase", "with_settle": "phase + settle", "net_with_settle": "phase + settle − idle"}[value]
        what = "instructions" if self.metric == "instructions_user" else "CPU"
        # A cost is not below zero: a CI wider than its bar is cut at 0, and the title says so.
        df = df.assign(err_minus=df["err"].clip(upper=df["v"].clip(lower=0)))
        cut = bool((df["err_minus"] < df["err"]).any())
        labels = {e: EMBEDDED_LABEL.format(engine=engine_title(e)) for e in self.engines if _embedded(e)}
        return bars_by_phase(df, "v", error="err", error_minus="err_minus", unit=f"{self.unit}",
                             name=f"dml-{value.replace('_', '-')}", phases=DML_PHASES, labels=labels,
                             title=f"Engine {what} per phase ({label}; error bars: 95% CI{', cut at 0' * cut})")

    def profile_figure(self):
        """Where each phase's instructions went, by subsystem, where valgrind counted them (None
        otherwise: a run without profiles has none to draw)."""
        profile = results.instruction_profile(self.run_id, store=self.store)
        if profile.empty:
            return None
        return subsystem_bars(profile, title="Where each phase's instructions went, by subsystem (valgrind's callgrind; "
                                             "mean over repetitions)", name="dml-subsystems", phases=DML_PHASES)

    def caveats(self, extra=()) -> str:
        """The appendix's run conditions, with every engine's statement note and the keys each
        engine generated (the findings cite them beside the numbers they change)."""
        notes = [f"**{engine_title(k)}:** {NOTES[k]}" for k in self.engines if k in NOTES]
        return super().caveats([*notes, key_note(self.engines, self.param("pk_kind", "uuid")), *extra])

    def appendix_parts(self):
        return [("Per engine and phase (cost as seed 000 lays it out: mean ± 95% CI / wall seconds)",
                 self.article_table()),
                ("Every figure per engine and phase" + (f" ({self.settle_line()})" if not self.shows_hypotheses() and
                                                        self.settle_line() else ""), self.detail_table()),
                *super().appendix_parts()]


def seed_ratios(base: str = BASE_PRODUCT) -> dict[tuple[str, str], float]:
    """Seed 000's cost of each engine relative to `base` per phase, from the reference file's
    exact counts (`instructions`) where it has them, else its published Gi."""
    ref = results.reference("seed000_dml_instructions")
    column = "instructions" if "instructions" in ref else "instructions_gi"
    values = ref.set_index(["engine", "phase"])[column].astype(float)
    return {(e, p): v / values[(base, p)] for (e, p), v in values.items()
            if (base, p) in values.index and values[(base, p)] > 0}


def _engine(key: str):
    try:
        return get_engine(key)
    except UnknownEngineError:  # a run stored by a benchlib that had this engine
        return None


def _family(key: str) -> str | None:
    engine = _engine(key)
    return engine.family if engine else None


def _embedded(key: str) -> bool:
    engine = _engine(key)
    return bool(engine and engine.embedded)
