"""The cross-run comparison's parameters: bad values named before anything runs; runs that do not
exist or belong to another experiment refused. Its arithmetic is in test_store/test_results."""
import math

import pytest

from benchlib.core.errors import ParameterError
from benchlib.run.measure import Run
from benchlib.data.store import Store
from benchlib.workloads import by_experiment
from benchlib.compare import newest_finished_run, validate_parameters

GOOD = dict(experiment="dml", runs=[], match="engine", threshold=0.05, rerun_engines="all",
            reuse_matching_run=False)


@pytest.mark.parametrize("name, value, fragment", [
    ("experiment", "tpcc", "experiment must be one of client_api, clustered, dml, load_fetch, ssb, sweep, write_cost, got 'tpcc'"),
    ("threshold", 0, "threshold must be a fraction between 0 and 1 (0.05 = 5%), got 0"),
    ("threshold", 1.5, "got 1.5"),
    ("threshold", True, "got True"),
    ("runs", "abc", "runs must be a list of run ids"),
    ("runs", ["r1"], "runs names one run (r1)"),
    ("runs", ["r1", "r1"], "runs must list each run once"),
    ("match", "version", "match must be one of engine, product, got 'version'"),
])
def test_bad_value_is_named(name, value, fragment):
    with pytest.raises(ParameterError) as err:
        validate_parameters({**GOOD, name: value})
    assert fragment in str(err.value)


@pytest.fixture
def default_store():
    return Store.default()  # the tests' own data directory (tests/conftest.py)


def test_runs_must_exist_and_share_the_experiment(default_store):
    with Run("dml", {}, store=default_store) as dml_run, Run("sweep", {}, store=default_store) as sweep_run:
        pass
    with pytest.raises(ParameterError, match="no run nope-1 in"):
        validate_parameters({**GOOD, "runs": [dml_run.run_id, "nope-1"]})
    with pytest.raises(ParameterError, match=f"{sweep_run.run_id} is 'sweep', not 'dml'"):
        validate_parameters({**GOOD, "runs": [dml_run.run_id, sweep_run.run_id]})
    with Run("dml", {}, store=default_store) as other_dml_run:
        pass
    both = [dml_run.run_id, other_dml_run.run_id]
    assert validate_parameters({**GOOD, "runs": both}).runs == both


