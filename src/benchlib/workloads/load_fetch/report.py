"""The B-tree/LSM notebook's report, read back from the store by run id: the findings (each
comparison's subject against its base: analysis.findings), the caveats they cite, the headline
chart, and the figures and tables that teach something beyond them; what every report shares is
in the appendix the shared layer draws."""
from __future__ import annotations

import dataclasses
from functools import cached_property

import pandas as pd

from ...data import findings as F
from ...data import results
from ...engines import get_engine
from ...engines import engine_order, engine_title
from ...present.plots import grouped_bars, ratio_chart, stacked_bars
from ...present.report import RunReport, counted, fmt, fmt_ci
from .. import reporting
from ..reporting import finite
from . import analysis
from .dialects import COMPARISONS, NOT_PUSHED, QUESTIONS, STRUCTURE, dialect_for
from .workload import FETCH, INSERT, OPERATIONS, REGIMES, WORKLOAD

# The answer's first line where an LSM side's data fit in one memtable: the run cannot answer its title.
# It states what was read (the table's size after a flush, the memtable's size), not the SST files or
# levels, which are not read (hostile read 43, 07 #3).
SCALE_LINE = ("At {rows:,} rows the LSM data fit in one memtable (table after a flush, of write_buffer_size: "
              "{sizes}), so B-tree against LSM at scale is not answered here (`--set seed-like` asks it).")
SEED_ROWS_TEXT = "44 M"  # the article's own figure; 44,951,022 is inferred (data/reference/README.md)

# Values carry what they measure (the shared findings table has no metric column): latency at the
# client, the engine's own CPU, a load's rate.
PHRASES = F.Phrases(
    templates={
        "better": "**{step}** ({regime}){plan_note}: {subject} ahead of {base}, {value} against {base_value} ({ratio}, "
                  "{words})",
        "worse": "**{step}** ({regime}){plan_note}: {base} ahead of {subject}, {base_value} against {value} ({subject} at "
                 "{ratio}, {words})",
        "untested": "**{step}** ({regime}){plan_note}: {subject} {value} against {base}'s {base_value} ({ratio}; one each, so "
                    "no test)",
        "not_comparable": "**{step}** ({regime}){plan_note}: {subject} {value} against {base}'s {base_value}, not comparable: "
                          "the two did different work (the findings' notes say what)",
        # Told apart, but by no more than the host's own speed moved its way: the bound is what the run shows.
        "drift": "**{step}** ({regime}){plan_note}: {subject} {value} against {base}'s {base_value} ({ratio}): {bound}, but "
                 "{host_words}",
    },
    default="**{step}** ({regime}){plan_note}: {subject} and {base} not told apart, {value} against {base_value} ({ratio}, "
            "{words})",
    seed="seed 001: {seed_ratio:.3g}x, {seed_words}",
    unit_scale={"µs": (1e3, "ms of engine CPU"), "ms": (1.0, "ms latency"), "rows/s": (1.0, "rows/s loaded")})


# A fetch whose engine's own explain names no index scan: the plan, and beside it what says why
# where the run knows (a filter not pushed down; the base's own plan on the same rows), else the
# share of the rows a fetch matches. No guess at a planner's reasons (hostile read 43, 07 #2: a
# 3,000-row Seq Scan called a planner's choice where PostgreSQL's own fetch cost ~1 ms).
NO_INDEX = "no-index"
NO_INDEX_NOTES = {
    "not_pushed": "{engine}'s own explain of a fetch names a {plan}: the filter did not reach the lo_custkey index.",
    "base": "{engine}'s own explain of a fetch names a {plan}; {base}'s, on the same rows, a {base_plan}.",
    "share": "{engine}'s own explain of a fetch names a {plan}; a fetch matches {share:.0%} of the rows.",
    "selective": "{engine}'s own explain of a fetch names a {plan} though a fetch matches {share:.2%} of the rows.",
    "plan": "{engine}'s own explain of a fetch names a {plan}.",
}
# From this share of the table per fetch the share is printed whole (10%), below it to two decimals.
SCAN_SHARE = 0.02


