"""SQLite counted in instructions: the library in a child Python process under callgrind that
serves the sessions' statements (callgrind_embedded), its windows switched with vgdb, the child's
own protocol counted once and taken out; read with callgrind_profile, stored and drawn. Real
valgrind, real sqlite3, 2,000 rows."""
import json

import pytest

from benchlib.data import results
from benchlib.counters.callgrind_embedded import ChildStatementError
from benchlib.counters.callgrind_profile import profile_rows, read_window, subsystem_table
from benchlib.containers.lifecycle import start
from benchlib.present.plots import subsystem_bars

pytestmark = pytest.mark.valgrind

ROWS = 2_000
PHASES = [
    ("insert", f"insert into demo(value) with recursive n(i) as (select 1 union all select i + 1 from n "
               f"where i < {ROWS}) select i from n"),
    ("update", "update demo set value = value + 1"),
    ("select", "select count(value) from demo"),
    ("delete", "delete from demo"),
]


def _count(eng) -> dict:
    """Each phase in a window of its own: (count net of the protocol, the window's Counted, rows)."""
    session = eng.session()
    session.execute("create table demo (id integer primary key, value float)")
    out = {}
    for name, sql in PHASES:
        window = eng.callgrind.window(name)
        window.enable()
        rows = session.execute(sql)
        window.disable()
        out[name] = (window.counted.net, window.counted, rows)
    return out


@pytest.fixture(scope="module")
def two_starts():
    counts = []
    for _ in range(2):
        with start("sqlite", valgrind=True) as eng:
            counts.append((_count(eng), eng.provenance["counter"]))
            files = [c.files for _, c, _ in counts[-1][0].values()]
            assert all(path.exists() for f in files for path in f)  # readable while the instance runs
            profiles = {name: read_window(list(c.files)) for name, (_, c, _) in counts[-1][0].items()}
            counts[-1] = (*counts[-1], profiles)
    return counts


def test_each_phase_is_counted_and_the_protocol_is_taken_out(two_starts):
    phases, counter, _ = two_starts[0]
    assert phases["select"][2] == [(ROWS,)]  # the statements ran, in the child
    assert counter["tool"] == "valgrind" and counter["version"].startswith("valgrind-")
    # One request per phase: its protocol's share, counted at start, is small and shown.
    per_request = counter["harness_per_request"]
    assert 1_000 < per_request < 50_000
    for net, counted, _ in phases.values():
        assert counted.harness == pytest.approx(per_request) and net == counted.total - per_request
    assert phases["insert"][0] > 3 * phases["select"][0]


def test_two_starts_agree_within_half_a_percent(two_starts):
    (a, _, _), (b, _, _) = two_starts[0], two_starts[1]
    for name in a:
        assert abs(a[name][0] - b[name][0]) <= 0.005 * a[name][0], (name, a[name][0], b[name][0])


def test_the_insert_profile_is_sqlites_and_its_subsystems_sum_to_the_window(two_starts):
    phases, _, profiles = two_starts[0]
    profile = profiles["insert"]
    assert profile.total == phases["insert"][1].total
    top = profile.top(10)
    assert top["object"].str.contains("libsqlite3").sum() >= 3
    assert "sqlite3VdbeExec" in set(top[top["self_rank"] <= 3]["function"])
    table = subsystem_table(profile, "sqlite")
    assert int(table["instructions"].sum()) == profile.total
    by_name = table.set_index("subsystem")["instructions"]
    assert by_name["executor"] > 0.2 * profile.total
    assert by_name["B-tree / index"] > 0.05 * profile.total
    # Debian's libsqlite3 names only its exported functions: the static ones are placed by their
    # callers, said in by_caller, and leave little to "other".
    assert 0 < table["by_caller"].sum() < profile.total
    assert by_name["other"] < 0.1 * profile.total


def test_profile_rows_round_trip_through_the_store_and_draw(two_starts, store):
    from benchlib.run.measure import Run

    with Run("valgrind-profile", {"rows": ROWS}, store=store) as run:
        for repetition, (phases, counter, profiles) in enumerate(two_starts, start=1):
            for seq, (name, profile) in enumerate(profiles.items(), start=10 * repetition):
                rows = profile_rows(profile, "sqlite", {
                    "run_id": run.run_id, "seq": seq, "instance_id": f"sqlite-{repetition:04d}", "phase": name,
                    "repetition": repetition, "labels": json.dumps({}), "window": "phase"},
                    top=10, tool_version=counter["version"])
                store.append_profile(run.run_id, seq, "phase", rows)
    subsystems = results.instruction_profile(run.run_id, store=store)
    sums = subsystems.groupby(["repetition", "phase"])["self_instructions"].sum()
    for repetition, (phases, _, _) in enumerate(two_starts, start=1):
        for name, (_, counted, _) in phases.items():
            assert sums[(repetition, name)] == counted.total
    functions = results.instruction_profile(run.run_id, "function", store=store)
    assert set(functions["source"]) == {"valgrind callgrind"}
    assert functions["reader"].str.startswith("gprof2dot").all()
    assert functions.groupby(["repetition", "phase"])["self_rank"].min().eq(1).all()
    fig = subsystem_bars(subsystems, title="SQLite", name="t", phases=[name for name, _ in PHASES])
    drawn = sum(sum(v for v in trace.x if v == v) for trace in fig.data if trace.yaxis == "y")  # the insert panel
    insert = sum(p["insert"][1].total for p, _, _ in two_starts) / 2
    assert drawn == pytest.approx(insert)
    # One titled panel per phase (and, where a bar is mostly unnamed functions, a line naming it).
    assert [a.text for a in fig.layout.annotations][:4] == [name for name, _ in PHASES]


def test_a_failing_statement_is_named_and_the_child_serves_on():
    with start("sqlite", valgrind=True) as eng:
        session = eng.session()
        with pytest.raises(ChildStatementError, match=r"sqlite \(child under valgrind\): OperationalError: no such "
                                                      r"table: missing"):
            session.execute("select * from missing")
        assert session.execute("select 41 + 1") == [(42,)]
        with pytest.raises(ChildStatementError, match="SQL text only"):
            session.execute("select ?", (1,))
