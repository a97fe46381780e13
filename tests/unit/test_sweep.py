"""The concurrency sweep's arithmetic with known answers, seed 004's published price/performance
recomputed, and its parameters rejected before anything starts."""
import dataclasses
import math

import pandas as pd
import pytest

from benchlib import results, sysbench
from benchlib.errors import ParameterError
from benchlib.workloads.sweep import analysis, prices, validate_parameters
from benchlib.workloads.sweep.workload import bisect_threads, connection_config, series_ends, table_options

GOOD = dict(engines=["postgres"], tests=["oltp_point_select"], threads=[1, 2], step_seconds=1, warmup_seconds=0,
            tables=1, table_size=100, repetitions=1, p95_goal_ms=60, until_p95_goal=True, bisect_steps=2,
            host_class="aws-us-east-1-2vcpu", max_settle_seconds=0, rand_type="uniform", engine_cpus=0, settle_after_writes=True,
            create_secondary=False, auto_inc=False,
            max_repetitions=1, ci_target=0.05, warmup=False, pin_cpus=False, idle_seconds=0)


def _summary(engine, rows):
    return pd.DataFrame([{"engine": engine, "test": "t", "threads": t, "tps": tps, "latency_p95": p95, "tps_ci95": 0.0,
                          "latency_p95_median": p95, "latency_p95_min": p95, "latency_p95_max": p95, "n": 1,
                          "engine_cpu_ms_per_txn": 1.0, "client_cpu_ms_per_txn": 0.5} for t, tps, p95 in rows])


def test_knee_is_the_last_step_gaining_at_least_ten_percent_per_doubling():
    # Gains per doubling: 90%, 58%, then 6.7% (under 10%): the knee is 4 threads, whatever p95 did.
    s = _summary("postgres", [(1, 100, 1.0), (2, 190, 1.2), (4, 300, 1.9), (8, 320, 2.5), (16, 330, 9.0)])
    k = analysis.knee(s).iloc[0]
    assert (k["knee_threads"], k["knee_tps"]) == (4, 300)
    assert k["gain_after_knee"] == pytest.approx(320 / 300 - 1)
    assert (k["peak_threads"], k["peak_tps"]) == (16, 330)
    # Its p95 is the repetitions' median, as the goal and the price table read it (the mean of three
    # p95s, one of them a stall, is not a p95 any repetition saw).
    s["latency_p95_median"] = s["latency_p95"] / 2
    assert analysis.knee(s).iloc[0]["knee_p95_ms"] == 1.9 / 2


def test_a_bisected_step_is_judged_per_doubling_not_per_step():
    # 16 -> 24 threads gains 8% (under 10% as a raw step) but 14% per doubling: the knee goes on to 24.
    s = _summary("mysql", [(8, 500, 1.0), (16, 1000, 2.0), (24, 1080, 3.0), (32, 1090, 4.0)])
    assert analysis.gain_per_doubling(1000, 1080, 16, 24) == pytest.approx(1.08 ** (1 / math.log2(1.5)) - 1)
    assert analysis.knee(s).iloc[0]["knee_threads"] == 24
    assert analysis.knee(s, min_gain=0.15).iloc[0]["knee_threads"] == 16
    assert math.isnan(analysis.gain_per_doubling(0, 100, 1, 2))


def test_a_knee_is_claimed_only_where_the_gains_cis_clear_the_rule():
    # Run 20261124T085813Z-eb681a's MariaDB read/write: 1,416 +- 1,277 TPS at 2 threads, 1,618 +- 479 at 4,
    # 1,650 +- 300 at 8. The mean gain 2 -> 4 is 14%, but its CI reaches far below 10%: no knee is claimed.
    s = _summary("mariadb", [(2, 1_416, 1.0), (4, 1_618, 2.0), (8, 1_650, 4.0)]).assign(tps_ci95=[1_277, 479, 300])
    k = analysis.knee(s).iloc[0]
    # The 4 -> 8 gain (2%, CI +-35%) is not clearly flat either: the knee is at 2 threads or beyond.
    assert pd.isna(k["knee_threads"]) and k["knee_low"] == 2 and pd.isna(k["knee_high"])
    assert k["gain_after_low"] < 0.10 < k["gain_after_high"]
    from benchlib.workloads.sweep.report import knee_text
    assert knee_text(k) == "not determined (at 2 threads or beyond, up to the last step run)"
    # Run 20261124T124310Z-df05c2 printed "between 2 and 32.0 threads" and "at 1 threads": a float
    # column (NaN elsewhere) and no singular.
    assert knee_text(pd.Series({"knee_threads": float("nan"), "knee_low": 2.0, "knee_high": 32.0})) == \
        "not determined (between 2 and 32 threads)"
    assert knee_text(pd.Series({"knee_threads": float("nan"), "knee_low": 1.0, "knee_high": float("nan")})) == \
        "not determined (at 1 thread or beyond, up to the last step run)"
    # Narrow CIs: 90% then 58% clearly above, then 6.7% +- ~1.5% clearly below: the knee is 4 threads.
    tight = _summary("mysql", [(1, 100, 1.0), (2, 190, 1.2), (4, 300, 1.9), (8, 320, 2.5)]).assign(tps_ci95=2.0)
    k = analysis.knee(tight).iloc[0]
    assert (k["knee_threads"], k["gain_after_low"] > 0.0, k["gain_after_high"] < 0.10) == (4, True, True)
    # Clearly gaining up to the last step run: not determined, at that step or beyond.
    rising = analysis.knee(_summary("pg", [(1, 100, 1.0), (2, 200, 1.0)])).iloc[0]
    assert pd.isna(rising["knee_threads"]) and rising["knee_low"] == 2 and pd.isna(rising["knee_high"])


