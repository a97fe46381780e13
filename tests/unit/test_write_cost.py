"""The write-cost workload without engines: parameters checked before anything starts (each
message naming the value), the cells of the sweep, the statements of a cell, and the arithmetic
of the report on a frame with known answers."""
import json
import math

import pandas as pd
import pytest

from benchlib.data import results
from benchlib.core.errors import ParameterError
from benchlib.engines import get_engine
from benchlib.workloads.write_cost import analysis, dialect_for, validate_parameters
from benchlib.workloads.write_cost.dialects import DIALECTS
from benchlib.workloads.write_cost.workload import CLIENT_VALUES, SERVER_GENERATOR, Cell, statements

GOOD = dict(engines=["sqlite", "duckdb"], rows=1000, rows_per_txn=[1, 10, 1000], rows_per_stmt=[1, 100],
            server_generated=True, repetitions=1, idle_seconds=0.1, pk_kind="uuid", max_settle_seconds=1,
            max_repetitions=1, ci_target=0.05, warmup=False, pin_cpus=False, clusters=[], cluster_nodes={},
            engine_config={})


@pytest.mark.parametrize("name, value, fragment", [
    ("rows", 0, "rows must be an integer >= 1, got 0"),
    ("rows", -10, "got -10"),
    ("rows_per_txn", [1, 2000], "rows_per_txn value 2,000 is larger than rows (1,000)"),
    ("rows_per_txn", [1, 0], "rows_per_txn must be an integer >= 1, got 0"),
    ("rows_per_txn", [-1], "rows_per_txn must be an integer >= 1, got -1"),
    ("rows_per_txn", [1, 300], "rows_per_txn value 300 does not divide rows (1,000)"),
    ("rows_per_txn", [], "rows_per_txn must be a non-empty list"),
    ("rows_per_txn", 10, "rows_per_txn must be a non-empty list of distinct integers >= 1, got 10"),
    ("rows_per_txn", [10, 10], "rows_per_txn must be a non-empty list of distinct integers >= 1, got [10, 10]"),
    ("rows_per_stmt", [0], "rows_per_stmt must be an integer >= 1, got 0"),
    ("rows_per_stmt", [1, 2.5], "rows_per_stmt must be an integer >= 1, got 2.5"),
    ("rows_per_stmt", [1, 4], "rows_per_stmt value 4 does not divide rows_per_txn value 10"),
    ("rows_per_stmt", [5000], "no cell: every rows_per_stmt value [5000] is larger than every rows_per_txn"),
    ("server_generated", "yes", "server_generated must be true or false, got 'yes'"),
    ("repetitions", 0, "repetitions must be an integer >= 1, got 0"),
    ("idle_seconds", -1, "idle_seconds must be a number >= 0, got -1"),
    ("max_settle_seconds", -0.5, "max_settle_seconds must be a number >= 0, got -0.5"),
    ("pk_kind", "serial", "pk_kind must be one of uuid, sequential, got 'serial'"),
    ("engines", ["sqlite", "postgress"], "unknown engine 'postgress'"),
    ("engines", [], "engines must be a non-empty list"),
])
def test_bad_value_is_named_before_anything_starts(name, value, fragment):
    with pytest.raises(ParameterError) as err:
        validate_parameters({**GOOD, name: value})
    assert fragment in str(err.value)


def test_missing_and_unknown_parameters_are_named():
    params = {k: v for k, v in GOOD.items() if k != "rows_per_txn"}
    with pytest.raises(ParameterError, match="missing rows_per_txn; unknown rows_per_txns"):
        validate_parameters({**params, "rows_per_txns": [1]})


def test_cells_hold_no_statement_larger_than_its_transaction():
    params = validate_parameters(GOOD)
    assert params.engines == ["sqlite", "duckdb"]
    assert [(c.rows_per_txn, c.rows_per_stmt, c.rows_from) for c in params.cells] == [
        (1, 1, CLIENT_VALUES), (10, 1, CLIENT_VALUES), (1000, 1, CLIENT_VALUES), (1000, 100, CLIENT_VALUES),
        (1, 1, SERVER_GENERATOR), (10, 10, SERVER_GENERATOR), (1000, 1000, SERVER_GENERATOR)]
    assert not validate_parameters({**GOOD, "server_generated": False}).cells[-1].rows_from == SERVER_GENERATOR


def test_statements_cover_every_row_once():
    dialect = dialect_for(get_engine("sqlite"))
    plan = statements(dialect, Cell(10, 5, CLIENT_VALUES), 20)
    assert plan[0] == "insert into demo(value) values (1),(2),(3),(4),(5)" and len(plan) == 4
    assert plan[-1].endswith("(16),(17),(18),(19),(20)")
    generated = statements(dialect, Cell(10, 10, SERVER_GENERATOR), 20)
    assert generated == [dialect.dml.insert_generated(10)] * 2


def test_every_engine_has_a_log_counter_or_says_why_not():
    for key, dialect in DIALECTS.items():
        assert dialect.log.query or dialect.log.reason, key
        assert dialect.log.query is None or dialect.log.source, key
    assert DIALECTS["sqlite"].log.query is None and DIALECTS["duckdb"].log.query is None
    assert dialect_for(get_engine("mariadb-myrocks")).architecture == "lsm"
    assert dialect_for(get_engine("postgres@15")).architecture == "heap"


