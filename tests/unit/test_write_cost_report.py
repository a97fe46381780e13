"""The write-cost report on runs written through the store with known figures (write_cost_runs):
its findings rows and their rendering (one approved snapshot), and what its figures draw, or say
instead, where there is nothing to draw."""
import re

import pytest

from benchlib.data.store import Store
from benchlib.workloads.write_cost import WriteCostReport
from benchlib.workloads.write_cost.report import (BULK_PHRASES, CLUSTER_QUESTION, CPU_NOTE, EMBEDDED_PARTS_PHRASES, NO_CLUSTER,
                                                  NONE_ABOVE_IDLE, PARTS_PHRASES, SINGLE_NODE_QUESTION)
from benchlib.workloads.write_cost.workload import CLIENT_VALUES, SERVER_GENERATOR
from write_cost_runs import ENGINES, write_run


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    store = Store(tmp_path_factory.mktemp("wc") / "results")
    return WriteCostReport(write_run(store), store)


def test_rendered_findings_snapshot(report, snapshot):
    """Every findings row in words, with its verdict and caveats: review the snapshot when it changes."""
    lines = [f"{'*' if row['headline'] else '-'} {report.render(row)} [{row['verdict']}; "
             f"{', '.join(row['caveats']) or 'no caveat'}]" for row in report.findings().to_dict("records")]
    assert "\n".join(lines) == snapshot


def test_each_engine_says_whether_its_parts_separate_and_mysql_meets_the_seed_in_bulk(report):
    found = report.findings().set_index(["kind", "engine", "step"]).sort_index()
    assert found.loc[("decomposition", "mysql", "commit (largest) vs statement"), "verdict"] == "worse"  # separable
    # PostgreSQL's commit is not resolved: in no pair (hostile read 46c, 05 #1); its statement clears the row,
    # its largest part against the next (hostile read 47, 05).
    assert found.loc[("decomposition", "postgres")].index.tolist() == ["statement (largest) vs row"]
    assert found.loc[("decomposition", "postgres", "statement (largest) vs row"), "verdict"] == "worse"
    assert found.loc[("decomposition", "sqlite", "statement vs row"), "caveats"] == ("embedded-driver",
                                                                                    "counts-no-waits")
    # Every engine's parts are CPU work: a commit's fsync wait is beside them, in CPU seconds too (hostile read 41).
    assert found.loc[("decomposition", "mysql", "commit vs row"), "caveats"] == ("counts-no-waits",)
    bulk = found.loc[("bulk", "mysql")]
    bulk = bulk[bulk["metric"] == "cpu_time"].iloc[0]
    assert bulk["seed_ratio"] == pytest.approx(68_011_238_184 / 52_812_253_895) and bulk["seed"] == "not_comparable"  # the article's exact counts; CPU time tests no count
    assert bulk["base_engine"] == "postgres" and 1.1 < bulk["ratio"] < 1.2 and bulk["verdict"] == "worse"
    assert report.findings()["headline"].sum() == 4  # three engines' parts, then MySQL in bulk
    assert report.question == SINGLE_NODE_QUESTION


def test_a_negative_share_after_the_commit_is_never_drawn(tmp_path):
    """Issue 37 item 11: the after-commit chart plotted -71%. A cell whose settle window came out
    below the idle rate is left empty and counted under the chart."""
    bulk = (100, 100, CLIENT_VALUES)
    engines = {"mysql": {**ENGINES["mysql"], "after": {bulk: -0.003, (100, 100, SERVER_GENERATOR): -0.004}}}
    store = Store(tmp_path / "results")
    report = WriteCostReport(write_run(store, engines=engines), store)
    shares = report.summary.set_index(["rows_per_txn", "rows_per_stmt", "rows_from"])["after_share"]
    assert shares[bulk] < 0  # measured so, and kept in the store's figures
    fig = report.after_figure()
    drawn = [v for trace in fig.data for row in trace.z for v in row if v is not None]
    assert drawn and all(v > 0 for v in drawn)
    assert "Work after the commit not above the idle rate: 3 empty cells." == fig.layout.annotations[-1].text
    assert "-" not in "".join(str(t) for trace in fig.data for row in trace.text for t in row)