def test_bisection_picks_the_geometric_middle_until_no_thread_count_is_left():
    assert [bisect_threads(32, 64), bisect_threads(16, 32), bisect_threads(45, 64), bisect_threads(64, 128)] == \
        [45, 23, 54, 91]
    assert bisect_threads(2, 3) is None and bisect_threads(4, 5) is None


def test_price_performance_uses_the_best_step_under_the_goal():
    s = _summary("postgres", [(1, 100, 10.0), (2, 180, 50.0), (4, 200, 70.0)])
    p = analysis.price_performance(s, 60.0, {"postgres": 0.72}).iloc[0]
    assert p["max_tps_under_goal"] == 180 and p["threads"] == 2
    assert p["ops_per_day"] == 180 * 86_400
    # Seed 004's month: the hourly price x 730 h over the operations of 30 days.
    assert p["usd_per_million_txn"] == pytest.approx(0.72 * 730 / (180 * 86_400 * 30) * 1e6)
    assert p["cpu_s_per_million_txn"] == pytest.approx(1.5e3)


def test_no_step_under_the_goal_reads_nan_not_zero():
    p = analysis.price_performance(_summary("postgres", [(1, 100, 80.0)]), 60.0, {}).iloc[0]
    assert pd.isna(p["max_tps_under_goal"])


def test_seed_004_cost_per_operation_is_reproduced_from_its_inputs():
    ref = results.reference("seed004_prices")
    for row in ref.itertuples():
        ours = analysis.cost_per_operation(row.monthly_usd, row.published_max_tps_under_60ms)
        assert ours == pytest.approx(row.published_cost_per_operation_usd, rel=1e-9)
        # The monthly totals are the hourly prices x 730 h, so the hourly price alone gives the same cost.
        assert row.monthly_usd == pytest.approx(row.hourly_usd * analysis.HOURS_PER_MONTH, abs=0.005)
        monthly = row.hourly_usd * analysis.HOURS_PER_MONTH
        hourly = analysis.cost_per_operation(monthly, row.published_max_tps_under_60ms)
        assert hourly == pytest.approx(row.published_cost_per_operation_usd, rel=1e-6)
    # ... and its 355.66% difference between the two.
    costs = ref.set_index("system")["published_cost_per_operation_usd"]
    assert costs["cockroachdb"] / costs["xpand"] - 1 == pytest.approx(2.5566, abs=1e-4)


def test_seed_004_reference_curves_are_complete():
    ref = results.reference("seed004_sysbench")
    assert set(ref["workload"]) == {"oltp_point_select", "oltp_read_write_90_10"}
    assert ref.groupby(["system", "workload"]).size().to_dict() == {
        ("cockroachdb", "oltp_point_select"): 5, ("cockroachdb", "oltp_read_write_90_10"): 5,
        ("xpand", "oltp_point_select"): 6, ("xpand", "oltp_read_write_90_10"): 6}


@pytest.mark.parametrize("name, value, fragment", [
    ("threads", [0, 2], "threads must be an integer >= 1, got 0"),
    ("threads", [1.5], "got 1.5"),
    ("threads", [], "threads must be a non-empty list"),
    ("tests", ["oltp_nope"], "tests must be a non-empty list of oltp_point_select"),
    ("tests", [], "tests must be a non-empty list"),
    ("p95_goal_ms", 0, "p95_goal_ms must be a number > 0, got 0"),
    ("host_class", "aws-nowhere", "host_class must be one of seed004-aws-us-west-2-3x16vcpu, aws-us-east-1-2vcpu, "
                                  "aws-us-east-1-2vcpu-rds, none, got 'aws-nowhere'"),
    ("bisect_steps", -1, "bisect_steps must be an integer >= 0 and <= 8, got -1"),
    ("host_class", "seed004-aws-us-west-2-3x16vcpu", "host_class 'seed004-aws-us-west-2-3x16vcpu' has no price for "
                                                     "postgres in data/reference/engine_prices.csv"),
    ("until_p95_goal", "yes", "until_p95_goal must be"),
    ("engines", ["sqlite"], "does not support engine 'sqlite'"),
])
def test_bad_value_is_named(name, value, fragment):
    with pytest.raises(ParameterError) as err:
        validate_parameters({**GOOD, name: value})
    assert fragment in str(err.value)


def _window_rows(window, engine_cpu, client_cpu, wall):
    base = {"engine": "postgres", "labels": '{"test": "t", "threads": 4}', "repetition": 1, "window": window,
            "unit": "s"}
    rows = [{**base, "scope": "server", "source": "cgroup", "metric": "cpu_time", "value": engine_cpu},
            {**base, "scope": "server", "source": "cgroup", "metric": "wall_time", "value": wall}]
    if client_cpu is not None:
        rows.append({**base, "scope": "client", "source": "rusage", "metric": "cpu_time", "value": client_cpu})
    if window == "phase":
        rows += [{**base, "scope": "client", "source": "sysbench", "metric": k, "value": v}
                 for k, v in (("transactions", 1000.0), ("tps", 1000.0), ("qps", 1000.0), ("latency_avg", 4.0),
                              ("latency_p95", 5.0), ("latency_p99", 6.0), ("errors", 0.0), ("reconnects", 0.0))]
    return rows


def test_host_cpu_use_is_the_phase_window_cpu_over_its_own_wall_time():
    # 1.8 s of engine and 0.1 s of client CPU in a 1 s phase on 2 cores, then 0.5 s of engine CPU
    # in the settle window: 95% busy, not (1.8 + 0.5 + 0.1) / 2 = 120%.
    m = pd.DataFrame(_window_rows("phase", 1.8, 0.1, 1.0) + _window_rows("settle", 0.5, None, 0.6))
    step = analysis.steps(m)
    assert step["engine_cpu_ms_per_txn"].iloc[0] == pytest.approx(2.3)  # the cost keeps the settle window
    util = analysis.summarize(step, cores=2)["host_cpu_util"].iloc[0]
    assert util == pytest.approx(0.95)


