"""Parameters declared once: a workload's parameter dataclass is the only place a name, its check
and its meaning are written. The validator, the list of names the CLI checks, the notebook's
`begin(...)` and every error message derive from it.

    @dataclass(frozen=True, kw_only=True)
    class DmlParams(RunParameters):
        rows: int = param(positive_int(minimum=2), "inserted in two transactions of rows / 2")

A check is `check(name, value, checked) -> value`: `checked` holds the values already checked,
so a check may compare with an earlier field (`max_repetitions >= repetitions`). Fields marked
`late` (the engine selection, per-engine settings) run after every plain value: rejecting a bad
number costs nothing, asking Docker which engines can run does not."""
from __future__ import annotations

import numbers
import shutil
import tempfile
from dataclasses import MISSING, asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Callable, ClassVar, Iterable

from ..core.errors import ParameterError
from .validation import cluster_nodes, engine_selection, engine_settings, is_all_available, keep_runnable, require

Check = Callable[[str, Any, dict], Any]

# The settle policy's trailing intervals (measure.SettlePolicy reads them from here, so a
# parameter check can name them before anything heavier is imported): a settle window ends once
# the engine's CPU rate over the last SETTLE_QUIET_SECONDS is near idle; the wait before an idle
# baseline gates on the shorter SETTLE_GATE_SECONDS.
SETTLE_QUIET_SECONDS = 1.0
SETTLE_GATE_SECONDS = 0.5


def param(check: Check, doc: str = "", *, late: bool = False, default: Any = MISSING) -> Any:
    """A declared parameter: no default (the notebook's parameters cell holds the values, once),
    except a choice whose default is what benchlib did before it existed (`counter: auto`): a set
    or notebook that does not name it keeps meaning what it meant."""
    return field(metadata={"check": check, "doc": doc, "late": late},
                 **({} if default is MISSING else {"default": default}))


# -- checks: one message style, "<name> must be <what>, got <value>" ---------------------------------
def _fail(name: str, what: str, value: Any) -> ParameterError:
    return ParameterError(f"{name} must be {what}, got {value!r}")


def positive_int(minimum: int = 1, maximum: int | None = None) -> Check:
    def check(name: str, value: Any, checked: dict) -> int:
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or int(value) < minimum or \
                (maximum is not None and int(value) > maximum):
            bound = f" and <= {maximum:,}" if maximum is not None else ""
            raise _fail(name, f"an integer >= {minimum}{bound}", value)
        return int(value)
    return check


def at_least_field(other: str) -> Check:
    """An integer no smaller than an earlier field (max_repetitions >= repetitions)."""
    def check(name: str, value: Any, checked: dict) -> int:
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < checked[other]:
            raise _fail(name, f"an integer >= {other} ({checked[other]})", value)
        return int(value)
    return check


def number(minimum: float = 0.0, *, above: bool = False, maximum: float | None = None) -> Check:
    """A real number >= minimum (> minimum with `above`), <= maximum when given."""
    def check(name: str, value: Any, checked: dict) -> float:
        ok = not isinstance(value, bool) and isinstance(value, numbers.Real) and value == value and \
            (value > minimum if above else value >= minimum) and (maximum is None or value <= maximum)
        if not ok:
            what = f"a number {'>' if above else '>='} {minimum:g}" + (f" and <= {maximum:g}" if maximum else "")
            raise _fail(name, what, value)
        return float(value)
    return check


def whole_seconds() -> Check:
    def check(name: str, value: Any, checked: dict) -> int:
        return int(number()(name, value, checked))
    return check


def settle_bound() -> Check:
    """The longest settle window: 0 (none) or at least the policy's quiet interval, since the
    rate over that interval is what ends a window early; a shorter bound ends every window at
    the bound, never on quiet, and charges later deferred work to the next step."""
    def check(name: str, value: Any, checked: dict) -> float:
        number()(name, value, checked)
        if 0 < value < SETTLE_QUIET_SECONDS:
            raise _fail(name, f"0 (no settle windows) or at least {SETTLE_QUIET_SECONDS:g} s (the settle policy's "
                              "quiet interval: a shorter window can never see quiet and always ends at its bound)",
                        value)
        return float(value)
    return check