def _rows(engine, labels, window, metric, value, *, scope="server", status="ok", seq=1, check=None, phase="insert"):
    return {"run_id": "r", "instance_id": f"{engine}-1", "engine": engine, "repetition": 1,
            "labels": json.dumps(labels, sort_keys=True) if labels else "{}", "phase": phase, "window": window,
            "metric": metric, "value": value, "scope": scope, "status": status, "seq": seq, "check_value": check,
            "source": "test"}


def _cell_frame(engine, txn, stmt, seq, cpu, settle_cpu, wall, settle_wall, client, log, io, scope="server"):
    labels = {"rows_per_txn": txn, "rows_per_stmt": stmt, "rows_from": CLIENT_VALUES}
    rows = [_rows(engine, labels, "phase", "cpu_time", cpu, scope=scope, seq=seq, check=1000),
            _rows(engine, labels, "phase", "wall_time", wall, scope=scope, seq=seq, check=1000),
            _rows(engine, labels, "phase", "io_write_bytes", io, scope=scope, seq=seq, check=1000),
            _rows(engine, labels, "phase", "engine_log_bytes", log, scope=scope, seq=seq, check=1000,
                  status="ok" if log is not None else "not reported"),
            _rows(engine, labels, "phase", "engine_log_bytes_settle", 0.0 if log is not None else None, scope=scope,
                  seq=seq, check=1000, status="ok" if log is not None else "not reported")]
    if client is not None:
        rows.append(_rows(engine, labels, "phase", "cpu_time", client, scope="client", seq=seq, check=1000))
    if settle_cpu is not None:
        rows += [_rows(engine, labels, "settle", "cpu_time", settle_cpu, scope=scope, seq=seq, check=1000),
                 _rows(engine, labels, "settle", "wall_time", settle_wall, scope=scope, seq=seq, check=1000),
                 _rows(engine, labels, "settle", "io_write_bytes", 0.0, scope=scope, seq=seq, check=1000)]
    return rows


def _frame():
    rows = []
    for engine, scope, idle in (("postgres", "server", 0.01), ("sqlite", "embedded", 0.0)):
        rows += [_rows(engine, {}, "baseline", "cpu_time", idle, scope=scope, phase="idle", seq=0),
                 _rows(engine, {}, "baseline", "wall_time", 1.0, scope=scope, phase="idle", seq=0)]
    # PostgreSQL, 1,000 rows per cell; idle 0.01 CPU-s per s.
    rows += _cell_frame("postgres", 1, 1, 1, 0.51, 0.11, 10.0, 1.0, 0.2, 240_000.0, 480_000.0)  # 500 + 100 µs/row
    rows += _cell_frame("postgres", 100, 1, 2, 0.11, 0.01, 1.0, 0.0, 0.05, 48_000.0, 0.0)  # 100 + 10 µs/row
    rows += _cell_frame("postgres", 100, 100, 3, 0.02, 0.0, 1.0, 0.0, 0.01, 24_000.0, 0.0)  # 10 + 0
    # SQLite: no settle window, no log counter.
    rows += _cell_frame("sqlite", 1, 1, 4, 0.4, None, 1.0, None, None, None, 2_400_000.0, scope="embedded")
    rows += _cell_frame("sqlite", 100, 1, 5, 0.04, None, 1.0, None, None, None, 24_000.0, scope="embedded")
    rows += _cell_frame("sqlite", 100, 100, 6, 0.01, None, 1.0, None, None, None, 24_000.0, scope="embedded")
    return pd.DataFrame(rows)


def test_cells_per_row_arithmetic_with_idle_subtracted():
    cells = analysis.cells(_frame(), row_bytes=24).set_index(["engine", "rows_per_txn", "rows_per_stmt"])
    pg = cells.loc[("postgres", 1, 1)]
    assert pg["phase_per_row"] == pytest.approx(410e-6)  # (0.51 - 0.01 x 10 s) / 1000 rows, in seconds per row
    assert pg["after_per_row"] == pytest.approx(100e-6)  # 0.11 - 0.01 x 1 s
    assert pg["engine_per_row"] == pytest.approx(510e-6)
    assert pg["after_share"] == pytest.approx(100 / 510)
    assert pg["client_per_row"] == pytest.approx(200e-6)
    assert pg["total_per_row"] == pytest.approx(710e-6)
    assert pg["wall_per_row"] == pytest.approx(10e-3)
    assert pg["log_bytes_per_row"] == pytest.approx(240.0) and pg["log_amplification"] == pytest.approx(10.0)
    assert pg["io_bytes_per_row"] == pytest.approx(480.0)
    lite = cells.loc[("sqlite", 1, 1)]
    assert lite["engine_per_row"] == pytest.approx(400e-6) and lite["total_per_row"] == pytest.approx(400e-6)
    assert pd.isna(lite["after_per_row"]) and pd.isna(lite["client_per_row"])
    assert pd.isna(lite["log_bytes_per_row"]) and lite["log_status"] == "not reported"  # never 0


