"""Where an engine's CPU, I/O and memory are accounted, on cgroup v1, v2 and hybrid hosts.

A scope is found from a process id (a container's init process, or this process for embedded
engines) through /proc/<pid>/cgroup and the mount table, so it works with the cgroupfs and the
systemd drivers alike. Counters a host does not expose are None, never 0."""
from __future__ import annotations

import os
import resource
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Sample:
    cpu_ns: int | None
    user_ns: int | None
    system_ns: int | None
    io_read_bytes: int | None
    io_write_bytes: int | None
    memory_peak_bytes: int | None
    memory_current_bytes: int | None
    # Bytes through the container's network interfaces (its own network namespace, loopback
    # excluded); None for a process scope, which shares the host's.
    net_rx_bytes: int | None = None
    net_tx_bytes: int | None = None
    # Bytes the cgroup's processes had read from storage (the sum of read_bytes in /proc/<pid>/io):
    # page-cache hits are not in it, and cgroup v1 blkio misses what it does count here.
    storage_read_bytes: int | None = None
    parts: tuple["Sample", ...] = ()  # a cluster's: each node's sample, this one their sum

    @classmethod
    def total(cls, parts: tuple["Sample", ...]) -> "Sample":
        """The sum of node samples: a counter any node lacks is None for the cluster too. The
        memory peak is the sum of each node's own peak (an upper bound of the cluster's)."""
        def add(name: str) -> int | None:
            values = [getattr(p, name) for p in parts]
            return None if any(v is None for v in values) else sum(values)
        return cls(*(add(f) for f in ("cpu_ns", "user_ns", "system_ns", "io_read_bytes", "io_write_bytes",
                                      "memory_peak_bytes", "memory_current_bytes", "net_rx_bytes", "net_tx_bytes",
                                      "storage_read_bytes")),
                   parts=parts)


@dataclass(frozen=True)
class Scope:
    """What to read for one engine. `perf_cgroup` is the path `perf stat -G` takes (relative to
    the perf_event hierarchy, or to cgroup2 when perf_event has no v1 mount); None means a process."""

    kind: str  # cgroup | cluster | process | children
    layout: str  # v1 | v2 | hybrid | process
    perf_cgroup: str | None
    cpu_dir: Path | None
    cpu_v1: bool
    io_dir: Path | None
    io_v1: bool
    memory_dir: Path | None
    memory_v1: bool
    pid: int | None = None
    nodes: tuple["Scope", ...] = ()  # a cluster's: one cgroup scope per node

    def sample(self) -> Sample:
        if self.kind == "process":
            return _process_sample()
        if self.kind == "children":
            return _children_sample(self.pid)
        if self.kind == "cluster":
            return Sample.total(tuple(node.sample() for node in self.nodes))
        cpu, user, system = _cpu(self.cpu_dir, self.cpu_v1)
        io_read, io_write = _io(self.io_dir, self.io_v1)
        peak, current = _memory(self.memory_dir, self.memory_v1)
        rx, tx = _net(self.pid)
        return Sample(cpu, user, system, io_read, io_write, peak, current, rx, tx,
                      _storage_reads(self.cpu_dir or self.memory_dir))

    def unreaped(self) -> int | None:
        """Children of the cgroup's processes that exited and are not yet reaped (None for a
        process scope or a cluster). Such a zombie has left cgroup.procs, yet what it read from
        storage moves to its parent's /proc/<pid>/io only when the parent reaps it."""
        directory = self.cpu_dir or self.memory_dir
        if self.kind != "cgroup" or directory is None:
            return None
        try:
            pids = (directory / "cgroup.procs").read_text().split()
        except OSError:
            return None
        zombies = 0
        for pid in pids:
            try:
                children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
            except OSError:
                continue
            for child in children:
                try:
                    stat = Path(f"/proc/{child}/stat").read_text()
                except OSError:
                    continue  # reaped meanwhile
                zombies += stat[stat.rindex(")") + 2:].startswith("Z")
        return zombies

    def cpu_ns(self) -> int | None:
        """The CPU counter alone, for polling loops (the wait for quiet, the settle window's end):
        a full sample also reads I/O, memory, the network and every process's I/O file."""
        if self.kind == "cgroup":
            return _cpu(self.cpu_dir, self.cpu_v1)[0]
        if self.kind == "cluster":
            parts = [node.cpu_ns() for node in self.nodes]
            return None if any(p is None for p in parts) else sum(parts)
        return self.sample().cpu_ns

    @property
    def containers(self) -> bool:
        """Accounted by cgroups (one container, or a cluster's): it has background work to settle."""
        return self.kind in ("cgroup", "cluster")

    @property
    def perf_cgroups(self) -> tuple[str, ...]:
        """The cgroups `perf stat -G` counts for this scope: one, or each node's."""
        scopes = self.nodes if self.kind == "cluster" else (self,)
        return tuple(s.perf_cgroup for s in scopes if s.perf_cgroup)

    @property
    def source(self) -> str:
        if self.kind == "cluster":
            return CLUSTER_SOURCE
        return {"process": "process", "children": "children"}.get(self.kind, "cgroup")