def test_missing_client_cpu_is_not_read_as_zero():
    s = _summary("postgres", [(1, 100, 10.0)]).assign(client_cpu_ms_per_txn=float("nan"))
    p = analysis.price_performance(s, 60.0, {}).iloc[0]
    assert pd.isna(p["cpu_s_per_million_txn"])
    m = pd.DataFrame(_window_rows("phase", 1.8, None, 1.0))
    assert pd.isna(analysis.summarize(analysis.steps(m), cores=2)["host_cpu_util"].iloc[0])


def test_the_report_says_whether_the_p95_goal_bound():
    from benchlib.workloads.sweep.report import SweepReport

    report = object.__new__(SweepReport)  # the narrative rule alone, on a known summary
    report.goal_ms = 60.0
    report.info = {"parameters": {"threads": [1, 8]}}
    report.summary = pd.concat([_summary("postgres", [(1, 100, 10.0), (8, 300, 40.0)]),
                                _summary("mysql", [(1, 90, 20.0), (8, 200, 75.0)])])
    lines = report._goal_lines()
    # 1 to 8 threads is a bracket of 8x with nothing run between: the crossing is named, not a binding point.
    assert any(line.startswith("**MySQL, t:** the p95 goal of 60 ms was crossed between 1 thread (median p95 under it) "
                               "and 8 (over it), where it binds was not located (no step between them was run) "
                               "(median p95 at 8 threads of 1 repetition(s) 75 ms, from 75 to 75 ms): the highest "
                               "throughput within it, 90 TPS at 1 thread,") for line in lines)
    assert lines[-1].startswith("The p95 goal of 60 ms never bound for PostgreSQL t (median p95 at most 40 ms, 8 threads)")


def _summarized(rows):
    """Per-repetition rows (engine, test, threads, repetition, tps, p95) summarized as the report reads them."""
    steps = pd.DataFrame(rows, columns=["engine", "test", "threads", "repetition", "tps", "latency_p95"])
    for col in ["qps", "latency_avg", "latency_p99", "errors", "reconnects", "engine_cpu_ms_per_txn",
                "client_cpu_ms_per_txn", "cpu_ms_per_txn", "engine_cpu_s", "client_cpu_s", "wall_s", "engine_phase_cpu_s",
                "client_phase_cpu_s"]:
        steps[col] = 1.0
    return analysis.summarize(steps, cores=2)


def test_one_slow_repetition_does_not_decide_the_goal():
    # Run 20261124T085813Z-eb681a's MySQL: p95 at 45 threads 46.6, 84.5 and 49.2 ms (mean 60.1, over
    # the 60 ms goal; median 49.2, under it); all three over at 64 threads.
    rows = [("mysql", "t", 32, r, 900.0 + r, p95) for r, p95 in enumerate([30.0, 35.0, 33.0])]
    rows += [("mysql", "t", 45, r, 950.0 + r, p95) for r, p95 in enumerate([46.6, 84.5, 49.2])]
    rows += [("mysql", "t", 64, r, 940.0 + r, p95) for r, p95 in enumerate([70.0, 90.0, 80.0])]
    summary = _summarized(rows)
    p = analysis.price_performance(summary, 60.0, {}).iloc[0]
    assert p["threads"] == 45 and p["p95_ms"] == pytest.approx(49.2)
    assert p["repetitions split at threads"] == "45" and p["tps_ci95"] > 0
    line = _report(summary, threads=(32, 64))._goal_lines()[0]
    assert "bound at 64 threads (median p95 at 64 threads of 3 repetition(s) 80 ms, from 70 to 90 ms)" in line
    assert "Repetitions disagree at 45 threads (p95 46.6 to 84.5 ms)" in line and "between 32 and 64 threads" in line


def test_a_step_some_repetitions_ran_over_the_goal_is_not_called_never_bound():
    # Run 20261124T220931Z-461d23's MariaDB read/write: median p95 49.2 ms at 128 threads, one repetition over
    # 60 ms (it bisected 64 threads), yet the report said the goal "never bound".
    rows = [("mariadb", "t", 32, r, 4_073.0, p95) for r, p95 in enumerate([11.0, 11.5, 12.0])]
    rows += [("mariadb", "t", 128, r, 4_074.0 + r, p95) for r, p95 in enumerate([45.0, 49.2, 72.3])]
    report = _report(_summarized(rows), threads=(32, 128))
    lines = report._goal_lines()
    assert lines[0].startswith("**MariaDB, t:** the median p95 stayed under the goal of 60 ms up to 128 threads, but "
                               "not every repetition did. Repetitions disagree at 128 threads (p95 45 to 72.3 ms)")
    assert "never bound" not in " ".join(lines)
    assert "by every repetition the goal is crossed between 32 threads and beyond the last step run." in lines[0]
    assert report.tps_basis(False, "mariadb", "t") == ("peak TPS: the median p95 stayed under the goal up to 128 "
                                                       "threads, but a repetition crossed it at 128 threads")


def test_a_step_more_than_doubling_per_doubling_is_flagged():
    # Run 20261124T220931Z-461d23: PostgreSQL point selects 6.45x from 1 to 2 threads, engine CPU per
    # transaction 0.0336 ms at 1 thread against 0.0118 at 2.
    s = _summary("postgres", [(1, 14_000, 0.1), (2, 90_300, 0.1), (4, 90_000, 0.2)])
    s["engine_cpu_ms_per_txn"] = [0.0336, 0.0118, 0.0120]
    line = _report(s).superlinear_line()
    assert line.startswith("**Faster than linear:** PostgreSQL t 1 to 2 threads 6.45x; engine CPU per transaction "
                           "0.0336 ms against 0.0118 ms. Adding threads cannot more than double")
    assert _report(_summary("postgres", [(1, 100, 0.1), (2, 190, 0.1)])).superlinear_line() == ""


