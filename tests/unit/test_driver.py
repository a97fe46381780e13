"""The shared driver on a real embedded engine (SQLite, in this process): a workload is a handful
of hooks; the driver's plan is the progress total, failures keep their traceback, a check that
raises keeps its window, repetitions inside one start stop at the bound with the reason, and the
settle rule ends a window on quiet, on its threshold or at its bound."""
from __future__ import annotations

import json
import math
import threading
import time
from dataclasses import dataclass

import pandas as pd
import pytest

from benchlib.host import cgroups
from benchlib.data import results
from benchlib.run.driver import END_SERIES, EngineStart, Step, Workload
from benchlib.core.errors import ParameterError
from benchlib.run.measure import SettlePolicy, wait_until_quiet
from benchlib.run.parameters import RunParameters, one_of, param, positive_int

DRIVER = dict(repetitions=1, max_repetitions=1, ci_target=0.05, warmup=False, pin_cpus=False, idle_seconds=0.05,
              max_settle_seconds=0)


@dataclass(frozen=True, kw_only=True)
class TinyParams(RunParameters):
    """The smallest workload a new question needs: two parameters of its own."""

    WORKLOAD = "tiny"
    rows: int = param(positive_int(), "rows per step")
    trouble: str = param(one_of(("none", "step", "check", "disconnect")), "what goes wrong")


def _explode() -> None:
    raise ValueError("a bug in the workload")


class Tiny(Workload):
    experiment = "tiny"
    Params = TinyParams

    def steps(self, params, start, repetition):
        return [Step("insert"), Step("count", ends_start=False)]

    def prepare(self, ctx):
        ctx.state["session"] = ctx.instance.session()
        ctx.state["session"].execute("create table t (x integer)")

    def measure(self, ctx, step):
        session, rows = ctx.state["session"], ctx.params.rows
        if step.name == "insert":
            with ctx.phase("insert", check=lambda: session.execute("select count(*) from t")[0][0]):
                cursor = session.cursor()  # one cursor: on DuckDB each cursor is its own connection
                cursor.execute("begin")  # one transaction: autocommit would make this a test of fsync
                cursor.executemany(f"insert into t values ({session.placeholder})", [(i,) for i in range(rows)])
                cursor.execute("commit")
                cursor.close()
            return
        if ctx.params.trouble == "step":
            _explode()
        if ctx.params.trouble == "disconnect":  # the server ends the session, as a crashed backend would
            session.execute("select pg_terminate_backend(pg_backend_pid())")
        check = (lambda: 1 / 0) if ctx.params.trouble == "check" else None
        with ctx.phase("count", check=check):
            session.execute("select count(*) from t")


class TinyInOneStart(Tiny):
    fresh_start_per_repetition = False


def _run(workload, store, **values):
    params = workload.validate_parameters({**DRIVER, "engines": ["sqlite", "duckdb"], "rows": 100, "trouble": "none",
                                           **values})
    return workload.run(params, store=store)


def test_parameters_are_declared_once():
    assert TinyParams.declared() == ("engines", "repetitions", "max_repetitions", "ci_target", "warmup", "pin_cpus",
                                     "idle_seconds", "max_settle_seconds", "counter", "rows", "trouble")
    assert TinyParams.optional() == ("counter",)  # auto where a set leaves it out: what ran before it existed
    with pytest.raises(ParameterError, match="max_repetitions must be an integer >= repetitions \\(3\\), got 2"):
        Tiny().validate_parameters({**DRIVER, "engines": ["sqlite"], "rows": 1, "trouble": "none", "repetitions": 3,
                                    "max_repetitions": 2})
    # Every workload's settle bound: 0, or long enough to see the quiet it waits for.
    with pytest.raises(ParameterError, match=r"^max_settle_seconds must be 0 \(no settle windows\) or at least 1 s "
                                             r"\(the settle policy's quiet interval.*got 0\.3$"):
        Tiny().validate_parameters({**DRIVER, "engines": ["sqlite"], "rows": 1, "trouble": "none",
                                    "max_settle_seconds": 0.3})
    with pytest.raises(ParameterError, match="tiny parameters: missing trouble"):
        Tiny().validate_parameters({**DRIVER, "engines": ["sqlite"], "rows": 1})


