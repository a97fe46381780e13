"""Why does a sweep's 1-thread step run 5-6.5x slower than its 2-thread step (issue 37 item 4)?
The hypothesis: with one client thread, every round trip leaves both virtual CPUs idle; an idle
vCPU halts (this guest has no cpuidle driver, so idle is HLT, an exit to the hypervisor), and each
message then waits for the hypervisor to wake the halted vCPU. With two threads a vCPU usually has
the other thread's work to do and is still running when its message arrives.

One engine start, one table; sysbench oltp_point_select at 1 and 2 threads under these
conditions, alternating, each `runs` times for `seconds`:

- `unpinned`: as the sweep runs it (server and sysbench anywhere on the host's CPUs);
- `apart`: the server's container on CPU 1, sysbench on CPU 0 (every round trip crosses CPUs);
- `together`: both on CPU 1 (a round trip is a context switch on one CPU; CPU 0 idles);
- `spinning`: unpinned, with one SCHED_IDLE busy loop per CPU, so no vCPU ever halts (the loop
  yields to any runnable thread at once; it costs the measured processes nothing but its cache);
- `dma_latency_0`: unpinned, with /dev/cpu_dma_latency held at 0 (PM QoS: no idle state deeper
  than polling, where a cpuidle driver honours it; without one it should change nothing).

Prints, per condition and thread count, the median TPS, the engine's and sysbench's CPU per
transaction (the container's cgroup, the child's rusage), the ratio to `unpinned`, and the most CPU
other processes used during a run (the first run waits, up to 30 s, until the rest of the host is
below a tenth of a core: others' unlocked work on these cores would read as slowness, or keep the
vCPUs from halting).

    flock /tmp/bench.lock .venv/bin/python scripts/bench_one_thread_wakeup.py [engine] [seconds] [runs]

Seen here (2026-11-28, PostgreSQL 17.12, 2 s runs, 3 each, while other processes kept about one
core busy): at 1 thread, unpinned 23,015 TPS, apart 12,126, together 24,939, spinning 11,125,
dma_latency_0 22,765; at 2 threads 25,168 / 17,684 / 21,075 / 11,866 / 25,481. One thread whose
every round trip crosses vCPUs ran half as fast as one whose round trips stay on one CPU (with
1.6x the engine CPU per transaction), and with other work keeping the vCPUs from halting the
unpinned 1-thread step ran 23,000 TPS where quiet sweeps measured 13,600 (run
20261124T220931Z-461d23): the 1-thread step measures how fast one vCPU wakes another, not the
engine. The SCHED_IDLE spinners cost more than they saved (the vCPUs may be SMT siblings on the
host: a spinning sibling slows the other), and PM QoS changed nothing (no cpuidle driver).
"""
from __future__ import annotations

import contextlib
import os
import resource
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import benchlib
from benchlib.run import sysbench
from benchlib.host.docker_host import docker_client
from benchlib.run.measure import Run
from benchlib.data.store import Store

TABLE_SIZE = 100_000
THREADS = (1, 2)


@contextlib.contextmanager
def spinning():
    """One SCHED_IDLE busy loop per CPU: the vCPUs never halt, and any real thread preempts it."""
    code = "import os; os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))\nwhile True: pass"
    loops = [subprocess.Popen([sys.executable, "-c", code], preexec_fn=lambda c=cpu: os.sched_setaffinity(0, {c}))
             for cpu in sorted(os.sched_getaffinity(0))]
    try:
        time.sleep(0.5)
        yield
    finally:
        for p in loops:
            p.kill()
            p.wait()


@contextlib.contextmanager
def dma_latency_zero():
    """PM QoS: while the file is held open with 0 written, no CPU enters an idle state with exit latency > 0."""
    fd = os.open("/dev/cpu_dma_latency", os.O_WRONLY)
    try:
        os.write(fd, struct.pack("i", 0))
        yield
    finally:
        os.close(fd)