def test_costs_follow_the_runs_cost_metric_and_a_driver_not_counted_in_it_is_no_zero():
    """Instructions where they were counted (valgrind's server counter): the same arithmetic in the
    metric's own unit; a server's driver, counted in CPU seconds only, leaves engine + driver empty."""
    frame = _frame()
    counted = frame[(frame["metric"] == "cpu_time") & (frame["scope"] != "client")].assign(
        metric="instructions_user", value=lambda d: d["value"] * 1e9, unit="instructions")
    cells = analysis.cells(pd.concat([frame, counted]), row_bytes=24, metric="instructions_user")
    pg = cells.set_index(["engine", "rows_per_txn", "rows_per_stmt"]).loc[("postgres", 1, 1)]
    assert pg["engine_per_row"] == pytest.approx(510e3)  # instructions per row
    assert pd.isna(pg["client_per_row"]) and pd.isna(pg["total_per_row"])


def test_ratio_to_postgres_and_decomposition():
    summary = analysis.summarize(analysis.cells(_frame(), row_bytes=24))
    ratio = summary.set_index(["engine", "rows_per_txn", "rows_per_stmt"])["ratio_to_postgres"]
    assert ratio[("postgres", 1, 1)] == pytest.approx(1.0)
    # Engine + driver: PostgreSQL's client is added (510 + 200 µs), SQLite's driver is inside its process.
    assert ratio[("sqlite", 1, 1)] == pytest.approx(400 / 710)
    assert ratio[("sqlite", 100, 100)] == pytest.approx(10 / 20)
    parts = analysis.decompose(analysis.cells(_frame(), row_bytes=24)).set_index("engine")
    # The engine's own cost: PostgreSQL's driver is not in it.
    assert parts.loc["postgres", "commit"] == pytest.approx((510 - 110) * 1e-6)
    assert parts.loc["postgres", "statement"] == pytest.approx((110 - 10) * 1e-6)
    assert parts.loc["postgres", "row"] == pytest.approx(10e-6)
    assert parts.loc["sqlite", "statement"] == pytest.approx(30e-6)
    assert pd.isna(parts.loc["sqlite", "commit_ci95"])  # one repetition: no CI


def _cell_rows(values_by_rep: list[dict[tuple[int, int], float]], engine: str = "postgres") -> pd.DataFrame:
    return pd.DataFrame([{"engine": engine, "repetition": rep, "rows_per_txn": t, "rows_per_stmt": s,
                          "rows_from": "client VALUES", "engine_per_row": v, "after_share": 0.1}
                         for rep, cells in enumerate(values_by_rep, start=1) for (t, s), v in cells.items()])


def test_decomposition_parts_are_taken_per_repetition_with_a_ci():
    reps = [{(1, 1): 500 + d, (100, 1): 100 + d, (100, 100): 10.0} for d in (-10.0, 0.0, 10.0)]
    p = analysis.decompose(_cell_rows(reps)).iloc[0]
    assert p["n"] == 3 and p["commit"] == pytest.approx(400) and p["commit_ci95"] == pytest.approx(0)
    assert p["one_row_txn"] == pytest.approx(500)
    # sd 10 over 3 repetitions: t(2) = 4.303, half width 4.303 x 10 / sqrt(3)
    assert p["one_row_txn_ci95"] == pytest.approx(4.303 * 10 / 3 ** 0.5, rel=1e-3)


def _verdicts(cell_rows: pd.DataFrame, pair: str = analysis.LARGEST) -> dict[str, str]:
    rows = analysis.decomposition_findings(cell_rows, metric="cpu_time", unit="s")
    return {r["engine"]: (r["step"], r["verdict"]) for r in rows if r["pair"] == pair}


def test_the_largest_part_is_separable_when_it_clears_the_next_within_the_repetitions():
    # Commit 400 against statement ~90: apart in every repetition, whatever the spread of the whole.
    reps = [{(1, 1): 500 + d, (100, 1): 100 + d / 2, (100, 100): 10.0} for d in (-40.0, 0.0, 40.0)]
    assert _verdicts(_cell_rows(reps)) == {"postgres": ("commit (largest) vs statement", "worse")}


def test_parts_that_cross_within_the_repetitions_are_not_separable():
    reps = [{(1, 1): 200 + d, (100, 1): 100 - d, (100, 100): 10.0} for d in (-15.0, 0.0, 15.0)]
    step, verdict = _verdicts(_cell_rows(reps))["postgres"]
    assert verdict == "noise"


def test_parts_of_one_repetition_are_untested():
    reps = [{(1, 1): 500.0, (100, 1): 100.0, (100, 100): 10.0}]
    assert _verdicts(_cell_rows(reps))["postgres"] == ("commit (largest) vs statement", "untested")


def test_parts_are_tested_paired_not_as_independent_means():
    """Commit and statement share the many-single cell: a slow repetition of that cell moves them
    in opposite directions. Paired within repetitions, a steady 2:1 split is separable although the
    parts' own CIs overlap."""
    reps = [{(1, 1): 310 + 3 * d + j, (100, 1): 110 + d, (100, 100): 10.0}
            for d, j in ((-60.0, 1.0), (0.0, -2.0), (60.0, 0.5), (10.0, 1.0))]
    parts = analysis.decompose(_cell_rows(reps)).iloc[0]
    assert parts["commit"] - parts["commit_ci95"] < parts["statement"] + parts["statement_ci95"]  # CIs overlap
    (row,) = [r for r in analysis.decomposition_findings(_cell_rows(reps), metric="cpu_time", unit="s")
              if r["pair"] == analysis.LARGEST]
    assert row["verdict"] == "worse" and row["ratio"] == pytest.approx(2.0, rel=0.02)
    assert row["ratio_low"] < 2.0 < row["ratio_high"] < 2.1