def test_an_engine_with_no_work_after_the_commit_is_named_not_drawn_as_a_blank_panel(tmp_path):
    """Hostile read 46c (05 #6): three blank panels under "21 empty cells". An engine with no cell
    above the idle rate gets no panel; the one sentence under the chart names it."""
    engines = {**ENGINES, "mysql": {**ENGINES["mysql"], "after": {cell: -0.003 for cell in ENGINES["mysql"]["cells"]}}}
    store = Store(tmp_path / "results")
    report = WriteCostReport(write_run(store, engines=engines), store)
    fig = report.after_figure()
    assert "MySQL" not in {a.text for a in fig.layout.annotations}  # no panel title
    assert "PostgreSQL" in {a.text for a in fig.layout.annotations}
    # SQLite has no settle window (nothing measured): neither drawn nor named.
    assert fig.layout.annotations[-1].text.endswith(": MySQL in no cell (not drawn); 3 empty cells.")


def test_nothing_to_draw_is_said_not_drawn_as_an_empty_axis(report):
    """Issue 37 item 11: without clusters, the replication chart was an empty axis. A run that did
    not ask about replication shows nothing of it at all."""
    assert not report.asks_replication and report.replication_figure() is None
    assert report.node_table() is None


def test_a_run_with_clusters_asks_what_replication_adds(tmp_path):
    """Issue 37 item 12: the clusters report kept the single-node question."""
    cluster = {**ENGINES["postgres"], "kind": "cluster", "cells": {
        cell: tuple(v * 2.0 for v in values) for cell, values in ENGINES["postgres"]["cells"].items()}}
    engines = {"postgres": ENGINES["postgres"], "postgres-replica-sync": cluster}
    store = Store(tmp_path / "results")
    report = WriteCostReport(write_run(store, engines=engines, parameters={
        "engines": ["postgres"], "clusters": ["postgres-replica-sync"], "rows": 1000, "pk_kind": "uuid",
        "max_settle_seconds": 1}), store)
    assert report.question == CLUSTER_QUESTION
    lead = report.findings()[report.findings()["headline"] == True]  # noqa: E712
    assert set(lead["kind"]) == {"replication"} and set(lead["engine"]) == {"postgres-replica-sync"}
    assert lead["ratio"].to_numpy() == pytest.approx(2.0, rel=0.05)
    assert report.answer_lines()[0].startswith("PostgreSQL + sync replica vs PostgreSQL, ")
    figure = report.headline_figure()
    assert figure.layout.meta["benchlib_name"] == "write-cost-replication-ratio"
    # A ratio's CI on the log scale: its bar reaches further above than below.
    bars = figure.data[0]
    assert not bars.error_y.symmetric and bars.error_y.array[0] > bars.error_y.arrayminus[0]
    assert report.answer_lines()[0].split(", ")[1].startswith("1/txn · 1/stmt")  # a commit per row first
    # Hostile read 44 (05 clusters #1): what a sync replica adds is time, not CPU: each line gives the
    # wall time per row of both sides, as the appendix's table has them.
    from benchlib.data import findings as F

    wall = report.summary.set_index(["engine", "rows_per_txn", "rows_per_stmt", "rows_from"])["wall_per_row"] * 1e6
    expected = [F.fmt_number(wall[(e, 1, 1, CLIENT_VALUES)]) for e in ("postgres-replica-sync", "postgres")]
    assert report.answer_lines()[0].endswith(f"; wall {expected[0]} vs {expected[1]} µs per row")
    # Hostile read 46d (05 clusters #1): a pair whose hosts ran 10% or more apart says which way its ratio reads.
    row = lead.iloc[0].to_dict()
    assert report.render({**row, "host_factor": 1.05}) == report.render(row)  # within 10%: nothing said
    slow_base = report.render({**row, "host_factor": 1 / 2.11})
    assert slow_base.endswith("; PostgreSQL's host ran 2.11x slower: the ratio reads low")