def fraction() -> Check:
    """A share strictly between 0 and 1 (0.05 = 5%)."""
    def check(name: str, value: Any, checked: dict) -> float:
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 < value < 1:
            raise _fail(name, "a fraction between 0 and 1 (0.05 = 5%)", value)
        return float(value)
    return check


def boolean() -> Check:
    def check(name: str, value: Any, checked: dict) -> bool:
        if not isinstance(value, bool):
            raise _fail(name, "true or false", value)
        return value
    return check


def one_of(allowed: Iterable[str]) -> Check:
    allowed = tuple(allowed)

    def check(name: str, value: Any, checked: dict) -> str:
        if value not in allowed:
            raise _fail(name, f"one of {', '.join(allowed)}", value)
        return value
    return check


def names(allowed: Iterable[str], *, empty_ok: bool = False) -> Check:
    """A list of distinct names out of `allowed`, in the order given."""
    allowed = tuple(allowed)

    def check(name: str, value: Any, checked: dict) -> list[str]:
        what = f"a {'' if empty_ok else 'non-empty '}list of {', '.join(allowed)} (each once)"
        if not isinstance(value, list) or (not value and not empty_ok) or len(set(map(str, value))) != len(value):
            raise _fail(name, what, value)
        unknown = [v for v in value if v not in allowed]
        if unknown:
            raise _fail(name, what, unknown[0])  # the one bad item, not the whole list
        return list(value)
    return check


def int_list(minimum: int = 1) -> Check:
    """A non-empty list of distinct integers >= minimum, sorted."""
    def check(name: str, value: Any, checked: dict) -> list[int]:
        item = positive_int(minimum)
        if not isinstance(value, (list, tuple)) or not value or len(set(map(repr, value))) != len(value):
            raise _fail(name, f"a non-empty list of distinct integers >= {minimum}", value)
        return sorted(item(name, v, checked) for v in value)
    return check


def instruction_counter() -> Check:
    """auto, perf or valgrind, and one this host offers (perf installed; an architecture valgrind
    runs on: a server's valgrind is in its image)."""
    from ..counters.valgrind import COUNTERS

    def check(name: str, value: Any, checked: dict) -> str:
        one_of(COUNTERS)(name, value, checked)
        problem = counter_problem(value)
        if problem:
            raise ParameterError(f"{name}={value!r} cannot count on this host: {problem}")
        return value
    return check


def counter_problem(counter: str, perf_support: Any = None) -> str | None:
    """Why this host cannot count with `counter` (None: it can; `auto` always can). `perf_support`:
    a perf.PerfSupport, else the host's own."""
    if counter == "perf":
        from ..host import perf

        support = perf_support or perf.probe()
        return None if support.available else support.reason
    if counter == "valgrind":
        from ..counters.valgrind import host_problem

        return host_problem()
    return None


def engines(*, clusters: bool = False) -> Check:
    """The engine selection (or, with `clusters`, the cluster selection): checked late, by the
    parameters class's own `runs_engine`."""
    def check(name: str, value: Any, checked: dict) -> Any:
        return value  # resolved by Parameters.validate, which knows the class
    check.clusters = clusters  # type: ignore[attr-defined]
    return check


def nodes_per_cluster() -> Check:
    """Node counts of the clusters that run ({} : each its declared count)."""
    def check(name: str, value: Any, checked: dict) -> dict[str, int]:
        return cluster_nodes(name, value, checked["clusters"])
    return check


def per_engine_settings() -> Check:
    def check(name: str, value: Any, checked: dict) -> dict[str, dict[str, Any]]:
        return engine_settings(name, value, checked["engines"])
    return check


