"""Runs counted by valgrind, read back: instructions are the cost metric (in seed 000's unit), the
explanation says what valgrind changes, the CPU seconds measured under it are never read as the
engine's cost, every figure keeps its spread, and repetitions stop once every phase's counts agree
within 0.5%. Rows written through the real Store API with known counts."""
import datetime as dt
import json

import pytest

from benchlib.data import results
from benchlib.run.driver import precision_verdict
from benchlib.data.results import INSTRUCTIONS_AGREE
from benchlib.data.store import Store

T0 = dt.datetime(2026, 11, 28, tzinfo=dt.timezone.utc)


def _run(store: Store, counts: dict[str, list[float]], run_id: str = "20261128T000000Z-val001",
         loops: list[float] | None = None) -> str:
    """One engine start per repetition of `postgres`, counted by valgrind: phase -> instructions per repetition;
    `loops`: the calibration loop's seconds per repetition (the host's speed then), where given."""
    store.write_run({"run_id": run_id, "experiment": "dml", "notebook": "01", "status": "ok", "started_at": T0,
                     "ended_at": T0, "parameters": json.dumps({"rows": 20000, "counter": "valgrind"})})
    for repetition in range(1, len(next(iter(counts.values()))) + 1):
        instance = f"postgres-{repetition:04d}"
        store.write_instance({"run_id": run_id, "instance_id": instance, "engine": "postgres", "kind": "server",
                              "started_at": T0})
        rows = []

        def window(phase: str, kind: str, instructions: float, wall: float) -> None:
            common = {"run_id": run_id, "instance_id": instance, "engine": "postgres", "experiment": "dml",
                      "phase": phase, "repetition": repetition, "window": kind, "status": "ok", "started_at": T0,
                      "ended_at": T0, "labels": "{}", "scope": "server"}
            rows.extend([{**common, "metric": "instructions_user", "value": instructions, "unit": "instructions",
                          "source": "valgrind"},
                         {**common, "metric": "wall_time", "value": wall, "unit": "s", "source": "clock"},
                         # what the cgroup saw under valgrind: stored apart, never a CPU cost
                         {**common, "metric": "cpu_time_under_valgrind", "value": wall * 0.9, "unit": "s",
                          "source": "cgroup"}])

        window("sleep", "baseline", 2e6, 2.0)  # 1 M instructions per second while idle
        if loops:
            rows.append({**rows[0], "phase": "calibration", "window": "calibration", "metric": "calibration_cpu_time",
                         "value": loops[repetition - 1], "unit": "s", "source": "thread clock",
                         "scope": "calibration"})
        for phase, values in counts.items():
            window(phase, "phase", values[repetition - 1], 1.5)
            window(phase, "settle", 1e6, 1.0)
        store.append_measurements(run_id, repetition, rows)
    return run_id


def test_valgrind_counts_are_the_cost_metric_and_say_what_valgrind_changes(store):
    df = results.measurements(_run(store, {"insert": [3.0e8, 3.001e8]}), store)
    metric, unit, why = results.cost_metric(df)
    assert (metric, unit) == ("instructions_user", "instructions")
    assert "valgrind's callgrind" in why and "serialises threads" in why and "group commit" in why
    assert "_under_valgrind" in why and "not its CPU cost" in why
    # CPU seconds under valgrind are no engine CPU: a CPU figure of this run is not measured, not valgrind's.
    assert results.phase_costs(df, "cpu_time")["value"].isna().all()


def test_idle_correction_and_spread_of_an_instruction_figure(store):
    df = results.measurements(_run(store, {"insert": [3.0e8, 3.03e8]}), store)
    costs = results.phase_costs(df, "instructions_user")
    insert = costs[costs["phase"] == "insert"].sort_values("repetition")
    assert list(insert["idle_rate"]) == [1e6, 1e6]
    assert list(insert["net_with_settle"]) == pytest.approx([3.0e8 + 1e6 - 2.5e6, 3.03e8 + 1e6 - 2.5e6])
    summary = results.summarize(costs, by=("engine", "phase")).set_index("phase")
    assert summary.loc["insert", "value_spread"] == pytest.approx(0.03e8 / 3.015e8)


def test_repetitions_stop_once_every_phase_agrees_within_half_a_percent(store):
    run_id = _run(store, {"insert": [3.000e8, 3.010e8], "select": [3.0e7, 3.001e7]})  # 0.33% and 0.03% apart
    done, note = precision_verdict(run_id, 0.05, 2, store=store)
    assert done and f"agreed within {INSTRUCTIONS_AGREE:.1%}" in note and "postgres insert 0.333%" in note
    # Every phase has a target under valgrind (no CPU tick to resolve), the cheap select too.
    assert results.precision(run_id, floor=0.2, store=store)["targeted"].all()


def test_counts_apart_by_more_keep_the_repetitions_going(store):
    run_id = _run(store, {"insert": [3.0e8, 3.06e8]}, "20261128T000000Z-val002")  # 2% apart, CI of 2: ±13%
    done, note = precision_verdict(run_id, 0.05, 2, store=store)
    assert not done and "still had a 95% CI of instructions wider than ±5%" in note
    assert "1 of 1 phase windows" in note


def test_the_hosts_speed_is_weighed_against_a_timed_cost_never_against_a_count(store):
    """Hostile read 46a (01 instructions #1): a callgrind run's note said the host's drift and the
    engine's variation "cannot be told apart", of instruction counts the host's speed does not move."""
    from synthetic_runs import write_run

    counts = {"insert": [3.0e8, 3.06e8]}
    plain = precision_verdict(_run(store, counts, "20261128T000000Z-val003"), 0.05, 2, store=store)
    looped = precision_verdict(_run(store, counts, "20261128T000000Z-val004", loops=[0.06, 0.2]), 0.05, 2,
                               store=store)
    assert looped == plain  # a count's note is the same whatever the host's loop did
    # A timed cost's note does weigh the loop against the phase's spread: the same loops change it.
    cpu = {"postgres": {"insert": [1.0, 1.2]}}
    timed = precision_verdict(write_run(store, "20261128T000000Z-cpu001", 0, cpu), 0.05, 2, store=store)
    timed_looped = precision_verdict(write_run(store, "20261128T000000Z-cpu002", 0, cpu,
                                               calibration={"postgres": 0.06}), 0.05, 2, store=store)
    assert timed_looped != timed


def test_one_value_per_window_is_said_to_test_no_target_not_to_miss_it(store):
    """Hostile read 43 (02 #4): "4 of 4 phase window ... still had a 95% CI ... wider than ±5% (widest:
    postgres insert (one value))": one value has no CI."""
    from synthetic_runs import write_run

    run_id = write_run(store, "20261128T000000Z-one001", 0, {"postgres": {"insert": [1.0], "update": [2.0]}})
    done, note = precision_verdict(run_id, 0.05, 1, store=store)
    assert not done and "one value per phase window has no 95% CI, so the ±5% target was not tested" in note
    assert "wider than" not in note