def test_prices_carry_cis_and_one_price_for_all_is_called_1_over_tps():
    s = pd.concat([_summary("postgres", [(2, 1_000, 10.0)]).assign(tps_ci95=200.0, cpu_ms_per_txn=1.5,
                                                                     cpu_ms_per_txn_ci95=0.25),
                   _summary("mariadb-myrocks", [(2, 500, 10.0)]).assign(tps_ci95=600.0)], ignore_index=True)
    report = _report(s)
    p = report.price_perf.set_index("engine")
    usd = 0.096 * 730 / (1_000 * 86_400 * 30) * 1e6
    assert p.loc["postgres", "usd_per_million_txn_ci_low"] == pytest.approx(usd / 1.2)
    assert p.loc["postgres", "usd_per_million_txn_ci_high"] == pytest.approx(usd / 0.8)
    assert p.loc["postgres", "cpu_s_per_million_txn_ci95"] == pytest.approx(250)
    assert pd.isna(p.loc["mariadb-myrocks", "usd_per_million_txn_ci_high"])  # a TPS CI reaching zero
    table = report.price_table().data.set_index("engine")
    assert table.loc["PostgreSQL", "TPS (± 95% CI)"] == "1,000 ± 200"
    assert table.loc["MyRocks" if "MyRocks" in table.index else table.index[1], "USD per M txn (95% CI)"].endswith(
        "to unbounded)")
    # The managed class beside it prices engines differently; MyRocks has no RDS price.
    rds = "USD per M txn priced as aws-us-east-1-2vcpu-rds"
    assert table.loc["PostgreSQL", rds] != "n/a" and table[rds].iloc[1] == "n/a"
    assert "the USD column adds nothing beyond TPS" in report.price_sentence()
    assert "PostgreSQL $0.178/h" in report.price_sentence()
    # Run 20261124T124310Z-df05c2's host table read "priced as if Amazon EC2 m5.large (2 vCPU (price ...": unbalanced.
    assert report.priced_as() == "Amazon EC2 m5.large, price host_class aws-us-east-1-2vcpu"
    from benchlib.report import host_label
    label = host_label({"host_fingerprint": "ab12", "host_class": None}, report.priced_as())
    assert label.startswith("priced as if Amazon EC2 m5.large") and "undeclared" not in label
    assert label.count("(") == label.count(")")


def test_write_rows_say_each_servers_durability_as_read_at_start():
    # Run 20261124T085813Z-eb681a: MySQL wrote a binary log synced at every commit, MariaDB did not.
    s = pd.concat([_summary("mysql", [(2, 769, 5.0)]), _summary("mariadb", [(2, 1_416, 3.0)])],
                  ignore_index=True).assign(test="oltp_read_write_90_10")
    report = _report(s)
    report.durability = lambda: {"mysql": "innodb_flush_log_at_trx_commit=1, log_bin=1, sync_binlog=1",
                                 "mariadb": "innodb_flush_log_at_trx_commit=1, log_bin=0, sync_binlog=0"}
    note = report.write_durability_note()
    assert note.startswith("Durability on oltp_read_write_90_10 (each server's default, as read at its start)")
    assert "MySQL (innodb_flush_log_at_trx_commit=1, log_bin=1, sync_binlog=1): a commit waits for its log flush " \
           "(by its settings) and also writes a binary log, synced at every commit" in note
    assert "MariaDB (innodb_flush_log_at_trx_commit=1, log_bin=0, sync_binlog=0): a commit waits for its log flush " \
           "(by its settings)." in note and "compare different work" in note
    assert _report(s.assign(test="oltp_point_select")).write_durability_note() == ""


def test_a_settle_bound_below_the_quiet_interval_is_refused_for_every_workload():
    # Run 20261124T085813Z-eb681a ran 0.3 s settle windows: shorter than the 1 s over which quiet is
    # judged, every one ended at its bound. One check in RunParameters covers every workload.
    message = ("max_settle_seconds must be 0 (no settle windows) or at least 1 s (the settle policy's quiet "
               "interval: a shorter window can never see quiet and always ends at its bound), got 0.3")
    with pytest.raises(ParameterError) as err:
        validate_parameters({**GOOD, "max_settle_seconds": 0.3})
    assert str(err.value) == message
    assert validate_parameters({**GOOD, "max_settle_seconds": 1}).max_settle_seconds == 1
    from benchlib.workloads.sweep.workload import TESTS, WRITE_TESTS
    assert WRITE_TESTS <= set(TESTS) and "oltp_point_select" not in WRITE_TESTS


def test_connection_set_up_in_the_window_is_stated_with_each_engines_figures():
    # Run 20261124T085813Z-eb681a's PostgreSQL: 0.05 ms of engine CPU per transaction at 32 threads, 0.12 at 128.
    s = _summary("postgres", [(2, 9_000, 1.0), (32, 10_000, 3.0), (128, 9_500, 14.0)]).assign(
        engine_cpu_ms_per_txn=[0.07, 0.05, 0.12])
    report = _report(s)
    report.info["parameters"]["step_seconds"] = 2
    note = report.connection_note()
    assert "every step starts a new sysbench process" in note and "none of it is subtracted" in note
    assert "PostgreSQL t 0.12 ms at 128 threads against 0.05 ms at 32 (2.4x)" in note


def test_connections_opened_before_the_window_are_stated_with_how_long_they_took():
    s = _summary("postgres", [(2, 9_000, 1.0), (128, 9_500, 14.0)]).assign(connect_s=[0.01, 0.42])
    note = _report(s).connection_note()
    # Threads up to 256: the connection limit raised first, then how the connections were counted.
    assert note.startswith("Every server's max_connections was raised to 272") and \
        "the one server setting the sweep changes. Connection set-up is outside each measured window" in note
    assert "max_connections" not in _report(s, threads=(1, 8, 64)).connection_note()  # within every default
    assert "PostgreSQL 0.42 s for 128 threads" in note and "inside each measured window of this run" not in note
    assert "Closing the connections at the step's end is inside." in note