def test_progress_total_is_the_plan_and_every_step_lands(store, tmp_path, monkeypatch):
    events = tmp_path / "progress.jsonl"
    monkeypatch.setenv("BENCHLIB_PROGRESS_FILE", str(events))
    result = _run(Tiny(), store, repetitions=2, max_repetitions=2, warmup=True)
    lines = [json.loads(line) for line in events.read_text().splitlines()]
    # (warm-up + 2 repetitions) x 2 engines x (baseline + 2 steps)
    assert lines[0]["total"] == 3 * 2 * 3 and lines[-1]["done"] == lines[-1]["total"]
    df = results.measurements(result.run_id, store)
    phases = df[(df["metric"] == "wall_time") & (df["window"] == "phase")]
    assert sorted(set(phases["repetition"])) == [1, 2] and set(phases["engine"]) == {"sqlite", "duckdb"}
    assert set(df[df["window"].str.startswith("warmup-")]["repetition"]) == {0}
    # Every start measured its idle rate after the gate, repetition 0 included (as warm-up).
    assert set(df[df["window"] == "baseline"]["repetition"]) == {1, 2}


def test_a_failed_step_keeps_its_traceback_and_the_other_engines_run(store):
    result = _run(Tiny(), store, trouble="step")
    info = results.run_info(result.run_id, store)
    assert info["status"] == "partial" and set(result.errors) == {"sqlite count repetition 1",
                                                                   "duckdb count repetition 1"}
    trace = info["failures"]["sqlite count repetition 1"]
    assert trace.startswith("Traceback") and "_explode" in trace and "ValueError: a bug in the workload" in trace
    df = results.measurements(result.run_id, store)
    assert set(df[df["phase"] == "insert"]["engine"]) == {"sqlite", "duckdb"}  # measured before the failure


@pytest.mark.docker
def test_a_step_whose_server_closed_the_connection_keeps_the_servers_last_log_lines(store):
    result = _run(Tiny(), store, engines=["postgres"], trouble="disconnect")
    trace = results.run_info(result.run_id, store)["failures"]["postgres count repetition 1"]
    assert "server's last log lines:" in trace and "terminating connection due to administrator command" in trace
    # An embedded engine has no server log: its traceback alone.
    embedded = _run(Tiny(), store, engines=["sqlite"], trouble="step")
    assert "server's last log lines" not in results.run_info(embedded.run_id, store)["failures"]["sqlite count repetition 1"]


def test_a_check_that_raises_keeps_its_window(store):
    result = _run(Tiny(), store, trouble="check")
    df = results.measurements(result.run_id, store)
    kept = df[(df["phase"] == "count") & (df["window"] == "phase")]
    assert set(kept["check_status"]) == {"error"} and kept["check_value"].isna().all()
    assert {"wall_time", "cpu_time"} <= set(kept["metric"])
    assert "ZeroDivisionError" in results.run_info(result.run_id, store)["failures"]["sqlite count repetition 1"]


def test_repetitions_inside_one_start_stop_at_the_bound_and_say_why(store):
    # 0.3-0.6 s of insert CPU per window for SQLite (0.16 s for 300,000 rows on a quick host fell under
    # the 0.2 s precision floor): above the floor, and a 0.01% target no repetition count meets.
    result = _run(TinyInOneStart(), store, engines=["sqlite"], rows=600_000, repetitions=2, max_repetitions=3,
                  ci_target=0.0001)
    df = results.measurements(result.run_id, store)
    assert df["instance_id"].nunique() == 1 and sorted(set(df["repetition"])) == [1, 2, 3]
    note = results.run_info(result.run_id, store)["status_note"]
    assert "sqlite: Repetitions: 3, the bound" in note
    # The report reads the outcome by the driver's own rule (results.precision_outcome), never its sentence.
    from benchlib.present.report import RunReport

    class TinyReport(RunReport):
        workload = TinyInOneStart()

    outcome = TinyReport(result.run_id, store).precision_outcome()
    assert not outcome.met and outcome.wide == outcome.targeted >= 1
    assert outcome.table.loc[outcome.table["wide"], "n"].eq(3).all()  # at the bound: max_repetitions values


def _burn(stop: threading.Event) -> None:
    while not stop.is_set():
        sum(i * i for i in range(2000))


