"""Runs written through the real Store API with known figures, for the change list and explorer
tests: one engine start per repetition, an idle baseline window and one window per phase."""
from __future__ import annotations

import datetime as dt
import json

from benchlib.data.store import Store

T0 = dt.datetime(2026, 11, 1, tzinfo=dt.timezone.utc)


def write_run(store: Store, run_id: str, day: int, costs: dict[str, dict[str, list[float]]], *,
              experiment: str = "dml", parameters: dict | None = None, hostname: str = "host-a",
              versions: dict[str, str] | None = None, git_sha: str = "1111111111aaaa", status: str = "ok",
              transactions: float | None = None, host: dict | None = None, configs: dict | None = None,
              calibration: dict[str, float] | None = None) -> str:
    """`costs`: engine -> phase -> engine CPU seconds per repetition. `transactions`: a sysbench-like
    reading of operations in every phase window. `host`: the run's host identity columns
    (host_class, host_fingerprint, ...). `configs`: engine -> what its starts read (the instance's
    stored configuration: durability, isolation, client path). `calibration`: engine -> its
    calibration loop's seconds, one loop per repetition (the host's speed then)."""
    started = T0 + dt.timedelta(days=day)
    store.write_run({"run_id": run_id, "experiment": experiment, "notebook": f"{experiment}-notebook",
                     "status": status, "started_at": started, "ended_at": started + dt.timedelta(minutes=5),
                     "hostname": hostname, "cpu_model": "Test CPU 2.0GHz", "cpu_cores": 2, "git_sha": git_sha,
                     "git_dirty": False, "benchlib_version": "0.1.0",
                     "parameters": json.dumps(parameters if parameters is not None else {"rows": 1000}),
                     **(host or {})})
    seq = 0
    for engine, phases in costs.items():
        repetitions = len(next(iter(phases.values())))
        for repetition in range(1, repetitions + 1):
            seq += 1
            instance = f"{engine}-{repetition:04d}"
            store.write_instance({"run_id": run_id, "instance_id": instance, "engine": engine, "kind": "server",
                                  "image_ref": f"{engine}:local", "image_source": "local-build",
                                  "server_version": (versions or {}).get(engine, f"{engine} 1.0"),
                                  "config": json.dumps((configs or {}).get(engine, {})), "started_at": started})
            rows = _window(run_id, instance, engine, experiment, "sleep", "baseline", repetition, 0.01, started)
            for phase, values in phases.items():
                rows += _window(run_id, instance, engine, experiment, phase, "phase", repetition,
                                values[repetition - 1], started, transactions)
            if engine in (calibration or {}):
                rows.append({**rows[0], "phase": "calibration", "window": "calibration", "metric": "calibration_cpu_time",
                             "value": calibration[engine], "unit": "s", "source": "thread clock", "scope": "calibration"})
            store.append_measurements(run_id, seq, rows)
    store.compact(run_id)
    return run_id


def _window(run_id, instance, engine, experiment, phase, window, repetition, cpu, at, transactions=None):
    common = {"run_id": run_id, "instance_id": instance, "engine": engine, "experiment": experiment, "phase": phase,
              "repetition": repetition, "window": window, "status": "ok", "started_at": at, "ended_at": at,
              "labels": "{}"}
    rows = [{**common, "metric": "cpu_time", "value": cpu, "unit": "s", "source": "cgroup", "scope": "server"},
            {**common, "metric": "wall_time", "value": 2.0, "unit": "s", "source": "clock", "scope": "server"}]
    if transactions is not None:
        rows.append({**common, "metric": "transactions", "value": transactions, "unit": "count", "source": "sysbench",
                     "scope": "client"})
    return rows