def test_the_findings_follow_the_runs_cost_metric_in_its_own_unit(tmp_path):
    """Instructions where the run counted them in every engine window (valgrind's server counter):
    the same findings, in instructions per row; a counted metric has no drift band."""
    store = Store(tmp_path / "results")
    engines = {k: ENGINES[k] for k in ("postgres", "mysql")}
    report = WriteCostReport(write_run(store, engines=engines, instructions_per_second=3e9), store)
    assert report.metric == "instructions_user"
    found = report.findings()
    costs = found[found["metric"] == "instructions_user"]
    assert set(costs["unit"]) == {"instructions"} and costs["host_factor"].isna().all()
    assert set(costs["kind"]) == {"decomposition", "bulk"}
    mysql = costs[costs["kind"] == "decomposition"].set_index(["engine", "pair"]).loc[("mysql", "largest")]
    assert mysql["value"] == pytest.approx(310e-6 * 3e9, rel=0.01) and mysql["verdict"] == "worse"
    assert "instructions" in report.answer_lines()[0] and "µs" not in report.answer_lines()[0]
    # Hostile read 46c (05 instructions #4): the count's scope (user space, the commit's kernel CPU not
    # in it) is one caveat each part line points to, not a clause repeated on each, and the CPU note
    # ("CPU work only") is not printed beside it.
    lines = report.answer_lines()
    parts = [line for line in lines if "one-row insert" in line]
    marks = report.caveat_marks(found)
    assert parts and all(f"<sup>{marks['counts-no-waits']}</sup>" in line for line in parts)
    assert not any("wait" in line or "kernel" in line for line in lines) and len(lines) <= report.answer_limit
    note = {c.id: c.text for c in report.caveat_notes()}["counts-no-waits"]
    assert note != CPU_NOTE and "kernel CPU" in note
    # 05 instructions #1: the pointer to the CPU-seconds set names where its sweep differs from this run's,
    # from the sets' own parameters (here the rows per cell; both ran uuid keys).
    # 05 instructions #5: no engine + driver ratio: only the reason that applies is given.
    reason = str(report.ratio_figure())
    assert "driver" in reason and "did not run" not in reason and "no engine" not in reason
    cpu_rows = report.set_values("rows")["default"]
    assert cpu_rows != report.param("rows") and f"{cpu_rows:,} rows" in note and "keys" not in note
    # 05i #3: under valgrind wall time is valgrind's: no wall-time row, none in "N of M decided".
    assert set(found["metric"]) == {"instructions_user"}
    # Counted in instructions, a part carries the caveat that a commit's fsync wait is not in them.
    assert all("counts-no-waits" in c for c in costs[costs["kind"] == "decomposition"]["caveats"])


def test_the_findings_table_names_each_rows_own_base_and_claims_no_ci_for_one_value(report):
    """Within-engine rows (statement vs commit) are based on a part, not on PostgreSQL."""
    found = report.findings()
    parts = found[found["kind"] == "decomposition"]
    assert (parts["base_label"] == parts["base_part"]).all()
    html = report.findings_table().data
    assert "Base: PostgreSQL" not in html
    assert all(f"{label}: " in html for label in parts["base_label"])


def test_each_engines_line_gives_its_parts_in_one_order_and_a_split_is_never_better_or_worse(report):
    """Hostile read 40 (05 item 3): the answer said "statement vs commit" for one engine and
    "commit vs statement" for the next. One line per engine, its parts in the order commit,
    statement, row; an embedded engine's line says its count holds its driver (valgrind 05 item 3);
    the findings table calls two parts of one cost told apart, not better or worse (item 2)."""
    parts = report.findings()[report.findings()["kind"] == "decomposition"]
    assert list(dict.fromkeys(parts["engine"])) == ["postgres", "mysql", "sqlite"]
    largest = parts[parts["pair"] == "largest"]
    assert [report.phrases_of(r) for r in largest.to_dict("records")] == [PARTS_PHRASES, PARTS_PHRASES,
                                                                          EMBEDDED_PARTS_PHRASES]
    for line in report.answer_lines()[:3]:
        assert line.index(": commit ") < line.index(", statement ") < line.index(", row ")
    assert not PARTS_PHRASES.directed and report.phrases.directed
    cells = report.findings_table().data
    assert "worse, beyond noise" in cells  # MySQL against PostgreSQL in bulk: a direction
    assert cells.count("worse, beyond noise") == int(((report.findings()["kind"] != "decomposition")
                                                      & (report.findings()["verdict"] == "worse")).sum())


