"""Where a window's instructions go: the functions and subsystems of callgrind's output files.

A window under valgrind leaves one callgrind output file per process that ran in it (the dumps
made at its end, and the exit dumps of processes that ended inside it). `read_window(files)` reads
them together and returns every function's **self** instructions (spent in the function's own
code) and **inclusive** instructions (with everything it called), and the window's total, which is
checked to equal the files' own `totals:` (or `summary:`) lines: a reader that lost a line would
fail here, not draw a wrong figure. `WindowProfile.top(n)` gives the top n by self and by
inclusive in long format; `subsystem_table(profile, engine)` sums self instructions per subsystem
(instruction_subsystems) to the window's total; `profile_rows` turns both into store rows.

The reader is gprof2dot's callgrind parser (PyPI `gprof2dot`, maintained since 2006, the parser
behind its call graphs), not valgrind's `callgrind_annotate`: gprof2dot gives the parsed call
graph as Python objects, several files in one process, where callgrind_annotate prints a report
for people whose text would have to be scraped, changed with valgrind's releases (3.19 here on the
host, 3.24 in the images; cg_annotate was rewritten in Python in 3.21) and reads one file per
run. What gprof2dot does, and how it is used:

- Functions are keyed by name, as gprof2dot keys them (it does not track the callee's object
  reliably: callgrind's `cob=` carries over between calls, and gprof2dot resets it at every cost
  line). A name found in two objects (`memset` in libc and in ld.so) is one function; its
  `object` column lists them, largest self first. Self instructions per (function, object) are
  kept exactly beside (from the `ob=` of the cost lines, which is reliable), and subsystems are
  summed from those.
- Inclusive is gprof2dot's integration of the call graph: outside a recursion cycle it equals
  self + the inclusive cost callgrind recorded for each call (what callgrind_annotate
  --inclusive=yes and KCachegrind show); inside a cycle (PostgreSQL's executor nodes calling each
  other through ExecProcNode) gprof2dot shares the cycle's cost among its members, so no
  function's inclusive exceeds its process's total, where summing call costs would count the cycle
  more than once. Summed over processes, inclusive is what the function and its callees cost in
  all of them.
- A function a stripped binary does not name (`0x00000000004b9e10`: Debian strips the static
  functions of postgres and libsqlite3; no debug symbols are installed) is kept under its address.
  For subsystems it takes the subsystem of its largest caller by call cost, up the call chain
  while the caller is unnamed too (a static helper is called from its own module's functions);
  `subsystem_table` says how many instructions each subsystem got that way (`by_caller`), so the
  attribution is visible, never silent.
- The first event of the file must be `Ir` (instructions executed, callgrind's default): other
  events (cache simulation) are not read."""
from __future__ import annotations

import collections
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

import pandas as pd

from ..core.errors import BenchlibError

SOURCE = "valgrind callgrind"
EVENT = "Ir"


class CallgrindError(BenchlibError):
    """A callgrind output file benchlib cannot read, or whose costs do not add up to its totals."""


def _gprof2dot():
    import gprof2dot

    return gprof2dot


def reader_version() -> str:
    from importlib.metadata import version

    return f"gprof2dot {version('gprof2dot')}"


