"""Benchmark of the results store itself (not of any engine): write 10^6 measurement rows as
100 runs x 100 windows into a throw-away store, then time cross-run queries through DuckDB.

    .venv/bin/python scripts/bench_store.py [rows]

The rows are synthetic on purpose: this measures the store's read path, and nothing from it is
written to the real store."""
from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path

from benchlib import results
from benchlib.store import Store, utcnow

ENGINES = ["postgres", "mariadb", "sqlite", "duckdb"]
PHASES = ["sleep", "insert", "update", "select", "delete"]
METRICS = ["wall_time", "cpu_time", "cpu_user_time", "cpu_system_time", "task_clock"]


def main(total_rows: int = 1_000_000, runs: int = 100) -> None:
    per_window = len(METRICS) * 20  # 20 rows per metric per window: pads to the requested total
    windows_per_run = total_rows // runs // per_window
    store = Store(Path(tempfile.mkdtemp(prefix="benchlib-store-bench-")) / "results")
    rng = random.Random(0)
    t0 = time.perf_counter()
    for r in range(runs):
        run_id = f"bench-{r:04d}"
        store.write_run({"run_id": run_id, "experiment": "bench", "status": "ok", "started_at": utcnow(),
                         "ended_at": utcnow()})
        now = utcnow()
        for w in range(windows_per_run):
            engine, phase = ENGINES[w % 4], PHASES[(w // 4) % 5]
            rows = [{"run_id": run_id, "instance_id": f"{engine}-{w}", "engine": engine, "experiment": "bench",
                     "phase": phase, "repetition": k + 1, "window": "phase", "metric": m,
                     "value": rng.random(), "unit": "s", "source": "cgroup", "status": "ok", "started_at": now,
                     "ended_at": now, "seq": w} for m in METRICS for k in range(20)]
            store.append_measurements(run_id, w, rows)
        store.compact(run_id)  # as Run.finish does
    write_s = time.perf_counter() - t0
    n = store.query("select count(*) n from measurements")["n"][0]
    timings = {}
    for label, fn in {
        "mean cpu_time per engine x phase over all runs": lambda: store.query(
            "select engine, phase, avg(value), stddev(value), count(*) from measurements "
            "where metric = 'cpu_time' group by all"),
        "results.latest_run_per_engine": lambda: results.latest_run_per_engine("bench", store),
        "results.compare_runs (two runs)": lambda: results.compare_runs(["bench-0000", "bench-0099"], store=store),
    }.items():
        t = time.perf_counter()
        fn()
        timings[label] = time.perf_counter() - t
    files = len(list(store.root.rglob("*.parquet")))
    print(f"rows: {n:,} in {runs} runs ({files} files), written and compacted in {write_s:.1f}s")
    for label, seconds in timings.items():
        print(f"{seconds:6.3f}s  {label}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