def test_a_binary_log_the_base_does_not_write_is_cited_beside_the_bulk_ratio(report):
    """Hostile read 40 (05 item 4): MySQL's 3.69x against the seed's 1.29x, its log_bin=1 and
    sync_binlog=1 only in the appendix. The bulk row cites it, the note names the settings."""
    bulk = report.findings()[report.findings()["kind"] == "bulk"]
    assert all("binary-log" in c for c in bulk["caveats"])
    note = {c.id: c.text for c in report.caveat_notes()}["binary-log"]
    assert "log_bin=1" in note and "sync_binlog=1" in note
    # Hostile read 46c (05 #4): seed 000 gives its MySQL's version (its defaults: binary log on).
    from benchlib.data import results
    ref = results.reference("seed000_dml_instructions")
    assert f"MySQL {ref[ref['engine'] == 'mysql']['version'].iloc[0]}" in note and "not given" not in note


def test_without_a_cluster_the_page_says_replication_was_not_measured(report):
    """Hostile read 40 (05 item 1): the question asks what replication adds; clusters=[] and the
    page never said that no cluster ran. Hostile read 43 (05 #5): said in the method, not above the
    answer."""
    assert report.asked() == ""
    assert report.method_notes().startswith(f"- {NO_CLUSTER}\n")


def test_the_parts_are_dots_on_their_axis_not_bars(report):
    """Hostile read 40 (05 item 2): bars on a log axis, whose heights mean nothing."""
    fig = report.parts_figure()
    assert {t.type for t in fig.data} == {"scatter"} and {t.mode for t in fig.data} == {"markers"}
    # Hostile read 42 (05 #4): an embedded engine's points hold its driver; its legend says so.
    from benchlib.engines import engine_title, is_server
    from benchlib.workloads.write_cost.report import WITH_DRIVER

    names = {t.name for t in fig.data}
    embedded = [e for e in report.parts["engine"] if not is_server(e)]
    assert embedded and {WITH_DRIVER.format(engine=engine_title(e)) for e in embedded} <= names
    assert all(engine_title(e) in names for e in report.parts["engine"] if is_server(e))


def test_the_bulk_row_reads_the_cell_its_table_shows_and_names_the_after_commit_part(tmp_path):
    """Hostile read 43 (05 #1): the answer's "37.2 µs vs 14.1 µs, 2.64x" was the statements' window,
    the table's and heatmap's 29.8 and 13.0 the cell's cost with an unresolved settle window below the
    idle rate. One figure per cell (analysis.cells): the bulk row reads it, and names the part of it
    after the commit where resolved (hostile read 41: unresolved settle work is no part of it)."""
    bulk = (100, 100, SERVER_GENERATOR)
    engines = {"postgres": ENGINES["postgres"], "mysql": {**ENGINES["mysql"], "after": {bulk: 0.010}}}
    store = Store(tmp_path / "results")
    report = WriteCostReport(write_run(store, engines=engines), store)
    found = report.findings()
    row = found[(found["kind"] == "bulk") & (found["metric"] == report.metric)].iloc[0]
    cell = report.summary.set_index(["engine", "rows_per_txn", "rows_per_stmt", "rows_from"])["engine_per_row"]
    assert row["value"] == pytest.approx(cell[("mysql", *bulk)]) and row["base_value"] == pytest.approx(
        cell[("postgres", *bulk)])
    assert row["after"] == pytest.approx(10e-6, rel=0.05)  # in the cost, and named
    assert row["base_after"] != row["base_after"]  # PostgreSQL's settle not above its idle rate: no figure
    line = report.render(row.to_dict())
    assert report.phrases_of(row.to_dict()) is BULK_PHRASES
    assert "of which after the commit: 10" in line and f"vs {NONE_ABOVE_IDLE}" in line.rpartition("; seed")[0]
    # Hostile read 44 (05 #3): where neither side's is resolved, no "not resolved vs not resolved" clause.
    empty = {**row.to_dict(), "after": float("nan")}
    assert "after the commit" not in report.render(empty) and "µs per row, 3.57x" in report.render(empty)