# What the summed rows of a cluster's windows came from.
CLUSTER_SOURCE = "cgroup, sum of nodes"
# The scope (store column) of a cluster node's own rows: beside the cluster's summed rows (scope
# `server`), never part of an engine's cost by themselves.
NODE_SCOPE = "node"


def _mounts() -> tuple[dict[str, Path], Path | None]:
    """v1 controller -> mount point, and the cgroup2 mount point (from /proc/self/mountinfo)."""
    v1: dict[str, Path] = {}
    v2: Path | None = None
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        fstype, _source, options = (right.split() + ["", ""])[:3]
        mount_point = Path(left.split()[4])
        if fstype == "cgroup2" and v2 is None:
            v2 = mount_point
        elif fstype == "cgroup":
            for option in options.split(","):
                name = option[5:] if option.startswith("name=") else option
                v1.setdefault(name, mount_point)
    return v1, v2


def _membership(pid: int | str) -> tuple[dict[str, str], str | None]:
    v1: dict[str, str] = {}
    v2: str | None = None
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        hierarchy, controllers, path = line.split(":", 2)
        if hierarchy == "0" and controllers == "":
            v2 = path
        for controller in controllers.split(","):
            if controller:
                v1[controller] = path
    return v1, v2


def layout() -> str:
    v1, v2 = _mounts()
    real_v1 = {k for k in v1 if k not in ("systemd",)}
    if real_v1 and v2:
        return "hybrid"
    return "v1" if real_v1 else ("v2" if v2 else "none")


def scope_for_pid(pid: int) -> Scope:
    mounts_v1, mount_v2 = _mounts()
    member_v1, member_v2 = _membership(pid)

    def v1_dir(controller: str) -> Path | None:
        if controller in mounts_v1 and controller in member_v1:
            return mounts_v1[controller] / member_v1[controller].lstrip("/")
        return None

    v2_dir = mount_v2 / member_v2.lstrip("/") if mount_v2 is not None and member_v2 is not None else None

    def pick(controller: str, v2_file: str) -> tuple[Path | None, bool]:
        # Prefer v1 where the controller is mounted there: on hybrid hosts the unified hierarchy
        # has the cgroup but not the controller's files (cpuacct.usage is also ns-precise).
        d = v1_dir(controller)
        if d is not None and d.exists():
            return d, True
        if v2_dir is not None and (v2_dir / v2_file).exists():
            return v2_dir, False
        return None, False

    cpu_dir, cpu_v1 = pick("cpuacct", "cpu.stat")
    io_dir, io_v1 = pick("blkio", "io.stat")
    memory_dir, memory_v1 = pick("memory", "memory.current")
    if "perf_event" in member_v1 and "perf_event" in mounts_v1:
        perf_cgroup = member_v1["perf_event"].lstrip("/")
    else:
        perf_cgroup = (member_v2 or "/").lstrip("/")
    return Scope("cgroup", layout(), perf_cgroup or None, cpu_dir, cpu_v1, io_dir, io_v1, memory_dir, memory_v1, pid)


def cluster_scope(nodes: list[Scope]) -> Scope:
    """A cluster engine: its nodes' cgroups, sampled together and summed."""
    first = nodes[0]
    return Scope("cluster", first.layout, None, None, False, None, False, None, False, None, tuple(nodes))


def process_scope() -> Scope:
    """An embedded engine: this process (all its threads), read through getrusage."""
    return Scope("process", "process", None, None, False, None, False, None, False, os.getpid())


def children_scope(running: int | None = None) -> Scope:
    """Child processes this process has waited for (a benchmark client such as sysbench): their
    CPU is counted once they exit, so a window must wait for the child before it ends. `running`:
    a child already started when the window begins, whose CPU so far is read from /proc, so that
    only what it spends from the window's start on is counted (it must be waited for inside the
    window)."""
    return Scope("children", "process", None, None, False, None, False, None, False, running)


def _children_sample(running: int | None = None) -> Sample:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    user, system = int(usage.ru_utime * 1e9), int(usage.ru_stime * 1e9)
    if running is not None:
        # Once waited for, the child leaves /proc and its whole CPU is in RUSAGE_CHILDREN instead.
        child_user, child_system = _unreaped_cpu_ns(running)
        user, system = user + child_user, system + child_system
    return Sample(user + system, user, system, None, None, None, None)


