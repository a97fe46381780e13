"""Does measuring a sysbench step cost the benchmark anything? The same sysbench command, on the
same container, run bare (a plain subprocess) and as benchlib's sweep runs it (a measured window
of the sweep's meter: cgroup and client CPU, perf only where it counts hardware events),
alternating, `runs` times each after one unrecorded warm-up run (which one goes first swaps every
round, so neither always gets the warmer cache).

    .venv/bin/python scripts/bench_sysbench_overhead.py [engine] [seconds] [runs] [--with-perf] [--tests=a,b] [--threads=1,8]

Prints, per test and thread count, the TPS of each run and the ratio of the medians
(benchlib / bare; goal >= 0.98), and the CPU the harness's own process spent while sysbench's
events ran (the mechanism by which it could slow them: the window's samples are taken before the
gate opens and after the last event). `--with-perf` adds a third variant that always runs `perf -a -G`
(what the sweep skips on a host without hardware counters). Results go to a throw-away store."""
from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import benchlib
from benchlib.host import cgroups
from benchlib.run import sysbench
from benchlib.run.measure import Run, SettlePolicy
from benchlib.data.store import Store

TESTS = ("oltp_point_select", "oltp_read_write")
THREADS = (1, 8)
TABLE_SIZE = 100_000


def main(engine: str = "postgres", seconds: float = 8, runs: int = 5, with_perf: bool = False,
         tests: tuple[str, ...] = TESTS, threads_list: tuple[int, ...] = THREADS) -> None:
    store = Store(Path(tempfile.mkdtemp(prefix="benchlib-sysbench-overhead-")) / "results")
    with Run("sysbench-overhead", {"engine": engine, "seconds": seconds}, store=store) as run, \
            benchlib.start(engine, run_id=run.run_id) as instance:
        sysbench.prepare(instance, tables=1, table_size=TABLE_SIZE, rand_type="uniform")
        meters = {"sweep meter": run.meter(instance, 1, SettlePolicy(max_seconds=0), client=cgroups.children_scope(),
                                           perf_only_for_hardware=True)}
        if with_perf:
            meters["with perf -G"] = run.meter(instance, 1, SettlePolicy(max_seconds=0),
                                               client=cgroups.children_scope())
        print(f"{instance.provenance['server_version']}; {seconds:g} s per run, {runs} runs each, alternating")
        for test in tests:
            for threads in threads_list:
                common = dict(threads=threads, seconds=seconds, tables=1, table_size=TABLE_SIZE, rand_type="uniform")
                argv = sysbench.command_line(instance, test, "run", sysbench.run_options(**common))

                def bare() -> float:
                    return sysbench.parse(subprocess.run(argv, capture_output=True, text=True, check=True).stdout).tps

                harness_cpu: list[float] = []  # the harness's CPU over the events' wall time, per measured run

                def measured(meter) -> float:  # the sweep's own path: the window holds the events only
                    with sysbench.started(instance, test, **common) as running, \
                            meter.phase(test, settle=False, labels={"threads": threads},
                                        client=running.client) as readings:
                        cpu0 = time.process_time()
                        running.run_events()
                        harness_cpu.append((time.process_time() - cpu0) / running.events_s)
                        readings.end_window()
                        result, _ = running.finish()
                    return result.tps

                variants = {"bare": bare, **{name: (lambda m=meter: measured(m)) for name, meter in meters.items()}}
                bare()  # caches and the server's backends warmed at this thread count: recorded nowhere
                tps: dict[str, list[float]] = {name: [] for name in variants}
                for round_ in range(runs):
                    order = list(variants) if round_ % 2 == 0 else list(reversed(variants))
                    for name in order:
                        tps[name].append(variants[name]())
                base = statistics.median(tps["bare"])
                print(f"{test:18} threads={threads}: " + "; ".join(
                    f"{name} {', '.join(f'{t:,.0f}' for t in values)} TPS (median ratio to bare "
                    f"{statistics.median(values) / base:.3f}{_paired(values, tps['bare']) if name != 'bare' else ''})"
                    for name, values in tps.items())
                    + f"; harness CPU while the events ran: median {statistics.median(harness_cpu):.2%} of one core "
                      f"(max {max(harness_cpu):.2%})", flush=True)


def _paired(values: list[float], bare: list[float]) -> str:
    """The ratio within each round (its two runs back to back, so a slow stretch of the host
    mostly hits both): median and range. The ratio of medians mixes rounds the host ran at
    different speeds, which on this host moved single runs by 10-20%."""
    ratios = sorted(v / b for v, b in zip(values, bare))
    return f"; paired per round: median {statistics.median(ratios):.3f}, range {ratios[0]:.3f}-{ratios[-1]:.3f}"


if __name__ == "__main__":
    flags = [a for a in sys.argv[1:] if a.startswith("--")]
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    main(*(args[0:1] or ["postgres"]), *(float(a) for a in args[1:2]), *(int(a) for a in args[2:3]),
         with_perf="--with-perf" in flags,
         tests=next((tuple(f.split("=", 1)[1].split(",")) for f in flags if f.startswith("--tests=")), TESTS),
         threads_list=next((tuple(int(t) for t in f.split("=", 1)[1].split(",")) for f in flags
                            if f.startswith("--threads=")), THREADS))