def test_a_part_lines_ratio_is_the_larger_over_the_smaller_and_the_largest_pair_carries_none(report):
    """Hostile read 41 (05): "statement / commit 3.22x" on one line, "commit / statement 1.79x" on the
    next. A pair of parts is the larger over the smaller (never below 1): the row against the part
    above it reads "row Nx below the statement"; the largest against the next says which, no ratio."""
    parts = report.findings()[report.findings()["kind"] == "decomposition"]
    assert (parts["ratio"] >= 1).all()
    for row in parts.to_dict("records"):
        ratios = re.findall(r"\d+(?:\.\d+)?x\b", report.render(row))
        assert not ratios if row["pair"] == "largest" else ratios, report.render(row)


def test_a_row_measured_once_leaves_measured_once_to_the_count_line():
    """Hostile read 42 (05 #2): "(measured once)" repeated on all 7 answer lines; the count line
    ("0 of 12 comparisons decided (12 measured once)") says it once. Decided rows keep their words."""
    from benchlib.data import findings as F
    from benchlib.workloads.write_cost.report import COMPARISON, PARTS_PHRASES

    for phrases in (COMPARISON, BULK_PHRASES, PARTS_PHRASES, EMBEDDED_PARTS_PHRASES):
        assert "{words}" not in phrases.template(F.Verdict.UNTESTED.value)
        assert "{words}" in phrases.template(F.Verdict.WORSE.value)
    assert "{after}" in BULK_PHRASES.template(F.Verdict.UNTESTED.value)


def test_appendix_tables_print_numbers_as_the_page_does_not_raw_pandas(report):
    """Hostile read 42 (05 #5): an index column 0-17, "51.337917" and "3.281e+04" in the appendix."""
    import re

    cells = report.cell_table().to_html()
    amplification = dict(report.appendix_parts())["Bytes per byte of row"].to_html()
    for html in (cells, amplification):
        assert not re.search(r">\s*-?\d+\.\d{5,}\s*<|\de[+-]\d", html)
    part = dict(report.appendix_parts())["Bytes per byte of row"]
    assert all(part.hide_index_)  # no 0-17 index column
    assert part.data["log bytes / row byte"].map(lambda v: isinstance(v, str)).all()  # fmt's, not 51.337917


def test_a_spread_below_the_printed_precision_reads_zero(report):
    """Hostile read 46c (05 instructions #6): counts that repeat read "5,916 ± 2.77e-12"."""
    assert report._ci(5916e-6, 2.77e-18) == "5,916 ± 0"
    assert report._ci(23833e-6, 10.5e-6) == "23,833 ± 10.5"


def test_the_heatmaps_statement_axis_names_what_it_holds(report):
    """Hostile read 43 (05 #4): the axis "rows per statement" held "server-generated", no count."""
    fig = report.cost_figure()
    titles = {fig.layout[k].title.text for k in fig.layout if k.startswith("xaxis")} - {None}
    assert titles == {"statement"}
    shown = {x for t in fig.data for x in t.x}
    assert shown == {"1-row VALUES", "100-row VALUES", "server-generated"}
    assert list(report.cell_table().data.columns[:3]) == ["engine", "rows/txn", "statement"]