def test_an_unresolved_part_is_never_largest_and_no_pair_reads_below_one():
    """Hostile read 46c (05 #1): MyRocks' commit, not resolved, was "commit (largest) vs statement
    0.892x". A part whose CI reaches zero is in no pair; each pair is the larger over the smaller by
    the statistic its ratio uses (here the commit's mean, 110, tops the statement's 100)."""
    reps = [{(1, 1): 10 + s + c, (100, 1): 10 + s, (100, 100): 10.0}  # commit c, statement s, row 10
            for c, s in ((460.0, 130.0), (-140.0, 140.0), (100.0, 120.0))]
    parts = analysis.part_repetitions(_cell_rows(reps))
    assert parts["commit"].mean() > parts["statement"].mean()  # largest by mean, yet not resolved
    rows = analysis.decomposition_findings(_cell_rows(reps), metric="cpu_time", unit="s")
    assert rows and all("commit" not in (r["part"], r["base_part"]) for r in rows)
    assert [(r["part"], r["base_part"]) for r in rows] == [("statement", "row")]
    # Under two parts resolved: no pair, but the engine keeps its row (its answer's line), with no ratio.
    alone = [{(1, 1): 10 + s + c, (100, 1): 10 + s, (100, 100): 10.0 + r}
             for c, s, r in ((460.0, 130.0, 9.0), (-140.0, -100.0, -9.0), (100.0, -20.0, 0.0))]
    (row,) = analysis.decomposition_findings(_cell_rows(alone), metric="cpu_time", unit="s")
    assert row["step"] == analysis.NO_PAIR and row["verdict"] == "n/a" and row["lead"]
    assert not (row["commit"] == row["commit"]) and not (row["statement"] == row["statement"])
    # Rows crossing the other way round are oriented so: the ratio is never below 1.
    upside = [{(1, 1): 30.0 + d, (100, 1): 25.0 + d, (100, 100): 20.0} for d in (-1.0, 0.0, 1.0)]
    assert all(r["ratio"] >= 1 for r in analysis.decomposition_findings(_cell_rows(upside), metric="cpu_time",
                                                                        unit="s"))


def test_the_overheads_are_tested_against_the_row_and_the_answer_takes_a_decided_pair():
    """Hostile read 46c (05 #2): on every server the row was ~10x below the statement and the commit
    while the page tested only largest against next (within noise). Both overheads are tested
    against the row; the engine's line states the first decided pair."""
    reps = [{(1, 1): 200 + d, (100, 1): 100 - d, (100, 100): 10.0 + d / 30} for d in (-15.0, 0.0, 15.0)]
    rows = analysis.decomposition_findings(_cell_rows(reps), metric="cpu_time", unit="s")
    by = {(r["pair"], r["part"], r["base_part"]): r for r in rows}
    assert set(by) == {("row", "statement", "row"), ("row", "commit", "row"), ("largest", "commit", "statement")}
    assert by[("largest", "commit", "statement")]["verdict"] == "noise"
    assert by[("row", "statement", "row")]["verdict"] == "worse" and by[("row", "statement", "row")]["ratio"] > 5
    assert [r["lead"] for r in rows] == [True, False, False]
    # No pair decided: the largest against the next is the line's.
    flat = analysis.decomposition_findings(_cell_rows(reps[:1]), metric="cpu_time", unit="s")
    assert [r["pair"] for r in flat if r["lead"]] == [analysis.LARGEST]


def test_heatmaps_share_one_colour_scale_and_keep_missing_cells_empty():
    from benchlib.present.plots import heatmaps

    df = pd.DataFrame({"engine": ["postgres", "postgres", "sqlite"], "x": ["1", "100", "1"], "y": [1, 100, 1],
                       "v": [10.0, 1000.0, float("nan")]})
    fig = heatmaps(df, x="x", y="y", value="v", facet="engine", title="t", name="n", unit="µs", x_title="x",
                   y_title="y", log_color=True)
    assert [t.text for t in fig.layout.annotations] == ["PostgreSQL", "SQLite"]
    pg, lite = fig.data
    assert pg.zmin == pytest.approx(1.0) and pg.zmax == pytest.approx(3.0)
    assert [list(r) for r in pg.text] == [["10", ""], ["", "1e+03"]]
    assert [list(r) for r in lite.text] == [["", ""], ["", ""]]
    assert fig.layout.meta["benchlib_name"] == "n"


def test_plain_values_are_refused_before_any_engine_is_looked_at():
    # cockroachdb cannot run here (official image only); the bad cell must be named first all the same.
    with pytest.raises(ParameterError, match="rows_per_txn value 7 does not divide rows"):
        validate_parameters({**GOOD, "engines": ["cockroachdb"], "rows_per_txn": [7]})