def test_connections_closed_after_the_window_are_stated_as_outside():
    s = _summary("postgres", [(2, 9_000, 1.0), (128, 9_500, 14.0)]).assign(connect_s=[0.01, 0.42],
                                                                           events_s=[1.0, 1.1])
    note = _report(s).connection_note()
    assert "before the threads disconnect: closing the connections is outside too." in note
    assert "is inside" not in note


def test_the_client_path_is_the_recorded_one_not_loopback():
    report = _report(_summary("postgres", [(2, 100, 1.0)]))
    report.instances = pd.DataFrame({"engine": ["postgres"], "kind": ["server"], "config": [
        '{"client_path": "the container\'s address 172.17.0.3:5432 on Docker network bridge (no docker-proxy)"}']})
    assert report.client_path_text() == ("PostgreSQL at the container's address 172.17.0.3:5432 on Docker network "
                                         "bridge (no docker-proxy)")


def test_threads_are_drawn_on_a_log_axis_and_an_undetermined_knee_gets_no_star():
    s = _summary("postgres", [(2, 100, 1.0), (8, 300, 2.0), (32, 320, 5.0), (45, 321, 9.0)])
    knees = pd.DataFrame({"engine": ["postgres"], "knee_threads": [float("nan")], "knee_p95_ms": [float("nan")]})
    from benchlib.plots import throughput_latency
    fig = throughput_latency(s, title="t", name="t", knees=knees)
    assert fig.layout.xaxis.type == "log" and list(fig.layout.xaxis.tickvals) == [2, 8, 32, 45]
    assert [tr.name for tr in fig.data] == ["PostgreSQL TPS", "PostgreSQL p95"]


def test_seed_004_curves_are_drawn_against_threads_per_server_vcpu():
    report = _report(_summary("postgres", [(2, 100, 1.0), (8, 200, 2.0)]).assign(test="oltp_point_select"))
    report.info["cpu_cores"] = 2
    (fig,) = report.reference_figures()
    ours = next(tr for tr in fig.data if tr.name.endswith("(this run)"))
    theirs = [tr for tr in fig.data if tr.name.endswith("(seed 004)")][0]
    assert list(ours.x) == [1.0, 4.0]  # 2 and 8 threads on 2 cores
    assert min(theirs.x) == pytest.approx(32 / 48)  # the published data start at 32 threads
    assert fig.layout.xaxis.title.text.startswith("threads per server vCPU")


def test_precision_is_counted_in_the_report_and_a_fixed_repetition_count_is_said():
    s = _summary("postgres", [(1, 100, 1.0), (2, 150, 1.0), (4, 160, 1.0)]).assign(
        cpu_ms_per_txn=1.0, cpu_ms_per_txn_ci95=[0.04, 0.08, 0.3])
    report = _report(s)
    report.info["parameters"].update(ci_target=0.05, repetitions=3, max_repetitions=3)
    text = report.precision_sentence()
    assert text.startswith("Precision: of 3 steps with a CI, 1 have a 95% CI of CPU per transaction (engine + "
                           "client) within ±5% of the mean and 2 within ±10%.")
    assert "max_repetitions = repetitions = 3: the adaptive rule" in text and "could add none" in text


def test_errors_sysbench_went_on_past_are_failures_named_with_their_codes():
    report = _report(_summary("mysql", [(2, 100, 1.0)]))
    report.info["parameters"]["step_seconds"] = 2
    report.steps = pd.DataFrame({"engine": ["mysql", "mysql", "mariadb"], "test": ["rw", "rw", "rw"],
                                 "errors": [3.0, 0.0, 0.0]})
    line = report.client_errors_line()
    assert line.startswith("**Errors sysbench went on past:** MySQL rw: 3 in 1 step window(s) (of 3 step windows)")
    assert "1213 (deadlock), 1020 (record changed) and 1205 (lock wait timeout)" in line
    assert "mean count per step window of 2 s, not a rate" in line
    report.info.update(status="ok", error=None, failures=None)
    report.check_mismatches = lambda: pd.DataFrame(columns=["labels"])
    assert "Errors sysbench went on past" in report.problems()
    report.steps = report.steps.assign(errors=0.0)
    assert report.client_errors_line() == ""


def test_the_cpu_share_is_named_as_engine_plus_sysbench_not_the_host():
    s = _summary("postgres", [(1, 100, 1.0)]).assign(
        qps=1.0, latency_avg=1.0, latency_p99=1.0, errors=0.0, n=1, host_cpu_util=0.5)
    columns = _report(s).step_table().data.columns
    assert "engine + sysbench CPU (share of host cores)" in columns and "host CPU" not in columns


def test_missing_price_row_fails_before_docker_is_asked():
    # tidb runs sysbench (MySQL wire) but has no declared price on this host class: one line naming it.
    with pytest.raises(ParameterError, match="^host_class 'aws-us-east-1-2vcpu' has no price for tidb in "):
        validate_parameters({**GOOD, "engines": ["postgres", "tidb"]})


def test_prices_are_per_engine_with_what_they_include_and_where_from():
    rows = prices.for_host("aws-us-east-1-2vcpu", ["postgres", "mysql@9", "mariadb", "mariadb-myrocks"])
    assert {k: p.usd_per_hour for k, p in rows.items()} == {"postgres": 0.096, "mysql@9": 0.096, "mariadb": 0.096,
                                                            "mariadb-myrocks": 0.096}
    managed = prices.for_host("aws-us-east-1-2vcpu-rds", ["postgres", "mysql", "mariadb"])
    assert {k: p.usd_per_hour for k, p in managed.items()} == {"postgres": 0.178, "mysql": 0.171, "mariadb": 0.171}
    assert {p.basis for p in [*rows.values(), *managed.values()]} == {"declared"}
    assert all(p.includes and p.source and p.as_of and p.instance for p in rows.values())
    assert rows["postgres"].basis_text == "declared, list price as of 2024-06, not verified here"
    # Seed 004's own rows are its published hourly prices, unchanged.
    seed = results.reference("seed004_prices").set_index("system")["hourly_usd"].to_dict()
    published = prices.for_host("seed004-aws-us-west-2-3x16vcpu", ["cockroachdb", "xpand"])
    assert {k: p.usd_per_hour for k, p in published.items()} == seed
    assert {p.basis for p in published.values()} == {"published"}
    assert prices.for_host("none", ["postgres"]) == {}
    # No managed service offers MyRocks: the managed class does not price it as something else.
    with pytest.raises(ParameterError, match="has no price for mariadb-myrocks"):
        prices.for_host("aws-us-east-1-2vcpu-rds", ["postgres", "mariadb-myrocks"])