def test_the_seed_table_in_the_appendix_reads_as_the_other_tables(report):
    """Hostile read 43 (05 #5): raw pandas, index 0-5 and "14974.327769"."""
    html = report.appendix().data
    seed = html.partition("Seed 000's engines this run did not measure")[2].partition("</table>")[0]
    assert "14,974" in seed and "14974.3" not in seed and "0.567" in seed and "0.567078" not in seed
    assert 'class="row_heading' not in seed  # no index column


def test_the_method_states_the_runs_key_kind_and_seed_000s_where_they_differ(tmp_path):
    """Hostile read 44 (05 instructions #5): the method said "as in seed 000" (UUIDs) of a run with
    sequential keys and 16-byte rows. The key kind comes from the run's parameters."""
    from write_cost_runs import ROWS

    store = Store(tmp_path / "results")
    params = {"engines": ["postgres", "mysql"], "rows": ROWS, "rows_per_txn": [1, 100], "rows_per_stmt": [1, 100],
              "server_generated": True, "repetitions": 3, "pk_kind": "sequential", "max_settle_seconds": 1,
              "idle_seconds": 1, "clusters": []}
    engines = {k: ENGINES[k] for k in ("postgres", "mysql")}
    sequential = WriteCostReport(write_run(store, engines=engines, parameters=params), store).method_notes()
    assert "sequential primary key + float, 16 bytes of row; seed 000's keys: uuid, 24 bytes of row" in sequential
    uuid = WriteCostReport(write_run(store, engines=engines), store).method_notes()
    assert "uuid primary key + float, 24 bytes of row)" in uuid and "seed 000's keys" not in uuid


def test_the_parts_table_and_the_findings_read_one_resolution_and_one_separability(report):
    """Hostile read 46d (05 clusters #4): the findings table printed a part the parts table called not
    resolved, and the parts table printed two parts the rule could not separate as two costs, unsaid."""
    import pandas as pd

    from benchlib.data import findings as F
    from benchlib.engines import engine_title

    table = report.decomposition_table().data
    table = table[table["side"] == "engine"].set_index("engine")
    found = report.findings()
    found = found[found["kind"] == "decomposition"]
    assert found["commit"].isna().any()  # the fixture holds a part not resolved
    for row in found.to_dict("records"):
        shown = table.loc[engine_title(row["engine"])]
        for part in ("commit", "statement", "row"):
            assert (shown[f"{part} ({report.shown_unit}/row)"] == "not resolved") == pd.isna(row[part])
        # A part not resolved is in no tested pair (hostile read 46c, 05 default #1).
        assert not row["pair"] or not (pd.isna(row[row["part"]]) or pd.isna(row[row["base_part"]]))
        if row["lead"] and row["pair"]:  # the table names the pair the answer states, with its verdict
            assert shown["pair tested"].startswith(row["step"]) and \
                shown["pair tested"].endswith(F.VERDICT_WORDS[F.Verdict(row["verdict"])])


def test_a_column_that_says_nothing_in_every_row_is_left_out_of_the_appendix(report):
    """Hostile read 46d (05 clusters #5): "io write B/row" read 0, "I/O bytes / row byte" "not measured"
    and "log" "ok" in every row. A column holding one such value throughout is dropped; one value that
    differs keeps it."""
    import pandas as pd

    from benchlib.present.report import dead_columns

    frame = pd.DataFrame({"engine": ["a", "b"], "io": [0.0, 0.0], "io bytes": ["not measured"] * 2, "log": ["ok"] * 2,
                          "wall": [float("nan")] * 2, "n": [3, 3], "mixed": ["ok", "not reported"]})
    assert dead_columns(frame) == ["io", "io bytes", "log", "wall"]  # n: the same 3 everywhere, but a count
    assert dead_columns(frame.head(1)) == []  # one row: nothing to compare across
    html = report.appendix().data
    every_cell = html.partition("Every cell")[2].partition("</table>")[0]
    kept = report.cell_table().data
    assert dead_columns(kept) == ["io write B/row"]  # the fixture counts no I/O bytes; its log column is mixed
    assert "io write B/row" not in every_cell and ">log<" in every_cell
