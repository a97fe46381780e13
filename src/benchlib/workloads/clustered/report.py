"""The clustered-vs-heap notebook's tables, figures and narrative, on the shared report layer."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd

from ... import results
from ...engines import find_engine, get_engine
from ...errors import UnknownEngineError
from ...plots import engine_title, heatmaps
from ...report import RunReport, fmt, fmt_ratio_ci
from . import analysis
from .dialects import dialect_for
from .workload import TESTS

GOOD, BAD = "background-color: #c6efce", "background-color: #ffc7ce"  # seed 003 marks cells beyond ~5%
NO_SEED_FIGURE = "no seed figure"


def _dialect(key: str):
    try:
        return dialect_for(get_engine(key))
    except UnknownEngineError:
        return None


def _layout(key: str) -> str:
    d = _dialect(key)
    return d.layout if d else "?"


# Seed 003's examples of its class claim (the clustered PK helps where the heap engine fetches other
# columns from the heap) are its read-only and read-write tests, which this battery does not run.
CLASS_SHAPE = "the nearest shape here: the seed's own examples were its read-only and read-write tests, not run here"
# Seed 003's class claim (the heap engine fetches rows by random heap reads) cannot show in a short id
# range here: sysbench loads rows in id order, so the heap is in id order too.
IN_ORDER_RANGE = "range-notcovered"
IN_ORDER_RANGE_WHY = ("sysbench loaded the rows in id order, so PostgreSQL's heap is in id order and a 10-row id "
                      "range reads about one heap page, not the random heap reads the seed's claim is about")


def _defers_dead_rows(key: str) -> bool:
    d = _dialect(key)
    return bool(d and d.defers_dead_rows)


def _leaves_dead_rows(step: str) -> bool:
    """An update or delete: the old row versions it leaves are cleaned up later (vacuum, purge)."""
    test = step.removesuffix(".pre")
    return test.startswith("update") or test == "delete"


def _writes(step: str) -> bool:
    """A step of a test that writes (update, insert, delete): its commit work is in its figures."""
    return TESTS.get(step.removesuffix(".pre"), ("", {}, ""))[2] in ("write", "insert")


def _costs_under_direct_io(step: str) -> bool:
    """Where debug_io_direct is expected to cost: writes (an evicted dirty buffer is written there and
    then) and ranges (no read-ahead); a point query's random single-page reads lose neither."""
    return _writes(step) or step.startswith("range")


def same_winner(verdict: str, heap_won: bool, ci: str = "") -> str:
    """Seed 003's winner against this run's QPS verdict of the heap engine over the clustered base:
    "yes"/"no" only for a difference beyond noise and beyond the band; `ci` names the ratio's CI
    where noise leaves it undetermined."""
    if verdict in ("better", "worse"):
        return "yes" if (verdict == "better") == heap_won else "no"
    if verdict == "noise":
        return f"undetermined (CI {ci})" if ci else "undetermined (within noise)"
    if verdict == "drift":
        return f"undetermined (within the host's drift{', CI ' + ci if ci else ''})"
    return {"same": "tie (within 5%)", "untested": "untested (one repetition)",
            **{v: analysis.VERDICTS[v] for v in ("confounded", "binlog", "deferred")}}.get(verdict, "n/a")


def agreement(winner: str, seed_ratio: float, bound: str, ratio: float, low: float, high: float) -> str:
    """How far a "yes" goes: the seed's figure inside this run's CI (or, for "more than x", this run's
    ratio beyond x) agrees in size; a CI that excludes the seed's figure (for "more than x", lies wholly
    on the near side of x) says the size is not reproduced; otherwise only the direction agrees."""
    if winner != "yes" or not pd.notna(seed_ratio):
        return winner
    known = pd.notna(low) and pd.notna(high)
    if bound == "more than":
        sized = ratio > seed_ratio if seed_ratio >= 1 else ratio < seed_ratio
        refuted = known and (high < seed_ratio if seed_ratio >= 1 else low > seed_ratio)
    else:
        sized = known and low <= seed_ratio <= high
        refuted = known and not sized
    seed = f"{'>' if bound == 'more than' else '~'}{fmt(seed_ratio)}"
    if sized:
        return f"yes ({fmt(ratio)} vs {seed})"
    if refuted:
        return f"same direction, size not reproduced: {fmt(ratio)} (CI {fmt(low)}-{fmt(high)}) vs {seed}"
    return f"direction only: {fmt(ratio)} vs {seed}"


def _times(factor: float) -> str:
    """A factor built on a handful of reads, given no more digits than it has."""
    return "more than 1,000x" if factor > 1000 else f"{fmt(factor)}x"


def better_or_worse(verdict: str, ratio: float) -> float:
    """A heatmap cell's colour: +|log10 ratio| where the engine did better than the base, -|log10
    ratio| where worse, NaN (grey) where no verdict says either."""
    if verdict not in ("better", "worse") or not (pd.notna(ratio) and ratio > 0):
        return float("nan")
    return abs(float(np.log10(ratio))) * (1 if verdict == "better" else -1)


