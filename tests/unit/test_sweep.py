"""The concurrency sweep's arithmetic with known answers, seed 004's published price/performance
recomputed, and its parameters rejected before anything starts."""
import dataclasses
import math

import pandas as pd
import pytest

from benchlib.data import results
from benchlib.run import sysbench
from benchlib.core.errors import ParameterError
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
    # Every repetition was over it at 64 threads, but with less TPS than 45's: the goal excluded no higher
    # throughput, so it did not bind (hostile read 46b, 03 #4: "yes" beside a step that was the peak).
    assert not p["goal_bound"]
    rows += [("mysql", "t", 90, r, 990.0 + r, p95) for r, p95 in enumerate([95.0, 99.0, 97.0])]
    assert analysis.price_performance(_summarized(rows), 60.0, {}).iloc[0]["goal_bound"]  # 990 TPS left out


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




# -- findings: verdict rules on rows, the rendered findings approved as a snapshot ------------------
def _reps(engine, test, steps, *, cpu=0.02, p95=None, spread=(1.0, 1.01, 0.99)):
    """Per-repetition step rows, as analysis.steps gives them: `steps` is [(threads, tps)]; every
    repetition scales a step's TPS by its factor in `spread` (so CIs exist and are known)."""
    rows = []
    for threads, tps in steps:
        for repetition, f in enumerate(spread, 1):
            rows.append({"engine": engine, "test": test, "threads": threads, "repetition": repetition, "tps": tps * f,
                         "latency_p95": (p95 or {}).get(threads, 0.2 * threads), "engine_cpu_ms_per_txn": cpu / f,
                         "client_cpu_ms_per_txn": 0.01})
    return rows


def _analysed(rows, goal=60.0, prices=None, base="postgres", wall=1.0, **kw):
    """`wall`: each step's seconds (or per engine), beside 1 s of engine and 1 s of sysbench CPU on 2 cores
    (1.0: saturated)."""
    steps = pd.DataFrame(rows)
    for col in ("qps", "latency_avg", "latency_p99", "errors", "reconnects", "engine_cpu_s", "client_cpu_s", "wall_s",
                "engine_phase_cpu_s", "client_phase_cpu_s"):
        steps[col] = 1.0
    steps["wall_s"] = steps["engine"].map(wall) if isinstance(wall, dict) else wall
    steps["cpu_ms_per_txn"] = steps["engine_cpu_ms_per_txn"] + steps["client_cpu_ms_per_txn"]
    summary = analysis.summarize(steps, cores=2)
    knees = analysis.knee(summary, step_rows=steps)
    prices = {"postgres": 0.096, "mysql": 0.096} if prices is None else prices
    price_perf = analysis.price_performance(summary, goal, prices)
    return analysis.findings(summary, knees, price_perf, base_engine=base, goal_ms=goal, prices=prices, **kw)


# Run 20261124T220931Z-461d23's shape: point selects 5.6-6.5x from 1 to 2 threads, flat after.
PG = [(1, 14_000), (2, 82_700), (4, 83_000), (8, 82_500)]
MY = [(1, 9_000), (2, 55_000), (4, 55_400), (8, 55_100)]


def test_a_faster_than_linear_first_step_is_left_out_of_the_knee():
    summary = analysis.summarize(pd.DataFrame(_reps("postgres", "t", PG)).assign(
        **{c: 1.0 for c in ("qps", "latency_avg", "latency_p99", "errors", "reconnects", "client_cpu_ms_per_txn",
                            "cpu_ms_per_txn", "engine_cpu_s", "client_cpu_s", "wall_s", "engine_phase_cpu_s",
                            "client_phase_cpu_s")}), 2)
    assert analysis.slow_start([1, 2, 4], [14_000, 82_700, 83_000]) == 1
    assert analysis.slow_start([1, 2, 4], [100, 190, 300]) == 0  # 1.9x per doubling: an engine can do that
    k = analysis.knee(summary).iloc[0]
    # From 2 threads on the gain is 0.4% then -0.6%, with the three repetitions' spread: the knee is 2.
    assert (k["slow_start_threads"], k["knee_threads"]) == (1, 2)