def _unreaped_cpu_ns(pid: int) -> tuple[int, int]:
    """User and system CPU of a child not yet waited for (all its threads, from /proc/<pid>/stat
    in clock ticks); (0, 0) once it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0, 0
    fields = stat[stat.rindex(")") + 2:].split()
    tick_ns = 1e9 / os.sysconf("SC_CLK_TCK")
    return int(int(fields[11]) * tick_ns), int(int(fields[12]) * tick_ns)


def _storage_reads(directory: Path | None) -> int | None:
    """The sum of read_bytes over the cgroup's processes (/proc/<pid>/io): what they caused to be
    read from storage, page-cache hits excluded. A process that exits between two samples takes
    its bytes with it, so over a window this undercounts; None where the host hides the files."""
    if directory is None:
        return None
    try:
        pids = (directory / "cgroup.procs").read_text().split()
    except OSError:
        return None
    total, seen = 0, False
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/io").read_text().splitlines():
                if line.startswith("read_bytes:"):
                    total += int(line.split()[1])
                    seen = True
                    break
        except (OSError, ValueError):
            continue  # exited since the list was read, or not readable
    return total if seen else None


def _read_int(path: Path) -> int | None:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _keyed(path: Path) -> dict[str, int]:
    out: dict[str, int] = {}
    try:
        for line in path.read_text().splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[1].lstrip("-").isdigit():
                out[parts[0]] = int(parts[1])
    except OSError:
        pass
    return out


def _cpu(directory: Path | None, v1: bool) -> tuple[int | None, int | None, int | None]:
    if directory is None:
        return None, None, None
    if v1:
        # cpuacct.usage is exact; usage_user/_sys are split by ticks (4 ms steps) but sum to it.
        return (_read_int(directory / "cpuacct.usage"), _read_int(directory / "cpuacct.usage_user"),
                _read_int(directory / "cpuacct.usage_sys"))
    stat = _keyed(directory / "cpu.stat")
    scale = lambda key: stat[key] * 1000 if key in stat else None  # noqa: E731 - usec -> ns
    return scale("usage_usec"), scale("user_usec"), scale("system_usec")


def _io(directory: Path | None, v1: bool) -> tuple[int | None, int | None]:
    if directory is None:
        return None, None
    if v1:
        path = directory / "blkio.throttle.io_service_bytes_recursive"
        if not path.exists():
            path = directory / "blkio.throttle.io_service_bytes"
        try:
            lines = path.read_text().splitlines()
        except OSError:
            return None, None
        totals = {"Read": 0, "Write": 0}
        for line in lines:
            parts = line.split()
            if len(parts) == 3 and parts[1] in totals:
                totals[parts[1]] += int(parts[2])
        return totals["Read"], totals["Write"]
    try:
        lines = (directory / "io.stat").read_text().splitlines()
    except OSError:
        return None, None
    read = write = 0
    for line in lines:
        fields = dict(item.split("=", 1) for item in line.split()[1:] if "=" in item)
        read += int(fields.get("rbytes", 0))
        write += int(fields.get("wbytes", 0))
    return read, write


def _memory(directory: Path | None, v1: bool) -> tuple[int | None, int | None]:
    if directory is None:
        return None, None
    if v1:
        return _read_int(directory / "memory.max_usage_in_bytes"), _read_int(directory / "memory.usage_in_bytes")
    return _read_int(directory / "memory.peak"), _read_int(directory / "memory.current")


def _net(pid: int | None) -> tuple[int | None, int | None]:
    """Received and sent bytes of every interface but loopback in `pid`'s network namespace."""
    if pid is None:
        return None, None
    try:
        lines = Path(f"/proc/{pid}/net/dev").read_text().splitlines()[2:]
    except OSError:
        return None, None
    rx = tx = 0
    for line in lines:
        name, _, counters = line.partition(":")
        fields = counters.split()
        if name.strip() == "lo" or len(fields) < 9:
            continue
        rx += int(fields[0])
        tx += int(fields[8])
    return rx, tx


def _process_sample() -> Sample:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    user = int(usage.ru_utime * 1e9)
    system = int(usage.ru_stime * 1e9)
    io_read, io_write = _proc_io()
    try:
        rss = int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, IndexError, ValueError):
        rss = None
    # /proc/self/io read_bytes is what this process's threads caused to be read from storage, the
    # same counter a container's storage_read_bytes sums over its processes.
    return Sample(user + system, user, system, io_read, io_write, usage.ru_maxrss * 1024, rss,  # maxrss: KiB
                  storage_read_bytes=io_read)


def _proc_io() -> tuple[int | None, int | None]:
    stats = {}
    try:
        for line in Path("/proc/self/io").read_text().splitlines():
            key, _, value = line.partition(":")
            stats[key] = int(value)
    except (OSError, ValueError):
        return None, None
    return stats.get("read_bytes"), stats.get("write_bytes")