@pytest.mark.parametrize("burn_seconds, threshold, max_seconds, ends", [
    (0.0, 0.5, 5.0, "quiet"),  # nothing runs: quiet once the trailing interval has history
    (0.6, 0.5, 5.0, "quiet"),  # busy (~1 core) above the threshold, then quiet
    (None, 0.5, 1.5, "max_seconds"),  # never quiet: the bound ends it
    (None, 2.0, 5.0, "quiet"),  # ~1 core of work is below a 2-core threshold: that is quiet too
    (0.0, 0.5, 0.3, "quiet"),  # a bound equal to the quiet interval: quiet is judged before the bound
])
def test_how_a_settle_window_ends(burn_seconds, threshold, max_seconds, ends):
    policy = SettlePolicy(quiet_seconds=0.3, poll_seconds=0.05)
    scope = cgroups.process_scope()  # this process: the burning thread is real CPU in it
    stop = threading.Event()
    worker = threading.Thread(target=_burn, args=(stop,), daemon=True)
    worker.start()
    if burn_seconds is not None:
        threading.Timer(burn_seconds, stop.set).start()
    t0 = time.perf_counter()
    try:
        outcome = wait_until_quiet(scope, policy, t0, scope.sample().cpu_ns, threshold, max_seconds)
    finally:
        stop.set()
        worker.join()
    waited = time.perf_counter() - t0
    assert outcome == ends
    if ends == "max_seconds":
        assert max_seconds <= waited < max_seconds + 0.5
    else:
        assert waited >= policy.quiet_seconds and waited < (burn_seconds or 0) + 2.0


def test_ratio_ci_agrees_with_welch():
    a = {"value": 10.0, "value_ci95": 1.24, "value_std": 1.0, "n": 5}
    b = {"value": 12.0, "value_ci95": 1.24, "value_std": 1.0, "n": 5}
    c = results.contrast(a, b, "value", threshold=0.05)
    rel_se = (1 / 5 / 100 + 1 / 5 / 144) ** 0.5  # log(b / a)'s standard error (delta method)
    spread = math.exp(results.t_quantile_975(int(c["welch_dof"])) * rel_se)
    assert c["ratio"] == pytest.approx(1.2)
    assert (c["ratio_low"], c["ratio_high"]) == pytest.approx((1.2 / spread, 1.2 * spread))
    assert c["beyond_noise"] is True and c["flagged"] is True
    assert c["ratio_low"] > 1  # the CI excludes 1 exactly when the test says beyond noise
    same = results.contrast(a, {**a, "value": 10.2}, "value")
    assert same["beyond_noise"] is False and same["ratio_low"] < 1 < same["ratio_high"]


class OneOffLoad(TinyInOneStart):
    """A start whose load runs once (repetition 1) before steps that repeat."""

    def steps(self, params, start, repetition):
        return ([Step("insert")] if repetition == 1 else []) + [Step("count", ends_start=False)]


def test_a_one_off_step_never_holds_the_repetitions_open(store):
    # The load costs 0.3-0.6 s (over the 0.2 s floor, so targeted) but has one value per start by design;
    # the repeated count is under the floor: repetition 2 has nothing left to tighten, so the start stops there.
    result = _run(OneOffLoad(), store, engines=["sqlite"], rows=600_000, repetitions=1, max_repetitions=4,
                  ci_target=0.0001)
    df = results.measurements(result.run_id, store)
    assert sorted(set(df["repetition"])) == [1, 2]
    assert "sqlite: Repetitions: 2; no phase window cost" in results.run_info(result.run_id, store)["status_note"]


def test_an_early_stop_skips_exactly_the_unrun_starts(store, tmp_path, monkeypatch):
    events = tmp_path / "progress.jsonl"
    monkeypatch.setenv("BENCHLIB_PROGRESS_FILE", str(events))
    _run(Tiny(), store, repetitions=1, max_repetitions=4)  # nothing costs 0.2 s: stops after repetition 1
    done = [json.loads(line) for line in events.read_text().splitlines() if '"event": "done"' in line]
    # Every skip is counted once: the count reaches the total exactly, never by the clamp.
    assert done[-1]["done"] == done[-1]["total"] == 4 * 2 * 3


def test_one_start_with_a_warmup_keeps_a_measured_baseline(store):
    result = _run(TinyInOneStart(), store, engines=["sqlite"], warmup=True)
    df = results.measurements(result.run_id, store)
    assert set(df[df["window"] == "baseline"]["repetition"]) == {1}
    assert set(df[df["window"] == "warmup-phase"]["repetition"]) == {0}
    costs = results.phase_costs(df, "cpu_time")
    assert costs[~costs["is_baseline"]]["idle_rate"].notna().all()