def test_capacity_rows_compare_each_engine_at_its_knee_with_judges_verdict():
    found = _analysed(_reps("postgres", "oltp_point_select", PG) + _reps("mysql", "oltp_point_select", MY, cpu=0.03))
    by = found.set_index("kind")
    capacity, cost, price = by.loc["capacity"], by.loc["cost"], by.loc["price"]
    assert (capacity["threads"], capacity["base_threads"]) == (2, 2)
    assert capacity["ratio"] == pytest.approx(55_000 / 82_700, rel=1e-3)
    # Fewer TPS is worse, more CPU per transaction is worse, more USD per transaction is worse.
    assert (capacity["verdict"], cost["verdict"], price["verdict"]) == ("worse", "worse", "worse")
    # The 1-thread step measured the VM's wake-up, not the engine: both sides say so.
    assert "slow-start" in capacity["caveats"] and "knee-undetermined" not in capacity["caveats"]
    # One price for both engines: USD is 1 / TPS scaled, and the row says so.
    assert "one-price" in price["caveats"]
    assert price["ratio"] == pytest.approx(1 / (55_400 / 83_000), rel=1e-3)  # each engine's best step
    # The goal never bound: the price is the peak's, not a capacity's, so the answer states capacity only.
    assert "goal-never-bound" in price["caveats"]
    assert set(found[found["headline"]]["kind"]) == {"capacity"}


def test_a_price_that_only_inverts_the_throughput_row_is_not_counted_twice():
    """Hostile read 40 (03): one hourly price at the same steps made the USD ratio 1 / the TPS ratio,
    so '0 of 6' counted two comparisons twice. Such a price row is left out (the price table has it)."""
    flat = [(1, 5_000), (2, 9_000)]  # still gaining: no knee, each compared at its best step (2 threads)
    found = _analysed(_reps("postgres", "oltp_point_select", flat) + _reps("mysql", "oltp_point_select", flat))
    assert "price" not in set(found["kind"]) and len(found) == 2


def test_a_ratio_inside_the_hosts_drift_is_not_a_difference():
    # MySQL 3% slower with tight CIs: beyond noise and over the 5% threshold? No: within 5%, so `same`;
    # at 8% slower it is worse, unless MySQL's host ran 10% slower (a slower host does less per second).
    slower = [(t, tps * 0.92) for t, tps in PG]
    assert _analysed(_reps("postgres", "t", PG) + _reps("mysql", "t", [(t, x * 0.97) for t, x in PG])) \
        .set_index("kind").loc["capacity", "verdict"] == "same"
    assert _analysed(_reps("postgres", "t", PG) + _reps("mysql", "t", slower)).set_index("kind").loc[
        "capacity", "verdict"] == "worse"
    drifted = _analysed(_reps("postgres", "t", PG) + _reps("mysql", "t", slower), host=lambda e, b: 1.10)
    assert drifted.set_index("kind").loc["capacity", "verdict"] == "drift"
    # PostgreSQL's host slower instead: MySQL's lower TPS is against the host's direction, so decided.
    assert _analysed(_reps("postgres", "t", PG) + _reps("mysql", "t", slower), host=lambda e, b: 1 / 1.10) \
        .set_index("kind").loc["capacity", "verdict"] == "worse"


def test_an_undetermined_knee_compares_each_engine_at_its_best_step_within_the_goal():
    """Hostile read 44 (03 #1): both sides at the most threads both ran (128) compared past
    PostgreSQL's capacity, against its own peak and price. Each side is compared at its highest
    throughput within the p95 goal, the price table's step."""
    rising = [(1, 100), (2, 190), (4, 270), (8, 380)]
    found = _analysed(_reps("postgres", "t", PG) + _reps("mysql", "t", rising)).set_index("kind")
    capacity = found.loc["capacity"]
    assert (capacity["threads"], capacity["base_threads"]) == (8, 4)  # PostgreSQL's peak is 83,000 at 4
    assert capacity["ratio"] == pytest.approx(380 / 83_000, rel=1e-3) and capacity["verdict"] == "worse"
    assert "knee-undetermined" in capacity["caveats"] and "best within the p95 goal" in capacity["regime"]
    # PostgreSQL over the goal at 8 threads: its best step within the goal is 4, not its 8-thread step.
    over = _analysed(_reps("postgres", "t", PG, p95={1: 1, 2: 5, 4: 30, 8: 90}) + _reps("mysql", "t", rising))
    assert over.set_index("kind").loc["capacity", "base_threads"] == 4
    # Past the goal everywhere: each side's peak.
    never = _analysed(_reps("postgres", "t", PG, p95=dict.fromkeys((1, 2, 4, 8), 99))
                      + _reps("mysql", "t", rising, p95=dict.fromkeys((1, 2, 4, 8), 99)))
    assert tuple(never.set_index("kind").loc["capacity", ["threads", "base_threads"]]) == (8, 4)