def test_every_host_class_prices_one_kind_of_offering(monkeypatch):
    # A ranking compares engines bought the same way: never a managed hour against a bare instance's.
    for host_class in prices.host_classes():
        assert len({p.offering for p in prices.table() if p.host_class == host_class}) == 1, host_class
    rds = prices.for_host("aws-us-east-1-2vcpu-rds", ["postgres"])["postgres"]
    mixed = (rds, dataclasses.replace(rds, engine="mariadb-myrocks", offering="self-managed instance"))
    monkeypatch.setattr(prices, "table", lambda: mixed)
    with pytest.raises(ParameterError, match="^host_class 'aws-us-east-1-2vcpu-rds' in data/reference/engine_prices"
                                             ".csv mixes offerings \\(managed service, self-managed instance\\)"):
        prices.for_host("aws-us-east-1-2vcpu-rds", ["postgres"])


def test_usd_per_transaction_follows_each_engines_price():
    # The same throughput on two engines costs what their hourly prices say, not one constant.
    s = pd.concat([_summary("postgres", [(8, 9_000, 1.1)]), _summary("mysql", [(8, 9_000, 1.1)])])
    rates = {k: p.usd_per_hour for k, p in prices.for_host("aws-us-east-1-2vcpu-rds", ["postgres", "mysql"]).items()}
    p = analysis.price_performance(s, 60.0, rates).set_index("engine")["usd_per_million_txn"]
    assert p["postgres"] == pytest.approx(0.178 * 730 / (9_000 * 86_400 * 30) * 1e6)
    assert p["postgres"] / p["mysql"] == pytest.approx(0.178 / 0.171)


def test_a_series_ends_past_the_goal_but_not_before_an_earlier_repetitions_furthest_step():
    assert not series_ends(45.8, 60.0, 64, 0)
    assert series_ends(118.9, 60.0, 256, 0)
    assert not series_ends(61.2, 60.0, 64, 256)  # repetition 1 went to 256: repetition 2 goes as far
    assert series_ends(131.0, 60.0, 256, 256)
    assert not series_ends(None, 60.0, 256, 0)  # no histogram, no verdict


def test_connection_limit_is_raised_only_past_the_servers_defaults():
    assert connection_config([1, 2, 4, 8, 16, 32, 64]) == {}
    assert connection_config([1, 2, 4, 8, 16, 64, 256]) == {"max_connections": 272}


def test_seed_004_table_options_reach_prepare_and_every_run():
    params = validate_parameters(GOOD)
    assert table_options(params) == {"create_secondary": "false", "auto_inc": "false"}
    options = sysbench.run_options(threads=1, seconds=1, tables=1, table_size=10, rand_type="uniform",
                                   options=table_options(params))
    assert options["create_secondary"] == "false" and options["auto_inc"] == "false"


def _report(summary, goal=60.0, threads=(1, 8, 64, 256), host_class="aws-us-east-1-2vcpu"):
    from benchlib.workloads.sweep.report import SweepReport

    report = object.__new__(SweepReport)  # the narrative rules alone, on a known summary
    report.goal_ms, report.summary, report.host_class = goal, summary, host_class
    report.info = {"parameters": {"threads": list(threads), "until_p95_goal": True, "create_secondary": False,
                                  "auto_inc": False, "p95_goal_ms": goal, "host_class": host_class}}
    report.price_rows = prices.for_host(host_class, list(dict.fromkeys(summary["engine"])))
    report.prices = {k: p.usd_per_hour for k, p in report.price_rows.items()}
    report.price_perf = analysis.price_performance(summary, goal, report.prices)
    return report