def _replication_rows():
    """cells() output of two repetitions: PostgreSQL and its replica cluster in two cells."""
    rows = []
    for engine, one_row, bulk, p50 in (("postgres", (100.0, 110.0), (10.0, 12.0), 0.0002),
                                       ("postgres-replica-sync", (200.0, 230.0), (15.0, 15.0), 0.0005)):
        for rep in (0, 1):
            rows.append({"engine": engine, "repetition": rep + 1, "rows_per_txn": 1, "rows_per_stmt": 1,
                         "rows_from": CLIENT_VALUES, "engine_per_row": one_row[rep], "txn_latency_p50": p50,
                         "txn_latency_p95": 2 * p50})
            rows.append({"engine": engine, "repetition": rep + 1, "rows_per_txn": 100, "rows_per_stmt": 100,
                         "rows_from": CLIENT_VALUES, "engine_per_row": bulk[rep], "txn_latency_p50": 100 * p50,
                         "txn_latency_p95": 200 * p50})
    return pd.DataFrame(rows)


def test_replication_compares_each_cluster_with_its_single_node_per_cell():
    r = analysis.replication(_replication_rows()).set_index(["rows_per_txn", "rows_per_stmt"])
    one = r.loc[(1, 1)]
    assert one["cluster"] == "postgres-replica-sync" and one["single"] == "postgres"
    assert one["base_mean"] == pytest.approx(105.0) and one["mean"] == pytest.approx(215.0)
    assert one["ratio"] == pytest.approx(215 / 105)
    assert one["added_per_commit"] == pytest.approx(110.0)  # one row per commit
    assert one["base_ci95"] == pytest.approx(12.706 * 7.0710678 / 2 ** 0.5)  # t(1) x sd / sqrt(n)
    assert one["cluster_txn_latency_p50"] == pytest.approx(0.0005) and one["n"] == 2
    bulk = r.loc[(100, 100)]
    assert bulk["added_per_row"] == pytest.approx(4.0) and bulk["added_per_commit"] == pytest.approx(400.0)


def test_replication_needs_the_single_node_in_the_same_run():
    rows = _replication_rows()
    assert analysis.replication(rows[rows["engine"] != "postgres"]).empty
    assert analysis.replication(rows[rows["engine"] == "postgres"]).empty  # no cluster: nothing to compare


def test_node_cells_give_each_node_its_own_idle_rate_and_bytes():
    labels = json.dumps({"rows_per_txn": 1, "rows_per_stmt": 1, "rows_from": CLIENT_VALUES}, sort_keys=True)
    rows = []
    for node, idle, cpu, rx in (("primary1", 0.02, 0.52, 300_000.0), ("standby1", 0.01, 0.21, 150_000.0)):
        iid = f"postgres-replica-sync-0001:{node}"
        base = {"run_id": "r", "instance_id": iid, "engine": "postgres-replica-sync", "repetition": 1,
                "scope": "node", "status": "ok", "source": "cgroup"}
        rows += [{**base, "labels": "{}", "phase": "idle", "window": "baseline", "metric": "cpu_time",
                  "value": idle, "seq": 0, "check_value": None},
                 {**base, "labels": "{}", "phase": "idle", "window": "baseline", "metric": "wall_time",
                  "value": 1.0, "seq": 0, "check_value": None}]
        for window, value, wall in (("phase", cpu, 10.0), ("settle", 0.0, 1.0)):
            rows += [{**base, "labels": labels, "phase": "insert", "window": window, "metric": metric, "value": v,
                      "seq": 1, "check_value": 1000.0}
                     for metric, v in (("cpu_time", value), ("wall_time", wall), ("net_rx_bytes", rx if window ==
                                                                                   "phase" else 0.0),
                                       ("net_tx_bytes", 1000.0))]
    instances = pd.DataFrame([{"instance_id": f"postgres-replica-sync-0001:{n}", "kind": "node",
                               "config": json.dumps({"role": r, "node": n})}
                              for n, r in (("primary1", "primary"), ("standby1", "standby"))])
    nodes = analysis.node_cells(pd.DataFrame(rows), instances).set_index("node")
    assert nodes.loc["primary1", "engine_per_row"] == pytest.approx((0.52 - 0.02 * 11) / 1000)  # 300 µs
    assert nodes.loc["standby1", "engine_per_row"] == pytest.approx((0.21 - 0.01 * 11) / 1000)  # 100 µs
    assert nodes.loc["standby1", "role"] == "standby"
    assert nodes.loc["primary1", "net_rx_per_row"] == pytest.approx(300.0)
    assert nodes.loc["standby1", "net_tx_per_row"] == pytest.approx(2.0)  # both windows
    shares = analysis.node_summary(nodes.reset_index()).set_index("node")["share"]
    assert shares["primary1"] == pytest.approx(0.75) and shares["standby1"] == pytest.approx(0.25)



