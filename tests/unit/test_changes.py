"""The change list on a real store (Parquet files, DuckDB) with planted changes: a slowdown beyond
noise and threshold is a regression, an unchanged phase is not listed, runs that differ in a
measuring parameter or host are never paired, and `benchlib changes` exits 3 on a regression."""
import pytest

from benchlib.compare import changes
from benchlib import cli
from benchlib.data.store import Store
from synthetic_runs import write_run

STEADY = [1.0, 1.02, 0.98, 1.01, 0.99]  # 5 repetitions, ±2%
SLOWER = [1.3, 1.32, 1.28, 1.31, 1.29]  # +30%
UPDATE = [2.0, 2.05, 1.95, 2.02, 1.98]


@pytest.fixture
def store(tmp_path, monkeypatch):
    """The default store of this test (what the CLI reads)."""
    monkeypatch.setenv("BENCHLIB_DATA_DIR", str(tmp_path / "data"))
    return Store.default()


def _slowdown(store):
    write_run(store, "r1", 1, {"postgres": {"insert": STEADY, "update": UPDATE}},
              versions={"postgres": "PostgreSQL 17.5"}, git_sha="aaaaaaaaaa11")
    write_run(store, "r2", 2, {"postgres": {"insert": SLOWER, "update": UPDATE}},
              versions={"postgres": "PostgreSQL 17.6"}, git_sha="bbbbbbbbbb22")


def test_planted_slowdown_is_a_regression_and_the_unchanged_phase_is_not_listed(store):
    _slowdown(store)
    found = changes.find_changes(store=store)
    by_phase = found.pairs.set_index("phase")
    assert set(by_phase.index) == {"sleep", "insert", "update"}  # every phase paired r1 -> r2
    insert = by_phase.loc["insert"]
    assert insert["flagged"] and insert["direction"] == "regression"
    assert insert["ratio"] == pytest.approx(1.3) and insert["metric"] == "engine:cpu_time/op"
    assert insert["base_mean"] == pytest.approx(1000.0)  # µs per row: 1 s over rows=1000
    assert (insert["from_version"], insert["to_version"]) == ("PostgreSQL 17.5", "PostgreSQL 17.6")
    assert (insert["from_git"], insert["to_git"]) == ("aaaaaaaaaa", "bbbbbbbbbb")
    assert not by_phase.loc["update"]["flagged"] and by_phase.loc["update"]["beyond_noise"] in (False,)  # tested, not None
    assert list(found.regressions["phase"]) == ["insert"]


def test_a_change_under_the_threshold_is_beyond_noise_but_not_listed(store):
    write_run(store, "r1", 1, {"postgres": {"insert": STEADY}})
    write_run(store, "r2", 2, {"postgres": {"insert": [v * 1.03 for v in STEADY]}})
    insert = changes.find_changes(store=store).pairs.set_index("phase").loc["insert"]
    assert insert["beyond_noise"] and not insert["flagged"]
    assert changes.find_changes(store=store, threshold=0.02).pairs.set_index("phase").loc["insert"]["flagged"]


def test_runs_are_paired_only_within_host_and_measuring_parameters(store):
    write_run(store, "small", 1, {"postgres": {"insert": STEADY}}, parameters={"rows": 1000, "repetitions": 5})
    write_run(store, "big", 2, {"postgres": {"insert": SLOWER}}, parameters={"rows": 2000})
    write_run(store, "elsewhere", 3, {"postgres": {"insert": SLOWER}}, hostname="host-b")
    # A different repetition count or engine list does not change a cell: paired with "small".
    write_run(store, "again", 4, {"postgres": {"insert": STEADY}},
              parameters={"rows": 1000, "repetitions": 7, "engines": ["postgres", "mariadb"]})
    pairs = changes.find_changes(store=store).pairs
    assert set(zip(pairs["from_run"], pairs["to_run"])) == {("small", "again")}
    assert changes.find_changes(store=store).flagged.empty


