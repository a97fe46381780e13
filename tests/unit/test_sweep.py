"""The concurrency sweep's arithmetic with known answers, seed 004's published price/performance
recomputed, and its parameters rejected before anything starts."""
import pandas as pd
import pytest

from benchlib import results, sysbench
from benchlib.errors import ParameterError
from benchlib.workloads.sweep import analysis, prices, validate_parameters
from benchlib.workloads.sweep.workload import connection_config, series_ends, table_options

GOOD = dict(engines=["postgres"], tests=["oltp_point_select"], threads=[1, 2], step_seconds=1, warmup_seconds=0,
            tables=1, table_size=100, repetitions=1, p95_goal_ms=60, until_p95_goal=True,
            host_class="aws-us-east-1-2vcpu", max_settle_seconds=0, rand_type="uniform", engine_cpus=0,
            create_secondary=False, auto_inc=False,
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
    ("host_class", "aws-nowhere", "host_class must be one of seed004-aws-us-west-2-3x16vcpu, aws-us-east-1-2vcpu, "
                                  "none, got 'aws-nowhere'"),
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
    assert any(line.startswith("**MySQL, t:** the p95 goal of 60 ms bound at 8 threads (mean p95 75 ms): the highest "
                               "throughput within it, 90 TPS at 1 thread,") for line in lines)
    assert lines[-1].startswith("The p95 goal of 60 ms never bound for PostgreSQL t (p95 at most 40 ms, 8 threads)")


def test_missing_price_row_fails_before_docker_is_asked():
    # tidb runs sysbench (MySQL wire) but has no declared price on this host class: one line naming it.
    with pytest.raises(ParameterError, match="^host_class 'aws-us-east-1-2vcpu' has no price for tidb in "):
        validate_parameters({**GOOD, "engines": ["postgres", "tidb"]})


def test_prices_are_per_engine_with_what_they_include_and_where_from():
    rows = prices.for_host("aws-us-east-1-2vcpu", ["postgres", "mysql@9", "mariadb", "mariadb-myrocks"])
    assert {k: p.usd_per_hour for k, p in rows.items()} == {"postgres": 0.178, "mysql@9": 0.171, "mariadb": 0.171,
                                                            "mariadb-myrocks": 0.096}
    assert {p.basis for p in rows.values()} == {"declared"}
    assert all(p.includes and p.source and p.as_of and p.instance for p in rows.values())
    # Seed 004's own rows are its published hourly prices, unchanged.
    seed = results.reference("seed004_prices").set_index("system")["hourly_usd"].to_dict()
    published = prices.for_host("seed004-aws-us-west-2-3x16vcpu", ["cockroachdb", "xpand"])
    assert {k: p.usd_per_hour for k, p in published.items()} == seed
    assert {p.basis for p in published.values()} == {"published"}
    assert prices.for_host("none", ["postgres"]) == {}


def test_usd_per_transaction_follows_each_engines_price():
    # The same throughput on two engines costs what their hourly prices say, not one constant.
    s = pd.concat([_summary("postgres", [(8, 9_000, 1.1)]), _summary("mariadb-myrocks", [(8, 9_000, 1.1)])])
    rates = {k: p.usd_per_hour for k, p in prices.for_host("aws-us-east-1-2vcpu", ["postgres", "mariadb-myrocks"]).items()}
    p = analysis.price_performance(s, 60.0, rates).set_index("engine")["usd_per_million_txn"]
    assert p["postgres"] == pytest.approx(0.178 / (9_000 * 3600) * 1e6)
    assert p["postgres"] / p["mariadb-myrocks"] == pytest.approx(0.178 / 0.096)


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
    assert report.tps_basis(True, "postgres", "mix") == "max TPS within the p95 goal of 60 ms"
    lines = report._goal_lines()
    assert lines[0].startswith("**PostgreSQL, mix:** the p95 goal of 60 ms bound at 256 threads (mean p95 170 ms): "
                               "the highest throughput within it, 2,400 TPS at 64 threads")
    assert "never bound for PostgreSQL t" in lines[-1] and "the sweep's bound at 256 threads" in lines[-1]
    assert "peak TPS of the steps run" in lines[-1]


def test_the_report_says_the_price_is_declared_and_what_it_includes():
    report = _report(_summary("mariadb-myrocks", [(1, 100, 10.0)]))
    sentence = report.price_sentence()
    assert "declared list prices, not measured on this host" in sentence
    assert "no managed service offers MyRocks" in sentence and "EC2 instance hours only" in sentence
    assert "`--create_secondary=false --auto_inc=false` (seed 004's options for oltp_point_select)" in \
        report.table_options_sentence()
