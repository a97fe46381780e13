"""Bar figures stay readable when engines differ by orders of magnitude: a log axis chosen from
the data, and said in the axis title."""
import pandas as pd

from benchlib.present import plots

# Shaped like the DML report with FerretDB: its update_many ~57x PostgreSQL's, the other phases
# within a few x, and an idle baseline far below everything (embedded engines near zero).
PHASES = ["sleep", "insert", "update", "select", "delete"]
CPU = {
    "postgres": [0.003, 7.5, 10.3, 0.29, 0.88],
    "mariadb": [0.002, 3.0, 2.08, 0.37, 1.95],
    "sqlite": [0.00002, 6.0, 0.24, 0.06, 0.25],
    "ferretdb": [0.004, 9.1, 587.1, 0.41, 1.2],
}


def _dml(engines=tuple(CPU)) -> pd.DataFrame:
    return pd.DataFrame([{"engine": e, "phase": p, "v": v} for e in engines for p, v in zip(PHASES, CPU[e])])


def test_ferretdb_57x_postgres_gets_a_log_axis_that_says_why():
    fig = plots.bars_by_phase(_dml(), "v", title="CPU per phase", unit="CPU s", phases=PHASES)
    assert fig.layout.yaxis.type == "log"
    assert fig.layout.yaxis.title.text == "CPU s (log scale, 2446x spread)"  # FerretDB / SQLite in update
    only_pg = plots.bars_by_phase(_dml(["postgres", "ferretdb"]), "v", title="t", unit="CPU s", phases=PHASES)
    assert only_pg.layout.yaxis.type == "log" and only_pg.layout.yaxis.title.text == "CPU s (log scale, 57x spread)"
    # Every engine keeps a positive bar in every phase it has: nothing hidden on the log axis.
    assert all(min(bar.y) > 0 for bar in fig.data)
    # Hostile read 44 (01 more-engines #3): on a log axis a bar's length means nothing: dots.
    assert {t.type for t in fig.data} == {"scatter"} and all(t.mode == "markers" for t in fig.data)
    linear = plots.bars_by_phase(_dml(), "v", title="t", unit="CPU s", phases=PHASES, log_y=False)
    assert {t.type for t in linear.data} == {"bar"}


def test_engines_within_20x_keep_a_linear_axis_even_beside_an_idle_baseline():
    # sleep spans 150x between engines but is a sliver beside the work: no axis makes it comparable.
    fig = plots.bars_by_phase(_dml(["postgres", "mariadb", "sqlite"]).query("phase != 'update'"), "v",
                              title="CPU per phase", unit="CPU s", phases=PHASES)
    assert fig.layout.yaxis.type in (None, "-", "linear")
    assert fig.layout.yaxis.title.text == "CPU s"


def test_an_explicit_choice_wins_over_the_data():
    linear = plots.bars_by_phase(_dml(), "v", title="t", unit="CPU s", phases=PHASES, log_y=False)
    assert linear.layout.yaxis.type in (None, "-", "linear") and linear.layout.yaxis.title.text == "CPU s"
    forced = plots.bars_by_phase(_dml(["postgres"]), "v", title="t", unit="Gi", phases=PHASES, log_y=True)
    assert forced.layout.yaxis.type == "log" and forced.layout.yaxis.title.text == "Gi (log scale)"


