"""valgrind's callgrind as the instruction counter, on real servers under valgrind (issue 35): two
tiny runs of the DML workload agree phase by phase, a process that exits inside a window is
counted, and what valgrind cannot count is refused before any container starts."""
import time

import pytest

from benchlib.data import results
from benchlib.core.errors import ParameterError
from benchlib.containers.lifecycle import start
from benchlib.workloads import dml

pytestmark = pytest.mark.docker

# 01 at a small scale, with what moves a count from one start to the next for reasons of the
# engine's own timing switched off, so that what is compared is the counter: random keys (each start
# splits other B-tree pages), PostgreSQL's autovacuum (a worker the launcher starts once a minute
# lands in one run's window and not the other's: 4-85 M instructions) and its statistics counters (a
# backend flushes them at most once a second, so which statement's end pays the flush, ~20-90 k,
# depends on the wall clock), the background writer's and WAL writer's 200 ms wake-ups (with them
# idle PostgreSQL counted ~290 k a second, and a select window's wall time under valgrind moved from
# 0.32 to 0.54 s: its 3.5 M moved 2.5%, run 20261128T082635Z) and the work each wake-up then does
# (every 10 s the background writer scanned 180-270 k of buffer headers and the WAL writer zeroed
# 550 k of WAL buffers ahead: in one run's delete window, in the other's settle, 0.70% in CI; with
# no LRU writing and 64 kB of WAL buffers a wake-up costs ~500), InnoDB's persistent statistics
# recalculation and idle page flushing (a background thread's work, in whichever window it wakes:
# 0.3-2 M). 5,000 rows: a one-off of MySQL's (a 64 KiB buffer zeroed in whichever statement first
# needs it, 80 k) stays below 1.5% of its select; a phase's wall time here is mostly fixed cost, so
# fewer rows would save little. instructions.yaml keeps every default and reports the spread they cause.
TINY = dict(engines=["postgres", "mysql"], rows=5_000, repetitions=1, max_repetitions=1, ci_target=0.05,
            warmup=False, pin_cpus=True, idle_seconds=0.5, vacuum=True, pk_kind="sequential",
            engine_config={"postgres": {"autovacuum": "off", "track_counts": "off", "bgwriter_delay": "10s",
                                        "wal_writer_delay": "10s", "bgwriter_lru_maxpages": 0,
                                        "wal_buffers": "64kB"},
                           "mysql": {"innodb_stats_auto_recalc": "OFF", "innodb_idle_flush_pct": 0}},
            max_settle_seconds=1, counter="valgrind")
AGREE = {"postgres": 0.005, "mysql": 0.03}  # the bounds: MySQL's background threads move it more


def _phases(run_id: str, store) -> dict[tuple[str, str], float]:
    """Each engine's count per phase window (the issue's figure: what the counter counted)."""
    df = results.measurements(run_id, store)
    rows = df[(df["metric"] == "instructions_user") & (df["scope"] == "server") & (df["window"] == "phase")]
    assert set(rows["source"]) == {"valgrind"} and set(rows["status"]) == {"ok"}
    return {(r.engine, r.phase): r.value for r in rows.itertuples()}


def test_two_tiny_runs_agree_phase_by_phase(store, benchlib_containers):
    before = benchlib_containers()
    params = dml.validate_parameters(TINY)
    first, second = dml.run(params, store=store), dml.run(params, store=store)
    # A failure shows its traceback and the server's last log lines (a crash under valgrind says why).
    assert not first.errors and not second.errors, [results.run_info(r.run_id, store)["failures"]
                                                     for r in (first, second)]
    a, b = _phases(first.run_id, store), _phases(second.run_id, store)
    assert set(a) == set(b) == {(e, p) for e in TINY["engines"] for p in dml.PHASES[1:]}
    for (engine, phase), count in a.items():
        assert count > 1e6, (engine, phase, count)
        apart = abs(count - b[(engine, phase)]) / count
        assert apart <= AGREE[engine], f"{engine} {phase}: {count:,.0f} against {b[(engine, phase)]:,.0f} ({apart:.2%})"
    df = results.measurements(first.run_id, store)
    server = df[df["scope"] == "server"]
    # The CPU seconds of a server under valgrind are stored apart, never as its CPU cost.
    assert not server["metric"].isin(["cpu_time", "cpu_user_time", "cpu_system_time", "maintenance_cpu_time"]).any()
    assert {"cpu_time_under_valgrind", "cpu_user_time_under_valgrind",
            "maintenance_cpu_time_under_valgrind"} <= set(server["metric"])
    # What the idle correction removes is stored with each window, from the baseline's own count.
    idle = server[(server["metric"] == "idle_instructions_user") & (server["window"] == "phase")]
    assert len(idle) == 8 and idle["value"].gt(0).all()
    assert results.cost_metric(df)[0] == "instructions_user"
    # 01's report of servers alone under valgrind: their client has CPU rows and no instructions, so no
    # "engine + driver" side (the main job's instruction set failed on it, 20261128T132443Z).
    found = dml.DmlReport(first.run_id, store).findings()
    assert set(found["engine"]) == {"mysql"} and set(found["metric"]) == {"instructions_user"} and len(found) == 4
    assert results.instances(first.run_id, store)["config"].str.contains('"tool": "valgrind"').all()
    assert benchlib_containers() == before  # every server under valgrind stopped and removed


def test_a_process_that_exits_inside_the_window_is_counted():
    with start("postgres", valgrind=True) as eng:
        callgrind = eng.callgrind
        session = eng.session()
        query = "select count(*) from generate_series(1, 20000)"
        pid = session.execute("select pg_backend_pid()")[0][0]
        kept = callgrind.window("kept")
        kept.enable()
        session.execute(query)
        # The same statement on a connection opened and closed inside the next window (opened as
        # this one ends, without a gap: a phase's hand-over to its settle window): its backend
        # exits before the window closes, and only its exit dump holds its count.
        window = callgrind.window("exits")
        kept.hand_over(window)
        other = eng.session()
        exiting = other.execute("select pg_backend_pid()")[0][0]
        other.execute(query)
        other.close()
        deadline = time.monotonic() + 20
        while session.execute(f"select count(*) from pg_stat_activity where pid = {exiting}")[0][0]:
            assert time.monotonic() < deadline, "the closed connection's backend never exited"
            time.sleep(0.05)
        window.disable()
        counted, before = window.counted.per_process(), kept.counted.per_process()
        assert exiting != pid and exiting in counted and exiting not in before
        assert exiting not in callgrind.processes()  # gone: vgdb no longer lists it
        # Its exit dump holds at least what the query cost on the kept connection.
        assert counted[exiting] >= 0.9 * before[pid], (counted, before)
        assert window.counted.total == sum(window.counted.files.values()) >= counted[exiting]
        assert all(path.exists() for path in window.counted.files)  # kept for a profile reader


def test_what_valgrind_cannot_count_is_refused_before_any_container(benchlib_containers):
    before = benchlib_containers()
    with pytest.raises(ParameterError, match=r"^counter='valgrind' cannot count engine 'ferretdb': its container runs "
                                             r"two programs"):
        dml.validate_parameters({**TINY, "engines": ["postgres", "ferretdb"]})
    with pytest.raises(ParameterError, match=r"^counter must be one of auto, perf, valgrind, got 'cachegrind'$"):
        dml.validate_parameters({**TINY, "counter": "cachegrind"})
    with pytest.raises(ParameterError, match=r"^rocksdb cannot start under valgrind: a key-value store"):
        start("rocksdb", valgrind=True)
    assert benchlib_containers() == before