def _parser_class():
    g = _gprof2dot()

    class Parser(g.CallgrindParser):
        """gprof2dot's parser, keeping what it reads past: the files' totals, their header
        (cmd, pid, part, desc lines: the dump's trigger), the events, and self cost per object."""

        def __init__(self, infile):
            super().__init__(infile)
            self.declared: dict[str, list[int]] = {"summary": [], "totals": []}
            self.header: dict[str, list[str]] = collections.defaultdict(list)
            self.self_by_object: collections.Counter = collections.Counter()
            self.objects_of: dict[str, set[str]] = collections.defaultdict(set)

        def parse_cost_summary(self):
            pair = self.parse_keys(("summary", "totals"))
            if pair is None:
                return False
            key, value = pair
            self.declared[key].append(int(value.split()[0]) if value.split() else 0)
            return True

        def parse_part_detail(self):
            pair = self.parse_keys(self._detail_keys)
            if pair is None:
                return False
            self.header[pair[0]].append(pair[1])
            return True

        def parse_description(self):
            value = self.parse_key("desc")
            if value is None:
                return False
            self.header["desc"].append(value)
            return True

        def parse_cost_line_def(self):
            if not super().parse_cost_line_def():
                return False
            if self.cost_events and self.cost_events[0] != EVENT:
                raise CallgrindError(f"callgrind file's first event is {self.cost_events[0]!r}, not {EVENT!r} "
                                     f"(events: {' '.join(self.cost_events)})")
            return True

        def get_function(self):
            # The caller's side of a line: its `ob=` is the one callgrind's files keep exact.
            self.objects_of[self.positions.get("fn", "")].add(os.path.basename(self.positions.get("ob", "")))
            return super().get_function()

        def parse_cost_line(self, calls=None):
            before = self.profile[g.SAMPLES]
            if not super().parse_cost_line(calls):
                return False
            if calls is None:
                key = (self.positions.get("fn", ""), os.path.basename(self.positions.get("ob", "")))
                self.self_by_object[key] += self.profile[g.SAMPLES] - before
            return True

    return Parser


@dataclass(frozen=True)
class FileProfile:
    """One callgrind output file: its command, pid, the dump's trigger, its total."""

    path: str
    total: int
    command: str
    pid: int | None
    trigger: str | None


@dataclass(frozen=True)
class WindowProfile:
    """A window's functions, summed over its files. `functions`: function, object, self,
    inclusive (every function with a nonzero cost); `by_object`: function, object, self (exact per
    object, what subsystems sum); `total`: the files' summed totals, equal to the summed self."""

    total: int
    functions: pd.DataFrame
    by_object: pd.DataFrame
    files: tuple[FileProfile, ...]
    # unnamed function -> {caller: inclusive instructions of its calls from there}
    callers: dict[str, dict[str, float]] = None

    def top(self, n: int = 20) -> pd.DataFrame:
        """The top `n` functions by self and the top `n` by inclusive instructions (one row per
        function in either list, ranked in both), with each as a share of the window's total."""
        df = self.functions.copy()
        df["self_rank"] = df["self"].rank(method="first", ascending=False).astype(int)
        df["inclusive_rank"] = df["inclusive"].rank(method="first", ascending=False).astype(int)
        df = df[(df["self_rank"] <= n) | (df["inclusive_rank"] <= n)]
        total = self.total or float("nan")
        df = df.assign(self_share=df["self"] / total, inclusive_share=df["inclusive"] / total)
        return df.sort_values(["self_rank"]).reset_index(drop=True)


def read_file(path: str | os.PathLike) -> tuple[FileProfile, Any, Any]:
    """One file parsed: (its summary, gprof2dot's profile, the parser). Raises CallgrindError for a
    file that is not callgrind's, or whose cost lines do not sum to its declared total."""
    g = _gprof2dot()
    path = Path(path)
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            parser = _parser_class()(handle)
            profile = parser.parse()
    except CallgrindError:
        raise
    except (AssertionError, ValueError, KeyError, IndexError) as exc:
        raise CallgrindError(f"{path}: not a callgrind output file gprof2dot can read ({type(exc).__name__}: "
                             f"{exc})") from exc
    declared = parser.declared["totals"] or parser.declared["summary"]
    if not declared:
        raise CallgrindError(f"{path}: no 'totals:' or 'summary:' line (a file cut short?)")
    total = sum(declared)
    counted = int(round(profile[g.SAMPLES]))
    if counted != total:
        raise CallgrindError(f"{path}: its cost lines sum to {counted:,} instructions, its totals line says "
                             f"{total:,}")
    desc = parser.header.get("desc", [])
    trigger = next((d.partition(":")[2].strip() for d in desc if d.startswith("Trigger")), None)
    pid = parser.header.get("pid", [None])[0]
    summary = FileProfile(str(path), total, (parser.header.get("cmd") or [""])[0],
                          int(pid) if pid and pid.isdigit() else None, trigger)
    return summary, profile, parser