class ClusteredReport(RunReport):
    def __init__(self, run_id: str, store=None, base_engine: str | None = None):
        super().__init__(run_id, store)
        self.steps = analysis.steps(self.measurements)
        battery = [e for e in self.engines if e in set(self.steps["engine"])]
        self.battery_engines = battery
        clustered = [e for e in battery if "InnoDB" in _layout(e)]
        self.base = base_engine or (clustered[0] if clustered else (battery[0] if battery else None))
        self.regimes = list(dict.fromkeys(self.steps["regime"])) if not self.steps.empty else []
        self.drift = self.regime_drift()
        self.ratios = analysis.ratios(self.steps, self.base, analysis.THRESHOLD, self.drift) if self.base else pd.DataFrame(
            columns=["regime", "engine", "base", "step", "column", "ratio", "verdict"])
        if self.base and self.io_bound_confounded():
            self.ratios = analysis.confound(self.ratios, "io-bound")
        if self.base and self.base_binlog_only():
            self.ratios = analysis.binlog_confound(self.ratios, {s for s in self.steps["step"] if _writes(s)})
        deferring = {e for e in self.battery_engines if e != self.base and _defers_dead_rows(e)}
        if self.base and deferring:
            self.ratios = analysis.deferred_cleanup(self.ratios, {s for s in self.steps["step"] if _leaves_dead_rows(s)},
                                                    deferring)
        self.step_order = list(dict.fromkeys(self.steps["step"])) if not self.steps.empty else []
        self.keys = analysis.key_kinds(self.measurements)

    # -- seed 003's spreadsheet ----------------------------------------------------------------------
    def spreadsheet_frame(self, regime: str) -> pd.DataFrame:
        table = analysis.spreadsheet(self.ratios, regime, self.step_order)
        if table.empty:
            return table
        table.columns = pd.MultiIndex.from_tuples([(f"{engine_title(e)} / {engine_title(self.base)}", c)
                                                   for e, c in table.columns])
        return table

    def spreadsheet(self, regime: str):
        """Steps in the order they ran, ratios of each engine over the base (seed 003: Postgres
        over MySQL), geometric mean last; green: the engine does better than the base (faster, or
        less per operation), red: worse, each only where the difference is > 5% and beyond noise
        (Welch's test over the repetitions)."""
        table = self.spreadsheet_frame(regime)
        if table.empty:
            return pd.DataFrame({"": [f"no battery ratios in regime {regime!r}"]}).style.hide(axis="index")
        verdicts = analysis.spreadsheet(self.ratios, regime, self.step_order, value="verdict")
        verdicts.columns = table.columns
        colours = verdicts.map(lambda v: {"better": GOOD, "worse": BAD}.get(v, ""))
        return (table.style.apply(lambda _: colours, axis=None).format(fmt, na_rep="n/a")
                .set_caption(f"{regime}: ratios engine / {engine_title(self.base)}; coloured where beyond "
                             f"noise ({self.repetition_text()}) and beyond {self.band_text(regime, short=True)}; "
                             f"{self.tests_text(regime)} pages/o: storage reads in each engine's own pages (8 KiB "
                             "against 16 KiB) in the test's window (a write's cpu/o adds its settle window), seed 003's r/o, "
                             "judged; rKB/o: the same reads in KB, shown, not "
                             "judged (it is pages/o weighted by page size); "
                             + ("update and delete cells where PostgreSQL did better or tied are not comparable and "
                                "uncoloured (it left its dead rows to a vacuum no window ran); "
                                if (self.ratios[self.ratios["regime"] == regime]["verdict"] == "deferred").any() else "")
                             + "both storage columns are n/a where both "
                             f"engines read below {analysis.STORAGE_FLOOR} storage pages per operation (a ratio of "
                             "two near-zeros)"
                             + (f". {analysis.VERDICTS['confounded'].capitalize()}: no cell coloured ("
                                "see the caveats)" if regime == "io-bound" and self.io_bound_confounded() else "")))

    def regime_drift(self) -> dict[str, float]:
        """Per regime, how far the host's speed differed between the engines' starts (slowest against
        fastest engine's median calibration loop, minus 1): a ratio within it could be the host's,
        not the engines'. Per regime, since one regime's slow start says nothing of the other's."""
        if "metric" not in self.measurements:
            return {}
        c = results.calibrations(self.measurements)
        tagged = self.measurements[self.measurements["labels"].str.contains('"regime"', na=False)]
        tagged = tagged.drop_duplicates("instance_id")
        regime_of = {i: json.loads(labels).get("regime") for i, labels in zip(tagged["instance_id"], tagged["labels"])}
        c = c.assign(regime=c["instance_id"].map(regime_of)).dropna(subset=["regime", "calibration_s"])
        # What could bias a ratio between two engines is the host running slower through one engine's
        # measurement than the other's: per regime, their medians; per step (a step-major start
        # calibrates beside every step's repetition, and all of a step's repetitions can fall in one
        # slow stretch, which moves the mean without widening Welch's CI), the loops beside that step.
        c = c.assign(step=self._calibrated_step(c))
        out: dict = {}
        for key, g in [*c.groupby("regime", sort=False), *c.dropna(subset=["step"]).groupby(["regime", "step"],
                                                                                             sort=False)]:
            medians = g.groupby("engine")["calibration_s"].median()
            if len(medians) > 1:
                out[key] = float(medians.max() / medians.min()) - 1
        return out

    def _calibrated_step(self, c: pd.DataFrame) -> list:
        """The step each calibration loop ran beside: the next phase window of its start."""
        if "started_at" not in c:
            return [None] * len(c)
        m = self.measurements
        phases = m[(m["metric"] == "wall_time") & m["window"].isin(["phase", "warmup-phase"])]
        phases = phases.drop_duplicates("seq").sort_values("started_at")
        steps = []
        for instance, started in zip(c["instance_id"], c["started_at"]):
            later = phases[(phases["instance_id"] == instance) & (phases["started_at"] > started)]
            steps.append(later["phase"].iloc[0] if not later.empty else None)
        return steps

    def band_text(self, regime: str | None = None, short: bool = False) -> str:
        """The rule beyond noise: 5%, and the host's drift (of one regime, or of each); `short`: the
        caption's form, which leaves the rule's reasons to the caveats."""
        drifts = {r: d for r, d in self.drift.items() if isinstance(r, str) and regime in (None, r)}
        moved = "; ".join(f"{r} {1 + d:.2f}x" for r, d in drifts.items())
        if short:
            return ("5%" + (f" and the host's drift between the engines' starts ({moved}, or more for a test whose "
                            "own calibration loops differed more; the caveats give the rule)" if moved else ""))
        text = ("5% (this report's band, on the log scale: 1.05x either way; seed 003 highlighted only changes over "
                "~5% improvements of Postgres relative to MySQL in its qps and cpu/o ratios, from its older pair of "
                "versions to its newer, and coloured no "
                "PostgreSQL-against-MySQL difference and no storage column)")
        if moved:
            text += (f"; a difference whose 95% CI reaches into how far the host's speed differed between the engines' "
                     f"starts (slowest against fastest engine's median calibration loop: {moved}; per test, the loops "
                     "run beside that test's repetitions where they differed more) is undetermined, not a tie")
        return text

    def tests_text(self, regime: str) -> str:
        """How many cells were tested, each at 5% without correction for their number."""
        r = self.ratios[(self.ratios["regime"] == regime)
                        & self.ratios["verdict"].isin(["better", "worse", "same", "drift", "noise", "confounded",
                                                       "binlog", "deferred"])]
        if r.empty:
            return ""
        return (f"{len(r)} cells tested, each at 5% without correction for their number (about "
                f"{0.05 * len(r):.1f} could pass by chance);")

    def repetition_text(self) -> str:
        n = self.steps.loc[self.steps["step"] != "load", "n"]
        if n.empty:
            return "no repetitions"
        low, high = int(n.min()), int(n.max())
        count = f"{low}" if low == high else f"{low}-{high}"
        return (f"{count} repetitions per test, Welch's test at 5%" if high > 1
                else "one repetition per test: noise unknown, so nothing is coloured")

    def heatmap(self):
        """The spreadsheets as colours, one panel per engine and regime: each cell shows its ratio over
        the base; only a cell the spreadsheet calls better or worse is coloured, green for better and
        red for worse, deeper for a larger log ratio; every other cell is grey."""
        r = self.ratios.dropna(subset=["ratio"])
        if r.empty:
            return None
        r = r.assign(panel=[f"{engine_title(e)} / {engine_title(self.base)}, {g}" for e, g in
                            zip(r["engine"], r["regime"])],
                     step=[f"{self.step_order.index(s) + 1:02d} {s}" for s in r["step"]],
                     # Clipped at 10x either way: one ratio of two near-zero read counts (pk-cached's 2.4e-05)
                     # would otherwise stretch the scale until a 7x win and every loss looked pale.
                     goodness=[np.clip(better_or_worse(v, ratio), -1.0, 1.0)
                               for v, ratio in zip(r["verdict"], r["ratio"])])
        return heatmaps(r, x="column", y="step", value="ratio", facet="panel", columns=2, color="goodness",
                        x_order=[c for c, _, _ in analysis.RATIO_COLUMNS],
                        unit="log10 ratio, + better / - worse (10x and beyond: full colour)",
                        x_title="", y_title="step (in the order run)", name="clustered-ratios", text_format=fmt,
                        title=f"Ratios over {engine_title(self.base)} per regime<br><sup>green: better than the "
                              "base, red: worse (beyond noise and the band); grey: not shown to differ, not "
                              "comparable or not judged (the spreadsheet says which)</sup>")

    def step_table(self):
        """The absolute figures behind the ratios."""
        s = self.steps
        out = pd.DataFrame({
            "regime": s["regime"], "engine": [engine_title(e) for e in s["engine"]], "step": s["step"],
            "repetitions": s["n"], "ops": s["ops"], "ops/s": s["ops_per_s"],
            "ops/s 95% CI ±": s["ops_per_s_ci95"], "p95 ms": s["p95_ms"], "engine CPU µs/op": s["cpu_us_per_op"],
            "sysbench CPU µs/op (client)": s["client_cpu_us_per_op"],
            "engine + sysbench CPU µs/op": s["cpu_us_per_op"] + s["client_cpu_us_per_op"],
            "storage reads/op (/proc io, engine pages)": s["storage_reads_per_op"],
            "storage read KB/op (/proc io)": s["storage_kb_per_op"],
            "engine reads/op (own counter)": s["reads_per_op"], "engine read KB/op": s["engine_read_kb_per_op"],
            "storage read KB/op (cgroup blkio)": s["read_kb_per_op"], "buffer hits/op": s["buffer_hits_per_op"],
            "change-buffer merges/op (InnoDB)": s["change_buffer_merges_per_op"],
        })
        numeric = list(out.columns[3:])
        return out.style.format("{:.4g}", na_rep="n/a", subset=numeric).hide(axis="index")

    def buffer_table(self) -> pd.DataFrame:
        """What each start's buffer pool / shared_buffers / block cache actually was (from its
        first window that read it), and its load; a regime that began from the first regime's
        snapshot of the loaded table has no load of its own."""
        s = self.steps.dropna(subset=["buffer_pool_bytes"]).drop_duplicates(["regime", "engine"])
        loads = self.steps[self.steps["step"] == "load"].set_index(["regime", "engine"])["ops_per_s"]
        limit = self.param("io_bound_memory_limit_mb")
        data, pk = self._data_mib(), self._data_mib("pk_index_bytes")
        caches = self.io_bound_caches()
        return pd.DataFrame({"regime": s["regime"], "engine": [engine_title(e) for e in s["engine"]],
                             "buffer pool (MiB, as the server reports it)": s["buffer_pool_bytes"] / 2 ** 20,
                             "container memory limit (MiB)": [limit if r == "io-bound" else "none" for r in s["regime"]],
                             "effective cache (MiB)": [caches[e]["text"] if r == "io-bound" and e in caches else
                                                       "everything (no limit)" for e, r in zip(s["engine"], s["regime"])],
                             "sbtest1 with indexes (MiB, as the engine reported it at its first test)": [fmt(data.get(e)) for e in s["engine"]],
                             "its PK index (MiB; InnoDB: the clustered index, rows included)": [
                                 fmt(pk.get(e)) if e in pk else "not reported" for e in s["engine"]],
                             "data / memory limit": [fmt(data.get(e, np.nan) / limit) if r == "io-bound" and limit
                                                     else "n/a" for e, r in zip(s["engine"], s["regime"])],
                             "load rows/s": [fmt(loads[key]) if key in loads.index else "none: began from the first "
                                             "regime's loaded table" for key in zip(s["regime"], s["engine"])],
                             }).reset_index(drop=True)

    def _data_mib(self, figure: str = "data_bytes") -> dict[str, float]:
        """sbtest1's size with its indexes per engine (`figure`: or its PK index's), as the engine
        reported it in the first test window of the run (the freshly loaded table every regime
        begins from)."""
        if figure not in self.steps:  # a step frame built without it (analysis.repetitions always has it)
            return {}
        s = self.steps[self.steps["step"] != "load"].dropna(subset=[figure])
        first = s.drop_duplicates("engine")
        return dict(zip(first["engine"], first[figure] / 2 ** 20))

    # -- settings read from the servers -----------------------------------------------------------------
    def _setting(self, name: str) -> dict[str, str]:
        """Per engine, setting `name` as its starts read it (only the engines that read it)."""
        return {e: v[name] for e, v in analysis.start_settings(self.measurements).items() if name in v}

    def change_buffer_note(self) -> str:
        """Seed 003's explanation of InnoDB's insert advantage against what each InnoDB start read."""
        found = self._setting("innodb_change_buffering")
        text = ("Seed 003 suspects InnoDB's change buffer (secondary-index changes merged later) is the reason for "
                "its ~3x insert advantage. ")
        if not found:
            return text + "This run read no innodb_change_buffering setting from a server, so whether it buffered is unknown."
        off = [e for e, v in found.items() if v.lower() in ("none", "0") or v.startswith("not a setting")]
        on = [e for e in found if e not in off]
        text += "Read from each InnoDB server at its start (benchlib does not set it): " + "; ".join(
            f"{engine_title(e)} innodb_change_buffering={v}" for e, v in found.items()) + ". "
        if off:
            text += (f"{', '.join(engine_title(e) for e in off)} buffered no secondary-index change, so wherever the "
                     "insert row is not reproduced, the seed's mechanism is one reason it cannot be")
        if on:
            text += (("; " if off else "") + f"{', '.join(engine_title(e) for e in on)} had it enabled, as read at "
                     "start. " + self._change_buffer_merges(on))
        return text + "."

    def adaptive_hash_note(self) -> str:
        """InnoDB's adaptive hash index as each start read it, against seed 003's MySQL 8.0.22 default."""
        found = self._setting("innodb_adaptive_hash_index")
        if not found:
            return ""
        said = {"0": "OFF", "1": "ON"}
        return ("InnoDB's adaptive hash index, read from each InnoDB server at its start (benchlib does not set it): "
                + "; ".join(f"{engine_title(e)} innodb_adaptive_hash_index={said.get(v, v)}" for e, v in found.items())
                + ". Seed 003's MySQL 8.0.22 had it ON by default (MySQL 8.4 made OFF the default); with it on, InnoDB "
                "can answer a lookup it has seen repeatedly from a hash over buffer-pool pages instead of descending "
                "the B-tree, so its cpu/o on point lookups may differ from the seed's for this reason too (not "
                "measured here).")

    def _change_buffer_merges(self, engines: list[str]) -> str:
        """What the change buffer of `engines` merged during the insert test's windows, per insert, from
        INNODB_METRICS: a merged record had been buffered, so merges show the buffer in use."""
        s = self.steps[self.steps["step"] == "insert"]
        if s.empty:
            return "This run had no insert test, so the seed's explanation does not arise here"
        if "change_buffer_merges_per_op" not in s or s["change_buffer_merges_per_op"].dropna().empty:
            return ("Whether it buffered any change, and what that saved, was not measured in this run (no change-"
                    "buffer merge counter was recorded), so the seed's explanation is neither confirmed nor refuted")
        parts = [f"{engine_title(e)} " + ", ".join(f"{r} {fmt(v)}" for r, v in zip(g["regime"], g["change_buffer_merges_per_op"]))
                 for e, g in s[s["engine"].isin(engines)].dropna(subset=["change_buffer_merges_per_op"]).groupby(
                     "engine", sort=False)]
        return ("Secondary-index records merged from the change buffer per insert, in the insert test's windows "
                "(INNODB_METRICS ibuf_merges_*; a merged record had been buffered, and one merged later, outside "
                "these windows, is not in them): " + "; ".join(parts) + ". Merges show the buffer in use; what it "
                "saved against an InnoDB without it was not measured (no run here sets innodb_change_buffering=none), "
                "so the seed's explanation is neither confirmed nor refuted")

    def write_row_note(self) -> str:
        """Why a write row compares different commit work, from the settings each start read: a
        binary log synced at every commit is a second fsync only its engine does."""
        from ..load_fetch.analysis import binlog_synced, settings

        readings = self.durability()
        synced = {e: settings(readings[e]) for e in self.battery_engines if binlog_synced(readings.get(e, ""))}
        if not synced:
            return ""
        return "; ".join(f"{engine_title(e)} also syncs a binary log at each commit (log_bin={found['log_bin']}, "
                         f"sync_binlog={found['sync_binlog']}, as read at start): a second fsync and a two-phase "
                         "commit per write" for e, found in synced.items()) + \
            ", which the other engine does not do"

    def write_durability_note(self) -> str:
        """What each write test's commit waited for, from each start's own durability reading: a
        binary log synced at commit is a cost only MySQL's write rows carry."""
        from ..load_fetch.analysis import commit_text, settings

        readings = self.durability()
        parts = [f"{engine_title(engine)} ({readings[engine]}): {commit_text(readings[engine])}"
                 for engine in self.battery_engines if settings(readings.get(engine, ""))]
        if not parts:
            return "Write tests: no start's durability settings were read, so what a commit waited for is unknown."
        off = ("This run set binary_log=false: a server that writes a binary log by default (MySQL) started "
               "without one (--skip-log-bin), so a write's commit syncs one log in every engine: its own redo log or "
               "WAL. " if self.param("binary_log") is False else "")
        seed = ("Seed 003's servers' binary-log settings are not given (MySQL 8.0.22 writes and syncs one by default "
                "unless its configuration turns it off), so its write rows may include a binary log that this run's do "
                "not: running without one spares MySQL a second fsync per commit." if off else
                "Seed 003's servers' binary-log settings are not given: a write row here includes whatever logging its "
                "server did, the binary log included.")
        return ("Write tests (update, insert, delete: one commit per event) by each server's settings as read at its "
                "start: " + "; ".join(parts) + ". " + off + seed)

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

    def base_binlog_only(self) -> bool:
        """The base engine synced a binary log at every commit and no other battery engine did: its
        write rows then compare different commit work (seed 003 does not say its servers' setting)."""
        from ..load_fetch.analysis import binlog_synced

        readings = self.durability()
        others = [e for e in self.battery_engines if e != self.base]
        return binlog_synced(readings.get(self.base, "")) and not any(binlog_synced(readings.get(e, "")) for e in others)

    def io_bound_confounded(self) -> bool:
        """The IO-bound regime's engines cached unequally: not every one read past the OS page
        cache, by what its start read."""
        caches = self.io_bound_caches()
        return bool(caches) and len(caches) > 1 and not all(c["direct"] for c in caches.values())

    def io_fairness_note(self) -> str:
        """The IO-bound regime's caches per engine, in numbers, beside each engine's data, from
        what each IO-bound start read."""
        caches = self.io_bound_caches()
        if not caches:
            return ""
        data = self._data_mib()
        parts = [f"{engine_title(e)} served {fmt(data[e]) if e in data else '?'} MiB of data through "
                 + (f"its {fmt(c['pool_mib'])} MiB buffer pool only ({c['setting']}; "
                    f"data {fmt(data[e] / c['cache_mib']) if e in data else '?'}x its cache)" if c["direct"] else
                    f"its {fmt(c['pool_mib'])} MiB buffer pool and the OS page cache, up to {fmt(c['cache_mib'])} "
                    f"MiB in all ({c['setting']})") for e, c in caches.items()]
        if not self.io_bound_confounded():
            return ("IO-bound caches are equal in kind: " + "; ".join(parts) + ". Every engine's storage reads are "
                    "its buffer-pool misses.")
        return ("IO-bound caches are NOT equal: " + "; ".join(parts) + ". An engine reading through the page cache "
                "has misses served by a larger cache, so the IO-bound verdicts, colours and 'same winner?' are shown "
                f"as '{analysis.VERDICTS['confounded']}' (the ratios stay).")

    def read_path_text(self) -> str:
        """How each engine's storage reads reach it, per regime, from what its IO-bound start read."""
        pg_direct = any("debug_io_direct=data" in c["setting"] for c in self.io_bound_caches().values())
        return ("PostgreSQL reads through the page cache" + (" in the cached regime" if pg_direct else "")
                + ", so kernel read-ahead counts in its bytes there"
                + ("; in the IO-bound regime it reads its data files with O_DIRECT (debug_io_direct=data, a "
                   "developer option that PostgreSQL's documentation says currently reduces performance: version "
                   "17 has no asynchronous I/O, so every read and every write of a buffer evicted from the small "
                   "pool waits for the device, without the kernel's read-ahead or write-back). PostgreSQL's "
                   "IO-bound figures are therefore expected to be a lower bound, mostly for the writes (expected, not "
                   "measured: no run here went without the setting, which would also give PostgreSQL up to the "
                   "memory limit of page cache, a different comparison), and depart from seed 003, whose PostgreSQL read "
                   "through the page cache; the setting is what makes its cache the same size as InnoDB's"
                   if pg_direct else "") + "; InnoDB reads with O_DIRECT.")

    def settle_note(self) -> str:
        """What a write's settle window does not cover, from its measured lengths and the
        checkpoint_timeout each PostgreSQL start read: a quiet CPU is not a flushed cache."""
        m = self.measurements
        if "window" not in m:
            return ""
        settle = m[(m["window"] == "settle") & (m["metric"] == "wall_time")
                   & m["labels"].str.contains('"step"', na=False)]
        if settle.empty:
            return ""
        spans = "; ".join(f"{engine_title(e)} {fmt(g['value'].min())}-{fmt(g['value'].max())} s"
                          for e, g in settle.groupby("engine", sort=False))
        timeouts = self._setting("checkpoint_timeout")
        bound = self.param("max_settle_seconds")
        capped = self._capped(settle)
        text = (f"Settle windows after the load and each write (they end when the engine's CPU goes quiet, or at the "
                f"max_settle_seconds bound of {fmt(bound)} s) lasted {spans}"
                + (f"; {len(capped)} of {len(settle)} reached the bound, so their engine was still busy when the "
                   "window closed, and the rest of its work fell into the next window of its start, or into none "
                   "after the start's last test (" + self._capped_text(capped) + "; the findings name each judged "
                   "test it fell into)" if len(capped) else "; every one ended on quiet")
                + ". Quiet CPU is not a flushed cache: ")
        if timeouts:
            text += ("; ".join(f"{engine_title(e)}'s dirty shared buffers wait for a checkpoint (checkpoint_timeout="
                               f"{v}, as read at start)" for e, v in timeouts.items())
                     + ", and what it writes through the OS page cache the kernel writes back outside the "
                     "container's cgroup"
                     + (" (in the IO-bound regime, with debug_io_direct=data, its checkpointer writes data files "
                        "itself, at the checkpoint)" if any("debug_io_direct=data" in c["setting"]
                                                            for c in self.io_bound_caches().values()) else "")
                     + "; ")
        return text + ("InnoDB's page cleaner flushes inside its own cgroup as it goes. A write row's cpu/o "
                       "therefore carries InnoDB's flushing that fell inside its windows but none of PostgreSQL's "
                       "deferred checkpoint writes.")

    def _capped_text(self, capped: pd.DataFrame) -> str:
        """Each capped settle window, and where its leftover work went where the store says."""
        pairs = self._spill_pairs()
        if not pairs:
            return ", ".join(sorted({f"{engine_title(e)} {json.loads(l).get('regime', '')} {json.loads(l).get('step', '')}"
                                     for e, l in zip(capped["engine"], capped["labels"])}))
        into = [f"{engine_title(e)} {b.get('regime', '')} {b.get('step', '')} into "
                + ("none: the start's last test" if a is None else
                   f"{a.get('step')}{' (its next repetition)' if a.get('step') == b.get('step') else ''}")
                for e, b, a in pairs]
        return ", ".join(dict.fromkeys(into))

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

    def spills(self) -> dict[tuple, list[str]]:
        """Per (regime, engine, step): the writes whose settle window reached its bound right before one
        of that step's windows in the same start, so their leftover work ran inside it (the next
        repetition of the same write, or the next test)."""
        out: dict[tuple, list[str]] = {}
        for engine, before, after in self._spill_pairs():
            if after is not None:
                found = out.setdefault((after.get("regime"), engine, after.get("step")), [])
                if before.get("step") not in found:
                    found.append(before.get("step"))
        return out

    def _spill_note(self, regime: str, engine: str, judged: list[str]) -> str:
        """The judged steps of one engine pair whose windows carry an earlier write's leftover work."""
        spills = self.spills()
        parts = [f"{step} ({engine_title(e)}'s, after {', '.join(spills[(regime, e, step)])})"
                 for step in judged for e in dict.fromkeys((engine, self.base)) if (regime, e, step) in spills]
        if not parts:
            return ""
        return (" Windows that began while the engine was still busy with an earlier write (its settle window "
                "reached the bound), so that write's leftover work is in them: " + "; ".join(parts) + ".")

    def key_kind_note(self) -> str:
        """Whether the key-kind tables were large enough against the buffer pool for seed 001's
        key-order effect to show, and which set makes them so."""
        k = self.keys
        if k.empty:
            return ""
        ratio = pd.Series(self._over_buffer_pool(k)).dropna()
        if ratio.empty:
            return ""
        rows = int(k["rows"].max())
        text = (f"Key kinds: {rows:,} rows per table, table and indexes {fmt(ratio.min())}-{fmt(ratio.max())}x the "
                "buffer pool its start ran with. ")
        if ratio.max() < 3:
            return text + ("Seed 001's key-order effect (random-order inserts slower once the index is several times "
                           "the pool) cannot show at this size: every page stays cached. `--set key-kinds` (600,000 "
                           "rows under the IO-bound 16 MiB pool) is the set that shows it.")
        return text + "Large enough for seed 001's key-order effect to show where the index outgrows the pool."

    # -- seed 001's key kinds ---------------------------------------------------------------------------
    def key_kind_table(self):
        k = self.keys
        if k.empty:
            return pd.DataFrame({"": ["the key-kind part did not run in this set: `benchlib run 02 --set key-kinds` "
                                      "runs it with tables several times the buffer pool"]}).style.hide(axis="index")
        out = pd.DataFrame({
            "engine": [engine_title(e) for e in k["engine"]], "layout": k["layout"], "key": k["key_kind"],
            "insert order": k["order"], "rows": k["rows"], "insert CPU µs/row": k["insert_cpu_us_per_row"],
            "rows/s": k["rows_per_s"], "table B/row": k["table_bytes_per_row"], "index B/row": k["index_bytes_per_row"],
            "total B/row": k["bytes_per_row"], "insert cost vs bigint": k["insert_cost_vs_bigint"],
            "size vs bigint": k["size_vs_bigint"], "lookup CPU µs": k["lookup_cpu_us"],
            "table + indexes / buffer pool": self._over_buffer_pool(k),
        })
        return out.style.format("{:.4g}", na_rep="n/a", subset=list(out.columns[4:])).hide(axis="index")

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

    # -- seed 003 beside this run --------------------------------------------------------------------
    def reference_table(self) -> pd.DataFrame:
        """Seed 003's published direction per step beside this run's QPS ratio of the heap engine
        (the first PostgreSQL of the run) over the base, per regime. A step with a seed figure agrees
        "yes" only in direction unless the figure is within this run's CI; a step the seed states a
        direction for only as a class (no row, no figure) is "agrees (direction only)" or
        "contradicted"; a write row says what commit work differed, as the servers read it."""
        ref = results.reference("seed003_direction")
        heap = next((e for e in self.battery_engines if "heap" in _layout(e)), None)
        claimed = ref["spreadsheet_row"].notna() & ref["qps_ratio_pg_over_mysql"].notna()
        out = pd.DataFrame({"step": ref["step"],
                            "seed 003 winner": [engine_title(w) if c else f"{engine_title(w)} (stated for the class: "
                                                f"{NO_SEED_FIGURE})" for w, c in zip(ref["winner"], claimed)],
                            "seed 003 QPS PG/MySQL": [f"{b} {fmt(v)}" if c else NO_SEED_FIGURE
                                                      for b, v, c in zip(ref["ratio_bound"],
                                                                         ref["qps_ratio_pg_over_mysql"], claimed)]})
        if heap is None or self.base is None:
            return out
        direct = "debug_io_direct" in self.io_bound_caches().get(heap, {}).get("setting", "")
        for regime in self.regimes:
            r = self.ratios[(self.ratios["regime"] == regime) & (self.ratios["engine"] == heap)
                            & (self.ratios["column"] == "QPS")].set_index("step")

            def uncached(step: str, regime: str = regime) -> str:
                # Seed 003's covered-PK wins rest on PostgreSQL's PK index staying cached while InnoDB's did not.
                pages = self._figure(regime, heap, step, "storage_reads_per_op")
                return (f" (the seed's condition not met: {engine_title(heap)} read {fmt(pages)} storage pages per "
                        "query, so its PK index was not cached either)"
                        if "covered-pk" in step and "notcovered" not in step and pd.notna(pages)
                        and pages > analysis.STORAGE_REACHED else "")

            def handicap(verdict: str, step: str, regime: str = regime) -> str:
                # A loss measured under a setting that is expected to slow the heap engine down.
                return (f" (a loss under debug_io_direct=data, expected to understate {engine_title(heap)} here)"
                        if direct and regime == "io-bound" and verdict == "worse" and _costs_under_direct_io(step) else "")
            cell = []
            for step, winner, c, seed, bound in zip(ref["step"], ref["winner"], claimed,
                                                     ref["qps_ratio_pg_over_mysql"], ref["ratio_bound"]):
                if step not in r.index:
                    cell.append("not run (reads_after_writes=false)" if not step.endswith(".pre") and
                                TESTS.get(step, ("", {}, ""))[2] == "read" and self.param("reads_after_writes") is False
                                else "not run in this set")
                    continue
                row = r.loc[step]
                low, high = row.get("ratio_low", np.nan), row.get("ratio_high", np.nan)
                ci = f"{fmt(low)}-{fmt(high)}" if pd.notna(low) and pd.notna(high) else ""
                said = same_winner(row["verdict"], winner == "postgres", ci)
                if c:
                    outside = (said.startswith("undetermined") and bound != "more than" and pd.notna(low)
                               and pd.notna(seed) and not low <= seed <= high)
                    cell.append(agreement(said, seed, bound, row["ratio"], low, high)
                                + (f"; the seed's ~{fmt(seed)} lies outside this CI" if outside else "")
                                + handicap(row["verdict"], step) + uncached(step))
                elif step.startswith(IN_ORDER_RANGE):
                    covered = self._figure(regime, heap, step.replace("notcovered", "covered"), "storage_reads_per_op")
                    mine = self._figure(regime, heap, step, "storage_reads_per_op")
                    verdict = {"better": f"{engine_title(heap)} faster", "worse": f"{engine_title(heap)} slower"}.get(
                        row["verdict"], analysis.VERDICTS.get(row["verdict"], row["verdict"]))
                    cell.append(f"not tested by this shape ({fmt(row['ratio'])}, {verdict}"
                                + (f"; PostgreSQL read {fmt(mine)} storage pages per query against {fmt(covered)} for "
                                   "the covered range" if pd.notna(mine) and pd.notna(covered) and mine > covered
                                   else "") + f"): {IN_ORDER_RANGE_WHY}")
                else:
                    cell.append({"yes": "agrees (direction only", "no": "contradicted ("}.get(said, said)
                                + ({"yes": "; ", "no": ""}[said] + CLASS_SHAPE + ")" if said in ("yes", "no") else "")
                                + handicap(row["verdict"], step))
            out[f"this run {regime}: {engine_title(heap)}/{engine_title(self.base)}"] = [
                fmt(r["ratio"].get(s, np.nan)) for s in ref["step"]]
            out[f"{regime}: same winner?"] = cell
        note = self.write_row_note() or (
            "MySQL without its binary log (binary_log=false): one synced log per commit in each engine, a basis "
            "seed 003 does not state (its MySQL 8.0.22 wrote one by default)" if self.param("binary_log") is False
            else "")
        if note:
            out["commit work (writes)"] = [note if TESTS.get(t, ("", {}, ""))[2] in ("write", "insert") else ""
                                           for t in ref["test"]]
        return out

    def seed_summary(self) -> str:
        """This run's geometric means and storage ratio beside seed 003's, in numbers."""
        if self.base is None:
            return ""
        heap = next((e for e in self.battery_engines if "heap" in _layout(e)), None)
        if heap is None:
            return ""
        geo = results.reference("seed003_geomean").set_index("comparison").loc["new"]
        ref = results.reference("seed003_direction").set_index("step")
        parts, counts = [], []
        for regime in self.regimes:
            table = analysis.spreadsheet(self.ratios, regime, self.step_order)
            if table.empty or (heap, "QPS") not in table.columns:
                continue
            qps, cpu = table.loc["geometric mean", (heap, "QPS")], table.loc["geometric mean", (heap, "cpu/o")]
            # Each regime's own rows: the load is measured in the regime that loaded the table only.
            rows = [step for step in table.index if step != "geometric mean"]
            with_client = self._with_sysbench_geomean(regime, heap, rows)
            r = self.ratios[(self.ratios["regime"] == regime) & (self.ratios["engine"] == heap)
                            & (self.ratios["column"] == "QPS")]
            apart = [s for s in rows if s in set(r[r["verdict"].isin(["deferred", "binlog", "confounded"])]["step"])]
            kept = [s for s in rows if s not in apart]
            parts.append(f"{regime}: QPS {fmt(qps)}, cpu/o {fmt(cpu)}"
                         + (f" (engine + sysbench CPU: {fmt(with_client)})" if pd.notna(with_client) else "")
                         + (f"; without the rows marked not comparable ({', '.join(apart)}): QPS "
                            f"{fmt(results.geometric_mean(table.loc[kept, (heap, 'QPS')]))}, cpu/o "
                            f"{fmt(results.geometric_mean(table.loc[kept, (heap, 'cpu/o')]))}" if apart and kept else ""))
            counts.append(f"{regime} {len(rows)}" + (", the load's included" if "load" in rows else ""))
        text = (f"Geometric means of {engine_title(heap)} / {engine_title(self.base)} over this run's tests: "
                + "; ".join(parts) + f". Seed 003 (Postgres {geo['postgres_version']} / MySQL "
                f"{geo['mysql_version']}, over its whole spreadsheet): QPS {fmt(geo['qps_geomean'])}, cpu/o "
                f"{fmt(geo['cpu_per_op_geomean'])}. The test mixes differ (this run's means are over its spreadsheet "
                f"rows, {'; '.join(counts)}; the seed's over its own rows), so the means compare the runs, not the "
                "engines alone.")
        seed_reads = ref.loc["points-covered-pk.pre", "reads_per_op_ratio_pg_over_mysql"]
        r = self.ratios[(self.ratios["regime"] == "io-bound") & (self.ratios["engine"] == heap)
                        & (self.ratios["step"] == "points-covered-pk.pre")].set_index("column")
        if "pages/o" in r.index and pd.notna(seed_reads):
            # The seed's r/o is storage reads per query; with O_DIRECT on both engines a point query's reads
            # are single pages, so pages/o is the count to set beside it (rKB/o weighs 8 KiB against 16 KiB).
            ours, kb = r.loc["pages/o", "ratio"], r.loc["rKB/o", "ratio"] if "rKB/o" in r.index else np.nan
            pg_pages = self._figure("io-bound", heap, "points-covered-pk.pre", "storage_reads_per_op")
            base_pages = self._figure("io-bound", self.base, "points-covered-pk.pre", "storage_reads_per_op")
            pk = self._data_mib("pk_index_bytes")
            text += (f" Storage reads on points-covered-pk.pre, IO-bound: PostgreSQL / InnoDB pages/o "
                     f"{fmt(ours) if pd.notna(ours) else 'n/a (both below the floor)'} (rKB/o {fmt(kb)}) here against "
                     f"the seed's r/o of about {fmt(seed_reads)} (1/30)"
                     + (f": InnoDB read {_times(1 / ours)} PostgreSQL's pages here, against about "
                        f"{1 / seed_reads:.0f}x in the seed" if pd.notna(ours) and ours > 0 else "")
                     + f". Seed 003's explanation is that PostgreSQL's primary-key index stays cached while InnoDB's "
                     f"larger clustered index does not; here PostgreSQL itself read {fmt(pg_pages)} storage pages per "
                     + (f"query, so its index was not cached either in a {self.param('io_bound_buffer_pool_mb')} MiB "
                        "pool, and a smaller gap than the seed's is what that predicts (`--set pk-cached` runs a "
                        "64 MiB pool, sized to hold PostgreSQL's PK index at 2M rows but not InnoDB's clustered one)."
                        if pd.notna(pg_pages) and pg_pages > analysis.STORAGE_REACHED else
                        f"query against InnoDB's {fmt(base_pages)}: the part of its PK index this test touched "
                        f"stayed in the {self.param('io_bound_buffer_pool_mb')} MiB pool, the seed's condition"
                        + (f" (PK index {fmt(pk[heap])} MiB, against InnoDB's clustered PK index of "
                           f"{fmt(pk[self.base])} MiB, as each engine reported them)"
                           if heap in pk and self.base in pk else " (each index's own size is not measured)")
                        + ("; a stronger asymmetry of reads than the seed's, so a QPS gap smaller than the seed's is "
                           "not for want of that condition: the time a storage read takes and each engine's CPU per "
                           "query set the rest, and neither is known for the seed's host"
                           if pd.notna(ours) and ours < seed_reads / 3 else "") + "."))
        return text

    def _with_sysbench_geomean(self, regime: str, heap: str, rows: list[str]) -> float:
        """The geometric mean over `rows` of heap / base CPU per operation with sysbench's own CPU
        added to each (NaN where a row lacks either)."""
        s = self.steps[self.steps["regime"] == regime].set_index(["engine", "step"])
        total = s["cpu_us_per_op"] + s["client_cpu_us_per_op"] if "client_cpu_us_per_op" in s else None
        if total is None:
            return float("nan")
        ratios = [total.get((heap, r), np.nan) / total.get((self.base, r), np.nan) for r in rows]
        if not ratios or not all(pd.notna(x) and x > 0 for x in ratios):
            return float("nan")
        return results.geometric_mean(ratios)

    # -- narrative ---------------------------------------------------------------------------------------
    def _figure(self, regime: str, engine: str, step: str, figure: str) -> float:
        s = self.steps
        v = s[(s["regime"] == regime) & (s["engine"] == engine) & (s["step"] == step)][figure]
        return float(v.iloc[0]) if len(v) else float("nan")

    def findings(self) -> str:
        """Which tests each engine wins and loses against the clustered base (> 5% and beyond noise),
        each claim with its ratio's 95% CI and the storage reads per operation of both engines."""
        if self.base is None:
            return "- the battery did not run"
        lines = []
        for regime in self.regimes:
            r = self.ratios[(self.ratios["regime"] == regime) & (self.ratios["column"] == "QPS")]
            for engine in dict.fromkeys(r["engine"]):
                rows = r[r["engine"] == engine]
                parts: dict[str, list[str]] = {v: [] for v in analysis.VERDICTS}
                for row in rows.itertuples():
                    if row.verdict in ("better", "worse"):
                        mine = self._figure(regime, engine, row.step, "storage_reads_per_op")
                        theirs = self._figure(regime, self.base, row.step, "storage_reads_per_op")
                        parts[row.verdict].append(f"{row.step} ({fmt_ratio_ci(row.ratio, row.ratio_low, row.ratio_high, 'x')}"
                                                  f"; storage pages/op {fmt(mine)} vs {fmt(theirs)})")
                    elif row.verdict in ("noise", "drift"):
                        parts[row.verdict].append(f"{row.step} ({fmt_ratio_ci(row.ratio, row.ratio_low, row.ratio_high, 'x')})")
                    else:
                        parts[row.verdict].append(row.step)
                e, b = engine_title(engine), engine_title(self.base)
                lines.append(f"**{regime}, {e} ({_layout(engine)}) against {b} ({_layout(self.base)}):** faster on "
                             f"{'; '.join(parts['better']) or 'none'}. Slower on {'; '.join(parts['worse']) or 'none'}."
                             + "".join(f" {analysis.VERDICTS[v].capitalize()} on {', '.join(parts[v])}."
                                       for v in ("same", "drift", "noise", "untested", "confounded", "binlog",
                                                 "deferred", "n/a")
                                       if parts[v])
                             + self._lower_bound_note(regime, engine, any(
                                 _costs_under_direct_io(row.step) for row in rows.itertuples() if row.verdict == "worse"))
                             + self._spill_note(regime, engine, [row.step for row in rows.itertuples()
                                                                 if row.verdict in ("better", "worse")]))
        lines += [self.layout_within_engines(), self.storage_wait_line(), self.departures_line()]
        lines += self.io_bound_check()
        lines.append(self.write_findings_caveat())
        return "\n".join(f"- {line}" for line in lines if line)

    LAYOUT_PAIRS = (("points-covered-pk.pre", "points-notcovered-pk.pre"), ("range-covered-pk.pre", "range-notcovered-pk.pre"))

    def layout_within_engines(self) -> str:
        """Each engine's covered over not-covered throughput, per regime: what fetching a column outside
        the primary key costs within one engine, the layout's own effect, free of the engines' other
        differences (executor, protocol, versions), which every ratio between engines carries."""
        parts = []
        for covered, other in self.LAYOUT_PAIRS:
            for regime in self.regimes:
                found = [f"{engine_title(e)} {fmt(q / n)}x" for e in self.battery_engines
                         if pd.notna(q := self._figure(regime, e, covered, "ops_per_s"))
                         and pd.notna(n := self._figure(regime, e, other, "ops_per_s")) and n > 0]
                if len(found) > 1:
                    parts.append(f"{covered.split('-')[0]} {regime}: " + ", ".join(found))
        if not parts:
            return ""
        return ("**The layout within each engine** (QPS of the covered test over the not-covered one, same engine "
                "and regime: what fetching c beside the key costs; a heap engine reads the heap for it, a clustered "
                "one finds it in the PK leaf it already read; every ratio between engines also carries their other "
                "differences): " + "; ".join(parts) + ".")

    def storage_wait_line(self, step: str = "points-notcovered-pk.pre") -> str:
        """With one thread, how long each IO-bound operation waited per storage read: its wall time
        (1 / QPS) less the engine's and sysbench's CPU per operation, over its storage pages. Short
        waits mean fast storage, where the regime's ratios weigh CPU as much as reads."""
        if "io-bound" not in self.regimes or self.param("threads") != 1:
            return ""
        parts = []
        for e in self.battery_engines:
            qps, cpu, client, pages = (self._figure("io-bound", e, step, f) for f in
                                       ("ops_per_s", "cpu_us_per_op", "client_cpu_us_per_op", "storage_reads_per_op"))
            if not all(pd.notna(x) for x in (qps, cpu, client, pages)) or qps <= 0 or pages <= analysis.STORAGE_REACHED:
                continue
            wall = 1e6 / qps
            parts.append(f"{engine_title(e)} about {fmt(max(wall - cpu - client, 0) / pages)} µs per read "
                         f"(CPU {fmt(min((cpu + client) / wall, 1) * 100)}% of its {fmt(wall)} µs per query)")
        if not parts:
            return ""
        return (f"**Storage time per read** (IO-bound {step}, one thread: wall time per query less the engine's and "
                "sysbench's CPU, over its storage pages; a difference, not a device latency counter): "
                + "; ".join(parts) + ". An estimate, not a bound either way: the remainder also holds the "
                "client-server round trip and wake-ups (which make it larger), and engine work that ran on the other "
                "core beside the query is subtracted as if it were the query's (which makes it smaller). Seed 003 "
                "does not give its device's latency.")

    def departures_line(self) -> str:
        """Settings that depart from an engine's defaults in this run, and whom each favours, beside the
        verdicts rather than only in the caveats."""
        parts = []
        for e in self.battery_engines:
            d = _dialect(e)
            if d is not None and str(d.server_config.get("performance_schema", "")).upper() == "OFF":
                parts.append(f"{engine_title(e)} performance_schema=OFF (favours it: no per-statement instrumentation)")
            if d is not None and d.binary_log_off and self.param("binary_log") is False:
                parts.append(f"{engine_title(e)} without its binary log (binary_log=false: favours its writes, one "
                             "synced log per commit as in the others)")
        for e, c in self.io_bound_caches().items():
            if "debug_io_direct" in c["setting"]:
                parts.append(f"{engine_title(e)}, IO-bound, {c['setting']} (expected to slow it, writes most: a "
                             "developer option)")
        if not parts:
            return ""
        return "**Settings that depart from the defaults:** " + "; ".join(parts) + "."

    def _lower_bound_note(self, regime: str, engine: str, lost: bool) -> str:
        """A loss in the IO-bound regime by an engine made to read its files directly by a developer
        option (PostgreSQL's debug_io_direct): its figures there are a lower bound, so say it beside
        the loss, not only in the method."""
        setting = self.io_bound_caches().get(engine, {}).get("setting", "") if regime == "io-bound" and lost else ""
        if "debug_io_direct" not in setting:
            return ""
        return (f" On its IO-bound writes and ranges its figures are expected to be a lower bound ({setting}, a "
                "developer option, takes away its kernel write-back and read-ahead; expected, not measured); a point "
                "query's single random reads lose neither.")

    def write_findings_caveat(self) -> str:
        """A write finding in PostgreSQL's favour: what its windows did not pay (no checkpoint fell in
        them where its writes go through the page cache), and MySQL's binary log synced at every
        commit, which its write rows pay and PostgreSQL's do not."""
        from ..load_fetch.analysis import binlog_synced

        r = self.ratios
        if r.empty:
            return ""
        writes = r[(r["column"] == "QPS") & r["verdict"].isin(["better", "worse"])
                   & r["step"].map(lambda s: TESTS.get(s.split(".")[0], ("", {}, "read"))[2] != "read")]
        won = writes[[(v == "better") == (e == "postgres") for e, v in zip(writes["engine"], writes["verdict"])]]
        if won.empty:
            return ""
        parts = []
        direct_caches = [c for c in self.io_bound_caches().values() if "debug_io_direct=data" in c["setting"]]
        direct = {"io-bound"} if direct_caches else set()
        timeouts = set(self._setting("checkpoint_timeout").values())
        buffered = won[~won["regime"].isin(direct)]
        if timeouts and not buffered.empty:
            parts.append(f"in {', '.join(dict.fromkeys(buffered['regime']))} they leave out its data-file writes: no "
                         f"checkpoint is expected inside a window (checkpoint_timeout={' / '.join(sorted(timeouts))} as "
                         "read at start, longer than a regime's battery; not measured), while InnoDB's page cleaner "
                         "flushed inside its own windows")
        if not won[won["regime"].isin(direct)].empty:
            pool = direct_caches[0].get("pool_mib")  # as the server reported it
            parts.append("in the IO-bound regime (debug_io_direct=data"
                         + (f", {fmt(pool)} MiB of shared buffers" if pool is not None and pd.notna(pool) else "")
                         + ") a dirty buffer "
                         "evicted inside its windows is written there and then, with no kernel write-back to defer it "
                         "(its writes were not counted), so there they pay data-file writes too")
        deferred = [s for s in dict.fromkeys(won["step"]) if _leaves_dead_rows(s)]
        if deferred and _defers_dead_rows("postgres"):
            parts.append(f"on {', '.join(deferred)} they leave out the cleanup of the dead rows its updates and deletes "
                         "left: PostgreSQL leaves them to autovacuum (by default at 50 rows + 20% of the table), which "
                         "no window ran or waited for, while InnoDB's purge ran in its own settle windows")
        mysql = self.durability().get("mysql", "")
        if binlog_synced(mysql):
            parts.append(f"MySQL also synced a binary log at every commit ({mysql}): a second fsync and a two-phase "
                         "commit per write that PostgreSQL does not do, so the write rows compare commit paths as much "
                         "as table layouts")
        steps = ", ".join(f"{s} ({g})" for s, g in zip(won["step"], won["regime"]))
        return f"PostgreSQL's write wins ({steps}): " + "; ".join(parts) + "." if parts else ""

    JUDGED_STEPS = ("points-notcovered-pk.pre", "points-notcovered-pk")

    def io_bound_check(self) -> list[str]:
        """Whether the IO-bound regime reached storage, per engine: storage reads per not-covered
        point query (what the engine's processes read from storage, in its own page size; > 0.5
        expected, ~0 when cached), beside its own read counter, and the data against the memory
        limit."""
        lines = []
        if self.steps["read_kb_per_op"].fillna(0).eq(0).all() and self.steps["engine_read_kb_per_op"].gt(0).any():
            lines.append("**cgroup I/O:** the engines' cgroups read 0 bytes from block devices in every window while "
                         "the engines' own counters read data: this host's cgroup blkio does not account container "
                         "reads, so what came from storage is read from /proc/<pid>/io of the engines' processes "
                         "(the engines' own counters also count reads the OS page cache served).")
        limit = self.param("io_bound_memory_limit_mb")
        data = self._data_mib()
        if "io-bound" in self.regimes and limit and data:
            caches = self.io_bound_caches()
            lines.append(f"**Data against memory (IO-bound regime):** sbtest1 with its indexes is "
                         + ", ".join(f"{fmt(mib)} MiB in {engine_title(e)} ({fmt(mib / limit)}x its {limit} MiB "
                                     "container memory limit, which holds the engine, its buffer pool and the page "
                                     "cache" + (f"; {fmt(mib / caches[e]['pool_mib'])}x its {fmt(caches[e]['pool_mib'])} "
                                                "MiB buffer pool" if e in caches else "") + ")"
                                     for e, mib in data.items())
                         + (". The memory limit alone would not make the regime IO-bound (the data is not many times "
                            "it): the small buffer pool does, for an engine whose reads bypass the page cache, which "
                            "here is every engine: "
                            + ", ".join(f"{engine_title(e)} ({c['setting']})" for e, c in caches.items())
                            if caches and all(c["direct"] for c in caches.values())
                            and max(data.values()) / limit < 3 else "") + ".")
        reached, missed, judged = [], [], None
        for step in self.JUDGED_STEPS:
            s = self.steps[self.steps["step"] == step]
            if s.empty:
                continue
            for engine in dict.fromkeys(s["engine"]):
                storage = {r: self._figure(r, engine, step, "storage_reads_per_op") for r in self.regimes}
                kb = {r: self._figure(r, engine, step, "storage_kb_per_op") for r in self.regimes}
                own = {r: self._figure(r, engine, step, "reads_per_op") for r in self.regimes}
                io = storage.get("io-bound", float("nan"))
                if "io-bound" not in storage:
                    status = "not run"
                elif io != io:
                    status = ("cannot be judged: storage reads in pages were not measured (a run before benchlib "
                              "read /proc/<pid>/io and the page size, or a host that hides it)")
                else:
                    ok = io > analysis.STORAGE_REACHED
                    (reached if ok else missed).append(engine_title(engine))
                    cached = own["io-bound"] - io if own.get("io-bound") == own.get("io-bound") else float("nan")
                    direct = self.io_bound_caches().get(engine, {}).get("direct")
                    status = (f"{'reached' if ok else 'did NOT reach'} storage: {fmt(io)} storage reads per operation "
                              f"(> {analysis.STORAGE_REACHED} expected)"
                              + ("" if cached != cached else
                                 f"; its own {fmt(own['io-bound'])} reads/op differ from its storage reads by "
                                 f"{fmt(cached)} (no page cache in its path under direct I/O: counters read at "
                                 "slightly different moments, or other files)" if direct else
                                 f"; of its own {fmt(own['io-bound'])} reads/op about {fmt(max(cached, 0))} came from "
                                 "the OS page cache (its own reads minus its storage reads: a subtraction, not a "
                                 "count)"))
                lines.append(f"**{engine_title(engine)} {step}:** storage reads/op (/proc/<pid>/io read_bytes in the "
                             "engine's pages) " + ", ".join(f"{r} {fmt(v)}" for r, v in storage.items())
                             + "; storage KB/op " + ", ".join(f"{r} {fmt(v)}" for r, v in kb.items())
                             + "; the engine's own reads/op " + ", ".join(f"{r} {fmt(v)}" for r, v in own.items())
                             + f": the IO-bound regime {status}.")
            judged = step
            break
        if reached or missed:
            lines.append(f"**IO-bound verdict on {judged}:** "
                         + (f"reached storage for {' and '.join(reached)}" if reached else "reached storage for no engine")
                         + (f"; did NOT reach storage for {' and '.join(missed)}, whose IO-bound figures are "
                            "mostly cache hits" if missed else "") + ".")
        per_test = self.storage_per_test()
        if per_test:
            lines.append("**Whether each IO-bound read test reached storage** (storage pages/op > "
                         f"{analysis.STORAGE_REACHED}): " + "; ".join(per_test) + ".")
        return lines

    def storage_per_test(self) -> list[str]:
        """Per IO-bound read test, which engines read from storage per operation and which did not
        (a covered test whose index fits the cache need not)."""
        s = self.steps[self.steps["regime"] == "io-bound"]
        out = []
        for step in dict.fromkeys(s["step"]):
            test = step.removesuffix(".pre")
            if test not in TESTS or TESTS[test][2] != "read":
                continue
            rows = s[s["step"] == step].dropna(subset=["storage_reads_per_op"])
            if rows.empty:
                continue
            reached = [engine_title(e) for e, v in zip(rows["engine"], rows["storage_reads_per_op"])
                       if v > analysis.STORAGE_REACHED]
            missed = [f"{engine_title(e)} ({fmt(v)})" for e, v in zip(rows["engine"], rows["storage_reads_per_op"])
                      if v <= analysis.STORAGE_REACHED]
            out.append(f"{step}: " + (f"reached for {' and '.join(reached)}" if reached else "reached for none")
                       + (f", not for {' and '.join(missed)}" if missed else ""))
        return out

    def caveats(self, extra=()) -> str:
        p = self.param
        # The server's own version string, its product and release only ("PostgreSQL 17.12").
        versions = {e: " ".join(v.split()[:2]) for e, v in
                    zip(self.instances["engine"], self.instances["server_version"]) if isinstance(v, str)}
        notes = [
            "Seed 003 ran one 400M-row table on small servers with the author's own sysbench Lua scripts; here "
            f"one table of {p('table_size'):,} rows, {p('test_seconds')} s per test and repetition, {p('threads')} "
            f"thread(s), range {p('range')}, Debian's sysbench 1.0.20 with benchlib's Lua "
            "re-creations of the fork's shapes (covered: SELECT id; not covered: SELECT id, c; in-lists and ranges "
            "on id). insert and delete are stock oltp_insert and oltp_delete; Debian's oltp_delete.lua deletes one "
            "row by a random id per event and inserts nothing back: delete's figures are per event, whether or not "
            "its row was still there.",
            self.change_buffer_note(),
            self.write_durability_note(),
            f"Access distribution: sysbench `--rand-type={p('rand_type') or 'special'}` on every test"
            + ("" if p("rand_type") else " (not set by this older run: Debian sysbench 1.0.20's default, `special`, "
               "sends most accesses to ~1% of the rows, so a large table is still mostly served from cache)") + ".",
            "An operation is one sysbench event (one statement); for the load it is one row. cpu/o: "
            "the engine cgroup's CPU in the test window plus its settle window (deferred purge, flushing) per "
            "operation: the engine's CPU only. Seed 003's article does not say how its cpu/o was measured, nor "
            "whether it includes sysbench's own CPU; the absolute table gives sysbench's CPU per operation, measured "
            "on its processes in the same window, and engine + sysbench beside it; the ratios use the engine's "
            "alone. "
            "pages/o and rKB/o are storage reads, as seed 003's r/o and rKB/o (storage reads and read KB per "
            "operation): rKB/o is what the engine's processes read from storage per operation (the sum of "
            "read_bytes in /proc/<pid>/io over the container's processes, which page-cache hits do not inflate; a "
            "process that exits mid-window takes its bytes with it), in KiB; pages/o is the same bytes over the "
            "engine's own page size (PostgreSQL 8 KiB blocks, InnoDB 16 KiB pages, as each server reports it): the "
            "pages read, which is the seed's count of reads wherever every read fetches one page (a point query's "
            "direct reads) and more than that count where read-ahead fetches several pages in one read. pages/o is "
            "judged; rKB/o is shown only, as the same pages weighted by page size (the same page count weighs "
            "twice the bytes in InnoDB). " + self.read_path_text() + " The engines' own read counters (PostgreSQL pg_stat_database.blks_read, "
            "which counts reads the OS page cache served too; InnoDB Innodb_buffer_pool_reads and Innodb_data_read"
            + ("; MyRocks rocksdb_block_cache_miss" if "mariadb-myrocks" in self.battery_engines else "")
            + ") are in the absolute table beside them, as is the cgroup's "
            "block-device read bytes (blkio), which on a host whose cgroup v1 blkio counts nothing for containers "
            "read 0 and must not be taken as 'no storage reads'. Whether a test reached storage is judged from "
            "pages/o, per test.",
            f"Noise: {self.repetition_text()}. Any noise estimate here is within-start noise only (the repetitions "
            "run back to back in one engine start; start-to-start and run-to-run spread are not in the CI). "
            f"The starts ran one after another, regime by regime and within each in the same engine order ("
            + ", ".join(engine_title(e) for e in self.battery_engines) + "), never interleaved: a ratio between "
            "engines also carries how the host's speed moved between their starts, which the drift band below "
            "bounds for the CPU only. Each test's repetitions run back to back in seed 003's order (one "
            "engine start per regime holds them all), so every repetition of a read test before the writes "
            f"measures the same loaded table of {p('table_size'):,} rows; "
            "a write test's later repetitions meet the rows its earlier ones changed, as seed 003's later tests "
            "meet its earlier ones'. `.pre` names its place in seed 003's order. A read window has no settle "
            "window (a read dirties no page); a write's settle window charges its deferred purge and flushing "
            "to it before the next test. A cell is coloured, "
            "and a finding says faster or slower, only where Welch's test over the repetitions (on the log scale, "
            "results.contrast) says the difference is beyond noise and the ratio differs from 1 by more than "
            f"{self.band_text()}; a ratio within noise is undetermined, whatever its size; the findings give "
            "the ratio's 95% CI. The host's drift is measured with a CPU loop only: how fast the storage device "
            "answered during each engine's start is not probed, so an IO-bound ratio can also carry a change in the "
            "disk's latency between the starts, which neither the drift band nor Welch's test (within one start) "
            "sees."
            + (f" Before the first read test (and the first read after the writes), {p('warmup_seconds')} s of "
               "that test fill the caches as it fills them: stored as a warm-up window (measured, outside every "
               "figure); every other test begins in the caches its predecessor's uniform accesses to the same rows "
               "filled."
               if p("warmup_seconds") else ""),
            "MySQL runs with performance_schema=OFF in every regime (with it MySQL 9 does not start under the "
            "default set's 256 MiB memory limit) and innodb_log_buffer_size=16M, the default of seed 003's MySQL 8.0.22 (whose "
            "configuration the article does not give; MySQL "
            "8.4+ allocate 64 MiB, which with the rest of MySQL 9's own memory leaves nothing of a 256 MiB limit). "
            "performance_schema=OFF departs from MySQL's default in MySQL's favour: MySQL skips its instrumentation "
            "on every statement (PostgreSQL ran with its own statistics collection on, as by default), so MySQL's "
            "cpu/o and QPS here are somewhat better than a default MySQL 9's (not measured here). The 16 MiB log "
            "buffer holds far more than one event's redo (every event here commits one statement), so it should "
            "change little"
            + ("; MariaDB has performance_schema off by default" if any(e.startswith("mariadb")
                                                                       for e in self.battery_engines) else "") + ".",
            "Regimes run: " + "; ".join(
                ([f"cached = buffer pool / shared_buffers {p('cached_buffer_pool_mb')} MiB, no memory limit"]
                 if "cached" in self.regimes else [])
                + ([f"IO-bound = {p('io_bound_buffer_pool_mb')} MiB and a container memory limit of "
                    f"{p('io_bound_memory_limit_mb')} MiB (page cache included, so PostgreSQL's OS-cached reads are "
                    "bounded too)"] if "io-bound" in self.regimes else [])) + ". InnoDB reads with O_DIRECT (innodb_flush_method's default in MySQL 9), so its storage reads "
            "are its buffer-pool misses.",
            "Seed 003 compared Postgres 13.1 with MySQL 8.0.22 (and 11.10 with 5.6.49). Here: "
            + ", ".join(f"{engine_title(e)} ({_layout(e)}{', ' + versions[e] if e in versions else ''})"
                        for e in self.battery_engines) + " ran the battery.",
        ]
        if not self.keys.empty:
            kinds = set(self.keys["key_kind"])
            notes.append("Key kinds: keys are generated by the client (Python) for every engine so all engines see "
                         "the same key sequences"
                         + ("; uuidv1 is laid out as MySQL's UUID() (time_low first), so a stream generated quickly "
                            "arrives nearly in key order ('generated' order)" if "uuidv1" in kinds else "")
                         + ". Sizes come from the engines' own functions after ANALYZE (InnoDB's are page estimates; "
                         "SQLite's is the file's page count with only this table in it).")
        notes += [n for n in (self.adaptive_hash_note(), self.io_fairness_note(), self.settle_note(),
                              self.key_kind_note()) if n]
        loaded = set(self.steps.loc[self.steps["step"] == "load", "regime"])
        restored = [r for r in self.regimes if r not in loaded]
        if restored and loaded:
            notes.append(
                f"One load per engine: the {', '.join(sorted(loaded))} regime's start loaded sbtest1 (the measured "
                "load) and ran VACUUM ANALYZE and CHECKPOINT / ANALYZE TABLE (measured as its own after-load "
                "window); its data directory (on a Docker volume in every regime) was then copied with the server frozen, before any test, and the "
                f"{', '.join(restored)} regime's start began from that copy (PostgreSQL after a CHECKPOINT, InnoDB "
                "recovering from its redo log), checked it held the loaded table (row count and sums of id and k "
                "equal, read from the indexes) and gave its user a fresh password. Each regime's battery so begins from the same "
                "freshly loaded table; within a regime the writes reach the later tests, in seed 003's order. The "
                "copy is dropped from the page cache: the IO-bound memory limit covers what its own reads cache, as "
                "when it loaded the table itself. PostgreSQL's tests begin after a checkpoint in every regime (after "
                "the load's VACUUM ANALYZE, or at the end of the snapshot's recovery), so a test's first write to "
                "each page logs a full-page image in both.")
        return super().caveats([*notes, *extra])