def test_every_repetition_has_a_calibration_window_and_the_run_note_weighs_host_against_engine(store):
    result = _run(Tiny(), store, repetitions=3, max_repetitions=3, warmup=True)
    df = results.measurements(result.run_id, store)
    loops = df[df["metric"] == "calibration_cpu_time"]
    assert set(loops["window"]) == {"calibration", "warmup-calibration"}
    measured = loops[loops["window"] == "calibration"]
    assert sorted(measured["repetition"]) == [1, 1, 2, 2, 3, 3]  # per engine start and repetition
    assert (measured["value"] > 0.01).all() and set(measured["unit"]) == {"s"}
    speed = results.host_speed(df)
    assert speed["n"] == 6 and speed["max_over_min"] >= 1.0 and speed["rel_sd"] >= 0
    # The loop is never a phase: no report's phase table can meet it.
    assert "calibration" not in set(results.phase_costs(df, "cpu_time")["phase"])


def test_normalised_costs_scale_each_repetition_by_its_host_speed():
    import pandas as pd

    costs = pd.DataFrame({"instance_id": ["a", "a", "b"], "repetition": [1, 2, 1], "value": [1.0, 2.0, 3.0]})
    df = pd.DataFrame({"run_id": "r", "instance_id": ["a", "a", "b"], "engine": "e", "repetition": [1, 2, 1],
                       "metric": "calibration_cpu_time", "window": "calibration", "value": [0.1, 0.2, 0.1]})
    out = results.normalised(costs, df)
    # median 0.1: repetition 2 of start a ran at half speed, so its cost is halved
    assert list(out["value"]) == pytest.approx([1.0, 1.0, 3.0])
    assert results.normalised(costs, df.iloc[0:0]).empty  # no calibration: no normalised figure


class Series(TinyInOneStart):
    """Two series of three steps; the first ends after its second step (a sweep past its goal)."""

    def steps(self, params, start, repetition):
        return [Step(f"{name}{i}", ends_start=False, series=name) for name in ("a", "b") for i in (1, 2, 3)]

    def prepare(self, ctx):
        pass

    def measure(self, ctx, step):
        with ctx.phase(step.name):
            pass
        return END_SERIES if step.name == "a2" else None


def test_a_step_that_ends_its_series_skips_the_series_rest_only(store, tmp_path, monkeypatch):
    events = tmp_path / "progress.jsonl"
    monkeypatch.setenv("BENCHLIB_PROGRESS_FILE", str(events))
    params = Series().validate_parameters({**DRIVER, "engines": ["sqlite"], "rows": 1, "trouble": "none",
                                           "repetitions": 2, "max_repetitions": 2})
    result = Series().run(params, store=store)
    df = results.measurements(result.run_id, store)
    ran = df[(df["metric"] == "wall_time") & (df["window"] == "phase")].groupby("repetition")["phase"].apply(set)
    assert ran.to_dict() == {1: {"a1", "a2", "b1", "b2", "b3"}, 2: {"a1", "a2", "b1", "b2", "b3"}}
    last = json.loads(events.read_text().splitlines()[-1])
    assert last["done"] == last["total"] == 1 + 2 * 6  # the skipped steps still count as done


class StepMajorInOneStart(TinyInOneStart):
    repeat_each_step = True


@pytest.mark.parametrize("workload, expected", [
    (TinyInOneStart(), [("insert", 1), ("count", 1), ("insert", 2), ("count", 2)]),
    (StepMajorInOneStart(), [("insert", 1), ("insert", 2), ("count", 1), ("count", 2)]),
])
def test_step_major_repetitions_run_each_steps_repetitions_back_to_back(store, workload, expected):
    # Step-major: no later step (a write) comes between two repetitions of an earlier one (a read),
    # and each repetition still has its own calibration window.
    result = _run(workload, store, engines=["sqlite"], repetitions=2, max_repetitions=2)
    df = results.measurements(result.run_id, store)
    windows = df[(df["window"] == "phase")].drop_duplicates(["phase", "repetition"]).sort_values("started_at")
    assert list(zip(windows["phase"], windows["repetition"])) == expected
    assert sorted(set(df[df["window"] == "calibration"]["repetition"])) == [1, 2]
    # Step-major, a calibration beside every step's repetition (run 20261124T155946Z-7dc7b4's twelve
    # loops all fell in its first test, leaving seven tests' host speed unsampled); else one per repetition.
    loops = df[(df["window"] == "calibration") & (df["metric"] == "calibration_cpu_time")]
    calibrations_before = [len(loops[loops["started_at"] < w]) for w in windows["started_at"]]
    assert calibrations_before == ([1, 2, 3, 4] if workload.repeat_each_step else [1, 1, 2, 2])


LOOPS = {"mariadb": (0.062, 0.064, 0.060), "mariadb-myrocks": (0.097, 0.101, 0.106)}