def read_window(files: Iterable[str | os.PathLike]) -> WindowProfile:
    """Every function of one window, summed over its files (one per process). An empty list is
    an error: a window with no file was not measured, which is not zero instructions."""
    g = _gprof2dot()
    files = sorted(str(f) for f in files)
    if not files:
        raise CallgrindError("no callgrind output file for this window")
    self_cost: collections.Counter = collections.Counter()
    inclusive: collections.Counter = collections.Counter()
    by_object: collections.Counter = collections.Counter()
    objects_of: dict[str, set[str]] = collections.defaultdict(set)
    callers: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    summaries = []
    for path in files:
        summary, profile, parser = read_file(path)
        summaries.append(summary)
        if summary.total == 0:
            continue  # nothing ran: gprof2dot's ratios of 0/0 would read as 1
        for function in profile.functions.values():
            self_cost[function.name] += function[g.SAMPLES]
            inclusive[function.name] += function[g.TOTAL_TIME_RATIO] * profile[g.SAMPLES]
            for call in function.calls.values():
                if is_unnamed(call.callee_id) and call.callee_id != function.name:
                    callers[call.callee_id][function.name] += call[g.SAMPLES2]
        by_object.update(parser.self_by_object)
        for name, objects in parser.objects_of.items():
            objects_of[name] |= objects
    per_object = pd.DataFrame([(f, o, int(round(v))) for (f, o), v in by_object.items() if v],
                              columns=["function", "object", "self"])
    biggest = (per_object.sort_values("self", ascending=False).groupby("function", sort=False)["object"]
               .agg(lambda objects: ", ".join(objects)))
    rows = []
    for name in set(self_cost) | set(inclusive):
        s, i = int(round(self_cost[name])), int(round(inclusive[name]))
        if s or i:
            rows.append((name, biggest.get(name) or ", ".join(sorted(o for o in objects_of.get(name, ()) if o)), s, i))
    functions = pd.DataFrame(rows, columns=["function", "object", "self", "inclusive"])
    total = sum(s.total for s in summaries)
    counted = int(functions["self"].sum()) if not functions.empty else 0
    if counted != total:
        raise CallgrindError(f"the window's functions sum to {counted:,} self instructions, its files' totals to "
                             f"{total:,}")
    return WindowProfile(total, functions.sort_values("self", ascending=False).reset_index(drop=True),
                         per_object, tuple(summaries), {k: dict(v) for k, v in callers.items()})


def is_unnamed(function: str) -> bool:
    """A function callgrind could only name by its address (a stripped binary's static one)."""
    return function.startswith("0x")


def attributed_subsystems(profile: WindowProfile, engine: str, depth: int = 8) -> pd.DataFrame:
    """`profile.by_object` with `subsystem` (from the function's name, see
    instruction_subsystems) and `how`: 'name', or 'caller' for an unnamed function that took its
    largest caller's subsystem (up to `depth` unnamed callers up the chain; none named: 'other')."""
    from .instruction_subsystems import OTHER, classify_frame

    df = classify_frame(profile.by_object, engine)
    named = dict(zip(df["function"], df["subsystem"]))
    callers = profile.callers or {}

    def through_callers(function: str) -> str | None:
        seen = {function}
        for _ in range(depth):
            options = callers.get(function)
            if not options:
                return None
            function = max(options, key=options.get)
            if function in seen:
                return None
            seen.add(function)
            if not is_unnamed(function):
                found = named.get(function)
                if found is None:
                    from .instruction_subsystems import classify

                    found = classify(function, "", engine)
                return found if found != OTHER else None
        return None

    how, subsystems = [], []
    for function, subsystem in zip(df["function"], df["subsystem"]):
        inherited = through_callers(function) if subsystem == OTHER and is_unnamed(function) else None
        subsystems.append(inherited or subsystem)
        how.append("caller" if inherited else "name")
    return df.assign(subsystem=subsystems, how=how)


