"""Benchmark of the results store itself (not of any engine): write synthetic runs into a
throw-away store, then time cross-run queries through DuckDB.

    .venv/bin/python scripts/bench_store.py [rows]              # 10^6 rows: 100 runs x 100 windows
    .venv/bin/python scripts/bench_store.py --windows 200 --s3  # 100 runs x 200 windows, over S3 too

With `--s3` the runs are also published to a MinIO container (benchlib.containers.services: its image built
offline when no registry answers; nothing else is started) and the same queries are timed through
a shared store, `s3://bench/store`: once with an empty local cache (every run downloaded) and once
warm (only the bucket's listing); publishing's seconds per run are printed too.

The rows are synthetic on purpose: this measures the store's read path, and nothing from it is
written to the real store."""
from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

from benchlib.data import results
from benchlib.data.store import Store, utcnow

ENGINES = ["postgres", "mariadb", "sqlite", "duckdb"]
PHASES = ["sleep", "insert", "update", "select", "delete"]
METRICS = ["wall_time", "cpu_time", "cpu_user_time", "cpu_system_time", "task_clock"]
ROWS_PER_METRIC = 20  # rows per metric per window: pads each window to 100 rows


def fill(store: Store, runs: int, windows_per_run: int) -> float:
    """Synthetic runs written and compacted as Run.finish does; returns the seconds it took."""
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
                     "ended_at": now, "seq": w} for m in METRICS for k in range(ROWS_PER_METRIC)]
            store.append_measurements(run_id, w, rows)
        store.compact(run_id)
    return time.perf_counter() - t0


def time_queries(store: Store, runs: int) -> dict[str, float]:
    timings = {}
    last = f"bench-{runs - 1:04d}"
    for label, fn in {
        "mean cpu_time per engine x phase over all runs": lambda: store.query(
            "select engine, phase, avg(value), stddev(value), count(*) from measurements "
            "where metric = 'cpu_time' group by all"),
        "results.latest_run_per_engine": lambda: results.latest_run_per_engine("bench", store),
        "results.compare_runs (two runs)": lambda: results.compare_runs(["bench-0000", last], store=store),
    }.items():
        t = time.perf_counter()
        fn()
        timings[label] = time.perf_counter() - t
    return timings


def _print(title: str, timings: dict[str, float]) -> None:
    print(title)
    for label, seconds in timings.items():
        print(f"  {seconds:6.3f}s  {label}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", nargs="?", type=int, help="total measurement rows (default: runs x windows x 100)")
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--windows", type=int, default=100, help="windows per run (100 rows each)")
    parser.add_argument("--s3", action="store_true", help="also publish to MinIO and read over S3")
    args = parser.parse_args()
    rows_per_window = len(METRICS) * ROWS_PER_METRIC
    windows = args.rows // args.runs // rows_per_window if args.rows else args.windows
    work = Path(tempfile.mkdtemp(prefix="benchlib-store-bench-"))
    os.environ["BENCHLIB_DATA_DIR"] = str(work / "data")  # the shared store's cache lives there, not in data/
    store = Store(work / "results")
    write_s = fill(store, args.runs, windows)
    n = store.query("select count(*) n from measurements")["n"][0]
    files = len(list(store.root.rglob("*.parquet")))
    print(f"rows: {n:,} in {args.runs} runs x {windows} windows ({files} files), written and compacted in {write_s:.1f}s")
    _print("local store:", time_queries(store, args.runs))
    if args.s3:
        _over_s3(store, args.runs, work)


def _over_s3(store: Store, runs: int, work: Path) -> None:
    import shutil

    from benchlib.containers.services import start_minio
    from benchlib.data.shared_store import SharedStore

    t0 = time.perf_counter()
    with start_minio() as server:
        os.environ.update(server.env())
        print(f"MinIO {server.image_ref} ({server.image_source}) ready in {time.perf_counter() - t0:.1f}s")
        shared = SharedStore("s3://bench/store", cache_dir=work / "cache")
        shared.fs.mkdir("bench")
        seconds = []
        for run_id in store.run_ids():
            t = time.perf_counter()
            shared.publish(store, run_id, meta={"published_by": "bench_store"})
            seconds.append(time.perf_counter() - t)
        print(f"publish per run (export + {len(seconds)} x 3 objects + marker): median {statistics.median(seconds):.3f}s, "
              f"max {max(seconds):.3f}s, total {sum(seconds):.1f}s")
        reader = Store(work / "empty-local", shared=shared)  # a host of its own, with no local runs
        t = time.perf_counter()
        listed = len(shared.run_ids())
        print(f"listing {listed} completion markers: {time.perf_counter() - t:.3f}s")
        _print("shared store, cold cache (every run downloaded by the first query):", time_queries(reader, runs))
        _print("shared store, warm cache (the bucket listed on every query):", time_queries(reader, runs))
        shutil.rmtree(work / "cache", ignore_errors=True)


if __name__ == "__main__":
    main()