def test_the_price_table_names_a_peak_as_a_peak_where_the_goal_never_bound():
    # Shaped like a 2-core loopback run: point selects stay fast up to the bound, the 90:10 mix
    # crosses the goal at 256 threads.
    point = _summary("postgres", [(1, 11_000, 0.13), (8, 21_000, 0.9), (64, 20_500, 5.8), (256, 19_800, 24.0)])
    mix = _summary("postgres", [(1, 700, 1.9), (8, 2_300, 6.5), (64, 2_400, 41.0), (256, 2_350, 170.0)]).assign(test="mix")
    report = _report(pd.concat([point, mix], ignore_index=True))
    p = report.price_perf.set_index("test")
    assert (p.loc["t", "goal_bound"], p.loc["mix", "goal_bound"]) == (False, True)
    assert p.loc["mix", "max_tps_under_goal"] == 2_400 and p.loc["t", "max_tps_under_goal"] == 21_000
    assert report.tps_basis(False, "postgres", "t") == "peak TPS: the goal never bound up to 256 threads"
    # 2,400 TPS at 64 threads is under the goal and the peak of every step: the goal cut nothing.
    assert report.tps_basis(True, "postgres", "mix") == ("max TPS within the p95 goal of 60 ms, also the peak of every "
                                                         "step run (the goal bound only past it)")
    cut = _report(pd.concat([point, mix.assign(tps=[700, 2_300, 2_400, 2_600])], ignore_index=True))
    assert cut.tps_basis(True, "postgres", "mix") == "max TPS within the p95 goal of 60 ms"
    lines = report._goal_lines()
    assert lines[0].startswith("**PostgreSQL, mix:** the p95 goal of 60 ms was crossed between 64 threads (median p95 "
                               "under it) and 256 (over it), where it binds was not located (no step between them "
                               "was run) (median p95 at 256 threads of 1 repetition(s) 170 ms, "
                           "from 170 to 170 ms): "
                               "the highest throughput within it, 2,400 TPS at 64 threads")
    # 2,400 TPS at 64 threads is the highest mean, and the last step under the goal: whether throughput
    # would have risen further before the crossing is unknown (run 20261124T124310Z-df05c2 said "peaked well before").
    assert "the last step under the goal and the highest mean of every step run" in lines[0]
    assert "well before" not in lines[0] and "CIs may overlap" in lines[0]
    early_mix = mix.assign(tps=[700, 2_450, 2_400, 2_350])

    def with_repetitions(tps_at_64):  # three repetitions at 8 and 64 threads, each one's own TPS
        report = _report(pd.concat([point, early_mix], ignore_index=True))
        report.steps = pd.DataFrame([("postgres", "mix", t, r, tps) for t, values in ((8, (2_450, 2_460, 2_440)),
                                                                                      (64, tps_at_64))
                                     for r, tps in enumerate(values, 1)],
                                    columns=["engine", "test", "threads", "repetition", "tps"])
        return report._goal_lines()[0]

    # Every repetition fell from 8 to 64 threads: the fall is claimed, with its paired CI.
    fell = with_repetitions((2_400, 2_390, 2_410))
    assert "throughput fell past it (" in fell and "paired by repetition) before p95 reached the goal" in fell
    # Repetitions that disagree (run 20261124T160439Z-c1dfdc's MariaDB 8 -> 32: 1,463 -> 1,450, 995 -> 1,111):
    # no fall is claimed.
    mixed = with_repetitions((2_300, 2_600, 2_380))
    assert "whether throughput fell past it is not shown (" in mixed and "fell past it (" not in mixed
    assert "never bound for PostgreSQL t" in lines[-1] and "the sweep's bound at 256 threads" in lines[-1]
    assert "peak TPS of the steps run" in lines[-1]


def test_a_goal_that_cuts_the_curve_before_its_peak_is_not_called_idle():
    mix = _summary("postgres", [(1, 700, 1.9), (8, 2_300, 30.0), (64, 2_500, 70.0)])
    line = _report(mix)._goal_lines()[0]
    assert "2,300 TPS at 8 threads" in line and "did not change" not in line


def test_the_report_says_the_price_is_declared_and_what_it_includes():
    report = _report(_summary("mariadb-myrocks", [(1, 100, 10.0)]))
    sentence = report.price_sentence()
    assert "as the same kind of offering (self-managed instance)" in sentence
    assert "declared, list price as of 2024-06, not verified here" in sentence and "EC2 instance hours only" in sentence
    assert "x 730 h a month" in sentence
    assert "(720 h: seed 004's own mismatch, kept so its published costs recompute; it puts USD 1.4% high" in sentence
    assert "`--create_secondary=false --auto_inc=false` (seed 004's options for oltp_point_select)" in \
        report.table_options_sentence()


def test_two_repetitions_claim_nothing_within_their_wide_cis():
    report = _report(_summary("postgres", [(1, 100, 10.0)]).assign(n=2))
    sentence = report.noise_sentence()
    assert "n = 2" in sentence and "t = 12.7" in sentence and "Nothing in this report is coloured" in sentence
    assert "t = 4.3" in _report(_summary("postgres", [(1, 100, 10.0)]).assign(n=3)).noise_sentence()
    # One bisected step with n = 1 among steps with n = 3 is named; it does not make every step "ran once".
    mixed = _report(_summary("mariadb", [(32, 100, 10.0), (64, 90, 30.0), (128, 95, 49.0)]).assign(n=[3, 1, 3]))
    assert mixed.noise_sentence().startswith("Steps have n = 3 repetitions except MariaDB t at 64 threads (n = 1: no "
                                             "CI): their 95% CIs use Student's t = 4.3")
    assert "knee" in report.knee_rule_sentence() and "at least 10%" in report.knee_rule_sentence()