def test_price_rows_say_where_the_goal_never_bound_or_repetitions_split():
    # PostgreSQL crosses the 60 ms goal at 8 threads (with fewer TPS than at 4: it binds nothing);
    # MySQL never does, and one of its repetitions crossed at 4 threads (the median stayed under).
    rows = _reps("postgres", "t", PG, p95={1: 1, 2: 5, 4: 30, 8: 90})
    rows += _reps("mysql", "t", MY, p95={1: 1, 2: 5, 4: 40, 8: 50})
    for r in rows:
        if r["engine"] == "mysql" and r["threads"] == 4 and r["repetition"] == 2:
            r["latency_p95"] = 70.0
    price = _analysed(rows).set_index("kind").loc["price"]
    assert {"goal-never-bound", "goal-split"} <= set(price["caveats"])
    assert (price["threads"], price["base_threads"]) == (4, 4)  # PostgreSQL's best step under the goal


def test_per_engine_prices_scale_the_usd_ratio_and_nothing_priced_compares_throughput():
    rows = _reps("postgres", "t", PG) + _reps("mysql", "t", MY)
    rds = _analysed(rows, prices={"postgres": 0.178, "mysql": 0.171}).set_index("kind").loc["price"]
    assert rds["ratio"] == pytest.approx(0.171 / 0.178 * 83_000 / 55_400, rel=1e-3) and "one-price" not in rds["caveats"]
    unpriced = _analysed(rows, prices={}).set_index("kind").loc["price"]
    assert (unpriced["metric"], unpriced["unit"], unpriced["verdict"]) == ("throughput within the p95 goal", "TPS",
                                                                          "worse")


def test_write_rows_name_differing_commits_and_read_rows_do_not():
    commits = {"postgres": (True, False), "mysql": (True, True)}  # MySQL also syncs a binary log per commit
    rows = _reps("postgres", "oltp_read_write_90_10", PG) + _reps("mysql", "oltp_read_write_90_10", MY)
    write = _analysed(rows, commits=commits)
    assert all("durability" in c for c in write["caveats"])
    reads = _analysed([{**r, "test": "oltp_point_select"} for r in rows], commits=commits)
    assert not any("durability" in c for c in reads["caveats"])


def test_the_answer_states_at_most_five_rows():
    rows = []
    for engine, f in (("postgres", 1.0), ("mysql", 0.7), ("mariadb", 0.75), ("mariadb-myrocks", 0.5)):
        for test in ("oltp_point_select", "oltp_read_write_90_10"):
            rows += _reps(engine, test, [(t, tps * f) for t, tps in PG])
    found = _analysed(rows, prices={})
    assert len(found) == 18 and found["headline"].sum() == 5


def test_useful_capacity_is_starred_on_the_throughput_axis_in_a_panel_of_its_own():
    # Issue 37 item 10: the star was drawn at the knee's p95 on the p95 axis (PostgreSQL's at 0.027 ms,
    # on the floor) of a figure that overlaid TPS and p95.
    from benchlib.present.plots import throughput_latency

    summary = _summary("postgres", [(2, 80_000, 0.03), (4, 82_000, 0.05), (8, 81_000, 0.2)])
    knees = pd.DataFrame({"engine": ["postgres"], "test": ["t"], "knee_threads": [4.0], "knee_tps": [82_000.0],
                          "knee_p95_ms": [0.027]})
    fig = throughput_latency(summary, title="t", name="t", knees=knees)
    star = next(tr for tr in fig.data if tr.marker.symbol == "star")
    tps = next(tr for tr in fig.data if list(tr.y) == list(summary["tps"]))
    p95 = next(tr for tr in fig.data if list(tr.y) == list(summary["latency_p95"]))
    assert list(star.y) == [82_000] and star.yaxis == tps.yaxis
    # Panels of their own: the two traces' axes do not overlay one another and their domains are apart.
    axis = lambda name: fig.layout["yaxis" + name[1:]]  # noqa: E731
    assert p95.yaxis != tps.yaxis and axis(p95.yaxis).overlaying is None and axis(tps.yaxis).overlaying is None
    low, high = sorted([axis(tps.yaxis).domain, axis(p95.yaxis).domain])
    assert low[1] <= high[0]
    assert fig.layout.xaxis.type == "log" and list(fig.layout.xaxis.tickvals) == [2, 4, 8]