def subsystem_table(profile: WindowProfile, engine: str) -> pd.DataFrame:
    """Self instructions per subsystem of `engine`'s map (instruction_subsystems), every
    subsystem of the map listed (zero where nothing matched), with its share of the window and
    `by_caller`, the part of it that unnamed functions brought through their callers
    (attributed_subsystems); the instructions sum to the window's total."""
    from .instruction_subsystems import subsystem_names

    df = attributed_subsystems(profile, engine)
    sums = df.groupby("subsystem")["self"].sum()
    inherited = df[df["how"] == "caller"].groupby("subsystem")["self"].sum()
    names = subsystem_names(engine)
    table = pd.DataFrame({"subsystem": names, "instructions": [int(sums.get(n, 0)) for n in names],
                          "by_caller": [int(inherited.get(n, 0)) for n in names]})
    table["share"] = table["instructions"] / (profile.total or float("nan"))
    return table


def profile_rows(profile: WindowProfile, engine: str, window: dict[str, Any], *, top: int = 20,
                 tool_version: str | None = None) -> list[dict]:
    """Store rows for one window (store.PROFILES): the top functions (`kind` 'function') and the
    subsystems ('subsystem'), each carrying the window's keys (`window`: run_id, seq,
    instance_id, engine, phase, repetition, labels, window) and total."""
    common = {**window, "engine": engine, "window_instructions": profile.total, "files": len(profile.files),
              "source": SOURCE, "tool_version": tool_version, "reader": reader_version()}
    rows = []
    tops = profile.top(top)
    # A function's subsystem is that of its largest object's self instructions.
    attributed = (attributed_subsystems(profile, engine).sort_values("self", ascending=False)
                  .drop_duplicates("function").set_index("function")[["subsystem", "how"]])
    for r in tops.itertuples(index=False):
        subsystem, how = attributed.loc[r.function] if r.function in attributed.index else ("other", "name")
        rows.append({**common, "kind": "function", "name": r.function, "object": r.object, "subsystem": subsystem,
                     "self_instructions": r.self, "inclusive_instructions": r.inclusive,
                     "by_caller_instructions": r.self if how == "caller" else 0,
                     "self_rank": r.self_rank, "inclusive_rank": r.inclusive_rank})
    for r in subsystem_table(profile, engine).itertuples(index=False):
        rows.append({**common, "kind": "subsystem", "name": r.subsystem, "object": None, "subsystem": r.subsystem,
                     "self_instructions": r.instructions, "inclusive_instructions": None,
                     "by_caller_instructions": r.by_caller, "self_rank": None, "inclusive_rank": None})
    return rows


def window_files(directory: str | os.PathLike, since: float | None = None,
                 pattern: str = "cg.*") -> list[Path]:
    """The callgrind files of `directory` (`cg.<pid>[.N]`) modified at or after `since` (a
    window's start, time.time()): the dumps made at its end and the exit dumps of processes that
    ended inside it."""
    return sorted(p for p in Path(directory).glob(pattern)
                  if p.is_file() and (since is None or p.stat().st_mtime >= since))


def describe(profile: WindowProfile, n: int = 10, by: str = "self") -> str:
    """The top `n` functions as text (for a console or a report's caveat)."""
    df = profile.functions.sort_values(by, ascending=False).head(n)
    lines = [f"{profile.total:>15,} instructions in {len(profile.files)} file(s)"]
    for r in df.itertuples(index=False):
        lines.append(f"{getattr(r, by):>15,} {getattr(r, by) / profile.total:6.1%}  {r.function}  [{r.object}]")
    return "\n".join(lines)


__all__: Sequence[str] = ("CallgrindError", "FileProfile", "WindowProfile", "SOURCE", "read_file", "read_window",
                          "subsystem_table", "profile_rows", "window_files", "describe", "reader_version")