def test_hosts_of_one_declared_class_pair_only_while_their_fingerprints_agree(store):
    c6i = {"host_class": "c6i.large", "host_fingerprint": "aaaaaaaaaaaa"}
    write_run(store, "vm1", 1, {"postgres": {"insert": STEADY}}, hostname="vm-1", host=c6i)
    write_run(store, "vm2", 2, {"postgres": {"insert": SLOWER}}, hostname="vm-2", host=c6i)
    # Same class, another kernel (another fingerprint): never compared with the two above.
    write_run(store, "vm3", 3, {"postgres": {"insert": STEADY}}, hostname="vm-3",
              host={**c6i, "host_fingerprint": "bbbbbbbbbbbb"})
    found = changes.find_changes(store=store)
    assert set(zip(found.pairs["from_run"], found.pairs["to_run"])) == {("vm1", "vm2")}
    assert list(found.regressions["phase"]) == ["insert"]


def test_unfinished_runs_are_skipped_and_pinned_versions_are_their_own_series(store):
    write_run(store, "r1", 1, {"postgres@15": {"insert": STEADY}, "postgres@17": {"insert": STEADY}})
    write_run(store, "broken", 2, {"postgres@17": {"insert": SLOWER}}, status="failed")
    write_run(store, "r3", 3, {"postgres@15": {"insert": SLOWER}, "postgres@17": {"insert": STEADY}})
    insert = changes.find_changes(store=store).pairs.query("phase == 'insert'").set_index("engine")
    assert set(insert["from_run"]) == {"r1"} and set(insert["to_run"]) == {"r3"}
    assert insert.loc["postgres@15", "flagged"] and not insert.loc["postgres@17", "flagged"]


def test_sysbench_cost_is_per_transaction(store):
    # Same CPU, twice the transactions: each transaction costs half, an improvement.
    write_run(store, "r1", 1, {"mariadb": {"oltp_point_select": STEADY}}, experiment="sweep", parameters={},
              transactions=1000.0)
    write_run(store, "r2", 2, {"mariadb": {"oltp_point_select": STEADY}}, experiment="sweep", parameters={},
              transactions=2000.0)
    step = changes.find_changes(store=store, experiment="sweep").pairs.set_index("phase").loc["oltp_point_select"]
    assert step["metric"] == "engine:cpu_time/op" and step["ratio"] == pytest.approx(0.5)
    assert step["flagged"] and step["direction"] == "improvement"


def test_changes_command_prints_the_rule_and_exits_3_on_a_regression(store, capsys):
    _slowdown(store)
    assert cli.main(["changes"]) == cli.REGRESSION_EXIT
    out = capsys.readouterr().out
    assert "Pairing: each finished run" in out and "measuring parameters" in out
    (line,) = [line for line in out.splitlines() if line.startswith("REGRESSION")]
    assert "postgres insert" in line and "x1.300" in line
    assert "from r1 (PostgreSQL 17.5, git aaaaaaaaaa) to r2 (PostgreSQL 17.6, git bbbbbbbbbb)" in line
    assert cli.main(["changes", "--threshold", "0.5"]) == 0  # 30% is under a 50% threshold
    assert cli.main(["changes", "--experiment", "sweep"]) == 0  # no run of it: nothing to list


def test_changes_command_refuses_a_bad_threshold_and_an_unknown_metric(store, capsys):
    _slowdown(store)
    with pytest.raises(SystemExit) as exit_:
        cli.main(["changes", "--threshold", "5%"])
    assert exit_.value.code == 2
    assert "threshold must be a fraction between 0 and 1 (0.05 = 5%), got '5%'" in capsys.readouterr().err
    assert cli.main(["changes", "--metric", "client:tps"]) == 2
    assert "metric 'client:tps' is not in the store" in capsys.readouterr().err


def test_latest_gates_on_each_series_newest_pair_only(store):
    _slowdown(store)  # r1 -> r2: insert 30% dearer
    write_run(store, "r3", 3, {"postgres": {"insert": SLOWER, "update": UPDATE}})  # r2 -> r3: no change
    assert cli.main(["changes"]) == cli.REGRESSION_EXIT  # the history still lists r1 -> r2
    latest = changes.find_changes(store=store, latest=True).pairs
    assert set(latest["to_run"]) == {"r3"} and len(latest) == 3  # sleep, insert, update
    assert cli.main(["changes", "--latest"]) == 0


def test_a_run_outside_a_git_checkout_is_labelled_unknown_not_dirty():
    import pandas as pd

    from benchlib.compare.changes import git_label

    assert git_label({"git_sha": pd.NA, "git_dirty": pd.NA}) == "unknown"
    assert git_label({"git_sha": None, "git_dirty": None}) == "unknown"
    assert git_label({"git_sha": "0123456789abcdef", "git_dirty": True}) == "0123456789+dirty"