def test_the_charts_legend_names_only_marks_drawn_and_no_whisker_goes_below_zero():
    from benchlib.present.plots import throughput_latency

    summary = _summary("postgres", [(1, 100.0, 0.03), (4, 400.0, 0.05)]).assign(tps_ci95=[300.0, 50.0])
    fig = throughput_latency(summary, title="t", name="t", knees=None)
    tps = next(tr for tr in fig.data if list(tr.y) == [100.0, 400.0])
    assert [y - m for y, m in zip(tps.y, tps.error_y.arrayminus)] == [0.0, 350.0]  # cut at 0, not at -200
    assert "★" not in fig.layout.title.text and "cut at 0" in fig.layout.title.text
    knees = pd.DataFrame({"engine": ["postgres"], "test": ["t"], "knee_threads": [4.0], "knee_tps": [400.0]})
    assert "★" in throughput_latency(summary, title="t", name="t", knees=knees).layout.title.text


def test_the_rendered_findings_are_the_approved_ones(tmp_path, snapshot):
    """Every findings row of a stored synthetic run, through the report and its phrase table."""
    from benchlib.data import findings as F
    from benchlib.data.store import Store
    from benchlib.workloads.sweep.report import SweepReport

    store = Store(tmp_path / "results")
    rows = []
    for test, f in (("oltp_point_select", 1.0), ("oltp_read_write_90_10", 0.1)):
        rows += _reps("postgres", test, [(t, tps * f) for t, tps in PG], p95={1: 1, 2: 5, 4: 30, 8: 90})
        rows += _reps("mysql", test, [(t, tps * f) for t, tps in MY], cpu=0.03)
    run_id = write_sweep_run(store, rows)
    report = SweepReport(run_id, store)
    found = report.findings()
    assert list(found.columns[:len(F.FINDING_COLUMNS)]) == F.FINDING_COLUMNS
    cited = {c for cs in found["caveats"] for c in cs}
    assert cited <= {c.id for c in report.caveat_notes()}  # every cited caveat has its sentence
    rendered = [f"{row['verdict']} {list(row['caveats'])}: {F.render(row, report.phrases)}"
                for row in found.to_dict("records")]
    assert rendered == snapshot
    headline = found[found["headline"]].to_dict("records")
    assert [line[:len(F.render(r, report.phrases))] for line, r in zip(report.answer_lines(), headline)] == \
        [F.render(r, report.phrases) for r in headline]


def test_a_capacity_line_carries_what_a_transaction_costs_there(tmp_path):
    """Hostile read 46b (03 #1): "what does a transaction cost there?" got TPS only. Each capacity
    line carries its cost row at the same steps (ratio and verdict from that row) and, where those
    steps are the priced ones, each side's USD per million transactions."""
    from benchlib.data import findings as F
    from benchlib.data.store import Store
    from benchlib.present.report import fmt
    from benchlib.workloads.sweep.report import COST_CLAUSE, SweepReport

    rising = [(1, 100), (2, 190), (4, 270), (8, 380)]  # no knee located: each side at its best step, the priced one
    rows = _reps("postgres", "oltp_point_select", PG) + _reps("mysql", "oltp_point_select", rising, cpu=0.03)
    store = Store(tmp_path / "results")
    report = SweepReport(write_sweep_run(store, rows), store)
    found = report.findings()
    capacity = found[found["kind"] == analysis.CAPACITY].iloc[0].to_dict()
    cost = analysis.same_steps(found, capacity, analysis.COST)
    assert cost["verdict"] == "worse" and (cost["threads"], cost["base_threads"]) == (8, 4)
    line = report.answer_lines()[0]
    assert line.startswith(F.render(capacity, report.phrases) + F.render(cost, COST_CLAUSE))
    usd = report.price_perf.set_index("engine")["usd_per_million_txn"]
    assert line.endswith(f"; USD per M txn {fmt(usd['mysql'])} against PostgreSQL's {fmt(usd['postgres'])}")
    assert analysis.same_steps(found, {**capacity, "threads": 1}, analysis.COST) is None


