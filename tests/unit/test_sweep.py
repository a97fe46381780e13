"""The concurrency sweep's arithmetic with known answers, seed 004's published price/performance
recomputed, and its parameters rejected before anything starts."""
import pandas as pd
import pytest

from benchlib import results
from benchlib.errors import ParameterError
from benchlib.workloads.sweep import analysis, validate_parameters

GOOD = dict(engines=["postgres"], tests=["oltp_point_select"], threads=[1, 2], step_seconds=1, warmup_seconds=0,
            tables=1, table_size=100, repetitions=1, p95_goal_ms=60, prices_per_hour={}, max_settle_seconds=0,
            rand_type="uniform", engine_cpus=0,
            max_repetitions=1, ci_target=0.05, warmup=False, pin_cpus=False, idle_seconds=0)


def _summary(engine, rows):
    return pd.DataFrame([{"engine": engine, "test": "t", "threads": t, "tps": tps, "latency_p95": p95,
                          "engine_cpu_ms_per_txn": 1.0, "client_cpu_ms_per_txn": 0.5} for t, tps, p95 in rows])


def test_knee_is_the_best_throughput_within_twice_the_lightest_p95():
    s = _summary("postgres", [(1, 100, 1.0), (2, 190, 1.2), (4, 300, 1.9), (8, 320, 2.5), (16, 330, 9.0)])
    k = analysis.knee(s).iloc[0]
    assert (k["knee_threads"], k["knee_tps"], k["p95_limit_ms"]) == (4, 300, 2.0)
    assert (k["peak_threads"], k["peak_tps"]) == (16, 330)


def test_price_performance_uses_the_best_step_under_the_goal():
    s = _summary("postgres", [(1, 100, 10.0), (2, 180, 50.0), (4, 200, 70.0)])
    p = analysis.price_performance(s, 60.0, {"postgres": 0.72}).iloc[0]
    assert p["max_tps_under_goal"] == 180 and p["threads"] == 2
    assert p["ops_per_day"] == 180 * 86_400
    assert p["usd_per_million_txn"] == pytest.approx(0.72 / (180 * 3600) * 1e6)
    assert p["cpu_s_per_million_txn"] == pytest.approx(1.5e3)


def test_no_step_under_the_goal_reads_nan_not_zero():
    p = analysis.price_performance(_summary("postgres", [(1, 100, 80.0)]), 60.0, {}).iloc[0]
    assert pd.isna(p["max_tps_under_goal"])


def test_seed_004_cost_per_operation_is_reproduced_from_its_inputs():
    ref = results.reference("seed004_prices")
    for row in ref.itertuples():
        ours = analysis.cost_per_operation(row.monthly_usd, row.published_max_tps_under_60ms)
        assert ours == pytest.approx(row.published_cost_per_operation_usd, rel=1e-9)
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
    ("prices_per_hour", {"mariadb": 1.0}, "prices_per_hour has no price for postgres"),
    ("prices_per_hour", {"postgres": -1}, "prices_per_hour[postgres] must be a number > 0, got -1"),
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
    report.summary = pd.concat([_summary("postgres", [(1, 100, 10.0), (8, 300, 40.0)]),
                                _summary("mysql", [(1, 90, 20.0), (8, 200, 75.0)])])
    lines = report._goal_lines()
    assert any(line.startswith("**MySQL, t:** the p95 goal of 60 ms bound at 8 threads (p95 75 ms)") for line in lines)
    assert lines[-1].startswith("The p95 goal of 60 ms never bound for PostgreSQL t (p95 at most 40 ms, 8 threads)")
