"""The clustered-vs-heap notebook's report: seed 003's spreadsheet as findings rows (analysis),
rendered by the shared layer, with the tables and figures that teach beside them."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd

from ...data import findings as F
from ...data import results
from ...engines import engine_title, find_engine
from ...present.plots import heatmaps, ratio_chart
from ...present.report import RunReport, fmt, fmt_ci, plural
from .. import reporting
from . import analysis
from .workload import WORKLOAD
from .dialects import Organisation, dialect_for


def _dialect(key: str):
    return reporting.dialect_of(key, dialect_for)


def _layout(key: str) -> str:
    d = _dialect(key)
    return d.layout if d else "?"


def _organised(key: str, organisation: Organisation) -> bool:
    d = _dialect(key)
    return d is not None and d.organisation == organisation


def better_or_worse(verdict: str, ratio: float) -> float:
    """A heatmap cell's colour: +|log10 ratio| where the engine did better than the base, -|log10
    ratio| where worse, NaN (grey) where no verdict says either."""
    if verdict not in (F.Verdict.BETTER.value, F.Verdict.WORSE.value) or not (pd.notna(ratio) and ratio > 0):
        return float("nan")
    return abs(float(np.log10(ratio))) * (1 if verdict == F.Verdict.BETTER.value else -1)


# Where the seed's regime did not run, the answer's one clause: what cannot show, and the set that shows it.
NO_SEED_REGIME = ("Cached only, {rows:,} rows: clustering's I/O locality cannot show here; `--set {answering}` "
                  "(IO-bound, {answering_rows:,} rows) answers it.")
ANSWERING_SET = "default"  # both regimes at 2M rows: papermill_params/02-clustered-vs-heap/default.yaml
ANSWERING_ROWS = 2_000_000
# The seed's summary row was IO-bound on 400M rows: a cached regime's geometric mean is another measurement.
SEED_OTHER_REGIME = F.VERDICT_WORDS[F.Verdict.NOT_COMPARABLE] + " (the seed ran IO-bound, 400M rows)"
LEFT_OUT = "{n} storage rows not shown: both engines read under {floor} storage pages per operation."
# Said once under answer lines measured once, instead of on each: what noise the run does know.
ONCE = "Each ratio above measured once, so no noise estimate; {host}."
ONCE_NO_DRIFT = "Each ratio above measured once, so no noise estimate."


def once_line(rows: pd.DataFrame) -> str | None:
    """One line for the answer's rows measured once (`Verdict.UNTESTED`): the host's speed between
    their compared pairs (`host_factor`), the pair furthest from matching."""
    once = rows[rows["verdict"] == F.Verdict.UNTESTED.value] if not rows.empty else rows
    if once.empty:
        return None
    factors = pd.to_numeric(once["host_factor"], errors="coerce")
    factors = factors[factors > 0]
    if factors.empty:
        return ONCE_NO_DRIFT
    at = np.log(factors).abs().idxmax()
    return ONCE.format(host=F.host_words(factors[at], engine_title(once.at[at, "engine"]),
                                         engine_title(once.at[at, "base_engine"])))


KEY_KINDS_ONLY = "{engines}: seed 001's key kinds only (no sysbench driver), in the appendix."


def shown_rows(found: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The findings rows the table shows, and those it leaves out: storage rows where both engines
    read under the storage floor (no ratio, nothing to read; one line counts them)."""
    if found.empty:
        return found, found
    out = found["caveats"].map(lambda ids: analysis.BELOW_FLOOR in (ids or ()))
    return found[~out], found[out]


