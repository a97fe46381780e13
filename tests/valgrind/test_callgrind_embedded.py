"""SQLite's phases counted in a child Python process under callgrind (callgrind_embedded), read
with callgrind_profile, stored and drawn: real valgrind, real sqlite3, 2,000 rows."""
import json

import pytest

from benchlib import callgrind_embedded as ce
from benchlib import results
from benchlib.callgrind_profile import profile_rows, read_window, subsystem_table
from benchlib.plots import subsystem_bars

pytestmark = pytest.mark.valgrind

ROWS = 2_000
PHASES = [
    ("insert", [f"insert into demo(value) with recursive n(i) as (select 1 union all select i + 1 from n "
                f"where i < {ROWS}) select i from n"]),
    ("update", ["update demo set value = value + 1"]),
    ("select", ["select count(value) from demo"]),
    ("delete", ["delete from demo"]),
]
SETUP = ["create table demo (id integer primary key, value float)"]


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    counts = []
    for i in range(2):
        base = tmp_path_factory.mktemp(f"sqlite-run{i}")
        counts.append(ce.count_phases("sqlite", PHASES, database=base / "bench.sqlite", out_dir=base / "callgrind",
                                      setup=SETUP))
    return counts


def test_each_phase_has_its_own_dump_and_the_statements_ran(two_runs):
    first = two_runs[0]
    assert [p.phase for p in first.phases] == [name for name, _ in PHASES]
    assert first.phase("select").rows == [[ROWS]]
    assert first.valgrind_version.startswith("valgrind-")
    # The empty phase is counted and shown: small beside a phase, never zero, subtracted in net.
    assert 0 < first.interpreter.instructions < 0.01 * first.phase("insert").instructions
    assert first.phase("insert").net == first.phase("insert").instructions - first.interpreter.instructions
    # The interpreter's start (imports, connect, setup) is its own window, not part of any phase.
    assert first.startup.instructions > 10 * first.phase("insert").instructions
    dumps = {p.dump for p in (first.startup, first.interpreter, *first.phases, first.teardown)}
    assert len(dumps) == len(PHASES) + 3


def test_two_runs_of_each_phase_agree_within_half_a_percent(two_runs):
    a, b = two_runs
    for pa_, pb in zip(a.phases, b.phases):
        assert abs(pa_.net - pb.net) <= 0.005 * pa_.net, (pa_.phase, pa_.net, pb.net)
    # Inserting rows costs more than counting them: the counts are the phases', not noise.
    assert a.phase("insert").net > 3 * a.phase("select").net


def test_the_insert_profile_is_sqlites_and_its_subsystems_sum_to_the_window(two_runs):
    profile = read_window([two_runs[0].phase("insert").dump])
    assert profile.total == two_runs[0].phase("insert").instructions
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


def test_profile_rows_round_trip_through_the_store_and_draw(two_runs, store):
    from benchlib.measure import Run

    with Run("valgrind-profile", {"rows": ROWS}, store=store) as run:
        for repetition, count in enumerate(two_runs, start=1):
            for seq, phase in enumerate(count.phases, start=10 * repetition):
                profile = read_window([phase.dump])
                rows = profile_rows(profile, "sqlite", {
                    "run_id": run.run_id, "seq": seq, "instance_id": f"sqlite-{repetition:04d}", "phase": phase.phase,
                    "repetition": repetition, "labels": json.dumps({}), "window": "phase"},
                    top=10, tool_version=count.valgrind_version)
                store.append_profile(run.run_id, seq, "phase", rows)
    subsystems = results.instruction_profile(run.run_id, store=store)
    sums = subsystems.groupby(["repetition", "phase"])["self_instructions"].sum()
    for repetition, count in enumerate(two_runs, start=1):
        for phase in count.phases:
            assert sums[(repetition, phase.phase)] == phase.instructions
    functions = results.instruction_profile(run.run_id, "function", store=store)
    assert set(functions["source"]) == {"valgrind callgrind"}
    assert functions["reader"].str.startswith("gprof2dot").all()
    assert functions.groupby(["repetition", "phase"])["self_rank"].min().eq(1).all()
    fig = subsystem_bars(subsystems, title="SQLite", name="t", phases=["insert", "update", "select", "delete"])
    drawn = sum(sum(v for v in trace.x if v == v) for trace in fig.data if trace.yaxis == "y")  # the insert panel
    insert = sum(c.phase("insert").instructions for c in two_runs) / 2
    assert drawn == pytest.approx(insert)
    assert len(fig.layout.annotations) == 4  # one titled panel per phase


def test_bad_arguments_are_named_before_valgrind_starts(tmp_path):
    with pytest.raises(ValueError, match="'postgres' has no child driver"):
        ce.count_phases("postgres", PHASES, database=tmp_path / "x", out_dir=tmp_path / "cg")
    with pytest.raises(ValueError, match="distinct"):
        ce.count_phases("sqlite", [("a", []), ("a", [])], database=tmp_path / "x", out_dir=tmp_path / "cg")
    with pytest.raises(ValueError, match="list of SQL strings"):
        ce.count_phases("sqlite", [("a", "select 1")], database=tmp_path / "x", out_dir=tmp_path / "cg")
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "cg.1").write_text("")
    with pytest.raises(ValueError, match="already holds callgrind files"):
        ce.count_phases("sqlite", PHASES, database=tmp_path / "x", out_dir=tmp_path / "used")
    assert not (tmp_path / "cg").exists()