def test_seed_004_settings_not_reproduced_are_stated_beside_this_runs():
    summary = _summary("postgres", [(2, 100, 10.0), (45, 300, 50.0), (64, 310, 70.0)])
    report = _report(summary, threads=(2, 32, 64))
    report.info.update(cpu_cores=2)
    report.info["parameters"].update(tables=1, table_size=100_000, step_seconds=2, warmup_seconds=2,
                                     max_settle_seconds=2, rand_type="uniform", repetitions=2,
                                     tests=["oltp_point_select"])
    report.instances = pd.DataFrame({"engine": [], "kind": [], "config": []})
    # Six settle windows: four ended at the 2 s bound, two on quiet.
    report.measurements = pd.DataFrame({"window": "settle", "metric": "wall_time",
                                        "value": [2.0, 2.01, 2.0, 2.02, 1.1, 1.3]})
    table = report.seed_settings_table().data.set_index("setting")
    between = table.loc["between steps", "this run"]
    assert between.startswith("after each step that writes (oltp_read_write_90_10, oltp_write_only; none after reads")
    assert "at most 2 s" in between and "4 of 6 ended at the bound" in between
    # A bound equal to the 1 s quiet interval: every window lasts it, quiet or not (run 20261124T124310Z-df05c2
    # said "84 of 84 ended at the bound"). The settle windows' share of engine CPU is what tells.
    report.info["parameters"]["max_settle_seconds"] = 1
    report.measurements = pd.DataFrame({"window": ["settle", "settle", "phase"], "metric": "cpu_time",
                                        "scope": "server", "value": [0.01, 0.02, 3.0]})
    between = report.seed_settings_table().data.set_index("setting").loc["between steps", "this run"]
    assert "cannot tell an engine that went quiet from one still busy" in between and "ended at the bound" not in between
    assert "settle windows held 1.0% of the engine CPU" in between
    report.info["parameters"]["settle_after_writes"] = False
    between = report.seed_settings_table().data.set_index("setting").loc["between steps", "this run"]
    assert between.startswith("no settle window after any step (settle_after_writes false)")
    assert table.loc["data"].tolist() == ["--tables=10 --table-size=1000000", "--tables=1 --table-size=100000"]
    assert table.loc["threads", "seed 004 (its text)"] == (
        "8 16 32 64 128 256 512 1024 (its commands; its CockroachDB bottleneck script 32 64 128 256 512; its published "
        "data start at 32 threads)")
    assert table.loc["consistency", "this run"].startswith("each engine at its own default isolation, as read")
    assert table.loc["threads", "this run"].startswith("2 32 64, bisected where the goal bound: 45")
    assert "--rand-seed=1234567" in table.loc["random seed", "seed 004 (its text)"]
    assert "sysbench's default, 10 s" in table.loc["step length", "seed 004 (its text)"]
    assert "730 h" in table.loc["price arithmetic", "seed 004 (its text)"]
    assert table.loc["step length", "this run"].startswith("2 s per step after a 2 s warm-up per test (the sysbench "
                                                          "warm-up, warmup_seconds:")
    assert "the driver's warmup parameter, a whole discarded repetition, is another mechanism" in \
        table.loc["step length", "this run"]
    assert table.loc["random seed", "this run"].startswith("not set: sysbench 1.0.20 then seeds from the clock")
    assert table.loc["repetitions"].tolist() == ["one run per step", "at least 2 per step, 95% CIs given"]


def test_a_gain_is_judged_on_each_repetitions_own_ratio():
    # Run 20261124T133330Z-5c5934's shape: repetition 3 ran 15% slow at both steps. Over the means the
    # 2 -> 4 gain's CI is wide (the slow repetition widens both CIs); paired, the repetitions agree
    # that 4 threads add nothing, and the knee is 2 threads.
    reps = pd.DataFrame([{"engine": "postgres", "test": "t", "repetition": r, "threads": th, "tps": tps * f}
                         for r, f in ((1, 1.0), (2, 1.02), (3, 0.85))
                         for th, tps in ((1, 10_000), (2, 19_000), (4, 19_100))])
    summary = analysis.summarize(reps.assign(**{c: 1.0 for c in ("qps", "latency_avg", "latency_p95", "latency_p99",
                                                                   "errors", "reconnects", "engine_cpu_ms_per_txn",
                                                                   "client_cpu_ms_per_txn", "cpu_ms_per_txn",
                                                                   "engine_cpu_s", "client_cpu_s", "wall_s",
                                                                   "engine_phase_cpu_s", "client_phase_cpu_s")}), 2)
    assert pd.isna(analysis.knee(summary).iloc[0]["knee_threads"])
    paired = analysis.knee(summary, step_rows=reps).iloc[0]
    assert paired["knee_threads"] == 2 and paired["gain_after_high"] < 0.10 and paired["gain_steps"] == "2 to 4"
    both = analysis.knee(pd.concat([summary.assign(engine="postgres"), summary.assign(engine="mariadb")]))
    assert list(both["engine"]) == ["mariadb", "postgres"]  # one order in the table and the findings
    gain, low, high = analysis.gain_ci_paired(pd.Series([100.0, 90.0]), pd.Series([200.0, 180.0]), 1, 2)
    assert (gain, low, high) == pytest.approx((1.0, 1.0, 1.0))  # both repetitions doubled: no spread
    assert pd.isna(analysis.gain_ci_paired(pd.Series([100.0]), pd.Series([200.0]), 1, 2)[1])


def test_the_p95_window_and_the_write_prices_say_what_they_rest_on():
    # Run 20261124T220931Z-461d23: 2 s steps, about 5,500 transactions at 128 threads in the slowest engine's window.
    s = pd.concat([_summary("postgres", [(8, 4_000, 10.0), (128, 4_141, 78.6)]),
                   _summary("mysql", [(8, 2_900, 12.0), (128, 2_750, 77.2)])], ignore_index=True)
    report = _report(s.assign(test="oltp_read_write_90_10"))
    report.info["parameters"]["step_seconds"] = 2
    text = report.p95_window_sentence()
    assert text.startswith("Each p95 comes from one 2 s window per repetition: at 128 threads the fewest transactions "
                           "in one was about 5,500 (MySQL oltp_read_write_90_10)")
    assert "seed 004's read/write steps ran 300 s" in text and "its slowest 5% are about 275 transactions" in text
    # The one server setting the sweep changes (threads up to 256 here), named beside the connection note.
    report.summary = report.summary.assign(connect_s=0.5, events_s=2.0)
    assert report.connection_note().startswith("Every server's max_connections was raised to 272 (the largest step "
                                               "plus the harness's own sessions; PostgreSQL's default is 100")
    assert "part of a gap between their prices is those settings, not the engine" in report.price_sentence()
    assert "part of a gap" not in _report(s.assign(test="oltp_point_select")).price_sentence()


def test_seed_004s_costs_recompute_and_its_ratio_is_shown():
    # The seed writes "355.66% more" for CockroachDB's cost per operation; its own inputs give 3.56x (255.66% more).
    from benchlib.workloads.sweep.report import SweepReport

    table = object.__new__(SweepReport).reference_price_table().set_index("seed 004 system")
    recomputed, published = table["USD/operation (recomputed here)"], table["USD/operation (published)"]
    assert (abs(recomputed / published - 1) < 1e-6).all()
    ratio = table.filter(like="cost per operation / the cheaper").iloc[:, 0]
    assert ratio["cockroachdb"] == pytest.approx(3.5566, abs=1e-3) and ratio["xpand"] == 1