def write_sweep_run(store, step_rows, *, run_id="20261201T000000Z-sweep0", goal=60.0):
    """A sweep run through the real Store API: per engine one start, per step and repetition one
    phase window with sysbench's readings, the engine's cgroup CPU and sysbench's own."""
    import datetime as dt
    import json

    at = dt.datetime(2026, 12, 1, tzinfo=dt.timezone.utc)
    engines = list(dict.fromkeys(r["engine"] for r in step_rows))
    params = {"engines": engines, "tests": list(dict.fromkeys(r["test"] for r in step_rows)),
              "threads": sorted({r["threads"] for r in step_rows}), "p95_goal_ms": goal,
              "host_class": "aws-us-east-1-2vcpu", "step_seconds": 2, "warmup_seconds": 2, "tables": 1,
              "table_size": 1000, "repetitions": 3, "max_repetitions": 3, "until_p95_goal": True,
              "rand_type": "uniform", "create_secondary": False, "auto_inc": False, "max_settle_seconds": 0}
    store.write_run({"run_id": run_id, "experiment": "sweep", "notebook": "03-concurrency-sweep", "status": "ok",
                     "started_at": at, "ended_at": at + dt.timedelta(minutes=5), "hostname": "host-a",
                     "cpu_model": "Test CPU", "cpu_cores": 2, "cgroup_layout": "v2", "git_sha": "1111111111",
                     "git_dirty": False, "benchlib_version": "0.1.0", "parameters": json.dumps(params),
                     "perf_support": "{}", "host_fingerprint": "ab12"})
    for engine in engines:
        store.write_instance({"run_id": run_id, "instance_id": f"{engine}-1", "engine": engine, "kind": "server",
                              "image_ref": f"{engine}:local", "image_source": "local-build",
                              "server_version": f"{engine} 1.0", "config": "{}", "started_at": at})
    for seq, r in enumerate(step_rows, 1):
        common = {"run_id": run_id, "instance_id": f"{r['engine']}-1", "engine": r["engine"], "experiment": "sweep",
                  "phase": r["test"], "repetition": r["repetition"], "window": "phase", "status": "ok",
                  "started_at": at, "ended_at": at, "labels": json.dumps({"test": r["test"], "threads": r["threads"]})}
        transactions = r["tps"] * 2
        readings = {"transactions": transactions, "tps": r["tps"], "qps": r["tps"], "latency_avg": 1.0,
                    "latency_p95": r["latency_p95"], "latency_p99": r["latency_p95"], "errors": 0.0, "reconnects": 0.0}
        store.append_measurements(run_id, seq, [
            *({**common, "metric": k, "value": v, "unit": "", "source": "sysbench", "scope": "client"}
              for k, v in readings.items()),
            {**common, "metric": "cpu_time", "value": r["engine_cpu_ms_per_txn"] * transactions / 1e3, "unit": "s",
             "source": "cgroup", "scope": "server"},
            {**common, "metric": "cpu_time", "value": r["client_cpu_ms_per_txn"] * transactions / 1e3, "unit": "s",
             "source": "rusage", "scope": "client"},
            {**common, "metric": "wall_time", "value": 2.0, "unit": "s", "source": "clock", "scope": "server"}])
    store.compact(run_id)
    return run_id