def test_rerun_needs_a_finished_run_of_the_experiment(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHLIB_DATA_DIR", str(tmp_path))
    with pytest.raises(ParameterError, match="no finished 'sweep' run in"):
        newest_finished_run("sweep")
    with Run("sweep", {}, store=Store.default()) as run:
        pass
    assert newest_finished_run("sweep") == run.run_id


def test_every_workload_is_found_by_its_experiment_and_can_be_rerun():
    for experiment in ("client_api", "clustered", "dml", "load_fetch", "ssb", "sweep", "write_cost"):
        workload = by_experiment(experiment)
        assert workload.EXPERIMENT == experiment and callable(workload.run) and workload.PARAMETERS
    with pytest.raises(ParameterError, match="no workload runs experiment 'tpcc'; known: client_api, clustered, dml, load_fetch, ssb, sweep, write_cost"):
        by_experiment("tpcc")


def test_report_colours_only_changes_beyond_noise_and_threshold_and_survives_untested_cells(store):
    from benchlib.compare import ComparisonReport
    from test_store import _rows

    ids = []
    # insert: +30% with tight repetitions (red); update: one repetition in run b (untested, no colour)
    # Two settings (identical runs would make any flagged cell a false positive, not a change).
    for setting, (insert, update) in enumerate((([1.0, 1.01, 0.99], [2.0, 2.1, 1.9]), ([1.3, 1.31, 1.29], [2.0]))):
        with Run("t", {"setting": setting}, store=store) as run:
            rows = []
            for phase, values in (("insert", insert), ("update", update)):
                for rep, value in enumerate(values, start=1):
                    row = _rows(run.run_id, 1, phase)[0]
                    rows.append({**row, "instance_id": f"x-{rep}", "repetition": rep, "value": value})
            store.append_measurements(run.run_id, 1, rows)
            ids.append(run.run_id)
    report = ComparisonReport(ids, store=store)
    html = report.ratio_table().to_html()
    assert html.count("#f4c7c3") == 1 and "#c8e6c9" not in html  # one dearer cell, nothing cheaper
    cells = report.compared.set_index("phase")
    assert cells.loc["insert", "flagged"] and cells.loc["update", "beyond_noise"] is None
    assert list(cells["verdict"]) == ["worse", "untested"]  # findings.judge's, on the log scale
    verdicts = report.findings().set_index("step")["verdict"]
    assert verdicts.to_dict() == {"insert": "worse", "update": "untested"}
    assert report.answer_lines()[0].startswith("SQLite, insert: 1.3x")


def test_an_empty_comparison_has_no_findings_and_no_chart(store):
    from benchlib.compare import ComparisonReport

    with Run("t", {}, store=store) as a, Run("t", {}, store=store) as b:
        pass
    report = ComparisonReport([a.run_id, b.run_id], store=store)
    assert report.compared.empty and report.findings().empty
    assert report.answer_lines() == [] and report.headline_figure() is None


def test_the_comparison_shows_each_runs_host_class_and_says_when_hosts_differ(tmp_path):
    from synthetic_runs import write_run

    from benchlib.compare import ComparisonReport

    store = Store(tmp_path / "results")
    costs = {"postgres": {"insert": [1.0, 1.1, 0.9]}}
    write_run(store, "a", 1, costs, host={"host_class": "c6i.large", "host_price": 0.085, "host_price_unit": "USD/h",
                                          "host_fingerprint": "aaaaaaaaaaaa"})
    write_run(store, "b", 2, costs, host={"host_class": "m7g.large", "host_fingerprint": "bbbbbbbbbbbb"})
    write_run(store, "old", 3, costs)  # before hosts were recorded
    report = ComparisonReport(["a", "b"], store=store)
    classes = list(report.runs_table().data["host class"])
    assert classes == ["c6i.large (0.085 USD/h), fingerprint aaaaaaaaaaaa", "m7g.large, fingerprint bbbbbbbbbbbb"]
    assert [c.id for c in report.caveat_notes()] == ["unlike-hosts"]
    assert set(report.findings()["caveats"]) == {("unlike-hosts",)}  # cited by every row it changes
    assert "not recorded (an older run)" in set(ComparisonReport(["a", "old"], store=store).runs_table().data["host class"])


def test_the_chart_and_tables_say_what_was_compared_in_the_runs_unit(tmp_path):
    """Issue 37 item 12: the chart's title was two run ids and its axis "ratio of cpu_time"; values
    read 2.89e-06 s; a table of server versions was NaN wherever an engine did not run."""
    from synthetic_runs import write_run

    from benchlib.compare import ComparisonReport

    store = Store(tmp_path / "results")
    write_run(store, "20261101T000000Z-aaaaaa", 1, {"postgres": {"insert": [2.9e-3, 3.0e-3, 2.8e-3]},
                                                    "mysql": {"insert": [4.0e-3, 4.1e-3, 3.9e-3]}})
    write_run(store, "20261102T000000Z-bbbbbb", 2, {"postgres": {"insert": [3.5e-3, 3.6e-3, 3.4e-3]}})
    report = ComparisonReport(["20261101T000000Z-aaaaaa", "20261102T000000Z-bbbbbb"], store=store)
    figure = report.headline_figure()
    assert "aaaaaa" not in figure.layout.title.text and "bbbbbb" not in figure.layout.title.text
    # Same parameters, host and code: the second run repeats the first.
    assert figure.layout.title.text.startswith("The rerun over the base run: engine CPU time per row")
    assert figure.layout.xaxis.title.text.startswith("× the base run") and figure.layout.xaxis.type == "log"
    # MySQL ran in the base run only: the one line says so, every row is of the common set.
    assert set(report.findings()["engine"]) == {"postgres"}
    assert report.left_out() == "Compared: the engines every run measured. Left out: MySQL (only in the base run)."
    # Its geometric mean is per engine, never across engines; the legend names the colours drawn.
    assert list(report.ratio_table().data.columns)[-1].startswith("geometric mean (this engine")
    # Hostile read 46d (06 #2): with its CI over the engine's phase ratios, never a bare point.
    from benchlib.data import findings as F
    from benchlib.data import results

    mean, low, high = results.geometric_mean_ci([1.17, 1.22, 1.25, 1.01])
    assert mean == pytest.approx(results.geometric_mean([1.17, 1.22, 1.25, 1.01])) and low < 1 < high
    assert results.geometric_mean_ci([1.2, 1.2, 1.2])[1:] == pytest.approx((1.2, 1.2))
    # Hostile read 47 (06): each cell's own CI is carried in. Two cells 2x (1-4): se = ln 4 / 3.92 each,
    # the mean's half width 1.96 x sqrt(2 se^2) / 2 = ln 4 / (2 sqrt 2), although the two agree exactly.
    half = math.log(4) / (2 * math.sqrt(2))
    assert results.geometric_mean_ci([2.0, 2.0], [1.0, 1.0], [4.0, 4.0]) == pytest.approx(
        (2.0, 2 * math.exp(-half), 2 * math.exp(half)))
    # Narrow cells: the phases' spread is the wider, and stands.
    ratios = [1.17, 1.22, 1.25, 1.01]
    assert results.geometric_mean_ci(ratios, [r * 0.99 for r in ratios], [r * 1.01 for r in ratios]) == (
        pytest.approx(results.geometric_mean_ci(ratios)))
    # A cell's own CI unknown (measured once): the mean's is unknown too.
    assert math.isnan(results.geometric_mean_ci([2.0, 2.0], [1.0, float("nan")], [4.0, float("nan")])[1])
    shown = report.ratio_table().data.iloc[:, -1]
    cost = report.findings().query("metric == @report.cost_label()")
    assert list(shown) == [F.fmt_ratio(*results.geometric_mean_ci(cost["ratio"], cost["ratio_low"],
                                                                  cost["ratio_high"]))]
    table = report.findings_table().data
    assert "3.5 µs/row" in table and "2.9 µs/row" in table and "e-0" not in table  # 1,000 rows per window
    assert not hasattr(report, "versions_table")
    assert list(report.runs_table().data["servers"]) == ["MySQL mysql 1.0, PostgreSQL postgres 1.0",
                                                          "PostgreSQL postgres 1.0"]


def test_a_run_repeats_another_only_when_parameters_host_code_and_builds_match():
    import pandas as pd

    from benchlib.compare.selection import differ_by_time_only

    def info(**changes):
        base = dict(parameters={"rows": 1000, "engines": ["postgres", "sqlite"], "skipped": {}}, hostname="vm",
                    git_sha="abc", git_dirty=False)
        return {**base, **changes}

    def builds(*rows):
        return pd.DataFrame(rows, columns=["engine", "server_version", "image_id"])

    pg17, lite = ("postgres", "PostgreSQL 17.12", "sha256:1"), ("sqlite", "3.46", "embedded")
    base, base_builds = info(), builds(pg17, lite)
    assert differ_by_time_only(base, base_builds, info(), builds(pg17, lite))
    # some of the engines, each on the same build: still a repeat
    assert differ_by_time_only(base, base_builds, info(parameters={"rows": 1000, "engines": ["postgres"]}),
                               builds(pg17))
    assert not differ_by_time_only(base, base_builds, info(parameters={"rows": 2000, "engines": ["postgres"]}),
                                   builds(pg17))
    assert not differ_by_time_only(base, base_builds, info(git_sha="def"), builds(pg17, lite))
    assert not differ_by_time_only(base, base_builds, info(hostname="other"), builds(pg17, lite))
    assert not differ_by_time_only(base, base_builds, info(), builds(("postgres", "PostgreSQL 17.13", "sha256:2"), lite))
    assert not differ_by_time_only(base, base_builds, info(parameters={"rows": 1000, "engines": ["postgres", "mysql"]}),
                                   builds(pg17, ("mysql", "9.7", "sha256:3")))


def test_a_run_from_uncommitted_code_is_never_reused(default_store):
    from benchlib.compare.selection import earlier_matching_run

    with Run("dml", {"rows": 10}, store=default_store) as first, Run("dml", {"rows": 10}, store=default_store) as second:
        pass
    from benchlib.data import results
    expected = None if results.run_info(second.run_id)["git_dirty"] else first.run_id
    assert earlier_matching_run(second.run_id, "dml") == expected


def test_a_difference_flagged_between_identical_reruns_is_counted_as_a_false_positive(tmp_path):
    """Hostile read 40 (06): "PostgreSQL, update: 0.649x ... beyond noise" was the answer, coloured
    green "cheaper", beside the note that the runs are the same work on the same host, code and
    builds. Between identical reruns a flagged row is the rule's false positive: counted in the
    answer, never a change, never green."""
    from synthetic_runs import write_run

    from benchlib.data import findings as F
    from benchlib.compare import ComparisonReport
    from benchlib.compare.report import rerun_line

    store = Store(tmp_path / "results")
    write_run(store, "a", 1, {"postgres": {"insert": [1.0, 1.01, 0.99], "update": [2.0, 2.1, 1.9]}})
    write_run(store, "b", 2, {"postgres": {"insert": [0.7, 0.71, 0.69], "update": [2.0, 2.05, 1.95]}})
    report = ComparisonReport(["a", "b"], store=store)
    assert report.is_rerun()
    verdicts = report.findings().set_index("step")["verdict"].to_dict()
    assert verdicts == {"insert": "false_positive", "update": "noise"}
    assert not F.Verdict("false_positive").decided
    assert report.answer_lines()[1] == rerun_line(report.findings())  # 1 of 2: a count, not a rate
    html = report.ratio_table().to_html()
    assert "#c8e6c9" not in html and "#f4c7c3" not in html and html.count("#fff3c4") == 1
    chart = report.headline_figure()
    assert "circle-open-dot" in chart.data[0].marker.symbol and "false positive" in chart.layout.title.text
    # Runs that differ (here: a parameter) keep their verdicts: a change there is called one.
    write_run(store, "c", 3, {"postgres": {"insert": [0.7, 0.71, 0.69], "update": [2.0, 2.05, 1.95]}},
              parameters={"rows": 2000})
    other = ComparisonReport(["a", "c"], store=store)
    assert not other.is_rerun() and other.findings().set_index("step")["verdict"]["insert"] == "better"


def test_a_rerun_of_some_engines_says_how_many_it_started(tmp_path):
    """Hostile read 41 (06): "Same work, host, code and builds" beside a rerun of two of the base
    run's six engines: the host's state between starts differed, and the note must say so."""
    from synthetic_runs import write_run

    from benchlib.compare import ComparisonReport

    store = Store(tmp_path / "results")
    both = {"postgres": {"insert": [1.0, 1.01, 0.99]}, "sqlite": {"insert": [0.5, 0.51, 0.49]}}
    write_run(store, "a", 1, both, parameters={"rows": 1000, "engines": ["postgres", "sqlite"]})
    write_run(store, "b", 2, {"postgres": both["postgres"]}, parameters={"rows": 1000, "engines": ["postgres"]})
    report = ComparisonReport(["a", "b"], store=store)
    assert report.is_rerun()
    [note] = report.caveat_notes()
    assert "started 1 of the base run's 2 engines" in note.text


def test_a_rerun_that_flags_nothing_says_the_smallest_change_it_could_have_seen(tmp_path):
    """Hostile read 41 (06): "0 of 8 flagged ... false-positive rate 0%" said nothing of what the
    rerun could see. A change is flagged where its CI clears 1, so the smallest one a cell can flag
    is sqrt(high / low) of its CI: the narrowest cell's and the median cell's stand beside the count."""
    import pandas as pd

    from synthetic_runs import write_run

    from benchlib.compare import ComparisonReport
    from benchlib.compare.report import rerun_line, smallest_detectable

    rows = pd.DataFrame({"ratio_low": [0.8, 0.25, 0.5, float("nan")], "ratio_high": [1.25, 4.0, 2.0, float("nan")]})
    narrowest, median = smallest_detectable(rows)
    assert narrowest == pytest.approx(1.25) and median == pytest.approx(2.0)
    assert smallest_detectable(rows.assign(ratio_low=0.99, ratio_high=1.01))[0] == pytest.approx(1.05)  # the threshold
    assert smallest_detectable(rows.iloc[3:]) is None

    store = Store(tmp_path / "results")
    write_run(store, "a", 1, {"postgres": {"insert": [1.0, 1.2, 0.8], "update": [2.0, 2.1, 1.9]}})
    write_run(store, "b", 2, {"postgres": {"insert": [1.0, 1.25, 0.85], "update": [2.0, 2.05, 1.95]}})
    report = ComparisonReport(["a", "b"], store=store)
    assert report.is_rerun() and len(report.answer_lines()) == 2
    # Hostile read 46d (06 #3): the smallest change the rerun could flag leads, then the count; the count
    # is said once (06 #4: the certainty line under the answer repeated it).
    assert report.answer_lines()[0].startswith("Changes under ~")
    assert "%" in report.answer_lines()[0]  # tight repetitions: a change under 2x, in per cent
    assert report.answer_lines()[1] == rerun_line(report.findings()) and not report.counts_shown()


def test_the_spreadsheet_has_no_stray_index_header(tmp_path):
    """Hostile read 41 (06): a lone "row" header (the pivot's index name) above the engines."""
    from synthetic_runs import write_run

    from benchlib.compare import ComparisonReport

    store = Store(tmp_path / "results")
    write_run(store, "a", 1, {"postgres": {"insert": [1.0, 1.01, 0.99]}})
    write_run(store, "b", 2, {"postgres": {"insert": [1.0, 1.02, 0.98]}})
    table = ComparisonReport(["a", "b"], store=store).ratio_table().data
    assert table.index.name is None and table.columns.name is None


def test_a_rerun_with_few_cells_states_a_count_and_its_bound_not_a_rate():
    """Hostile read 42 (06 #1): "0 of 8 flagged: the false-positive rate (0%)": 0 of 8 bounds the rate
    only below ~37%. The shared rate line is kept for cells enough to bound it under 10%."""
    import pandas as pd
    from benchlib.data import findings as F
    from benchlib.compare.report import FEW_CELLS_LINE, rate_upper_bound, rerun_line

    assert rate_upper_bound(0, 8) == pytest.approx(1 - 0.025 ** (1 / 8), abs=1e-6)  # 36.9%
    assert rate_upper_bound(1, 2) == pytest.approx(0.975 ** 0.5, abs=1e-6)  # P(X<=1) = 1 - p^2 = 0.025
    assert rate_upper_bound(2, 2) == 1.0
    few = pd.DataFrame({"verdict": ["noise"] * 8 + ["untested"]})
    many = pd.DataFrame({"verdict": ["noise"] * 99 + ["false_positive"]})
    assert rerun_line(few) == FEW_CELLS_LINE.format(flagged=0, n=8, upper=rate_upper_bound(0, 8), on="identical reruns")
    assert rerun_line(many) == F.false_positive_line(many)


def test_a_rerun_of_fewer_engines_says_the_engine_set_differs_too(tmp_path):
    """Hostile read 42 (06 #2): "only time differs" stood beside "the rerun started 2 of 4 engines"."""
    from synthetic_runs import write_run
    from benchlib.compare import ComparisonReport
    from benchlib.compare.report import RERUN, RERUN_NOTES

    store = Store(tmp_path / "results")
    both = {"insert": [1.0, 1.01, 0.99]}
    write_run(store, "a", 1, {"postgres": both, "sqlite": both})
    write_run(store, "b", 2, {"postgres": both})
    write_run(store, "c", 3, {"postgres": both, "sqlite": both})
    notes = {k: {n.id: n.text for n in ComparisonReport(["a", k], store=store).caveat_notes()} for k in ("b", "c")}
    assert notes["b"][RERUN] == RERUN_NOTES["fewer"].format(rerun=1, base=2)
    assert notes["c"][RERUN] == RERUN_NOTES["same"]


def test_a_common_shift_the_way_the_hosts_speed_moved_reads_as_drift_not_false_positives(tmp_path):
    """Hostile read 43 (06 #1): all 8 ratios of a rerun fell below 1 (geometric means 0.68, 0.79) while the
    base run's host ran slower: a run-wide shift, not two false positives. Between runs the band is each
    engine's calibration loop in the rerun over the base run's; each run's host speed is shown beside the
    count, with the common shift where it lies within it."""
    from synthetic_runs import write_run

    from benchlib.compare import ComparisonReport
    from benchlib.compare.report import rerun_line

    store = Store(tmp_path / "results")
    base = {"postgres": {"insert": [1.0, 1.01, 0.99], "update": [2.0, 2.02, 1.98]}}
    shifted = {"postgres": {"insert": [0.8, 0.81, 0.79], "update": [1.5, 1.52, 1.48]}}
    write_run(store, "a", 1, base, calibration={"postgres": 0.130})
    write_run(store, "b", 2, shifted, calibration={"postgres": 0.095})  # the rerun's host 0.73x the base's loop
    report = ComparisonReport(["a", "b"], store=store)
    found = report.findings().set_index("step")
    assert report.is_rerun() and set(found["verdict"]) == {"drift"}
    assert found["host_factor"].tolist() == pytest.approx([0.095 / 0.130] * 2)
    assert report.answer_lines()[1:3] == [
        rerun_line(report.findings()),
        "Host speed (median calibration loop): the base run 130 ms, the rerun 95 ms (0.73x); the ratios' common "
        "shift, 0.775x (geometric mean), lies within it."]
    assert report.answer_lines()[1].startswith("0 of 2 flagged on identical reruns")
    # The same shift with the rerun's host the slower one is against the host: flagged, a false positive.
    write_run(store, "c", 3, shifted, calibration={"postgres": 0.178})
    against = ComparisonReport(["a", "c"], store=store)
    assert set(against.findings()["verdict"]) == {"false_positive"}
    assert "common shift" not in against.host_line() and "(1.37x)" in against.host_line()
    # Runs without calibration loops: no band, no host line.
    write_run(store, "d", 4, base)
    write_run(store, "e", 5, shifted)
    plain = ComparisonReport(["d", "e"], store=store)
    assert set(plain.findings()["verdict"]) == {"false_positive"} and plain.host_line() is None


def test_a_rerun_of_fewer_engines_is_not_called_identical(tmp_path):
    """Hostile read 43 (06 #2): "flagged on identical reruns" beside "only time and the engine set differ"."""
    from synthetic_runs import write_run

    from benchlib.compare import ComparisonReport

    store = Store(tmp_path / "results")
    both = {"insert": [1.0, 1.01, 0.99]}
    write_run(store, "a", 1, {"postgres": both, "sqlite": both})
    write_run(store, "b", 2, {"postgres": both})
    assert ComparisonReport(["a", "b"], store=store).answer_lines()[1].startswith(
        "0 of 1 flagged on a rerun of 1 of the base run's 2 engines")


def test_the_runs_host_speed_reads_the_compared_engines_loops_only(tmp_path):
    """A rerun of PostgreSQL alone: SQLite's slow loops in the base run are in none of its ratios."""
    from synthetic_runs import write_run

    from benchlib.compare import ComparisonReport

    store = Store(tmp_path / "results")
    both = {"insert": [1.0, 1.01, 0.99]}
    write_run(store, "a", 1, {"postgres": both, "sqlite": both}, calibration={"postgres": 0.090, "sqlite": 0.170})
    write_run(store, "b", 2, {"postgres": both}, calibration={"postgres": 0.099})
    assert ComparisonReport(["a", "b"], store=store).host_line() == (
        "Host speed (median calibration loop): the base run 90 ms, the rerun 99 ms (1.10x).")


def test_a_caveat_every_row_cites_is_said_once_in_the_caption(tmp_path):
    """Hostile read 46d (06 #4): footnote 1 (the rerun's note) sat on every row, and the seed column was
    empty. A caveat every row cites goes in the caption, marked on no row; a seed column no row fills is
    left out."""
    from synthetic_runs import write_run

    from benchlib.compare import ComparisonReport

    store = Store(tmp_path / "results")
    write_run(store, "a", 1, {"postgres": {"insert": [1.0, 1.01, 0.99], "update": [2.0, 2.1, 1.9]}})
    write_run(store, "b", 2, {"postgres": {"insert": [1.0, 1.02, 0.98], "update": [2.0, 2.05, 1.95]}})
    report = ComparisonReport(["a", "b"], store=store)
    found = report.findings()
    assert len(found) > 1 and all(cs == found["caveats"].iloc[0] and cs for cs in found["caveats"])
    html = report.table_of(found).data
    note = report.caveat_notes()[0].text
    assert note in html.partition("</caption>")[0] and "<sup>" not in html and "benchlib-notes" not in html
    assert "<th>seed</th>" not in html