def no_index_note(engine: str, plan: str, share: float | None, base: str = "", base_plan: str | None = None) -> str:
    """NO_INDEX_NOTES' sentence for an unindexed fetch: the filter kept from the index where the plan
    says so, the compared base's plan where it names an index, else the share of rows a fetch matches."""
    if NOT_PUSHED in plan:
        key = "not_pushed"
    elif base_plan and not names_no_index(base_plan):
        key = "base"
    elif share is None or not finite(share):
        key = "plan"
    else:
        key = "share" if share >= SCAN_SHARE else "selective"
    return NO_INDEX_NOTES[key].format(engine=engine, plan=plan, share=share, base=base, base_plan=base_plan)


# Decided rows the headline leaves out (another comparison's, or another step's): one line per
# comparison, its decided rows as items, so that no decided comparison is missing from the answer.
DECIDED_PHRASES = dataclasses.replace(
    PHRASES, line_by="engine", line="**{subject} vs {base}** ({regime}), told apart: {items}",
    item="{step} {metric} {ratio}{cite}")  # `cite`: the row's footnote marks (fields_of resets `mark`)


def names_no_index(plan: str) -> bool:
    """Whether a fetch's access path, as its engine's plan names it, uses no index (a sequential or
    collection scan): PostgreSQL's "Index Scan" / "Index Only Scan" / "Bitmap Index Scan", MongoDB's IXSCAN."""
    return not any(word in plan.lower() for word in ("index", "ixscan"))


# The operations one headline verdict speaks for: an insert in either order, a fetch.
OPERATION_OF = {INSERT["key"]: "insert", INSERT["random"]: "insert", FETCH: "fetch"}


def decided_elsewhere(found: pd.DataFrame) -> pd.DataFrame:
    """Decided rows the headline does not state (DECIDED_PHRASES), but none that restates a headline
    row: the same engine and verdict on the same operation (hostile read 44, 07 ferretdb #2: FerretDB's
    insert and fetch, decided worse above, listed again in their other metrics)."""
    if found.empty:
        return found
    decided = found["verdict"].map(lambda v: F.Verdict(v).decided)
    headline = found["headline"] == True  # noqa: E712 (object column)
    keys = list(zip(found["engine"], found["verdict"], found["step"].map(OPERATION_OF)))
    said = {k for k, h in zip(keys, headline & decided) if h}
    restated = pd.Series([k in said for k in keys], index=found.index)
    return found[~headline & decided & ~restated]


# The findings table's line for the rows it leaves out: two sides that did different work have no
# ratio to read; their notes (the caveats) say what differed, and the appendix holds them.
LEFT_OUT = "{n} rows not shown: the two sides did different work (not comparable); every row is in the appendix."