def test_grouped_bars_choose_from_their_groups_within_each_nested_category():
    df = pd.DataFrame([
        {"engine": "PostgreSQL", "layer": "driver", "transport": "tcp", "us": 40.0},
        {"engine": "PostgreSQL", "layer": "driver", "transport": "unix", "us": 30.0},
        {"engine": "SQLite", "layer": "driver", "transport": "in-process", "us": 1.5},
        {"engine": "SQLite", "layer": "orm", "transport": "in-process", "us": 60.0},
    ])
    fig = plots.grouped_bars(df, x=["engine", "layer"], group="transport", value="us", title="t", unit="µs", name="n")
    assert fig.layout.yaxis.type in (None, "-", "linear")  # one category's bars within 20x of each other
    wide = pd.concat([df, pd.DataFrame([{"engine": "PostgreSQL", "layer": "driver", "transport": "in-process",
                                         "us": 1.0}])])
    fig = plots.grouped_bars(wide, x=["engine", "layer"], group="transport", value="us", title="t", unit="µs",
                             name="n")
    assert fig.layout.yaxis.type == "log"
    assert fig.layout.yaxis.title.text == "µs (log scale, 40x spread)"  # tcp / in-process, PostgreSQL driver


def test_stacks_of_different_magnitudes_get_panels_of_their_own():
    # 05's cluster figure: a one-row transaction costs ~1000x a bulk row per row; on one linear
    # axis the bulk stacks were drawn under 1.5 px.
    assert plots.magnitude_panels([900.0, 1.2, 850.0, 0.9, float("nan"), 40.0]) == [0, 2, 0, 2, 0, 1]
    assert plots.magnitude_panels([10.0, 9.0, 0.6]) == [0, 0, 0]  # within 20x: one axis
    df = pd.DataFrame({"cluster": ["Galera", "Galera", "PG sync", "PG sync"], "cell": ["1/txn", "1000/txn"] * 2,
                       "entry": [800.0, 0.8, 600.0, 0.7], "others": [300.0, 0.5, 100.0, 0.1],
                       "single": [500.0, 0.6, 400.0, 0.5]})
    fig = plots.stacked_bars(df, x=["cluster", "cell"], segments={"entry": ("entry node", "#123456"),
                                                                   "others": ("other nodes", "#BBBBBB")},
                             marker=("single", "single node"), title="t", unit="µs/row", name="n")
    by_axis = {}
    for trace in fig.data:
        by_axis.setdefault(trace.yaxis, set()).update(trace.x[1])
    assert by_axis == {"y": {"1/txn"}, "y2": {"1000/txn"}}
    assert fig.layout.barmode == "stack" and fig.layout.yaxis2.title.text == "µs/row (own scale)"
    assert [t.showlegend for t in fig.data] == [True, True, True, False, False, False]  # one legend entry each


def test_a_value_a_log_axis_cannot_draw_is_named_under_the_figure():
    # The all-engines DML run: MySQL's select net of the idle baseline came out at -0.0016 s
    # (within the baseline's noise) beside FerretDB's 8.4 s update; on the log axis it had no bar.
    df = pd.DataFrame([{"engine": "mysql", "phase": "select", "v": -0.0016},
                       {"engine": "mysql", "phase": "update", "v": 0.081},
                       {"engine": "ferretdb", "phase": "update", "v": 8.434},
                       {"engine": "ferretdb", "phase": "select", "v": 0.5745}])
    fig = plots.bars_by_phase(df, "v", title="t", unit="CPU s", phases=["update", "select"])
    assert fig.layout.yaxis.type == "log"
    mysql = next(t for t in fig.data if t.name == "MySQL")
    assert list(mysql.y) == [0.081, None]
    [note] = fig.layout.annotations
    assert note.text == "not drawn on the log axis (≤ 0): MySQL select (-0.0016 CPU s)"


def test_a_log_value_axis_labels_at_most_seven_plain_ticks_and_whiskers_do_not_stretch_it():
    import math

    import pandas as pd

    from benchlib.present.plots import bars_by_phase

    # 08's per-query chart: two runs' CIs reach below 0, clipped to a thousandth of the bar.
    df = pd.DataFrame({"engine": ["postgres", "duckdb"], "phase": ["Q1.1", "Q1.1"], "v": [5.0, 3.0],
                       "e": [10.0, 4.0], "below": [4.995, 2.997]})
    fig = bars_by_phase(df, "v", error="e", error_minus="below", unit="ms", log_y=True, title="t", name="t")
    low, high = fig.layout.yaxis.range
    assert low == math.log10(3.0 / 2) and 10 ** high >= 15.0  # the foot at half the lowest bar, the top over a whisker
    assert 2 <= len(fig.layout.yaxis.tickvals) <= 7 and all("e" not in t for t in fig.layout.yaxis.ticktext)