class ClusteredReport(RunReport):
    workload = WORKLOAD
    seed_set = "seed-scale"
    # The answer's lines: one findings row each, the test and its class said by the line itself.
    phrases = F.Phrases(templates={
        "better": "{regime}: {subject} ahead, {ratio} {base}'s {metric}",
        "worse": "{regime}: {base} ahead, {subject} at {ratio} its {metric}",
        "same": "{regime}: a tie, {subject} {ratio} {base}'s {metric} ({words})",
        "untested": "{regime}: {subject} {ratio} {base}'s {metric}",  # `once_line` says "measured once" once
        "n/a": "{regime}: {metric} {words}",
        F.WIDE: "{regime}: {subject} {metric} {value} against {base}'s {base_value}{mark} ({words}, CI over 10x wide)",
    }, default="{regime}: {subject} {ratio} {base}'s {metric} ({words})",
        seed="seed 003 {seed_ratio:.3g}x: {seed_words}")

    def __init__(self, run_id: str, store=None, base_engine: str | None = None):
        super().__init__(run_id, store)
        self.steps = analysis.steps(self.measurements)
        self.battery_engines = [e for e in self.engines if e in set(self.steps["engine"])]
        # Seed 003's base: the engine whose rows live in its clustered B-tree (MySQL), by its dialect.
        clustered = [e for e in self.battery_engines if _organised(e, Organisation.CLUSTERED)]
        self.base = base_engine or next(iter(clustered or self.battery_engines), None)
        self.regimes = list(dict.fromkeys(self.steps["regime"])) if not self.steps.empty else []
        self.keys = analysis.key_kinds(self.measurements)
        self._found: pd.DataFrame | None = None

    # -- findings --------------------------------------------------------------------------------------
    def findings(self) -> pd.DataFrame:
        if self._found is None:
            self._found = (analysis.findings(self.steps, self.base, host=analysis.host_factors(self.measurements, self.base),
                                             conditions=self.conditions(), seed=analysis.seed_figures())
                           if self.base else F.table([]))
        return self._found

    def counted_findings(self) -> pd.DataFrame:
        return shown_rows(self.findings())[0]

    def conditions(self) -> analysis.Conditions:
        """What the starts read that changes what a comparison means (analysis.Conditions)."""
        settings = analysis.start_settings(self.measurements)
        io_read = analysis.start_settings(self.measurements, "io-bound")
        direct = {e for e in self.battery_engines if (d := _dialect(e)) and d.io_bound_config
                  and all(io_read.get(e, {}).get(k) == str(v) for k, v in d.io_bound_config.items())}
        spills: dict[tuple, tuple] = {}
        for engine, before, after in self._spill_pairs():
            if after is not None:
                key = (after.get("regime"), engine, after.get("step"))
                spills[key] = tuple(dict.fromkeys((*spills.get(key, ()), before.get("step"))))
        return analysis.Conditions(
            unequal_cache=self.io_bound_confounded(), binlog_base_only=self.base_binlog_only(),
            binary_log_off=self.param("binary_log") is False and any(
                (d := _dialect(e)) and d.binary_log_off for e in self.battery_engines),
            defers_dead_rows=frozenset(e for e in self.battery_engines if (d := _dialect(e)) and d.defers_dead_rows),
            direct_io=frozenset(direct),
            checkpoint_deferred=frozenset(e for e, found in settings.items() if "checkpoint_timeout" in found),
            no_change_buffer=frozenset(e for e, found in settings.items()
                                       if _buffers_nothing(found.get("innodb_change_buffering"))),
            spills=spills)

    def caveat_notes(self) -> list[F.Caveat]:
        """One sentence per caveat id the findings cite."""
        cited = dict.fromkeys(c for cs in self.findings()["caveats"] for c in (cs or ()))
        base, heap = engine_title(self.base or ""), engine_title(self._heap() or "PostgreSQL")
        caches = self.io_bound_caches()
        through = ", ".join(engine_title(e) for e, c in caches.items() if not c["direct"]) or "one engine"
        timeout = " / ".join(sorted(set(self._setting("checkpoint_timeout").values())))
        direct = ", ".join(f"{k}={v}" for e in self.conditions().direct_io for k, v in _dialect(e).io_bound_config.items())
        texts = {
            analysis.PAGE_SIZE: "rKB/o is pages/o weighted by page size (8 KiB against 16 KiB): shown, judged once "
                                "as pages/o.",
            analysis.BELOW_FLOOR: f"Both engines read under {analysis.STORAGE_FLOOR} storage pages per operation: a "
                                  "ratio of two near-zeros, not given.",
            analysis.UNEQUAL_CACHE: f"IO-bound, the caches were unequal ({through} read through the OS page cache "
                                    "as well): no verdict.",
            analysis.BINARY_LOG: f"Only {base} synced a binary log at every commit (a second fsync): its writes did "
                                 "more work.",
            analysis.DEFERRED_VACUUM: f"{heap} left its dead rows to a vacuum no window ran, while {base} purged "
                                      "in its own windows: only a loss would stand.",
            analysis.DIRECT_IO: f"IO-bound, {heap} read and wrote its data files directly ({direct}, a developer "
                                "option: no read-ahead, no write-back): a lower bound for its writes and ranges.",
            analysis.NO_CHECKPOINT: f"No {heap} checkpoint fell in a window (checkpoint_timeout={timeout}), while "
                                    f"{base} flushed pages in its own: {heap}'s data-file writes are not in this row.",
            analysis.PK_UNCACHED: f"{heap} read over {analysis.STORAGE_REACHED} storage pages per query: its PK index "
                                  "was not cached, which seed 003's outliers needed.",
            analysis.ID_ORDER: "sysbench loads rows in id order, so the heap is in id order too: a short id range "
                               "reads about one heap page, not the random heap reads of seed 003's claim.",
            analysis.SEED_CLASS: "Seed 003 says, without a figure, that the clustered PK helps reads of columns "
                                 "outside the PK (its examples: read-only tests not run here).",
            analysis.SEED_BOUND: "Seed 003 gives this ratio as a lower bound (\"more than\"): a larger ratio agrees "
                                 "with it.",
            analysis.NO_BINLOG: f"{base} wrote no binary log (MySQL writes one by default, MariaDB does not), one "
                                "synced log per commit as its peer; seed 003 does not say whether its MySQL wrote one.",
            analysis.NO_CHANGE_BUFFER: f"{base} buffered no secondary-index change (MySQL 8.4+ default to none, "
                                       "MariaDB 11 removed the buffer): seed 003's suspected reason for InnoDB's "
                                       "insert win was absent.",
        }
        bound = fmt(float(self.param("max_settle_seconds") or 0))
        for cid in cited:
            kind, _, rest = cid.partition(":")
            if kind == "from-pool":
                texts[cid] = (f"IO-bound, yet {engine_title(rest)} read at most {analysis.STORAGE_REACHED} storage "
                              "pages per operation: its buffer pool served this test.")
            elif kind == "spill":
                spilled = sorted({engine_title(e) for (_, e, _), writes in self.conditions().spills.items()
                                  if rest in writes})
                texts[cid] = (f"The settle window after {rest} reached its {bound} s bound ({', '.join(spilled)}): "
                              "its leftover work ran in this window.")
        return [F.Caveat(c, texts[c]) for c in cited if c in texts]

    def answer_lines(self) -> list[str]:
        """One line per test class; each ratio carries the findings table's footnote marks, so a
        caveat that changes its meaning (a vacuum no window ran) is pointed to from the answer.
        Where the seed's regime did not run, a last line says what cannot show and which set shows it."""
        found = self.findings()
        lines = class_lines(found, self.phrases, self.answer_marks(shown_rows(found)[0]), self.read_time())
        once = once_line(found[found["headline"] == True]) if not found.empty else None  # noqa: E712
        if once:
            lines.append(once)
        if self.battery_engines and analysis.SEED_REGIME not in self.regimes:
            lines.append(NO_SEED_REGIME.format(rows=int(self.param("table_size")), answering=ANSWERING_SET,
                                               answering_rows=ANSWERING_ROWS))
        return lines

    def read_time(self) -> str | None:
        """The run's µs per storage read (the storage table's estimates, one thread only), as a range."""
        s = self.steps[(self.steps["regime"] == analysis.SEED_REGIME) & self.steps["step"].map(analysis.reads)] \
            if not self.steps.empty else self.steps
        us = analysis.storage_read_us(s).dropna() if self.param("threads") == 1 and not s.empty else pd.Series()
        if us.empty:
            return None
        return fmt(us.min()) if fmt(us.min()) == fmt(us.max()) else f"{fmt(us.min())}-{fmt(us.max())}"

    def findings_table(self, limit: int | None = None, found: pd.DataFrame | None = None):
        """The shared findings table without the rows `shown_rows` leaves out, and one line saying
        how many and why."""
        from IPython.display import HTML

        shown, out = shown_rows(self.findings() if found is None else found)
        table = super().findings_table(limit, shown)
        if out.empty:
            return table
        line = LEFT_OUT.format(n=len(out), floor=analysis.STORAGE_FLOOR)
        return HTML(table.data + f'<p class="benchlib-legend">{line}</p>')

    def headline_figure(self):
        """QPS over the base per test and regime, on a log axis, with each ratio's 95% CI."""
        qps = self.findings()
        qps = qps[qps["column"] == "QPS"] if not qps.empty else qps
        if qps.empty or not qps["ratio"].notna().any():
            return None
        heap = engine_title(qps["engine"].iloc[0])
        return ratio_chart(qps, y=lambda r: r["step"], series=lambda r: r["regime"], name="clustered-qps",
                           axis_title=f"QPS, {heap} / {engine_title(self.base)} (> 1: {heap} faster)",
                           title=f"{heap} (heap) against {engine_title(self.base)} (clustered PK), per test")

    def method(self) -> str:
        """The method as the run did it (its engines, regimes and repetitions), a short list."""
        n, regimes = int(self.param("max_repetitions") or 1), self.regimes
        heap, base = engine_title(self._heap() or ""), engine_title(self.base or "")
        lines = [f"{heap} (heap) against {base} (rows in the PK's B-tree), {int(self.param('table_size')):,} rows, "
                 f"{self.param('test_seconds')} s per test, {plural(int(self.param('threads')), 'thread')}.",
                 "Regimes: " + "; ".join({"cached": "cached (large pool, no memory limit)",
                                          "io-bound": "IO-bound (small pool, container memory limit, data files read "
                                                      "directly where the engine allows)"}.get(r, r)
                                         for r in regimes) + ".",
                 "Seed 003's battery in its order (reads before the writes as `<test>.pre`), benchlib's Lua "
                 f"re-creations, `--rand-type={self.param('rand_type')}`.",
                 "QPS: sysbench's; cpu/o: the engine's CPU per operation in the test and its settle window; "
                 "pages/o: storage reads per operation (`/proc/<pid>/io`).",
                 (f"Up to {n} repetitions per test back to back on one start; ratios with 95% CIs on the log scale, "
                  "verdicts by `findings.judge`." if n > 1 else
                  "One repetition per test: each ratio is one value per side, with no CI and no verdict.")]
        if others := [engine_title(e) for e in self.engines if e not in self.battery_engines]:
            lines.append(KEY_KINDS_ONLY.format(engines=", ".join(others)))
        if self.base and (d := _dialect(self.base)) and d.server_config:
            lines.append(f"{base} ran with " + ", ".join(f"`{k}={v}`" for k, v in d.server_config.items()) + ".")
        return "## Method\n\n" + "\n".join(f"- {line}" for line in lines)

    # -- figures and tables that teach -------------------------------------------------------------------
    def heatmap(self):
        """Seed 003's spreadsheet as colours, one panel per engine and regime: each cell its ratio over
        the base, green where better, red where worse (deeper for a larger log ratio), grey otherwise."""
        r = self.findings()
        r = r.dropna(subset=["ratio"]) if not r.empty else r
        decided = r["verdict"].isin([F.Verdict.BETTER.value, F.Verdict.WORSE.value]) if not r.empty else r
        if r.empty or not decided.any():
            return None  # every cell would be grey: no chart, and no words about one
        order = list(dict.fromkeys(self.findings()["step"]))
        r = r.assign(panel=[f"{engine_title(e)} / {engine_title(self.base)}, {g}" for e, g in
                            zip(r["engine"], r["regime"])],
                     step=[f"{order.index(s) + 1:02d} {s}" for s in r["step"]],
                     # Clipped at 10x either way: one ratio of two near-zero read counts (pk-cached's 2.4e-05)
                     # would otherwise stretch the scale until a 7x win and every loss looked pale.
                     goodness=[np.clip(better_or_worse(v, ratio), -1.0, 1.0) for v, ratio in zip(r["verdict"], r["ratio"])])
        return heatmaps(r, x="column", y="step", value="ratio", facet="panel", columns=2, color="goodness",
                        x_order=[c.name for c in analysis.COLUMNS],
                        unit="log10 ratio, + better / - worse (10x and beyond: full colour)",
                        x_title="", y_title="step (in the order run)", name="clustered-ratios", text_format=fmt,
                        top_down=True,
                        title=f"Seed 003's spreadsheet: ratios over {engine_title(self.base)}<br><sup>green: "
                              "better than the base, red: worse; grey: not told apart, not comparable or not "
                              "judged (the findings table says which)</sup>")

    def geomean_table(self):
        """Seed 003's summary row: the geometric means of this run's ratios per regime (and without its
        not-comparable rows) beside the seed's."""
        found = self.findings()
        rows = []
        for regime in self.regimes:
            kept = found[(found["regime"] == regime) & (found["verdict"] != F.Verdict.NOT_COMPARABLE.value)]
            for label, frame in ((f"this run, {regime}", found), (f"this run, {regime}, comparable rows only", kept)):
                g = analysis.geometric_means(frame, regime)
                tests = frame[(frame["regime"] == regime) & (frame["column"] == "QPS")]["ratio"].notna().sum()
                row = {"": label, "QPS": g["QPS"], "cpu/o": g["cpu/o"],
                       "cpu/o, engine + sysbench CPU": self._with_sysbench_geomean(regime), "tests": int(tests),
                       "against seed 003": "" if regime == analysis.SEED_REGIME else SEED_OTHER_REGIME}
                if frame is kept and all(_same(rows[-1][k], row[k]) for k in ("QPS", "cpu/o", "tests")):
                    continue  # no row left out: the same figures twice
                rows.append(row)
        seed = results.reference("seed003_geomean", dtype={"postgres_version": str, "mysql_version": str})
        for _, g in seed.iterrows():
            rows.append({"": f"seed 003, Postgres {g['postgres_version']} / MySQL {g['mysql_version']}",
                         "QPS": g["qps_geomean"], "cpu/o": g["cpu_per_op_geomean"],
                         "cpu/o, engine + sysbench CPU": np.nan, "tests": 43, "against seed 003": ""})
        return (pd.DataFrame(rows).style.hide(axis="index")
                .format("{:.3g}", na_rep="n/a", subset=["QPS", "cpu/o", "cpu/o, engine + sysbench CPU"])
                .set_caption(f"Seed 003's summary row: geometric means of {engine_title(self._heap() or '')} / "
                             f"{engine_title(self.base or '')} ratios (seed 003: Postgres / MySQL); the test mixes "
                             "differ."))

    def _with_sysbench_geomean(self, regime: str) -> float:
        """The geometric mean over a regime's tests of heap / base CPU per operation with sysbench's own
        CPU added to each (seed 003's cpu/o may include its client's)."""
        heap = self._heap()
        s = self.steps[self.steps["regime"] == regime].set_index(["engine", "step"])
        if heap is None or s.empty:
            return float("nan")
        total = s["cpu_us_per_op"] + s["client_cpu_us_per_op"]
        ratios = [total.get((heap, st), np.nan) / total.get((self.base, st), np.nan)
                  for st in dict.fromkeys(s.index.get_level_values("step"))]
        return results.geometric_mean(ratios) if ratios and all(pd.notna(x) and x > 0 for x in ratios) else float("nan")

    def storage_table(self):
        """The IO-bound read tests, per engine: storage pages per operation (what its processes read
        from storage, in its own pages: did the test reach storage?), its own read counter beside it,
        and with one thread the time per storage read: wall time per query less the engine's and
        sysbench's CPU, over its storage pages (an estimate, not a device counter)."""
        s = self.steps[(self.steps["regime"] == "io-bound") & self.steps["step"].map(analysis.reads)]
        if s.empty:
            return None  # no IO-bound read test ran: nothing to say about storage
        s = s.sort_values("step", key=lambda steps: steps.map(list(dict.fromkeys(s["step"])).index), kind="stable")
        wall = 1e6 / s["ops_per_s"]
        per_read = analysis.storage_read_us(s)
        one_thread = self.param("threads") == 1
        return pd.DataFrame({
            "test": s["step"], "engine": [engine_title(e) for e in s["engine"]],
            "storage pages/op": s["storage_reads_per_op"].map(fmt),
            "reached storage (> 0.5)": ["yes" if v > analysis.STORAGE_REACHED else "no" if pd.notna(v) else "n/a"
                                        for v in s["storage_reads_per_op"]],
            "own read counter/op": s["reads_per_op"].map(fmt),
            "µs per query": wall.map(fmt),
            "µs per storage read (est.)": [fmt(v) if one_thread and pd.notna(v) else "n/a" for v in per_read],
        }).style.hide(axis="index").set_caption(
            "IO-bound reads: above 0.5 storage pages per query a point read went to storage.")

    LAYOUT_PAIRS = (("points-covered-pk.pre", "points-notcovered-pk.pre"),
                    ("range-covered-pk.pre", "range-notcovered-pk.pre"))

    def layout_table(self):
        """Within each engine, covered over not-covered QPS (same regime): what fetching a column beside
        the key costs it, free of the engines' other differences (executor, protocol, versions)."""
        rows, ratios = [], {}
        for covered, other in self.LAYOUT_PAIRS:
            for regime in self.regimes:
                for e in self.battery_engines:
                    q, n = self._step(regime, e, covered), self._step(regime, e, other)
                    if q is None or n is None or not n["ops_per_s"] > 0 or pd.isna(q["ops_per_s"]):
                        continue
                    c = analysis.step_contrast(n, q, "ops_per_s")
                    rows.append({"reads": covered.split("-")[0], "regime": regime,
                                 "engine": f"{engine_title(e)} ({_layout(e)})",
                                 "covered QPS": fmt_ci(q["ops_per_s"], q.get("ops_per_s_ci95", float("nan"))),
                                 "not covered QPS": fmt_ci(n["ops_per_s"], n.get("ops_per_s_ci95", float("nan"))),
                                 # Hostile read 44 (02 #3): a ratio of QPS whose CI is ±96% read as a finding.
                                 "covered / not covered (95% CI)": F.fmt_ratio(c["ratio"], c["ratio_low"],
                                                                               c["ratio_high"])})
                    ratios.setdefault((covered, regime), []).append(c["ratio"])
        if not rows:
            return None
        return pd.DataFrame(rows).style.hide(axis="index").set_caption(layout_caption(ratios))

    def _step(self, regime: str, engine: str, step: str) -> pd.Series | None:
        s = self.steps
        v = s[(s["regime"] == regime) & (s["engine"] == engine) & (s["step"] == step)]
        return v.iloc[0] if len(v) else None

    def _heap(self) -> str | None:
        return next((e for e in self.battery_engines if _organised(e, Organisation.HEAP)), None)

    # -- the appendix: this run's own conditions ----------------------------------------------------------
    def appendix_parts(self):
        parts = super().appendix_parts()
        parts += [("Buffer pools and data", self.buffer_table()),
                  ("Server settings each start read", self.settings_table()),
                  ("Absolute figures per test", self.step_table())]
        if self.key_kinds_fit():
            parts.append(("Seed 001's key kinds (every table fits its buffer pool, so the key-order effect cannot "
                          "show; `--set key-kinds` shows it)", self.key_kind_table(appendix=True)))
        return parts

    def step_table(self):
        """The absolute figures behind the ratios."""
        s = self.steps
        out = pd.DataFrame({
            "regime": s["regime"], "engine": [engine_title(e) for e in s["engine"]], "step": s["step"],
            "repetitions": s["n"], "ops": s["ops"], "ops/s": s["ops_per_s"],
            "ops/s 95% CI ±": s["ops_per_s_ci95"], "p95 ms": s["p95_ms"], "engine CPU µs/op": s["cpu_us_per_op"],
            "sysbench CPU µs/op (client)": s["client_cpu_us_per_op"],
            "storage reads/op (/proc io, engine pages)": s["storage_reads_per_op"],
            "storage read KB/op (/proc io)": s["storage_kb_per_op"],
            "engine reads/op (own counter)": s["reads_per_op"], "engine read KB/op": s["engine_read_kb_per_op"],
            "buffer hits/op": s["buffer_hits_per_op"],
            "change-buffer merges/op (InnoDB)": s["change_buffer_merges_per_op"],
        })
        return out.style.format(lambda v: fmt(v, digits=4), subset=list(out.columns[3:])).hide(axis="index")

    def settings_table(self):
        """Each start's readings the comparisons rest on: its durability and the dialect's settings."""
        rows = [{"engine": engine_title(e), "regime": regime, "settings": ", ".join(f"{k}={v}" for k, v in found.items())}
                for regime in self.regimes
                for e, found in analysis.start_settings(self.measurements, regime).items()]
        return pd.DataFrame(rows or [{"engine": "", "regime": "", "settings": "none read"}]).style.hide(axis="index")

    def buffer_table(self):
        """What each start's buffer pool / shared_buffers / block cache actually was (from its first
        window that read it), its effective cache, the data and its PK index against them, and its
        load; a regime that began from the first regime's snapshot of the loaded table has no load."""
        s = self.steps.dropna(subset=["buffer_pool_bytes"]).drop_duplicates(["regime", "engine"])
        loads = self.steps[self.steps["step"] == "load"].set_index(["regime", "engine"])["ops_per_s"]
        limit = self.param("io_bound_memory_limit_mb")
        data, pk = self._data_mib(), self._data_mib("pk_index_bytes")
        caches = self.io_bound_caches()
        return pd.DataFrame({"regime": s["regime"], "engine": [engine_title(e) for e in s["engine"]],
                             "buffer pool (MiB, as the server reports it)": s["buffer_pool_bytes"] / 2 ** 20,
                             "memory limit (MiB)": [limit if r == "io-bound" else "none" for r in s["regime"]],
                             "effective cache (MiB)": [caches[e]["text"] if r == "io-bound" and e in caches else
                                                       "everything (no limit)" for e, r in zip(s["engine"], s["regime"])],
                             "sbtest1 with indexes (MiB)": [fmt(data.get(e)) for e in s["engine"]],
                             "its PK index (MiB; InnoDB: the clustered index, rows included)": [
                                 fmt(pk.get(e)) if e in pk else "not reported" for e in s["engine"]],
                             "load rows/s": [fmt(loads[key]) if key in loads.index else "none: began from the first "
                                             "regime's loaded table" for key in zip(s["regime"], s["engine"])],
                             }).style.hide(axis="index").format("{:.4g}", subset=["buffer pool (MiB, as the server reports it)"])

    def _data_mib(self, figure: str = "data_bytes") -> dict[str, float]:
        """sbtest1's size with its indexes per engine (`figure`: or its PK index's), as the engine
        reported it in the first test window of the run (the freshly loaded table every regime
        begins from)."""
        if figure not in self.steps:
            return {}
        s = self.steps[self.steps["step"] != "load"].dropna(subset=[figure])
        first = s.drop_duplicates("engine")
        return dict(zip(first["engine"], first[figure] / 2 ** 20))

    # -- what the starts read ----------------------------------------------------------------------------
    def _setting(self, name: str) -> dict[str, str]:
        """Per engine, setting `name` as its starts read it (only the engines that read it)."""
        return {e: v[name] for e, v in analysis.start_settings(self.measurements).items() if name in v}

    def io_bound_caches(self) -> dict[str, dict]:
        """Per battery engine, its IO-bound cache as its IO-bound start read it: `direct` (reads
        bypass the OS page cache: InnoDB's O_DIRECT, PostgreSQL's debug_io_direct=data; None when
        the start read nothing that says), the setting that says so, the buffer pool and the
        effective cache in MiB (the pool alone, or at most the memory limit with the page cache)."""
        if "io-bound" not in self.regimes:
            return {}
        from ..load_fetch.analysis import direct_read_settings, reads_direct

        limit, pool = self.param("io_bound_memory_limit_mb"), self.param("io_bound_buffer_pool_mb")
        durability = self.durability()
        read = analysis.start_settings(self.measurements, "io-bound")
        steps = self.steps[self.steps["regime"] == "io-bound"].dropna(subset=["buffer_pool_bytes"])
        pools = dict(zip(steps["engine"], steps["buffer_pool_bytes"] / 2 ** 20))
        out = {}
        for engine in self.battery_engines:
            reading = ", ".join(x for x in (durability.get(engine, ""), ", ".join(
                f"{k}={v}" for k, v in read.get(engine, {}).items())) if x)
            direct = reads_direct(reading)
            said = direct_read_settings(reading) or "no setting read says so"
            mib = float(pools.get(engine, pool))
            cache = mib if direct else float(limit) if limit else float("nan")
            text = (f"{fmt(mib)}: the buffer pool only ({said})" if direct else
                    f"up to {fmt(cache)}: the buffer pool and the OS page cache within the memory limit ({said})")
            out[engine] = {"direct": direct, "setting": said, "pool_mib": mib, "cache_mib": cache, "text": text}
        return out

    def io_bound_confounded(self) -> bool:
        """The IO-bound regime's engines cached unequally: not every one read past the OS page
        cache, by what its start read."""
        caches = self.io_bound_caches()
        return len(caches) > 1 and not all(c["direct"] for c in caches.values())

    def base_binlog_only(self) -> bool:
        """The base engine synced a binary log at every commit and no other battery engine did: its
        write rows then compare different commit work."""
        from ..load_fetch.analysis import binlog_synced

        readings = self.durability()
        others = [e for e in self.battery_engines if e != self.base]
        return binlog_synced(readings.get(self.base, "")) and not any(binlog_synced(readings.get(e, "")) for e in others)

    def _capped(self, settle: pd.DataFrame) -> pd.DataFrame:
        """The settle windows that lasted their bound: the engine was still busy when they closed."""
        bound = self.param("max_settle_seconds")
        return settle[settle["value"] >= float(bound) - 0.05] if bound else settle.iloc[:0]

    def _spill_pairs(self) -> list[tuple[str, dict, dict | None]]:
        """Each settle window that reached its bound: its engine, its labels, and the labels of the
        next phase window of the same start (None after the start's last test), which its engine's
        leftover work ran into."""
        m = self.measurements
        if not {"window", "started_at", "instance_id"} <= set(m.columns):
            return []
        walls = m[(m["metric"] == "wall_time") & m["labels"].str.contains('"step"', na=False)]
        walls = walls.drop_duplicates(["instance_id", "window", "started_at"])
        capped = self._capped(walls[walls["window"] == "settle"]).sort_values("started_at")
        phases = walls[walls["window"] == "phase"].sort_values("started_at")
        out = []
        for instance, started, engine, labels in zip(capped["instance_id"], capped["started_at"], capped["engine"],
                                                     capped["labels"]):
            later = phases[(phases["instance_id"] == instance) & (phases["started_at"] > started)]
            out.append((engine, json.loads(labels), json.loads(later["labels"].iloc[0]) if len(later) else None))
        return out

    # -- seed 001's key kinds ----------------------------------------------------------------------------
    def key_kinds_fit(self) -> bool:
        """Whether every key-kind table fits its buffer pool (under 3x): then seed 001's key-order
        effect cannot show, and the table goes to the appendix."""
        return not self.keys.empty and max(self._over_buffer_pool(self.keys)) < 3

    def key_kind_table(self, appendix: bool = False):
        """Seed 001's key kinds: in the body where a table outgrew its pool, else in the appendix."""
        k = self.keys
        if k.empty or self.key_kinds_fit() != appendix:
            return None
        out = pd.DataFrame({
            "engine": [engine_title(e) for e in k["engine"]], "layout": k["layout"], "key": k["key_kind"],
            "insert order": k["order"], "rows": k["rows"], "insert CPU µs/row": k["insert_cpu_us_per_row"],
            "rows/s": k["rows_per_s"], "table B/row": k["table_bytes_per_row"], "index B/row": k["index_bytes_per_row"],
            "total B/row": k["bytes_per_row"], "insert cost vs bigint": k["insert_cost_vs_bigint"],
            "size vs bigint": k["size_vs_bigint"], "lookup CPU µs": k["lookup_cpu_us"],
            "table + indexes / buffer pool": self._over_buffer_pool(k),
        })
        return (out.style.format(fmt, subset=list(out.columns[4:])).hide(axis="index")
                .set_caption("Seed 001: each key kind and insert order against the same engine's bigint in key "
                             "order."))

    def _over_buffer_pool(self, k: pd.DataFrame) -> list[float]:
        """Each key-kind table's size (table and indexes) over the buffer pool its start ran with
        (seed 001's key-order effect shows only when the index is several times the pool)."""
        pools = {"cached": self.param("cached_buffer_pool_mb"), "io-bound": self.param("io_bound_buffer_pool_mb")}
        out = []
        for engine, regime, per_row, rows in zip(k["engine"], k["regime"], k["bytes_per_row"], k["rows"]):
            found = find_engine(engine)
            d = dialect_for(found) if found is not None else None
            pool = pools.get(regime) if d is not None and d.buffer_setting is not None else None
            out.append(per_row * rows / (pool * 2 ** 20) if pool else np.nan)
        return out