def test_a_starts_windows_are_net_of_the_idle_rate_of_its_engine_after_its_cells():
    """Issue 37 item 1, as run 20261127T235402Z measured MySQL: the start's baseline, taken just
    after start-up, ran 7-14 ms/s between starts; the settle windows after bulk cells ran 9 ms/s,
    the engine's idle then. Net of the start's rate, a 1 s settle window came out up to 5 ms below
    zero, more than half of a bulk cell's cost. The rate the windows are net of is the median of
    the idle windows measured right after each cell (one of them caught 27 ms/s of work a cell set
    off after its settle window: the median leaves it out); the start's first is not among them."""
    cells = [{"rows_per_txn": 1, "rows_per_stmt": 1, "rows_from": CLIENT_VALUES},
             {"rows_per_txn": 3000, "rows_per_stmt": 1, "rows_from": CLIENT_VALUES},
             {"rows_per_txn": 3000, "rows_per_stmt": 3000, "rows_from": SERVER_GENERATOR}]
    rows = [_rows("mysql", {}, "baseline", "cpu_time", 0.0142, phase="idle", seq=1),
            _rows("mysql", {}, "baseline", "wall_time", 1.0, phase="idle", seq=1)]
    for seq, (labels, cpu, idle) in enumerate(zip(cells, (1.5, 0.5, 0.0330), (0.0270, 0.0088, 0.0090)), start=2):
        rows += [_rows("mysql", labels, window, metric, value, seq=seq, check=3000)
                 for window, metric, value in (("phase", "cpu_time", cpu), ("phase", "wall_time", 0.05),
                                               ("settle", "cpu_time", 0.0088), ("settle", "wall_time", 1.01))]
        rows += [_rows("mysql", labels, "baseline", "cpu_time", idle, phase="idle", seq=seq),
                 _rows("mysql", labels, "baseline", "wall_time", 1.0, phase="idle", seq=seq)]
    costs = results.phase_costs(pd.DataFrame(rows), "cpu_time")
    cell = costs[(costs["phase"] == "insert")].set_index("labels")
    assert cell["idle_rate"].tolist() == pytest.approx([0.0090] * 3)  # the median of 27.0, 8.8 and 9.0 ms/s
    after = (cell["net_with_settle"] - cell["net"])[json.dumps(cells[2], sort_keys=True)]
    assert after == pytest.approx(0.0088 - 0.0090 * 1.01)  # -0.3 ms: within the idle rate's noise, not -5.5
    assert results.phase_costs(pd.DataFrame(rows[:2] + rows[2:6]), "cpu_time")["idle_rate"].iloc[0] == \
        pytest.approx(0.0142)  # one baseline: the start's own


def test_work_after_the_commit_within_the_idle_rates_noise_is_no_share_and_no_term_of_the_cost():
    """A share of the cost after the commit is drawn only where that work is resolved above zero:
    net of an idle rate it can come out negative, which is no share of anything. Nor is it a term of
    the cell's cost (hostile read 43, 05 #1: MySQL's table read 29.8 µs/row, its statements 37.2,
    the difference a settle window net of the idle rate below zero); resolved work is."""
    # A 1,000-row cell whose 1 s settle window used less than the idle rate's 0.01 CPU-s.
    below = pd.DataFrame(_cell_frame("postgres", 1000, 1000, 7, 0.02, 0.0, 1.0, 1.0, 0.01, 24_000.0, 0.0))
    cells = analysis.cells(pd.concat([_frame(), below]), row_bytes=24)
    summary = analysis.summarize(cells).set_index(["engine", "rows_per_txn", "rows_per_stmt"])
    bulk = cells.set_index(["engine", "rows_per_txn", "rows_per_stmt"]).loc[("postgres", 1000, 1000)]
    assert bulk["after_per_row"] == pytest.approx(-10e-6)  # 0.0 - 0.01 x 1 s, over 1,000 rows
    assert bulk["engine_per_row"] == pytest.approx(10e-6) == bulk["phase_per_row"]  # not 0
    assert not summary.loc[("postgres", 1000, 1000), "after_resolved"]
    assert summary.loc[("postgres", 1, 1), "after_resolved"]  # 100 µs/row after 410: in the cost
    assert summary.loc[("postgres", 1, 1), "engine_per_row"] == pytest.approx(510e-6)
    assert summary.loc[("postgres", 1, 1), "after_share"] == pytest.approx(100 / 510)


def test_heatmap_axis_titles_sit_on_the_outer_panels_only():
    """Issue 37 item 11: an x-axis title under an upper panel collided with the engine title of the
    panel below it (and a y title beside an inner panel with the panel to its left)."""
    from benchlib.present.plots import heatmaps

    engines = ["postgres", "mysql", "mariadb", "sqlite", "duckdb"]
    df = pd.DataFrame({"engine": engines, "x": ["1"] * 5, "y": [1] * 5, "v": [1.0, 2.0, 3.0, 4.0, 5.0]})
    fig = heatmaps(df, x="x", y="y", value="v", facet="engine", title="t", name="n", unit="µs", x_title="rows per "
                   "statement", y_title="rows per transaction")
    x_titles = [fig.layout[f"xaxis{i or ''}"].title.text for i in ["", 2, 3, 4, 5]]
    y_titles = [fig.layout[f"yaxis{i or ''}"].title.text for i in ["", 2, 3, 4, 5]]
    # Three columns: panels 1 and 2 have panels below them; panel 3 has none.
    assert x_titles == [None, None, "rows per statement", "rows per statement", "rows per statement"]
    assert y_titles == ["rows per transaction", None, None, "rows per transaction", None]