def test_grouped_bars_leave_no_empty_slot_for_a_group_a_category_lacks():
    """Hostile read 41 (04): the transport chart kept in-process slots empty beside PostgreSQL's bars
    and TCP / Unix slots empty beside SQLite's."""
    df = pd.DataFrame([
        {"engine": "PostgreSQL", "layer": "driver", "transport": "unix", "us": 30.0},
        {"engine": "PostgreSQL", "layer": "driver", "transport": "tcp", "us": 40.0},
        {"engine": "SQLite", "layer": "driver", "transport": "in-process", "us": 20.0},
    ])
    fig = plots.grouped_bars(df, x=["engine", "layer"], group="transport", value="us", title="t", unit="µs", name="n")
    drawn = {(bar.name, cat): (w, o) for bar in fig.data for cat, y, w, o in
             zip(zip(*bar.x), bar.y, bar.width, bar.offset) if y == y}
    # SQLite's one bar fills its category; PostgreSQL's two share theirs, side by side.
    assert drawn[("in-process", ("SQLite", "driver"))] == (plots.BAR_SPAN, -plots.BAR_SPAN / 2)
    (wu, ou), (wt, ot) = drawn[("unix", ("PostgreSQL", "driver"))], drawn[("tcp", ("PostgreSQL", "driver"))]
    assert wu == wt == plots.BAR_SPAN / 2 and ot == ou + wu
    assert fig.layout.barmode == "overlay"


def test_a_compared_pair_shares_one_panel():
    """Hostile read 43 (07 #4): FerretDB's fetch (125 ms) and its base PostgreSQL's (2.6 ms) sat in
    separate panels on different scales; a pair is read on one."""
    totals = [2.6, 10.9, 11.3, 1.75, 6.8, 3.07, 125.0]  # PG, MariaDB, MyRocks, SQLite, DuckDB, RocksDB, FerretDB
    pairs = [2, 0, 0, 1, None, 1, 2]
    assert plots.magnitude_panels(totals) == [1, 0, 0, 1, 0, 1, 0]
    assert plots.joined_panels(plots.magnitude_panels(totals), pairs) == [0, 0, 0, 1, 0, 1, 0]
    assert plots.joined_panels([0, 1, 2], [None, "a", "a"]) == [0, 1, 1]  # an emptied panel closes up
    df = pd.DataFrame({"engine": ["PostgreSQL", "SQLite", "FerretDB"], "cpu": [1.1, 1.75, 121.0],
                       "pair": [0, None, 0]})
    fig = plots.stacked_bars(df, x=["engine"], segments={"cpu": ("engine CPU", "#336791")}, title="t",
                             unit="ms", name="n", together="pair")
    assert {trace.yaxis: set(trace.x) for trace in fig.data} == {"y": {"PostgreSQL", "FerretDB"}, "y2": {"SQLite"}}


def test_a_ratio_measured_once_has_its_own_marker_not_not_told_apart():
    """Hostile read 44 (08 #2): first-run points measured once were drawn as "○ not told apart"."""
    found = pd.DataFrame([{"ratio": 0.05, "ratio_low": None, "ratio_high": None, "verdict": "untested",
                           "engine": "duckdb", "step": "Q1.1"},
                          {"ratio": 1.2, "ratio_low": 0.9, "ratio_high": 1.5, "verdict": "noise",
                           "engine": "duckdb", "step": "Q1.2"}])
    fig = plots.ratio_chart(found, y=lambda r: r["step"], series=lambda r: r["engine"], title="t", name="n",
                            axis_title="ratio")
    assert list(fig.data[0].marker.symbol) == ["square-open", "circle-open"]
    assert "□ measured once" in fig.layout.title.text and "○ not told apart" in fig.layout.title.text