def main(engine: str = "postgres", seconds: float = 3, runs: int = 3) -> None:
    store = Store(Path(tempfile.mkdtemp(prefix="benchlib-wakeup-")) / "results")
    with Run("one-thread-wakeup", {"engine": engine}, store=store) as run, \
            benchlib.start(engine, run_id=run.run_id) as instance:
        sysbench.prepare(instance, tables=1, table_size=TABLE_SIZE, rand_type="uniform",
                         options={"create_secondary": "false", "auto_inc": "false"})
        container = docker_client().containers.get(instance.container_id)
        cpus = ",".join(str(c) for c in sorted(os.sched_getaffinity(0)))

        def pin(server: str | None, client: str | None):
            @contextlib.contextmanager
            def placed():
                container.update(cpuset_cpus=server or cpus)
                try:
                    yield client
                finally:
                    container.update(cpuset_cpus=cpus)
            return placed

        conditions = {
            "unpinned": pin(None, None),
            "apart": pin("1", "0"),
            "together": pin("1", "1"),
            "spinning": lambda: _with(spinning()),
            "dma_latency_0": lambda: _with(dma_latency_zero()),
        }
        print(f"{instance.provenance['server_version']}; oltp_point_select, {seconds:g} s per run, {runs} runs each "
              f"condition, alternating; host CPUs {cpus}; cpuidle driver "
              f"{Path('/sys/devices/system/cpu/cpuidle/current_driver').read_text().strip()}", flush=True)
        print(f"the rest of the host before the first run: {wait_quiet():.2f} cores busy", flush=True)
        results: dict[tuple[str, int], list[tuple[float, float, float, float]]] = {}
        for threads in THREADS:
            argv = sysbench.command_line(instance, "oltp_point_select", "run", sysbench.run_options(
                threads=threads, seconds=seconds, tables=1, table_size=TABLE_SIZE, rand_type="uniform"))
            subprocess.run(argv, capture_output=True, check=True)  # warm: recorded nowhere
            for round_ in range(runs):
                order = list(conditions) if round_ % 2 == 0 else list(reversed(conditions))
                for name in order:
                    with conditions[name]() as client_cpu:
                        results.setdefault((name, threads), []).append(_one(argv, instance, client_cpu))
        for threads in THREADS:
            base = statistics.median(r[0] for r in results[("unpinned", threads)])
            for name in conditions:
                rows = results[(name, threads)]
                tps = statistics.median(r[0] for r in rows)
                print(f"threads={threads} {name:14} TPS {', '.join(f'{r[0]:,.0f}' for r in rows)} (median {tps:,.0f}, "
                      f"{tps / base:.2f}x unpinned); engine CPU {statistics.median(r[1] for r in rows) * 1e3:.1f} µs/txn, "
                      f"sysbench CPU {statistics.median(r[2] for r in rows) * 1e3:.1f} µs/txn; other processes "
                      f"{max(r[3] for r in rows):.2f} cores at most", flush=True)


@contextlib.contextmanager
def _with(context):
    with context:
        yield None


def _busy_s() -> float:
    """The host's busy CPU seconds so far (every CPU, /proc/stat: all but idle and iowait)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


def wait_quiet(limit_s: float = 30, floor: float = 0.10) -> float:
    """Wait (up to `limit_s`) until the rest of the host uses under `floor` of a core over 1 s:
    other work on these 2 cores would be measured as the engine's slowness. Returns the last share."""
    deadline = time.monotonic() + limit_s
    while True:
        b0, t0 = _busy_s(), time.monotonic()
        time.sleep(1)
        share = (_busy_s() - b0) / (time.monotonic() - t0)
        if share < floor or time.monotonic() > deadline:
            return share


def _one(argv: list[str], instance, client_cpu: str | None) -> tuple[float, float, float, float]:
    """(TPS, engine CPU ms per transaction, sysbench CPU ms per transaction, other processes' CPU
    in cores over the run: the spinning loops' included) of one run."""
    scope = instance.scope
    before, busy, t0 = scope.cpu_ns(), _busy_s(), time.monotonic()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    command = (["taskset", "-c", client_cpu] if client_cpu else []) + argv
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    engine_ns = scope.cpu_ns() - before
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall, busy = time.monotonic() - t0, _busy_s() - busy
    result = sysbench.parse(out)
    client_s = (after.ru_utime + after.ru_stime) - (children.ru_utime + children.ru_stime)
    others = (busy - engine_ns / 1e9 - client_s) / wall
    return result.tps, engine_ns / 1e6 / result.transactions, client_s * 1e3 / result.transactions, others


if __name__ == "__main__":
    main(*(f(a) for f, a in zip((str, float, int), sys.argv[1:])))