def test_a_cost_whose_ci_is_not_above_zero_is_not_a_part():
    # MariaDB's driver commit read -5.25 µs net of its idle rate (run 20261128T014008Z-a3b8cc).
    parts = pd.DataFrame({"engine": ["mariadb", "postgres"], "n": [1, 3],
                          "one_row_txn": [141.0, 197.0], "one_row_txn_ci95": [float("nan"), 5.0],
                          "commit": [-5.25, 20.0], "commit_ci95": [float("nan"), 30.0],
                          "statement": [116.0, 94.0], "statement_ci95": [float("nan"), 4.0],
                          "row": [29.8, 22.0], "row_ci95": [float("nan"), 2.0]})
    shown = analysis.positive_parts(parts).set_index("engine")
    assert pd.isna(shown.loc["mariadb", "commit"]) and shown.loc["mariadb", "statement"] == 116.0
    assert pd.isna(shown.loc["postgres", "commit"])  # 20 ± 30: its CI reaches below zero
    assert shown.loc["postgres", "row"] == 22.0


def test_a_ratio_heatmap_is_diverging_and_centred_at_one_other_heatmaps_sequential():
    from benchlib.present.plots import heatmaps

    df = pd.DataFrame({"engine": ["mysql", "mysql"], "x": ["1", "10"], "y": ["1", "1"], "v": [0.5, 4.0]})
    kw = dict(x="x", y="y", value="v", facet="engine", title="t", name="t", unit="× PostgreSQL", x_title="", y_title="")
    ratio = heatmaps(df, ratio=True, **kw).layout.coloraxis
    assert ratio.cmin == -ratio.cmax  # log10(1) = 0 is the middle colour
    assert ratio.cmin == pytest.approx(-math.log10(4.0)) and "1x" in ratio.colorbar.ticktext
    plain = heatmaps(df, log_color=True, **kw).layout.coloraxis
    assert plain.cmin == pytest.approx(math.log10(0.5)) and plain.cmax == pytest.approx(math.log10(4.0))


def test_work_after_the_commit_below_the_idle_noise_is_not_resolved():
    """Hostile read 42 (05 #1): 127 µs/row after a 100-row commit was 12.7 ms in a 1 s settle window,
    within MySQL's idle noise. The idle windows' spread sets the noise per row; below it, no figure."""
    cell = {"rows_per_txn": 100, "rows_per_stmt": 100, "rows_from": SERVER_GENERATOR}
    rows = []
    for seq, idle in enumerate((0.009, 0.030, 0.012), start=1):  # one after each cell: 2 sd ~ 23 ms/s
        after_cell = {**cell, "rows_per_stmt": seq}
        rows += [_rows("mysql", after_cell, "baseline", "cpu_time", idle, phase="idle", seq=seq),
                 _rows("mysql", after_cell, "baseline", "wall_time", 1.0, phase="idle", seq=seq)]
    rows += [_rows("mysql", cell, window, metric, value, seq=9, check=100)
             for window, metric, value in (("phase", "cpu_time", 0.05), ("phase", "wall_time", 0.05),
                                           ("settle", "cpu_time", 0.025), ("settle", "wall_time", 1.0))]
    got = analysis.cells(pd.DataFrame(rows), row_bytes=24).iloc[0]
    assert got["after_noise_per_row"] == pytest.approx(2 * pd.Series([9e-3, 30e-3, 12e-3]).std() / 100)
    assert 0 < got["after_per_row"] < got["after_noise_per_row"]
    after = analysis.resolved_after(got["after_per_row"], float("nan"), got["phase_per_row"],
                                    got["after_noise_per_row"])
    assert after != after
    # The same work over an idle rate that held still is resolved; unknown noise blanks nothing.
    assert analysis.resolved_after(got["after_per_row"], float("nan"), got["phase_per_row"], 1e-6) > 0
    assert analysis.resolved_after(got["after_per_row"], float("nan"), got["phase_per_row"], float("nan")) > 0


def test_the_runs_note_names_the_idle_rate_write_cost_subtracts():
    """Hostile read 43 (05 #3): the run's note said the start's one baseline was subtracted; write
    cost subtracts the median of the idle windows after its cells (results.idle_rates)."""
    from types import SimpleNamespace

    from benchlib.run.driver import Workload, idle_rule
    from benchlib.run.measure import SettlePolicy
    from benchlib.workloads.write_cost.workload import WriteCost

    params = SimpleNamespace(idle_seconds=0.2, max_settle_seconds=1.0)
    note = idle_rule(params, SettlePolicy(), WriteCost)
    assert "after each cell's settle window" in note and "median" in note and "once per engine start" not in note
    assert "once per engine start" in idle_rule(params, SettlePolicy(), Workload)


def test_a_drivers_measured_cost_is_never_blanked_only_its_differences_are():
    """Hostile read 44 (05 #1): MariaDB's driver one-row txn, a CPU cost with no idle rate subtracted,
    printed "not above 0" (its CI, 2 repetitions wide, reached below 0). Only the differences of two
    cells (commit, statement) can be at or below zero."""
    parts = pd.DataFrame({"engine": ["mariadb"], "n": [3],
                          "one_row_txn": [80.0], "one_row_txn_ci95": [120.0],
                          "commit": [-5.0], "commit_ci95": [30.0],
                          "statement": [70.0], "statement_ci95": [90.0],
                          "row": [1.2], "row_ci95": [2.0]})
    shown = analysis.positive_parts(parts, raw=True).iloc[0]
    assert shown["one_row_txn"] == 80.0 and shown["row"] == 1.2
    assert pd.isna(shown["commit"]) and pd.isna(shown["statement"])
    assert pd.isna(analysis.positive_parts(parts).iloc[0]["one_row_txn"])  # net of an idle rate: tested


