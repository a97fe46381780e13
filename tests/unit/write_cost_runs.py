"""A write-cost run written through the real Store API with known figures, for the report tests
(findings, figures, snapshots) without an engine: per engine start an idle baseline, then each
cell's statements (phase window), its settle window and, for servers, its own idle window."""
from __future__ import annotations

import datetime as dt
import json

from benchlib.data.store import Store
from benchlib.workloads.write_cost.workload import CLIENT_VALUES, SERVER_GENERATOR

T0 = dt.datetime(2026, 11, 1, tzinfo=dt.timezone.utc)
ROWS = 1000
CELLS = [(1, 1, CLIENT_VALUES), (100, 1, CLIENT_VALUES), (100, 100, CLIENT_VALUES), (100, 100, SERVER_GENERATOR)]

# Engine CPU seconds per cell (1,000 rows) and repetition, the idle rate, and (`after`, per cell) the
# CPU its settle window holds above the idle rate: 2 ms in one-row cells unless given.
# MySQL: a commit (~300 µs/row) four times its statement's (~75); PostgreSQL: commit and statement
# close and noisy; in bulk MySQL ~1.15x PostgreSQL (seed 000: 1.28x).
ENGINES = {
    "postgres": {"kind": "server", "idle": 0.0005, "cells": {
        (1, 1, CLIENT_VALUES): (0.190, 0.240, 0.160), (100, 1, CLIENT_VALUES): (0.120, 0.070, 0.110),
        (100, 100, CLIENT_VALUES): (0.0100, 0.0105, 0.0098), (100, 100, SERVER_GENERATOR): (0.0040, 0.0042, 0.0041)}},
    "mysql": {"kind": "server", "idle": 0.0090, "cells": {
        (1, 1, CLIENT_VALUES): (0.390, 0.420, 0.400), (100, 1, CLIENT_VALUES): (0.090, 0.095, 0.088),
        (100, 100, CLIENT_VALUES): (0.0110, 0.0115, 0.0112), (100, 100, SERVER_GENERATOR): (0.0047, 0.0048, 0.0046)}},
    "sqlite": {"kind": "embedded", "idle": 0.0001, "cells": {
        (1, 1, CLIENT_VALUES): (0.900, 0.950, 0.920), (100, 1, CLIENT_VALUES): (0.030, 0.031, 0.029),
        (100, 100, CLIENT_VALUES): (0.0050, 0.0051, 0.0049), (100, 100, SERVER_GENERATOR): (0.0030, 0.0031, 0.0030)}},
}


# What each start read of its durability settings, as the real engines report it (MySQL's binary log on).
DURABILITY = {"postgres": "synchronous_commit=on, fsync=on, full_page_writes=on, wal_sync_method=fdatasync",
              "mysql": "innodb_flush_log_at_trx_commit=1, log_bin=1, sync_binlog=1, innodb_doublewrite=ON"}


def _labels(txn: int, stmt: int, source: str) -> str:
    return json.dumps({"rows_from": source, "rows_per_stmt": stmt, "rows_per_txn": txn}, sort_keys=True)


def write_run(store: Store, run_id: str = "20261101T000000Z-wc0001", engines: dict | None = None,
              parameters: dict | None = None, instructions_per_second: float | None = None) -> str:
    """`instructions_per_second`: the engine's windows also count user-space instructions (as
    valgrind's server counter stores them), that many per CPU second."""
    engines = engines or ENGINES
    store.write_run({"run_id": run_id, "experiment": "write_cost", "notebook": "05-write-cost", "status": "ok",
                     "started_at": T0, "ended_at": T0 + dt.timedelta(minutes=5), "hostname": "host-a",
                     "cpu_model": "Test CPU 2.0GHz", "cpu_cores": 2, "memory_bytes": 2 ** 33, "kernel": "6.1",
                     "os": "Debian", "cgroup_layout": "hybrid", "git_sha": "1111111111aaaa", "git_dirty": False,
                     "benchlib_version": "0.1.0", "perf_support": "{}",
                     "parameters": json.dumps(parameters or {
                         "engines": list(engines), "rows": ROWS, "rows_per_txn": [1, 100], "rows_per_stmt": [1, 100],
                         "server_generated": True, "repetitions": 3, "pk_kind": "uuid", "max_settle_seconds": 1,
                         "idle_seconds": 1, "clusters": []})})
    seq = 0
    for engine, spec in engines.items():
        server = spec["kind"] in ("server", "cluster")
        scope = "server" if server else "embedded"
        for repetition in (1, 2, 3):
            instance = f"{engine}-{repetition:04d}"
            store.write_instance({"run_id": run_id, "instance_id": instance, "engine": engine, "kind": spec["kind"],
                                  "image_ref": f"{engine}:local", "image_source": "local-build",
                                  "server_version": f"{engine} 1.0",
                                  "config": json.dumps({"durability": DURABILITY[engine]} if engine in DURABILITY
                                                       else {}), "started_at": T0})

            def window(phase, labels, name, cpu, wall, *, extra=(), check=None):
                common = {"run_id": run_id, "instance_id": instance, "engine": engine, "experiment": "write_cost",
                          "phase": phase, "repetition": repetition, "window": name, "status": "ok", "seq": seq,
                          "started_at": T0, "ended_at": T0, "labels": labels, "check_value": check,
                          "check_expected": check, "check_status": "ok" if check else None,
                          "check_name": "rows" if check else None}
                rows = [{**common, "metric": "cpu_time", "value": cpu, "unit": "s", "source": "cgroup", "scope": scope},
                        {**common, "metric": "wall_time", "value": wall, "unit": "s", "source": "clock",
                         "scope": scope}]
                if instructions_per_second:
                    rows.append({**common, "metric": "instructions_user", "value": cpu * instructions_per_second,
                                 "unit": "instructions", "source": "valgrind", "scope": scope})
                return rows + [{**common, **e} for e in extra]

            seq += 1
            rows = window("idle", "{}", "baseline", spec["idle"] * 1.0, 1.0)
            store.append_measurements(run_id, seq, rows)
            for cell, values in spec["cells"].items():
                seq += 1
                labels, cpu = _labels(*cell), values[repetition - 1]
                wall = cpu * 1.5
                log = [{"metric": m, "value": v if server else None, "unit": "bytes", "source": "counter",
                        "scope": scope, "status": "ok" if server else "not reported"}
                       for m, v in (("engine_log_bytes", 120.0 * ROWS), ("engine_log_bytes_settle", 0.0))]
                client = [{"metric": "cpu_time", "value": cpu * 0.4, "unit": "s", "source": "process",
                           "scope": "client"},
                          {"metric": "txn_latency_p50", "value": wall / ROWS * cell[0], "unit": "s",
                           "source": "client clock", "scope": "client"}] if server else []
                rows = window("insert", labels, "phase", cpu, wall, extra=[*log, *client], check=float(ROWS))
                if server:
                    # After the commit: a little work above the idle rate in the one-row cells only.
                    after = spec.get("after", {}).get(cell, 0.002 if cell[0] == 1 else 0.0)
                    rows += window("insert", labels, "settle", spec["idle"] * 1.0 + after, 1.0, check=float(ROWS))
                    rows += window("idle", labels, "baseline", spec["idle"] * 1.0, 1.0)
                store.append_measurements(run_id, seq, rows)
    store.compact(run_id)
    return run_id