def _speed_report(store, run_id, loops, steal=None, starts=None):
    """A run stored through the Store API: one phase window per engine, the calibration loops
    (`loops`: engine -> seconds per repetition; `starts`: engine -> instance per repetition) and,
    where given, the steal time over each engine's phase window (`steal`: engine -> seconds)."""
    from benchlib.present.report import RunReport
    from synthetic_runs import T0, write_run

    write_run(store, run_id, 0, {e: {"insert": [1.0]} for e in loops}, parameters={"engines": list(loops)})
    rows = [{"run_id": run_id, "instance_id": (starts or {}).get(e, [f"{e}-0001"] * len(v))[rep - 1], "engine": e,
             "experiment": "dml", "phase": "calibration", "repetition": rep, "window": "calibration", "status": "ok",
             "started_at": T0 + pd.Timedelta(seconds=rep), "ended_at": T0, "labels": "{}",
             "metric": "calibration_cpu_time", "value": value, "unit": "s", "source": "clock", "scope": "calibration"}
            for e, v in loops.items() for rep, value in enumerate(v, 1)]
    store.append_measurements(run_id, 900, rows)
    for seq, (e, seconds) in enumerate((steal or {}).items(), 901):
        common = {"run_id": run_id, "instance_id": f"{e}-0001", "engine": e, "experiment": "dml", "phase": "insert",
                  "repetition": 1, "window": "phase", "status": "ok", "started_at": T0, "ended_at": T0, "labels": "{}",
                  "seq": seq}
        store.append_measurements(run_id, seq, [
            {**common, "metric": "wall_time", "value": 6.0, "unit": "s", "source": "clock", "scope": "server"},
            {**common, "metric": "host_steal_time", "value": seconds, "unit": "s", "source": "/proc/stat",
             "scope": "host"}])
    store.compact(run_id)
    return RunReport(run_id, store)


def test_the_host_speed_caveat_names_the_engine_a_slow_spell_fell_on(store):
    # Run 20261124T124310Z-df05c2: every MyRocks repetition's calibration loop took 97-106 ms, the
    # other engines' 59-66 ms (a helper session was reading files on the host meanwhile).
    text = _speed_report(store, "speed-1", LOOPS).host_speed_by_engine()
    assert text.startswith("**Host speed by engine** (median calibration loop of each engine's repetitions): "
                           "MariaDB 62 ms, MariaDB MyRocks 101 ms.")
    assert "MariaDB MyRocks's median loop (all its starts) ran 1.63x the fastest engine's: the loop runs on the engine's CPUs, so either the " \
           "host was slower then" in text and "Steal time" not in text  # a run from before steal was read
    # Steal over each engine's phase windows (/proc/stat): 1.2 s of 2 cores x 6 s for MyRocks.
    text = _speed_report(store, "speed-2", LOOPS, steal={"mariadb": 0.0, "mariadb-myrocks": 1.2}).host_speed_by_engine()
    assert "(/proc/stat, as a share of the host's CPU time then): MariaDB 0.0%, MariaDB MyRocks 10.0%." in text
    assert "Loops over 1.10x the fastest engine's median: MariaDB 0 of 3 (slowest 64 ms), MariaDB MyRocks 3 of 3 " \
           "(slowest 106 ms)." in text and "Steal did not capture" not in text  # 10% steal: it did
    little = _speed_report(store, "speed-3", LOOPS, steal={"mariadb": 0.01, "mariadb-myrocks": 0.01})
    assert "Steal did not capture the slow loops" in little.host_speed_by_engine()
    assert "per engine start" not in text  # one start per engine: its median is the start's
    # Two starts of one engine that met the host at different speeds (run 20261124T192748Z-d9b761: PostgreSQL
    # 66 ms cached, 110 ms IO-bound, one median of 84 ms over both).
    two = _speed_report(store, "speed-4", {"mariadb": (0.062, 0.064, 0.060, 0.110, 0.112, 0.108),
                                           "mariadb-myrocks": LOOPS["mariadb-myrocks"]},
                        starts={"mariadb": ["mariadb-0001"] * 3 + ["mariadb-0002"] * 3})
    # In the order the starts ran, not grouped by engine (the 02 report said "PostgreSQL 37, 35 ms; MySQL 36,
    # 34 ms" of starts that ran PostgreSQL, MySQL, PostgreSQL, MySQL).
    assert "Median loop per engine start, in the order the starts ran: MariaDB 62 ms, MariaDB MyRocks 101 ms, " \
           "MariaDB 110 ms." in two.host_speed_by_engine()
    assert _speed_report(store, "speed-5", {"mariadb": LOOPS["mariadb"]}).host_speed_by_engine() == ""