def _profile(engine: str, phase: str, subsystems: dict[str, tuple[int, int]], repetition: int = 1) -> list[dict]:
    """Subsystem rows of one window: subsystem -> (self instructions, of which by unnamed functions)."""
    return [{"run_id": "r", "instance_id": f"{engine}-{repetition}", "engine": engine, "phase": phase,
             "repetition": repetition, "window": "phase", "kind": "subsystem", "subsystem": s,
             "self_instructions": total, "by_caller_instructions": unnamed} for s, (total, unnamed) in subsystems.items()]


def test_a_bar_mostly_without_symbols_is_not_split_and_is_named_under_the_chart():
    """Hostile read 46a (01 instructions #2): MariaDB's stripped server drew 0 B-tree instructions,
    its unnamed functions folded into their callers' "executor"."""
    rows = pd.DataFrame(
        _profile("postgres", "insert", {"B-tree / index": (500, 50), "executor": (400, 40), "other": (100, 0)})
        + _profile("mariadb", "insert", {"B-tree / index": (0, 0), "executor": (900, 700), "other": (100, 0)})
        + _profile("mariadb", "insert", {"B-tree / index": (0, 0), "executor": (700, 500), "other": (100, 0)}, 2))
    shares = plots.symbol_shares(rows).set_index("engine")
    assert shares.loc["postgres", "share"] == 0.09 and shares.loc["postgres", "split"]
    assert shares.loc["mariadb", "total"] == 900 and shares.loc["mariadb", "no_symbol"] == 600
    assert not shares.loc["mariadb", "split"]

    fig = plots.subsystem_bars(rows, title="t", name="n")
    drawn = {(t.name, y): x for t in fig.data for y, x in zip(t.y, t.x) if x == x and x}
    assert {name for name, y in drawn if y == "MariaDB"} == {plots.NO_SYMBOL, plots.NOT_SPLIT}
    assert drawn[(plots.NO_SYMBOL, "MariaDB")] == 600 and drawn[(plots.NOT_SPLIT, "MariaDB")] == 300
    # A split bar keeps each subsystem's named part, and its unnamed part is a segment of its own.
    assert drawn[("B-tree / index", "PostgreSQL")] == 450 and drawn[(plots.NO_SYMBOL, "PostgreSQL")] == 90
    assert sum(x for (_, y), x in drawn.items() if y == "PostgreSQL") == 1000
    notes = [a.text for a in fig.layout.annotations if a.text not in ("insert",)]
    assert len(notes) == 1 and "MariaDB" in notes[0] and "PostgreSQL" not in notes[0]
    assert plots.unsplit_lines(plots.symbol_shares(rows[rows["engine"] == "postgres"])) == []


def test_a_series_legend_entry_is_filled_whatever_its_first_point_is():
    """Hostile read 46a (01 default #4): "insert" showed hollow in the legend because its first
    point was "not told apart"."""
    found = pd.DataFrame([{"ratio": 1.1, "ratio_low": 0.8, "ratio_high": 1.5, "verdict": "noise", "step": "insert",
                           "engine": "mysql"},
                          {"ratio": 3.0, "ratio_low": 2.5, "ratio_high": 3.5, "verdict": "worse", "step": "insert",
                           "engine": "mariadb"}])
    fig = plots.ratio_chart(found, y=lambda r: r["engine"], series=lambda r: r["step"], title="t", name="n",
                            axis_title="ratio")
    keys = [t for t in fig.data if t.showlegend is not False]
    assert [t.name for t in keys] == ["insert"] and keys[0].marker.symbol == "circle"
    points = [t for t in fig.data if t.showlegend is False]
    assert list(points[0].marker.symbol) == ["circle-open", "circle"]
    assert points[0].legendgroup == keys[0].legendgroup and points[0].offsetgroup == keys[0].offsetgroup