def test_with_no_knee_located_the_answer_gives_cpu_per_transaction_and_says_why(tmp_path):
    """Hostile read 41 (03): 2 thread steps on 2 cores locate no knee; the answer stated throughput
    at 4 threads and a knee that "lies between". It says there is none and gives each engine's CPU
    per transaction, the cost the sweep can answer."""
    from benchlib.data.store import Store
    from benchlib.workloads.sweep.report import SweepReport

    two = [(1, 5_000), (4, 17_000)]
    rows = []
    for test in ("oltp_point_select", "oltp_read_write_90_10"):
        rows += _reps("postgres", test, two, spread=(0.5, 1.0, 1.5))
        rows += _reps("mysql", test, [(t, x * 0.8) for t, x in two], cpu=0.03, spread=(0.5, 1.0, 1.5))
    found = _analysed(rows)
    assert set(found[found["headline"]]["kind"]) == {"cost"}
    store = Store(tmp_path / "results")
    report = SweepReport(write_sweep_run(store, rows), store)
    lines = report.answer_lines()
    assert len(lines) == 3 and "lies between" not in " ".join(lines)
    assert all("CPU per transaction" in line for line in lines[:2]) and "No knee" in lines[2]


def test_knees_not_located_in_a_long_enough_sweep_are_said_with_the_step_length(tmp_path):
    """Hostile read 44 (03 #2): 7 of 8 knees not located at 2 s steps, and the answer did not say so."""
    from benchlib.data.store import Store
    from benchlib.workloads.sweep.report import SweepReport

    rising = [(1, 100), (2, 190), (4, 270), (8, 380)]
    rows = _reps("postgres", "oltp_point_select", PG) + _reps("mysql", "oltp_point_select", rising)
    store = Store(tmp_path / "results")
    lines = SweepReport(write_sweep_run(store, rows), store).answer_lines()
    assert lines[-1].startswith("Useful capacity not located for 1 of 2 engine x test pairs: TPS CIs of 2 s steps "
                                "too wide (MySQL ")
    assert not any("No knee" in line for line in lines)
    # Hostile read 46b (03 #2): where engine + sysbench saturated the host at the engine's peak, that is the cause.
    hot = _reps("postgres", "oltp_point_select", PG) + _reps("mysql", "oltp_point_select", rising, cpu=5.0)
    report = SweepReport(write_sweep_run(Store(tmp_path / "hot"), hot), Store(tmp_path / "hot"))
    assert analysis.saturated_at_peak(report.summary, report.knees).tolist() == [True, True]  # mysql, postgres
    cool = Store(tmp_path / "cool")
    cool_report = SweepReport(write_sweep_run(cool, _reps("mysql", "oltp_point_select", rising)), cool)
    assert not analysis.saturated_at_peak(cool_report.summary, cool_report.knees).any()  # 380 TPS x 0.03 ms
    assert report.answer_lines()[-1].startswith("Useful capacity not located for 1 of 2 engine x test pairs: the "
                                                "2-core host, shared with sysbench, saturates at the engine's peak "
                                                "threads (MySQL oltp_point_select); ")
    flat = _reps("postgres", "oltp_point_select", PG) + _reps("mysql", "oltp_point_select", PG)
    located = SweepReport(write_sweep_run(Store(tmp_path / "other"), flat), Store(tmp_path / "other"))
    assert not any("not located" in line for line in located.answer_lines())


def test_cpu_per_transaction_on_a_saturated_host_cites_it():
    """Hostile read 42 (03 #1): engine + sysbench at 91-99% of the host's cores, unsaid beside CPU per transaction."""
    rows = _reps("postgres", "oltp_point_select", PG) + _reps("mysql", "oltp_point_select", MY, cpu=0.03)
    busy, idle = _analysed(rows), _analysed(rows, wall=4.0)  # 100% and 25% of 2 cores
    cost = lambda found: found[found["kind"] == analysis.COST]  # noqa: E731
    assert not cost(busy).empty and all(analysis.SATURATED in ids for ids in cost(busy)["caveats"])
    assert not any(analysis.SATURATED in ids for ids in cost(idle)["caveats"])
    assert not any(analysis.SATURATED in ids for ids in busy[busy["kind"] != analysis.COST]["caveats"])
    # Hostile read 43 (03 #1): the answer's line says it too, not only the table's footnote.
    assert all(r.endswith(analysis.SATURATED_REGIME) for r in cost(busy)["regime"])
    assert not any(analysis.SATURATED_REGIME in r for r in cost(idle)["regime"])
    # Hostile read 47 (03): said only where each side's step reached the share, never beside MySQL's 82%.
    mixed = _analysed(rows, wall={"postgres": 1.0, "mysql": 1 / 0.82})
    assert not cost(mixed).empty and not any(analysis.SATURATED in ids for ids in cost(mixed)["caveats"])
    assert not any(analysis.SATURATED_REGIME in r for r in cost(mixed)["regime"])