LAYOUT_CAPTION = ("Within one engine: a heap fetches <code>c</code> from its heap, a clustered PK holds it in the "
                  "leaf it read")
# Where every pair of engines' covered / not covered ratios agree within the threshold, the two
# layouts pay alike: what the not-covered test adds is returning `c`, not where it is stored.
LAYOUT_ALIKE = "; here both within 5%: the cost is returning <code>c</code>, not the heap"


def layout_caption(ratios: dict[tuple[str, str], list[float]]) -> str:
    """The layout table's caption; `ratios`: per test pair and regime, each engine's covered / not covered QPS."""
    pairs = [r for r in ratios.values() if len(r) > 1]
    alike = bool(pairs) and all(max(r) / min(r) <= 1 + F.THRESHOLD for r in pairs)
    return LAYOUT_CAPTION + (LAYOUT_ALIKE if alike else "") + "."


# An IO-bound QPS ratio moves with the device's latency, which no loop here times (hostile read 46b,
# 02 #1: verdicts reversed between two runs of one set while pages/o repeated): its part leads with
# the storage pages each engine read per operation, and gives QPS second, beside the run's read time.
IO_QPS = F.Phrases(templates={F.WIDE: "QPS {value} against {base_value}{mark} ({words}, CI over 10x wide)"},
                   default="QPS {ratio} ({words})")
