"""Bar figures stay readable when engines differ by orders of magnitude: a log axis chosen from
the data, and said in the axis title."""
import pandas as pd

from benchlib import plots

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