def shown_rows(found: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The findings rows the table shows, and the not-comparable ones it leaves out."""
    if found.empty:
        return found, found
    out = found["verdict"] == F.Verdict.NOT_COMPARABLE.value
    return found[~out], found[out]


def counted_findings(found: pd.DataFrame) -> pd.DataFrame:
    """The rows the answer's counts count: the findings table's (shown_rows), never a not-comparable one."""
    return counted(found, shown_rows)


def charted(found: pd.DataFrame) -> pd.DataFrame:
    """The rows the headline chart draws: times and CPU (below 1 favours the subject), never two
    sides that did different work (off the chart, as off the answer)."""
    return found[(found["higher_is_better"] != True)  # noqa: E712 (object column)
                 & (found["verdict"] != F.Verdict.NOT_COMPARABLE.value)]


def _dialect(key: str):
    return reporting.dialect_of(key, dialect_for)


def structure(key: str) -> str:
    d = _dialect(key)
    return d.structure if d else "?"


def _compact(reading: str) -> str:
    """A durability reading's settings as `name=value` pairs, without the sentence around them."""
    return ", ".join(f"{k}={v}" for k, v in analysis.settings(reading).items()) or reading


def question(compared) -> str:
    """The question a run answers, from the comparisons it ran: the notebook's own where it ran a
    B-tree/LSM pair (or none), else what its other comparisons set side by side."""
    if not compared or any(c.kind == STRUCTURE for c in compared):
        return QUESTIONS[STRUCTURE]
    return " ".join(QUESTIONS[c.kind].format(subject=engine_title(c.subject), base=engine_title(c.base))
                    for c in compared)


# The Method section's lines that depend on what ran: a regime's line only where it ran, the pairs
# by the run's own comparisons (hostile read 46e, 07 ferretdb #2: pairs and a regime that did not run).
REGIME_LINES = {
    "cached": "`cached`: the servers' buffer pool or block cache set to {cached_buffer_pool_mb} MiB.",
    "memory-limited": "`memory-limited`: servers only, a {limited_buffer_pool_mb} MiB buffer pool or block cache under "
                      "a {limited_memory_mb} MiB container memory limit that holds the page cache.",
}
PAIRS_LINE = ("Pairs: {pairs}; ratios are subject over base with 95% CIs on the log scale and one verdict rule "
              "(Welch, 5%, the host's drift); a pair that did different work on a step is not compared there.")


def scope_lines(compared, regimes, params) -> list[str]:
    """The Method section's regime and pair lines for what the run ran: its regimes, its pairs."""
    lines = [REGIME_LINES[r].format(**params) for r in regimes if r in REGIME_LINES]
    pairs = ", ".join(f"{engine_title(c.base)} against {engine_title(c.subject)}" for c in compared)
    return lines + [PAIRS_LINE.format(pairs=pairs or "none (no two engines of a pair ran)")]


class LoadFetchReport(RunReport):
    workload = WORKLOAD
    phrases = PHRASES

    def __init__(self, run_id: str, store=None):
        super().__init__(run_id, store)
        self.engines = engine_order(self.engines)
        self.loads = analysis.loads(self.measurements)
        self.summary = analysis.summarize_operations(analysis.operations(self.measurements))
        self.orders = analysis.key_order(self.loads)
        self.generator = analysis.generator(self.measurements)
        seen = set(self.loads["regime"].dropna()) | set(self.summary["regime"].dropna())
        self.regimes = [r for r in REGIMES if r in seen]
        self.rows = int(self.loads["rows"].max()) if not self.loads.empty else 0
        self.readings = self.durability()  # per engine: what a commit waits for, as read at its start
        self.compared = [c for c in COMPARISONS if c.base in self.engines and c.subject in self.engines]

    # -- what the run compares ------------------------------------------------------------------------
    def answer(self) -> None:
        """The shared first screen, under this run's own question where it is not the notebook's
        title (a run with no B-tree/LSM pair)."""
        from IPython.display import Markdown, display

        asked = question(self.compared)
        if asked != QUESTIONS[STRUCTURE]:
            display(Markdown(f"## This run asks: {asked}"), metadata={"benchlib": {"question": asked}})
        super().answer()

    def scope(self) -> None:
        """The Method section's lines for the regimes and pairs this run ran (scope_lines)."""
        from IPython.display import Markdown, display

        params = {k: self.param(k) for k in ("cached_buffer_pool_mb", "limited_buffer_pool_mb", "limited_memory_mb")}
        regimes = self.param("regimes") or self.regimes
        display(Markdown("\n".join(f"- {line}" for line in scope_lines(self.compared, regimes, params))))

    # -- findings ---------------------------------------------------------------------------------------
    def main_loads(self, regime: str = "cached") -> pd.DataFrame:
        df = self.loads[(self.loads["regime"] == regime) & (self.loads["main"] == True)]  # noqa: E712
        return df.set_index("engine").reindex([e for e in self.engines if e in set(df["engine"])]).reset_index()

    def _cache_mib(self, engine: str, regime: str) -> float:
        """The buffer pool or block cache this workload set on a server in `regime`; NaN where it
        set none (embedded engines keep their library's default)."""
        d = _dialect(engine)
        pool = self.param("limited_buffer_pool_mb" if regime == "memory-limited" else "cached_buffer_pool_mb")
        return float(pool) if pool and d and d.buffer_setting(get_engine(engine), pool) else float("nan")

    def side(self, engine: str, regime: str) -> analysis.Side:
        main = self.main_loads(regime).set_index("engine")
        d = _dialect(engine)
        if engine not in main.index:
            return analysis.Side(reading=self.readings.get(engine, ""))
        load = main.loc[engine]
        return analysis.Side(reading=self.readings.get(engine, ""),
                             mib=load["engine_bytes_per_row"] * load["rows"] / 2 ** 20,
                             memtable_mib=load.get("memtable_mib", float("nan")),
                             cache_mib=self._cache_mib(engine, regime),
                             lookup_in_python=bool(d and d.lookup_in_python))

    @cached_property
    def _findings(self) -> pd.DataFrame:
        bulk_modes = {m.name for e in self.engines if (d := _dialect(e)) for m in d.methods if m.bulk_mode}
        main = analysis.answer_loads(self.loads, bulk_modes)[["regime", "engine", "rows_per_s", "method", "main"]]
        differences = {(c, r): analysis.differences(self.side(c.base, r), self.side(c.subject, r))
                       for c in self.compared for r in self.regimes}
        reference = results.reference("seed001_load_fetch")
        # A fetch whose engine's own plan names no index scan says so beside its number.
        scans = self._unindexed_fetches()
        found = analysis.findings(
            main, self.summary, self.compared, self.regimes, differences_of=differences,
            host={(c, r): results.loop_factor(self.loops[r], c.subject, c.base)
                  for c in self.compared for r in self.regimes},
            seed={c: analysis.seed_ratios(reference, c) for c in self.compared},
            plans={k: f"{engine_title(k[0])}'s plan: {plan}" for k, (plan, _) in scans.items()})
        same = self._notes[1]
        cited = [(*c, *[f"{NO_INDEX}:{e}:{r}" for e in (engine, base) if (e, r) in scans])
                 if step == FETCH else c
                 for c, step, engine, base, r in zip(found["caveats"], found["step"], found["engine"],
                                                     found["base_engine"], found["regime"])]
        return found.assign(caveats=[tuple(dict.fromkeys(same.get(c, c) for c in cs)) for cs in cited])

    @cached_property
    def loops(self) -> dict[str, pd.DataFrame]:
        """Regime -> the calibration loops of its engine starts: each regime's starts met the host at
        their own speed (hostile read 46e, 07 #3: the cached pair's starts ran 2.3x slower than the
        memory-limited pair's, which one median per engine hid)."""
        regime = self.calibrations["instance_id"].map(results.start_labels(self.measurements, "regime"))
        return {r: self.calibrations[regime == r] for r in self.regimes}

    def _fetch_plans(self) -> dict[tuple[str, str], str]:
        """(engine, regime) -> the fetch's access path as the engine's own plan names it."""
        s = self.summary
        if s.empty or "plan" not in s:
            return {}
        fetch = s[(s["operation"] == FETCH) & s["plan"].map(lambda p: isinstance(p, str))]
        return dict(zip(zip(fetch["engine"], fetch["regime"]), fetch["plan"]))

    def _unindexed_fetches(self) -> dict[tuple[str, str], tuple[str, float | None]]:
        """(engine, regime) -> the fetch plan an engine read of itself, where it names no index scan,
        and the share of the loaded rows one fetch matched."""
        s = self.summary
        if s.empty or "plan" not in s:
            return {}
        fetch = s[(s["operation"] == FETCH) & s["plan"].map(lambda p: isinstance(p, str))]
        shares = (fetch["rows_per_op"] / self.rows if self.rows and "rows_per_op" in fetch
                  else pd.Series(None, index=fetch.index))
        return {(e, r): (p, share) for e, r, p, share in zip(fetch["engine"], fetch["regime"], fetch["plan"], shares)
                if names_no_index(p)}

    def findings(self) -> pd.DataFrame:
        return self._findings

    def shown_and_left_out(self, found: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
        """Not the not-comparable rows: the table and the answer's count leave them out (hostile
        read 43, 07 #4: "3 of 21" counted six the table hid)."""
        return shown_rows(found)

    def counted_findings(self) -> pd.DataFrame:
        return counted_findings(self.findings())

    def left_out_line(self, out: pd.DataFrame) -> str:
        return LEFT_OUT.format(n=len(out))

    def below_memtable(self) -> dict[str, analysis.Side]:
        """The LSM engines whose data fit in one memtable in the headline regime."""
        sides = {e: self.side(e, "cached") for c in self.compared for e in (c.base, c.subject)}
        return {e: s for e, s in sides.items() if finite(s.mib) and finite(s.memtable_mib) and s.mib < s.memtable_mib}

    def _scale_lines(self) -> list[str]:
        small = self.below_memtable()
        return [SCALE_LINE.format(rows=self.rows, sizes=", ".join(
            f"{engine_title(e)} {s.mib:.3g} of {s.memtable_mib:g} MiB" for e, s in small.items()))] if small else []

    def _answer_rows(self) -> tuple[list[str], pd.DataFrame, pd.DataFrame]:
        """SCALE_LINE where it holds, the headline rows that fit, and the decided rows left out of them
        (one line per comparison): a decided line takes the place of a headline row that decides nothing."""
        scale, elsewhere = self._scale_lines(), decided_elsewhere(self.findings())
        lines = elsewhere["engine"].nunique() if not elsewhere.empty else 0
        return scale, F.headline(self.findings(), max(self.answer_limit - len(scale) - lines, 1)), elsewhere

    def answer_lines(self) -> list[str]:
        """SCALE_LINE first where it holds, then the headline rows, then the decided rows they leave out."""
        scale, rows, elsewhere = self._answer_rows()
        marks = self.answer_marks()  # a decided row's caveat (an unindexed fetch) beside its ratio
        elsewhere = elsewhere.assign(cite=[self.footnote(r, marks) for r in elsewhere.to_dict("records")])
        return (scale + F.render_lines(rows, self.phrases) + F.render_lines(elsewhere, DECIDED_PHRASES)
                )[:self.answer_limit]

    def answer_support(self) -> list[int]:
        """SCALE_LINE states no comparison, and the decided rows outside the headline answer another
        question than the notebook's (FerretDB over its PostgreSQL): an index shows the question's line."""
        scale, rows, elsewhere = self._answer_rows()
        others = [0] * (elsewhere["engine"].nunique() if not elsewhere.empty else 0)
        return ([0] * len(scale) + [F.Verdict(v).support for v in rows["verdict"]] + others)[:self.answer_limit]

    def caveat_notes(self) -> list[F.Caveat]:
        return self._notes[0]

    @cached_property
    def _notes(self) -> tuple[list[F.Caveat], dict[str, str]]:
        """The caveats, each sentence once (a difference that reads the same in both regimes is one
        note), and the ids folded into another's."""
        notes, first, same = [], {}, {}
        for note in self._each_note():
            if note.text in first:
                same[note.id] = first[note.text]
            else:
                first[note.text] = note.id
                notes.append(note)
        return notes, same

    def _each_note(self) -> list[F.Caveat]:
        notes = []
        for c in self.compared:
            t = {e: engine_title(e) for e in (c.base, c.subject)}
            for regime in self.regimes:
                base, subject = self.side(c.base, regime), self.side(c.subject, regime)
                for flag in [f for f in analysis.differences(base, subject).flags() if analysis.CHANGES[f]]:
                    notes.append(F.Caveat(analysis.caveat_id(flag, c, regime),
                                          self._difference_text(flag, {c.base: base, c.subject: subject}, t)))
        plans = self._fetch_plans()
        for (engine, regime), (plan, share) in self._unindexed_fetches().items():
            base = next((c.base for c in self.compared if c.subject == engine), None)
            notes.append(F.Caveat(f"{NO_INDEX}:{engine}:{regime}", no_index_note(
                engine_title(engine), plan, share, engine_title(base) if base else "", plans.get((base, regime)))))
        seeded = [c for c in self.compared if c.seed]
        if seeded:
            base, subject = seeded[0].seed
            notes.append(F.Caveat(analysis.SEED_CAVEAT, f"Seed 001's ratio is {subject}'s over {base}'s (InnoDB), "
                                                        f"{SEED_ROWS_TEXT} rows on 8 vCPU machines, numbers it called "
                                                        "inconclusive."))
        return notes

    @staticmethod
    def _difference_text(flag: str, sides: dict[str, analysis.Side], t: dict[str, str]) -> str:
        """One sentence per difference, with the readings and sizes behind it."""
        (a, sa), (b, sb) = sides.items()
        if flag == "durability":
            yes, no = (a, b) if analysis.commit_waits(sa.reading) else (b, a)
            return (f"{t[yes]} waits for its log on disk at each commit ({_compact(sides[yes].reading)}), {t[no]} "
                    f"does not ({_compact(sides[no].reading)}): their inserts did different work.")
        if flag == "direct_reads":
            yes, no = (a, b) if analysis.reads_direct(sa.reading) else (b, a)
            return (f"{t[yes]} reads past the OS page cache ({analysis.direct_read_settings(sides[yes].reading)}), "
                    f"{t[no]} through it: a miss in its own cache costs {t[yes]} a device read.")
        if flag == "cache_pressure":
            out, into = (a, b) if sa.mib > sa.cache_mib else (b, a)
            # Sizes on disk (compressed where the engine compresses): a cache holds uncompressed blocks, so
            # the smaller is no proof of a fit (hostile read 44, 07 #3).
            return (f"{t[out]}'s table ({sides[out].mib:.3g} MiB on disk) outgrows its {sides[out].cache_mib:g} MiB "
                    f"cache; {t[into]}'s is {sides[into].mib:.3g} MiB on disk against {sides[into].cache_mib:g} MiB.")
        python = a if sa.lookup_in_python else b
        other = b if python == a else a
        return (f"{t[python]}'s index scan and row decoding run in this workload's Python, {t[other]}'s inside the "
                "engine: the fetch compares code paths, not trees.")

    def headline_figure(self):
        """The comparisons whose ratio below 1 favours the subject (times and CPU): one direction on
        one axis; a load rate, higher when faster, has its own chart (load_figure)."""
        found = self.findings()
        found = charted(found)
        if found.empty:
            return None
        short = {analysis.LOAD_STEP: "load", INSERT["key"]: "insert, key order", INSERT["random"]: "insert, random",
                 FETCH: "fetch"}
        return ratio_chart(
            found, y=lambda r: f"{short.get(r['step'], r['step'])}: {r['metric']}", seed_label="seed 001",
            series=lambda r: f"{engine_title(r['engine'])} / {engine_title(r['base_engine'])}"
                             + ("" if r["regime"] == "cached" else f", {r['regime']}"),
            title=f"Insert and fetch, subject over base ({self.rows:,} line orders)", name="pair-ratios",
            axis_title="subject / base (< 1: the subject faster or cheaper)")

    # -- figures and tables -----------------------------------------------------------------------------
    def _op(self, regime: str, operation: str) -> pd.DataFrame:
        s = self.summary
        return s[(s["regime"] == regime) & (s["operation"] == operation)].set_index("engine")

    def fetch_figure(self, regime: str = "cached"):
        """Where a fetch's time goes, per engine: the engine's CPU, the client driver's CPU (a
        server's; an embedded engine's CPU holds its driver), and the latency at the client."""
        s = self._op(regime, FETCH).reindex([e for e in self.engines if e in set(self._op(regime, FETCH).index)])
        if s.empty:
            return None
        plans = s["plan"] if "plan" in s else pd.Series(None, index=s.index)
        # A compared pair on one scale (hostile read 43, 07 #4: FerretDB and its PostgreSQL apart).
        pair = {e: i for i, c in reversed(list(enumerate(self.compared))) for e in (c.base, c.subject)}
        df = pd.DataFrame({"engine": [engine_title(e) + (f" ({p})" if isinstance(p, str) else "")
                                      for e, p in zip(s.index, plans)], "engine_ms": s["engine_cpu_us"] / 1e3,
                           "driver_ms": s["client_cpu_us"] / 1e3, "latency_ms": s["latency_mean"],
                           "pair": [pair.get(e) for e in s.index]})
        rows = s["rows_per_op"].mean()
        return stacked_bars(df, x=["engine"], unit="ms per fetch", name=f"fetch-engine-driver-{regime}", together="pair",
                            segments={"engine_ms": ("engine CPU", "#336791"), "driver_ms": ("client driver CPU", "#E39B2F")},
                            marker=("latency_ms", "latency at the client"),
                            title=f"Fetching one customer's ~{rows:.0f} line orders ({regime}): engine and driver "
                                  "apart")

    def load_figure(self):
        """Load rates grouped by engine (one bar per regime, order and bulk path)."""
        d = self.loads
        if d.empty:
            return None
        own = d[d["main"] == True].groupby("engine")["method"].first()  # noqa: E712 (labels are bools)
        df = d.assign(engine_name=[engine_title(e) for e in d["engine"]],
                      load=[f"{r}, {o} order" + ("" if m == own.get(e) else f", {m}")
                            for e, r, o, m in zip(d["engine"], d["regime"], d["order"], d["method"])])
        df = df.assign(_v=df["method"] != df["engine"].map(own), _r=df["regime"].map({r: i for i, r in enumerate(REGIMES)}),
                       _o=df["order"] != "key", _e=df["engine"].map({e: i for i, e in enumerate(self.engines)})
                       ).sort_values(["_v", "_r", "_o", "_e"], kind="stable")
        return grouped_bars(df, x=["engine_name"], group="load", value="rows_per_s", unit="rows per second",
                            name="load-rows-per-second",
                            title=f"Load rate per engine ({self.rows:,} line orders, its own bulk path; one load each)")

    def operations_table(self, regime: str = "cached"):
        """Insert and fetch per engine: latency at the client (mean over repetitions ± 95% CI),
        the engine's CPU per operation (idle rate taken away), the driver's, the engine's own
        storage reads per operation, rows per fetch."""
        s = self.summary[self.summary["regime"] == regime]
        if s.empty:
            return None
        order = {e: i for i, e in enumerate(self.engines)}
        s = s.assign(_e=s["engine"].map(order), _o=s["operation"].map({o: i for i, o in enumerate(OPERATIONS)}))
        s = s.sort_values(["_o", "_e"])

        def ci(col: str) -> list[str]:
            return [fmt_ci(v, h) for v, h in zip(s[col], s[f"{col}_ci95"])]

        return pd.DataFrame({
            "operation": s["operation"], "engine": [engine_title(e) for e in s["engine"]],
            "structure": [structure(e) for e in s["engine"]], "p50 ms": ci("latency_p50"), "p99 ms": ci("latency_p99"),
            "mean ms": ci("latency_mean"), "engine CPU µs/op": ci("engine_cpu_us"),
            "driver CPU µs/op": [fmt(v) for v in s["client_cpu_us"]],
            "engine reads/op": [fmt(v) for v in s["reads_per_op"]], "rows/op": [fmt(v) for v in s["rows_per_op"]],
            "repetitions": s["n"],
        }).style.hide(axis="index").set_caption(f"Operations ({regime}): mean ± 95% CI over repetitions")

    def key_order_table(self):
        """Seed 001's key-order question: each engine's shuffled load against its key-ordered one."""
        o = self.orders
        if o.empty:
            return None
        return pd.DataFrame({
            "regime": o["regime"], "engine": [engine_title(e) for e in o["engine"]], "bulk path": o["method"],
            "key order s": o["key_s"].map(fmt), "shuffled s": o["random_s"].map(fmt),
            "time shuffled / key": o["time_ratio"].map(fmt), "B/row key": o["key_bytes_per_row"].map(fmt),
            "B/row shuffled": o["random_bytes_per_row"].map(fmt), "size shuffled / key": o["size_ratio"].map(fmt),
        }).style.hide(axis="index").set_caption("Shuffled rows against primary-key order, one load each (seed 001: "
                                                "MySQL almost 6x faster in key order). Key order always loads "
                                                "first: a faster shuffled load may owe it to going second.")

    def seed_table(self):
        """Seed 001's table with this run's engines beside the systems they stand beside, raw."""
        f = analysis.beside_seed(results.reference("seed001_load_fetch"), self.loads, self.summary)
        different = analysis.not_comparable(self.findings())

        def cell(text: str, engine, source: str, operation: str) -> str:
            return f"not comparable ({text})" if source == "this run" and (engine, operation) in different else text

        return pd.DataFrame({
            "seed 001 system": f["system"],
            "source": [f"{src} (a stand-in, not {system})" if s else src
                       for src, system, s in zip(f["source"], f["system"], f["stand_in"])],
            # The seed's own rows ran the system named: a stand-in is this run's alone.
            "stand-in here": ["" if src == "seed 001" else engine_title(e) if isinstance(e, str) else
                              "none (cloud service)" for e, src in zip(f["engine"], f["source"])],
            "rows": [SEED_ROWS_TEXT if src == "seed 001" else f"{r:,.0f}" for r, src in zip(f["rows"], f["source"])],
            "load rows/s": f["load_rows_per_s"].map(fmt), "load rate": f["rate_source"],
            "insert one row ms": [cell(("< " if b == "<" else "") + fmt(v), e, src, "insert")
                                  for v, b, e, src in zip(f["insert_ms"], f["insert_bound"], f["engine"], f["source"])],
            "fetch a customer ms": [cell(t, e, src, "fetch") for t, e, src in zip(f["fetch_text"], f["engine"], f["source"])],
        }).style.hide(axis="index").set_caption(f"Seed 001 ({SEED_ROWS_TEXT} rows, 8 vCPU machines) beside this run "
                                                f"({self.rows:,} rows, {self.info.get('cpu_cores')} cores), raw; this "
                                                "run's fetch latency holds its Python client's driver CPU")

    # -- the appendix -----------------------------------------------------------------------------------
    def load_table(self):
        d = self.loads
        if d.empty:
            return pd.DataFrame({"": ["no load was measured"]})
        out = pd.DataFrame({
            "regime": d["regime"], "engine": [engine_title(e) for e in d["engine"]], "order": d["order"],
            "bulk path": d["method"], "rows": d["rows"], "seconds": d["wall_s"], "rows/s": d["rows_per_s"],
            "engine CPU s": d["engine_cpu_s"], "settle CPU s": d["settle_cpu_s"], "settle s": d["settle_wall_s"],
            "engine CPU µs/row (net)": d["engine_cpu_us_per_row"], "driver CPU s": d["client_cpu_s"],
            "maintenance CPU s": d["maintenance_cpu_s"], "table B/row": d["table_bytes_per_row"],
            "index B/row": d["index_bytes_per_row"], "data dir B/row": d["datadir_bytes_per_row"],
        })
        return out.style.format(fmt, subset=list(out.columns[4:])).hide(axis="index")

    def generator_table(self):
        g = self.generator
        if g.empty:
            return pd.DataFrame({"": ["the generator was not measured"]})
        return g.style.format(fmt, subset=[c for c in g.columns if c != "order"]).hide(axis="index")

    def appendix_parts(self):
        return [*super().appendix_parts(), ("Every comparison, the not comparable too", self.table_of(self.findings()).data),
                ("Every load (a negative data directory growth: earlier tables compacted "
                                            "during this load)", self.load_table()),
                ("The generator alone (rows made ~65,000 at a time: peak memory flat in the row count)",
                 self.generator_table())]