def test_the_answer_takes_decided_replication_cells_before_undecided_ones():
    """Hostile read 44 (05 clusters #3): the answer kept a within-noise Galera line (1,000/txn · 1/stmt)
    and left out decided cells. One-row cells first, then decided cells, then the rest."""
    from benchlib.data.findings import Verdict

    def cell(cluster, txn, stmt, ratio, low):
        return {"cluster": cluster, "single": "postgres", "rows_per_txn": txn, "rows_per_stmt": stmt,
                "rows_from": CLIENT_VALUES, "mean": 10.0 * ratio, "ci95": 1.0, "n": 3, "base_mean": 10.0,
                "base_ci95": 1.0, "base_n": 3, "ratio": ratio, "ratio_low": low, "ratio_high": ratio * 1.5,
                "welch_t": 9.0 if low > 1 else 0.5, "welch_dof": 4.0, "beyond_noise": low > 1,
                "cluster_wall_per_row": 2e-4, "single_wall_per_row": 1e-4}

    clusters = ("postgres-replica-sync", "postgres-replica-async")
    replicated = pd.DataFrame([cell(c, 1, 1, 3.0, 2.0) for c in clusters]
                              + [cell(c, 1000, 1, 1.2, 0.8) for c in clusters]
                              + [cell(c, 1000, 1000, 3.1, 1.4) for c in clusters])
    # One single-node cell: no part to split, no bulk row (an empty frame's row filter would drop its columns).
    single = pd.DataFrame([{"engine": "postgres", "repetition": 1, "rows_per_txn": 1, "rows_per_stmt": 1,
                            "rows_from": CLIENT_VALUES, "engine_per_row": 1e-5}])
    no_calibration = lambda subject, base: float("nan")  # noqa: E731
    found = analysis.findings(single, pd.DataFrame(), replicated, no_calibration,
                              metric="cpu_time", unit="s", seed={})
    lead = found[found["headline"] == True]  # noqa: E712
    assert len(lead) == analysis.REPLICATION_LINES
    # Both decided 1,000 · 1,000 cells are in, and one within-noise 1,000 · 1 cell after them.
    cells = sorted(zip(lead["rows_per_txn"], lead["rows_per_stmt"]))
    assert cells == [(1, 1), (1, 1), (1000, 1), (1000, 1000), (1000, 1000)]
    assert int(lead["verdict"].map(lambda v: Verdict(v).decided).sum()) == 4


def _bulk_rows(per_row):
    """cells() output of two repetitions in one bulk cell: engine -> (rep 1, rep 2) cost per row."""
    return pd.DataFrame([{"engine": engine, "repetition": rep + 1, "rows_per_txn": 1000, "rows_per_stmt": 1000,
                          "rows_from": CLIENT_VALUES, "engine_per_row": values[rep], "after_per_row": 0.0,
                          "after_counted": False, "wall_per_row": 1e-5} for engine, values in per_row.items()
                         for rep in (0, 1)])


def test_a_seed_ratio_of_instructions_is_tested_only_by_a_ratio_of_instructions():
    """Hostile read 46d (05 clusters #3): a CPU-time ratio was set against seed 000's instruction ratio
    ("the seed's within the CI"). The seed's figure stays beside it, tested against nothing."""
    from benchlib.data.findings import SeedAgreement

    rows = _bulk_rows({"postgres": (10.0, 11.0), "mysql": (13.0, 14.0)})
    summary = rows.drop_duplicates(analysis.CELL)
    no_host = lambda subject, base: float("nan")  # noqa: E731
    by_unit = {unit: analysis.bulk_findings(rows, summary, no_host, metric=metric, unit=unit, seed={"mysql": 1.29},
                                            timed=False)[0]
               for metric, unit in (("cpu_time", "s"), ("instructions_user", "instructions"))}
    assert by_unit["s"]["seed"] == SeedAgreement.NOT_COMPARABLE.value and by_unit["s"]["seed_ratio"] == 1.29
    assert "instructions" in by_unit["s"]["seed_reason"]
    assert by_unit["instructions"]["seed"] not in (SeedAgreement.NOT_COMPARABLE.value, SeedAgreement.NO_SEED.value)


def test_a_pair_against_the_row_that_is_largest_against_next_is_the_largest_pair():
    """Hostile read 47 (05): SQLite's commit (354) is largest and its row (18.8) next; the Method says
    the largest is tested against the next, so commit vs row is that pair, marked "(largest)"."""
    reps = [{(1, 1): 354 + 5 + 18.8 + d, (100, 1): 5 + 18.8 + d / 50, (100, 100): 18.8 + d / 100}
            for d in (-3.0, 0.0, 3.0)]
    rows = analysis.decomposition_findings(_cell_rows(reps, engine="sqlite"), metric="cpu_time", unit="s")
    assert [(r["pair"], r["part"], r["base_part"]) for r in rows] == [("row", "row", "statement"),
                                                                      ("largest", "commit", "row")]
    assert rows[1]["step"] == "commit (largest) vs row"