def test_the_step_table_keeps_one_p95_at_two_repetitions_and_a_blank_gain_says_why(tmp_path):
    """Hostile read 42 (03 #2): at n=2 the mean and median p95 columns were always equal; a gain cell was blank."""
    from benchlib.data.store import Store
    from benchlib.workloads.sweep.report import SweepReport

    def report(spread, name):
        rows = _reps("postgres", "oltp_point_select", PG, spread=spread) + \
            _reps("mysql", "oltp_point_select", MY, cpu=0.03, spread=spread)
        return SweepReport(write_sweep_run(Store(tmp_path / name), rows), Store(tmp_path / name))

    two, three = report((1.0, 1.01), "two"), report((1.0, 1.01, 0.99), "three")
    assert "p95 ms, median of reps" not in two.step_table().data and "p95 ms" in two.step_table().data
    assert "p95 ms, median of reps" in three.step_table().data
    gains = list(three.knee_table().data["next gain per doubling (95% CI)"])
    assert gains and all(gains)  # every cell a gain or the reason it has none (NO_GAIN)


def test_an_engine_whose_repetitions_met_the_host_at_far_apart_speeds_is_cited_on_its_rows():
    """Hostile read 43 (03 #2): MySQL's two repetitions ran on a host whose speed differed 1.87x, unsaid
    beside the CIs it widened."""
    loops = pd.DataFrame({"engine": ["mysql", "mysql", "postgres", "postgres"],
                          "calibration_s": [0.081, 0.151, 0.146, 0.148]})
    assert analysis.unsteady(loops) == {"mysql": pytest.approx(0.151 / 0.081)}
    rows = _reps("postgres", "oltp_point_select", PG) + _reps("mysql", "oltp_point_select", MY)
    found = _analysed(rows, unsteady_engines=frozenset(analysis.unsteady(loops)))
    assert all(f"{analysis.UNSTEADY}:mysql" in ids for ids in found["caveats"])
    assert not any(f"{analysis.UNSTEADY}:postgres" in ids for ids in found["caveats"])
    assert not any(analysis.UNSTEADY in " ".join(ids) for ids in _analysed(rows)["caveats"])


def test_the_price_table_says_its_repetitions_reads_its_counts_and_names_the_other_prices_it_uses(tmp_path):
    """Hostile read 43 (03 #3): a ±0.2% USD interval from 2 repetitions read as precision; "6.69e+10";
    "priced as aws-us-east-1-2vcpu-rds" was explained nowhere."""
    from benchlib.data.store import Store
    from benchlib.workloads.sweep.report import SweepReport

    rows = _reps("postgres", "oltp_point_select", PG, spread=(1.0, 1.01)) \
        + _reps("mysql", "oltp_point_select", MY, spread=(1.0, 1.01))
    store = Store(tmp_path / "results")
    report = SweepReport(write_sweep_run(store, rows), store)
    table = report.price_table()
    assert set(table.data["repetitions"]) == {2}
    html = table.to_html()
    assert "e+" not in html and "billion ops per 30 days" in html
    assert "USD per M txn as a managed service (aws-us-east-1-2vcpu-rds, appendix: Prices)" in html
    sources = report.price_source_table().data
    assert set(sources["host class"]) == {"aws-us-east-1-2vcpu", "aws-us-east-1-2vcpu-rds"}


def test_the_seed_price_tables_monthly_header_names_the_hours_its_arithmetic_uses():
    """Hostile read 46b (03 #5): "USD/month (its 720 h)" over 8,344, which is 11.43 x 730 h."""
    import re

    table = analysis.seed_price_table()
    header = next(c for c in table.columns if c.startswith("USD/month"))
    hours = float(re.search(r"(\d+) h", header).group(1))
    assert list(table[header]) == pytest.approx(list(table["USD/h"] * hours), rel=1e-6)
