"""The arithmetic behind every published figure, on hand-built rows with known answers."""
import math

import pandas as pd
import pytest

from benchlib.data import results


def _row(phase, window, metric, value, *, instance="pg-1", engine="postgres", repetition=1, scope="server",
         status="ok", labels="{}"):
    return {"run_id": "r", "instance_id": instance, "engine": engine, "repetition": repetition, "phase": phase,
            "window": window, "metric": metric, "value": value, "status": status, "scope": scope,
            "labels": labels, "source": "cgroup"}


def _engine_start(instance="pg-1", repetition=1, insert_cpu=5.0, settle_cpu=1.0, engine="postgres"):
    """Idle 0.1 CPU-s over 10 s (rate 0.01/s); insert 5 CPU-s in 20 s + 1 CPU-s settle in 2 s."""
    kw = dict(instance=instance, repetition=repetition, engine=engine)
    return [
        _row("sleep", "baseline", "cpu_time", 0.1, **kw), _row("sleep", "baseline", "wall_time", 10.0, **kw),
        _row("insert", "phase", "cpu_time", insert_cpu, **kw), _row("insert", "phase", "wall_time", 20.0, **kw),
        _row("insert", "settle", "cpu_time", settle_cpu, **kw), _row("insert", "settle", "wall_time", 2.0, **kw),
        # The client's CPU in the same window must never be added to the engine's.
        _row("insert", "phase", "cpu_time", 99.0, scope="client", **kw),
    ]


def test_phase_costs_finds_the_baseline_by_window_and_subtracts_idle():
    costs = results.phase_costs(pd.DataFrame(_engine_start()), "cpu_time").set_index("phase")
    insert = costs.loc["insert"]
    assert insert["value"] == 5.0 and insert["settle_value"] == 1.0 and insert["with_settle"] == 6.0
    assert insert["idle_rate"] == pytest.approx(0.01)
    assert insert["net"] == pytest.approx(5.0 - 0.01 * 20)
    assert insert["net_with_settle"] == pytest.approx(6.0 - 0.01 * 22)
    sleep = costs.loc["sleep"]
    assert sleep["is_baseline"] and sleep["value"] == 0.1 and sleep["net"] == 0.0
    assert math.isnan(sleep["settle_value"])  # not measured is not zero


def test_missing_settle_window_stays_nan_and_adds_nothing():
    rows = [r for r in _engine_start() if r["window"] != "settle"]
    insert = results.phase_costs(pd.DataFrame(rows), "cpu_time").set_index("phase").loc["insert"]
    assert math.isnan(insert["settle_value"]) and insert["with_settle"] == 5.0


def test_summarize_gives_mean_std_cv_and_a_t_confidence_interval():
    rows = (_engine_start("pg-1", 1, insert_cpu=4.0) + _engine_start("pg-2", 2, insert_cpu=5.0)
            + _engine_start("pg-3", 3, insert_cpu=6.0))
    summary = results.summarize(results.phase_costs(pd.DataFrame(rows), "cpu_time"), by=("engine", "phase"))
    insert = summary.set_index("phase").loc["insert"]
    assert insert["value"] == pytest.approx(5.0) and insert["n"] == 3
    assert insert["value_std"] == pytest.approx(1.0)
    assert insert["value_cv"] == pytest.approx(0.2)
    assert insert["value_ci95"] == pytest.approx(4.303 * 1.0 / math.sqrt(3))


def test_one_repetition_has_no_interval():
    summary = results.summarize(results.phase_costs(pd.DataFrame(_engine_start()), "cpu_time"))
    assert summary["value_ci95"].isna().all() and (summary["n"] == 1).all()


def test_sweep_variants_are_summarised_apart():
    rows = [r | {"labels": '{"threads": 1}'} for r in _engine_start("a")] + \
           [r | {"labels": '{"threads": 8}'} for r in _engine_start("b", insert_cpu=9.0)]
    summary = results.summarize(results.phase_costs(pd.DataFrame(rows), "cpu_time"))
    insert = summary[summary["phase"] == "insert"].set_index("labels")["value"]
    assert insert.to_dict() == {'{"threads": 1}': 5.0, '{"threads": 8}': 9.0}


def test_cost_metric_is_instructions_only_when_every_engine_window_counted_them():
    counted = [_row("insert", "phase", "instructions_user", 1e9), _row("update", "phase", "instructions_user", 2e9)]
    assert results.cost_metric(pd.DataFrame(counted))[0] == "instructions_user"
    partly = counted + [_row("delete", "phase", "instructions_user", None, status="unsupported")]
    metric, unit, why = results.cost_metric(pd.DataFrame(partly + [_row("insert", "phase", "cpu_time", 1.0)]))
    assert (metric, unit) == ("cpu_time", "s") and "ok, unsupported" in why and "cgroup" in why
    # A client-side count does not make the engine's metric instructions.
    client_only = [_row("insert", "phase", "instructions_user", 1e9, scope="client"),
                   _row("insert", "phase", "cpu_time", 1.0)]
    assert results.cost_metric(pd.DataFrame(client_only))[0] == "cpu_time"


def test_ratios_to_divides_by_the_base_engine_in_the_same_phase():
    df = pd.DataFrame({"engine": ["postgres", "mysql", "postgres", "mysql"],
                       "phase": ["insert", "insert", "update", "update"], "v": [2.0, 1.0, 4.0, 6.0]})
    ratios = results.ratios_to(df, "v").set_index(["engine", "phase"])["ratio"]
    assert ratios[("mysql", "insert")] == 0.5 and ratios[("mysql", "update")] == 1.5
    assert ratios[("postgres", "update")] == 1.0