READ_TIME = " at {us} µs per storage read"


def class_lines(found: pd.DataFrame, phrases: F.Phrases, marks: dict[str, int] | None = None,
                read_us: str | None = None) -> list[str]:
    """The answer: one line per headline row (analysis.CLASSES, in the seed's regime) with the same
    test's row in the other regime where it has a ratio, each rendered by the phrase table, with
    its footnote marks (`marks`: RunReport.answer_marks); an IO-bound QPS row after its test's
    pages/o row (`IO_QPS`), with `read_us` (the run's µs per storage read) beside it."""
    marks = marks or {}

    def said(r: dict) -> str:
        mark = RunReport.footnote(r, marks)
        if r["regime"] != analysis.SEED_REGIME or r["column"] != "QPS":
            return F.render(r, phrases, with_seed=True, mark=mark)
        qps = F.render(r, IO_QPS, mark=mark) + (READ_TIME.format(us=read_us) if read_us else "")
        pages = found[(found["engine"] == r["engine"]) & (found["step"] == r["step"]) & (found["regime"] == r["regime"])
                      & (found["column"] == "pages/o") & found["ratio"].notna()].to_dict("records")
        if not pages:
            return f"{r['regime']}: {qps}"
        seed = pages[0]["seed"] != F.SeedAgreement.NO_SEED.value
        return (F.render(pages[0], phrases, mark=RunReport.footnote(pages[0], marks)) + ", " + qps
                + ("; " + phrases.seed.format(**F.fields_of(pages[0], phrases)) if seed else ""))

    lines = []
    order = {label: i for i, (label, _, _) in enumerate(analysis.CLASSES)}  # the seed's order, the load last
    head = sorted(found[found["headline"] == True].to_dict("records"),  # noqa: E712 (object column)
                  key=lambda r: order.get(r["test_class"], len(order)))
    for row in head:
        same = found[(found["engine"] == row["engine"]) & (found["step"] == row["step"])
                     & (found["column"] == row["column"]) & (found["regime"] != row["regime"]) & found["ratio"].notna()]
        label = row["test_class"]
        lines.append(f"**{label[:1].upper() + label[1:]}** ({row['step']}): "
                     + "; ".join(said(r) for r in [row, *same.to_dict("records")]) + ".")
    return lines


def _same(a: float, b: float) -> bool:
    return (a != a and b != b) or a == b


def _buffers_nothing(value: str | None) -> bool:
    """innodb_change_buffering as read: none, 0, or no such setting (MariaDB 11 removed it)."""
    return value is not None and (value.lower() in ("none", "0") or value.startswith("not a setting"))
