"""Does measuring a sysbench step cost the benchmark anything? The same sysbench command, on the
same container, run bare (a plain subprocess) and as benchlib's sweep runs it (a measured window:
perf on the engine's cgroup, cgroup and client sampling), alternating, three times each.

    .venv/bin/python scripts/bench_sysbench_overhead.py [engine] [seconds]

Prints, per test and thread count, the TPS of each run and the ratio of the medians
(benchlib / bare; goal >= 0.98). Results go to a throw-away store."""
from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import benchlib
from benchlib import cgroups, sysbench
from benchlib.measure import Run, SettlePolicy
from benchlib.store import Store

TESTS = ("oltp_point_select", "oltp_read_write")
THREADS = (1, 8)
TABLE_SIZE = 100_000


def main(engine: str = "postgres", seconds: float = 10) -> None:
    store = Store(Path(tempfile.mkdtemp(prefix="benchlib-sysbench-overhead-")) / "results")
    with Run("sysbench-overhead", {"engine": engine, "seconds": seconds}, store=store) as run, \
            benchlib.start(engine, run_id=run.run_id) as instance:
        sysbench.prepare(instance, tables=1, table_size=TABLE_SIZE)
        meters = {  # the sweep's meter (perf only where it counts hardware events) and one that always runs perf
            "sweep meter": run.meter(instance, 1, SettlePolicy(max_seconds=0), client=cgroups.children_scope(),
                                     perf_only_for_hardware=True),
            "with perf -G": run.meter(instance, 1, SettlePolicy(max_seconds=0), client=cgroups.children_scope()),
        }
        print(f"{instance.provenance['server_version']}; {seconds:g} s per run")
        for test in TESTS:
            for threads in THREADS:
                options = sysbench.run_options(threads=threads, seconds=seconds, tables=1, table_size=TABLE_SIZE,
                                               rand_type="uniform")
                tps: dict[str, list[float]] = {"bare": [], **{name: [] for name in meters}}
                for _ in range(3):
                    for name, meter in meters.items():
                        with meter.phase(test, settle=False, labels={"threads": threads}):
                            result, _ = sysbench.run(instance, test, threads=threads, seconds=seconds, tables=1,
                                                     table_size=TABLE_SIZE, rand_type="uniform")
                        tps[name].append(result.tps)
                    argv = sysbench.command_line(instance, test, "run", options)
                    tps["bare"].append(sysbench.parse(subprocess.run(argv, capture_output=True, text=True,
                                                                     check=True).stdout).tps)
                bare = statistics.median(tps["bare"])
                print(f"{test:18} threads={threads}: " + "; ".join(
                    f"{name} {', '.join(f'{t:,.0f}' for t in values)} TPS (median ratio to bare "
                    f"{statistics.median(values) / bare:.3f})" for name, values in tps.items()))


if __name__ == "__main__":
    main(*(sys.argv[1:2] or ["postgres"]), *(float(a) for a in sys.argv[2:3]))