# -- the declaration ----------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class Parameters:
    """Base of every workload's parameters. Subclasses declare fields with `param(...)`, set
    `WORKLOAD` (the name errors give) and may override `runs_engine` and `check`."""

    WORKLOAD: ClassVar[str] = "this workload"
    skipped: dict[str, str] = field(default_factory=dict)  # engines not run, with the reason

    @classmethod
    def declared(cls) -> tuple[str, ...]:
        """The parameter names, in declaration order: what a notebook's parameters cell holds."""
        return tuple(f.name for f in fields(cls) if "check" in f.metadata)

    @classmethod
    def optional(cls) -> tuple[str, ...]:
        """The declared parameters a set may leave out (they have a default)."""
        return tuple(f.name for f in fields(cls) if "check" in f.metadata and f.default is not MISSING)

    @classmethod
    def docs(cls) -> dict[str, str]:
        return {f.name: f.metadata["doc"] for f in fields(cls) if "check" in f.metadata}

    @staticmethod
    def supports(engine) -> bool:
        """Whether the workload can run `engine` at all (a subclass sets its module's `supports`)."""
        return True

    @classmethod
    def runs_engine(cls, engine, checked: dict[str, Any]) -> bool:
        """Whether this workload, with these plain values, has anything to run on `engine`."""
        return cls.supports(engine)

    @classmethod
    def validate(cls, values: dict[str, Any]):
        """Every parameter, checked before any container starts; each message names the bad value."""
        declared = cls.declared()
        require(values, declared, cls.WORKLOAD, optional=cls.optional())
        ordered = sorted((f for f in fields(cls) if "check" in f.metadata), key=lambda f: f.metadata["late"])
        checked: dict[str, Any] = {}
        skipped: dict[str, str] = {}
        for index, f in enumerate(ordered):
            if f.metadata["late"] and not ordered[index - 1].metadata["late"]:
                cls.check_plain(checked, values)  # every plain value known good before Docker is asked
            value = values[f.name] if f.name in values else f.default
            clusters = getattr(f.metadata["check"], "clusters", None)
            if clusters is not None:
                explicit = not is_all_available(value)
                runnable, skipped_here = engine_selection(value, lambda e: cls.runs_engine(e, checked),
                                                          f"the {cls.WORKLOAD} workload", clusters=clusters,
                                                          name=f.name)
                skipped.update(skipped_here)
                narrow = cls.narrow_clusters if clusters else cls.narrow_engines
                checked[f.name] = cls.narrow_counted(narrow(runnable, skipped, checked, explicit=explicit), skipped,
                                                     checked, explicit=explicit)
                if not checked[f.name] and not clusters:
                    raise ParameterError(f"no engine can run the {cls.WORKLOAD} workload with these parameters: "
                                         + "; ".join(f"{k}: {v}" for k, v in skipped.items()))
            else:
                checked[f.name] = f.metadata["check"](f.name, value, checked)
        return cls(**{k: checked[k] for k in declared}, skipped=skipped)

    @classmethod
    def narrow_engines(cls, runnable: list[str], skipped: dict[str, str], checked: dict[str, Any], *,
                       explicit: bool) -> list[str]:
        """Engines that can run but not with these values (a row limit, a transport, the disk): one
        asked for by name fails, one from "all available" is skipped with the reason (added to
        `skipped`). The reason per engine is `cannot_run`'s."""
        from ..engines import get_engine

        return keep_runnable(runnable, lambda key: cls.cannot_run(get_engine(key), checked), skipped,
                             explicit=explicit, refuse=lambda key, reason: ParameterError(f"engine {key!r}: {reason}"))

    @classmethod
    def cannot_run(cls, engine, checked: dict[str, Any]) -> str | None:
        """Why `engine` has nothing to run with these values (None: it runs)."""
        return None

    @classmethod
    def narrow_counted(cls, runnable: list[str], skipped: dict[str, str], checked: dict[str, Any], *,
                       explicit: bool) -> list[str]:
        """The engines (or clusters) the run's instruction counter can count: all of them, unless a
        subclass declares a counter that cannot (RunParameters' `counter: valgrind`)."""
        return runnable

    @classmethod
    def narrow_clusters(cls, runnable: list[str], skipped: dict[str, str], checked: dict[str, Any], *,
                        explicit: bool) -> list[str]:
        """A cluster runs beside its single node, which its figures are compared with: one whose
        single node is not among the engines fails when asked for by name, else it is skipped."""
        from ..engines import get_engine

        singles = {get_engine(k).name for k in checked.get("engines", [])}
        engines = ", ".join(checked.get("engines", []))

        def single_missing(key: str) -> str | None:
            single = get_engine(key).variant_of
            return None if single in singles else f"its single node {single} is not among the engines ({engines})"

        return keep_runnable(runnable, single_missing, skipped, explicit=explicit, refuse=lambda key, reason: ParameterError(
            f"clusters lists {key}, but {reason}: it runs beside its single node, add {get_engine(key).variant_of} "
            "to engines"))

    @classmethod
    def check_plain(cls, checked: dict[str, Any], values: dict[str, Any]) -> None:
        """Checks across the plain fields (`checked`), after each field's own and before the engine
        selection asks Docker anything; `values` holds the raw engines, for an explicit list."""

    def as_record(self) -> dict[str, Any]:
        return asdict(self)