def test_t_quantile_errs_on_the_wide_side_between_table_entries():
    assert results.t_quantile_975(2) == 4.303
    assert results.t_quantile_975(11) == results.t_quantile_975(10)
    assert results.t_quantile_975(500) == 1.96 and math.isnan(results.t_quantile_975(0))


def test_welch_matches_a_hand_computed_example():
    # a: mean 10, sd 1, n 4; b: mean 12, sd 2, n 4 -> se^2 = 0.25 + 1.0, t = 2 / sqrt(1.25),
    # dof = 1.25^2 / (0.25^2/3 + 1^2/3) = 4.41
    t, dof = results.welch(10, 1, 4, 12, 2, 4)
    assert t == pytest.approx(2 / math.sqrt(1.25)) and dof == pytest.approx(1.5625 / (1.0625 / 3))
    assert results.beyond_noise(t, dof) is False  # 1.79 < t(4, 0.975) = 2.776
    assert results.beyond_noise(*results.welch(10, 0.1, 4, 12, 0.1, 4)) is True
    assert results.beyond_noise(*results.welch(10, 1, 1, 12, 1, 4)) is None  # one repetition: untestable


def test_geometric_mean_ignores_missing_ratios():
    assert results.geometric_mean([2.0, 0.5, float("nan")]) == pytest.approx(1.0)
    assert math.isnan(results.geometric_mean([]))


def test_identical_repetitions_are_resolution_not_certainty():
    # cgroup v1 ticks: two runs of a cheap phase, each repeating its value exactly.
    assert results.beyond_noise(*results.welch(0.008, 0.0, 2, 0.012, 0.0, 2)) is None
    assert results.welch(0.008, 0.0, 2, 0.008, 0.0, 2) == (0.0, 2.0)


def _summary_row(mean: float, sd: float, n: int = 3) -> dict:
    return {"value": mean, "value_ci95": 0.0, "value_std": sd, "n": n}


def test_ratio_ci_and_welch_verdict_never_contradict_and_the_ci_stays_positive():
    # The review's case: 0.792 with base sd 0.1 and other sd 0.02 over 3 repetitions. The old
    # delta-method CI (0.792 ± 0.203, i.e. 0.589-0.995) excluded 1 while raw Welch said "within
    # noise"; on the log scale both are one test: 0.613-1.023, within noise.
    c = results.contrast(_summary_row(1.0, 0.1), _summary_row(0.792, 0.02), "value")
    assert c["beyond_noise"] is False and c["ratio_low"] < 1 < c["ratio_high"]
    assert (c["ratio_low"], c["ratio_high"]) == pytest.approx((0.613, 1.023), abs=0.002)
    # A wide ratio (1.78 with sd 0.7 against 0.05) whose old "± 1.75" reached near zero: positive.
    wide = results.contrast(_summary_row(1.0, 0.05), _summary_row(1.78, 0.7), "value")
    assert 0 < wide["ratio_low"] < 1 < wide["ratio_high"] and wide["beyond_noise"] is False
    for base_sd, mean, sd in [(0.02, 1.5, 0.2), (0.2, 0.5, 0.05), (0.2, 0.6, 0.01), (0.1, 0.79, 0.12),
                              (0.05, 3.0, 0.8), (0.01, 1.01, 0.01)]:
        c = results.contrast(_summary_row(1.0, base_sd), _summary_row(mean, sd), "value")
        excludes_one = c["ratio_low"] > 1 or c["ratio_high"] < 1
        assert c["ratio_low"] > 0 and excludes_one == c["beyond_noise"], (base_sd, mean, sd, c)


def test_a_phase_measured_once_beside_repeated_ones_is_left_out_of_a_whole_runs_precision(tmp_path):
    """Hostile read 42 (08 #4): Problems said "1 of 1 phase windows with a target" was wide while each
    engine's driver line said none had one: a one-off load (one value, no CI) counted in the report,
    not in the driver (`measured_in`). `recurring_only` leaves it out, as the driver does."""
    import datetime as dt

    from synthetic_runs import write_run
    from benchlib.data.store import Store

    store = Store(tmp_path / "results")
    run = write_run(store, "r", 1, {"postgres": {"query": [0.05, 0.051, 0.049]}})  # under the 0.2 s floor
    at = dt.datetime(2026, 11, 2, tzinfo=dt.timezone.utc)
    common = {"run_id": run, "instance_id": "postgres-0001", "engine": "postgres", "experiment": "dml",
              "phase": "load", "repetition": 1, "window": "phase", "status": "ok", "started_at": at, "ended_at": at,
              "labels": "{}", "unit": "s", "scope": "server"}
    store.append_measurements(run, 99, [{**common, "metric": "cpu_time", "value": 0.9, "source": "cgroup"},
                                        {**common, "metric": "wall_time", "value": 2.0, "source": "clock"}])
    store.compact(run)
    whole = results.precision_outcome(run, 0.1, floor=0.2, store=store)
    assert (whole.met, whole.wide, whole.targeted) == (False, 1, 1)  # the load: one value, so no CI
    recurring = results.precision_outcome(run, 0.1, floor=0.2, store=store, recurring_only=True)
    assert (recurring.met, recurring.wide, recurring.targeted) == (True, 0, 0)