def require_idle_baseline(checked: dict[str, Any], workload: str) -> None:
    """For workloads whose reports subtract the idle rate: without a baseline every net cost is n/a."""
    if checked["idle_seconds"] <= 0:
        raise ParameterError(f"idle_seconds must be a number > 0 in the {workload} workload (its costs are given "
                             f"net of the idle rate), got {checked['idle_seconds']:g}")


def require_no_warmup(checked: dict[str, Any], workload: str, why: str) -> None:
    """For workloads whose first repetition does one-off work (a load) that a warm-up would discard."""
    if checked["warmup"]:
        raise ParameterError(f"warmup must be false in the {workload} workload: {why}")


def require_pool_within_memory(checked: dict[str, Any], pool: str, memory: str) -> None:
    """A regime that sets both a buffer pool (or block cache) and the container's memory limit."""
    if checked[pool] >= checked[memory]:
        raise ParameterError(f"{pool}={checked[pool]} must be below {memory}={checked[memory]} (the buffer pool "
                             "lives inside the container's memory limit)")


def staging_folder() -> Path:
    """Where a run stages its generated files (and an embedded engine keeps its database)."""
    return Path(tempfile.gettempdir())


DOCKER_ROOT = Path("/var/lib/docker")  # where a server engine's container keeps its data (Docker's default)


def _free_bytes(folder: Path) -> int:
    while not folder.exists():
        folder = folder.parent
    return shutil.disk_usage(folder).free


def disk_shortfall(needed: float, *, server: bool) -> tuple[Path, float] | None:
    """The first folder a start writes to (the staging folder; a server's data under Docker's
    root) with fewer than `needed` bytes free, and its free bytes; None when both have room."""
    for folder in (staging_folder(), *([DOCKER_ROOT] if server else [])):
        free = _free_bytes(folder)
        if needed > free:
            return folder, float(free)
    return None


@dataclass(frozen=True, kw_only=True)
class RunParameters(Parameters):
    """What the shared driver (benchlib.run.driver) owns for every measuring workload."""

    engines: list[str] = param(engines(), 'engine keys (key@version pins one) or "all available"', late=True)
    repetitions: int = param(positive_int(), "at least this many repetitions")
    max_repetitions: int = param(at_least_field("repetitions"),
                                 "more while a costly phase's 95% CI is wider than ci_target, up to this")
    ci_target: float = param(fraction(), "half width of the 95% CI relative to the mean")
    warmup: bool = param(boolean(), "one discarded repetition first, stored as warm-up windows")
    pin_cpus: bool = param(boolean(), "server engines on CPUs 1.., the harness on CPU 0")
    idle_seconds: float = param(number(), "idle baseline per engine start, after a wait for quiet")
    max_settle_seconds: float = param(settle_bound(), "longest wait for deferred work after a phase (0, or at least "
                                                      "the settle policy's 1 s quiet interval)")
    counter: str = param(instruction_counter(), "what counts instructions: auto (perf where the host counts them, "
                                                "else none), perf, or valgrind (the server under callgrind)",
                         default="auto")

    @classmethod
    def narrow_counted(cls, runnable: list[str], skipped: dict[str, str], checked: dict[str, Any], *,
                       explicit: bool) -> list[str]:
        """Under `counter: valgrind`, the engines that run under valgrind: one named that does not
        fails, saying why (its declaration's reason); one from "all available" is skipped."""
        if checked.get("counter") != "valgrind":
            return runnable
        from ..engines import get_engine
        from ..counters.valgrind import engine_problem

        def problem(key: str) -> str | None:
            reason = engine_problem(get_engine(key))
            return f"not under valgrind (counter: valgrind): {reason}" if reason else None

        return keep_runnable(runnable, problem, skipped, explicit=explicit, refuse=lambda key, reason: ParameterError(
            f"counter='valgrind' cannot count engine {key!r}: {engine_problem(get_engine(key))}"))
