"""The notebook matrix on Dask distributed workers, every host's runs in one shared store.

A benchmark host runs one worker beside its own Docker engine, offering one unit of the `bench`
resource with one thread, so it never runs two measurements at once:

    BENCHLIB_HOST_CLASS=c6i.large BENCHLIB_HOST_PRICE="0.085 USD/h" \\
        dask worker tcp://scheduler:8786 --nthreads 1 --resources bench=1 --name host-a \\
        --preload benchlib.batch.cluster

`benchlib batch --cluster tcp://scheduler:8786 --store s3://bucket/prefix` checks the plan, the
scheduler, its workers and the store (one line each on failure, before anything starts), then
submits one task per notebook x parameter set needing `bench=1`. Each task runs on a worker as a
batch would run it here (engines prepared, the notebook executed by papermill, its report
rendered), then publishes the notebook's runs to the store (marker last) and records the task
there. A worker that dies mid-run loses its task to another worker (Dask reschedules it); the
dead attempt's run is marked aborted on its host and published as such when that host's worker
comes back. A retried task that finds its task record in the store returns it instead of
measuring again. The console shows each worker's progress lines as they come; the report folder
(reports/<time>-<hex>-<set>/) gets every notebook's executed copy, HTML and figures."""
from __future__ import annotations

import base64
import contextlib
import re
import socket
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from ..core.errors import ParameterError
from .execute import NotebookOutcome, utc_now
from .plan import Planned

RESOURCE = "bench"  # one unit per benchmark host: one measurement at a time
PROGRESS_TOPIC = "benchlib-progress"
CONNECT_TIMEOUT_S = 10.0
# A scheduler address as `dask worker` takes it: tcp://, tls:// or no scheme, host and port.
_ADDRESS = re.compile(r"(?:(tcp|tls|inproc)://)?(\[[0-9a-fA-F:]+\]|[A-Za-z0-9_.-]+):(\d{1,5})")


def check_address(address: str) -> str:
    """The scheduler address with its scheme (tcp:// when none is given), or a ParameterError."""
    match = _ADDRESS.fullmatch(address.strip())
    if match is None or not 0 < int(match.group(3)) < 65536:
        raise ParameterError(f"cluster must be a Dask scheduler address like tcp://host:8786, got {address!r}")
    return f"{match.group(1) or 'tcp'}://{match.group(2)}:{match.group(3)}"


# ---------------------------------------------------------------------------------------------
# On the worker


def worker_facts() -> dict[str, Any]:
    """What the client prints about a worker's host before submitting anything."""
    from ..host import cgroups, perf
    from ..host.provenance import benchlib_version, declared_host_class, git_state, has_pmu, host_facts, host_fingerprint

    facts = host_facts()
    try:
        host_class, price, unit = declared_host_class()
        problem = None
    except ParameterError as exc:
        host_class, price, unit, problem = None, None, None, str(exc)
    pmu = has_pmu(perf.probe().events)
    return {"hostname": facts["hostname"], "cpu_model": facts["cpu_model"], "cpu_cores": facts["cpu_cores"],
            "host_class": host_class, "host_price": price, "host_price_unit": unit, "problem": problem,
            "fingerprint": host_fingerprint(facts, cgroups.layout(), pmu), "git_sha": git_state()[0],
            "benchlib_version": benchlib_version()}


def check_worker_store(url: str) -> str | None:
    """None when this worker can write the store, else why not (one line)."""
    from ..core.errors import StoreError
    from ..data.shared_store import SharedStore

    try:
        SharedStore(url).check(write=True)
    except StoreError as exc:
        return str(exc)
    return None


class _EventStream:
    """A text stream whose lines go to the client as progress events of this worker."""

    def __init__(self, worker, task: str):
        self.worker, self.task, self._partial = worker, task, ""

    def isatty(self) -> bool:
        return False

    def write(self, text: str) -> int:
        lines = (self._partial + text).split("\n")
        self._partial = lines.pop()
        for line in lines:
            if line.strip():
                # Not "worker": the scheduler overwrites that key with the worker's address.
                self.worker.log_event(PROGRESS_TOPIC, {"host": str(self.worker.name), "task": self.task, "line": line})
        return len(text)

    def flush(self) -> None:
        pass


@dataclass(frozen=True)
class Task:
    """One notebook x parameter set, as the client sends it: the notebook by name (each worker
    has its own checkout), its parameters, and where its runs are published."""

    batch: str
    key: str
    notebook: str
    params: dict[str, Any]
    params_file: str | None
    output_name: str | None
    store: str


def _read_files(root: Path, names: list[str]) -> dict[str, str]:
    return {name: base64.b64encode((root / name).read_bytes()).decode() for name in names if (root / name).is_file()}


def run_task(task: Task) -> dict[str, Any]:
    """Execute one task on this worker and publish its runs. Returns the task record (the
    outcome, where and when it ran, what it published) with the report files' bytes."""
    from distributed import get_worker

    from ..data.liveness import reap_dead_runs
    from ..run.measure import CLUSTER_TASK_ENV, WORKER_ENV
    from ..host.provenance import declared_host_class
    from ..data.shared_store import SharedStore
    from .plan import check_parameters, engines_to_run, find_notebook, valgrind_to_run
    from .prepare import prepare_engines
    from .publish import notebook_files, publish_outcome
    from .site import new_report_dir
    from .execute import execute

    worker = get_worker()
    stream = _EventStream(worker, task.key)
    shared = SharedStore(task.store)
    earlier = shared.task_record(task.batch, task.key)
    if earlier is not None:  # an attempt whose worker died after publishing: never measure twice
        stream.write(f"{task.key}: already published by {earlier['worker']}, not run again\n")
        return {**earlier, "files": _files_from_store(shared, earlier), "reused_by": worker.name}
    reap_dead_runs()
    for run_id in publish_unpublished(shared):
        stream.write(f"published run {run_id}: an earlier task's run on this host, aborted\n")
    started_at = utc_now()
    notebook = find_notebook(task.notebook)
    checked = check_parameters(notebook, task.params)
    engines = engines_to_run(checked)  # what can run on *this* host
    preparing = prepare_engines(list(engines), valgrind=valgrind_to_run(checked), stream=stream).seconds
    out_dir = new_report_dir(f"cluster-{task.key}")
    outcome = execute(notebook, out_dir, task.params, params_file_name=task.params_file,
                      output_name=task.output_name, progress_stream=stream,
                      kernel_env={CLUSTER_TASK_ENV: f"{task.batch}/{task.key}", WORKER_ENV: str(worker.name)})
    reap_dead_runs()  # a kernel that died mid-run left its run 'running': aborted, then published as such
    ended_at = utc_now()
    host_class = declared_host_class()[0]
    published, publish_s = publish_outcome(shared, outcome, out_dir, meta={
        "batch": task.batch, "task": task.key, "worker": worker.name, "host_class": host_class,
        "task_started_at": started_at.isoformat(), "task_ended_at": ended_at.isoformat()})
    outcome.worker = str(worker.name)
    files = sorted(notebook_files(outcome, out_dir))
    record = {"batch": task.batch, "task": task.key, "worker": worker.name, "hostname": socket.gethostname(),
              "host_class": host_class, "started_at": started_at.isoformat(), "ended_at": ended_at.isoformat(),
              "preparing_seconds": preparing, "publish_seconds": publish_s, "published": published,
              "outcome": outcome.to_json(out_dir), "file_names": files,
              "files_run": outcome.run_ids[0] if outcome.run_ids else None}
    shared.record_task(task.batch, task.key, record)  # after the runs' markers: a retry finds it complete
    return {**record, "files": _read_files(out_dir, files)}


def _files_from_store(shared, record: dict) -> dict[str, str]:
    """The report files of an earlier attempt, from beside the run it published them with."""
    run_id = record.get("files_run")
    if not run_id:
        return {}
    out = {}
    for name in record.get("file_names", []):
        with contextlib.suppress(FileNotFoundError):
            out[name] = base64.b64encode(shared.fs.cat_file(shared.run_key(run_id, "notebook", name))).decode()
    return out


def dask_setup(worker) -> None:
    """`--preload benchlib.batch.cluster`: when the worker starts, runs that an earlier worker on
    this host left behind (killed mid-run) are marked aborted, and published when the host names
    its shared store (BENCHLIB_STORE=s3://...); a host price that cannot be read stops the worker
    before it takes a task."""
    from ..data.liveness import reap_dead_runs
    from ..host.provenance import declared_host_class
    from ..core.settings import get_settings
    from ..data.shared_store import SharedStore, is_shared

    declared_host_class()
    reap_dead_runs()
    store = get_settings().store
    if is_shared(store):
        for run_id in publish_unpublished(SharedStore(store)):
            print(f"benchlib: published aborted run {run_id} to {store}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# On the client


@dataclass
class Cluster:
    client: Any
    address: str
    workers: dict[str, dict[str, Any]] = field(default_factory=dict)  # address -> worker_facts() + name


def connect(address: str, store_url: str) -> Cluster:
    """A client of the scheduler at `address`, with its bench workers' facts, once the scheduler,
    its workers and the store have answered; every failure is a one-line error."""
    from distributed import Client

    from ..core.errors import BenchlibError

    address = check_address(address)
    host, _, port = address.split("://", 1)[1].rpartition(":")
    try:
        # A refused port answers at once; Dask's own connect would retry it until its timeout.
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT_S).close()
        client = Client(address, timeout=CONNECT_TIMEOUT_S, set_as_default=False)
    except (OSError, TimeoutError) as exc:
        detail = " ".join(str(exc).split())[:200]
        raise BenchlibError(f"no Dask scheduler answers at {address} within {CONNECT_TIMEOUT_S:.0f} s: {detail}") from None
    try:
        info = client.scheduler_info(n_workers=-1)["workers"]
        bench = {addr: w for addr, w in info.items() if (w.get("resources") or {}).get(RESOURCE, 0) >= 1}
        if not bench:
            raise BenchlibError(f"no worker of the scheduler at {address} offers {RESOURCE}=1 (start one per "
                                f"benchmark host: dask worker {address} --nthreads 1 --resources {RESOURCE}=1)")
        facts = client.run(worker_facts, workers=list(bench))
        problems = client.run(check_worker_store, store_url, workers=list(bench))
        for addr in bench:
            name = bench[addr].get("name") or addr
            if facts[addr]["problem"]:
                raise BenchlibError(f"worker {name}: {facts[addr]['problem']}")
            if problems[addr]:
                raise BenchlibError(f"worker {name}: {problems[addr]}")
        workers = {addr: {**facts[addr], "name": str(bench[addr].get("name") or addr)} for addr in bench}
    except BaseException:
        client.close()
        raise
    return Cluster(client, address, workers)


def _say(stream: TextIO, text: str) -> None:
    with contextlib.suppress(OSError, ValueError):
        stream.write(text + "\n")
        stream.flush()


def describe_workers(cluster: Cluster) -> list[str]:
    from ..host.provenance import git_state

    here = git_state()[0]
    lines = [f"cluster {cluster.address}: {len(cluster.workers)} worker(s) with {RESOURCE}=1"]
    for facts in sorted(cluster.workers.values(), key=lambda f: f["name"]):
        price = f", {facts['host_price']:g} {facts['host_price_unit']}" if facts["host_price"] is not None else ""
        other = "" if facts["git_sha"] == here else f"; its checkout is at {str(facts['git_sha'])[:10]}, not {str(here)[:10]}"
        lines.append(f"  {facts['name']}: {facts['hostname']}, class {facts['host_class'] or 'undeclared'}{price}, "
                     f"{facts['cpu_model']} x {facts['cpu_cores']}, fingerprint {facts['fingerprint']}{other}")
    return lines


def _outcome(record: dict, out_dir: Path) -> NotebookOutcome:
    data = dict(record["outcome"])
    for name in ("executed", "html"):
        data[name] = out_dir / data[name] if data.get(name) else None
    data["figures"] = [out_dir / p for p in data.get("figures") or []]
    data["worker"] = record.get("worker")
    known = NotebookOutcome.__dataclass_fields__
    return NotebookOutcome(**{k: v for k, v in data.items() if k in known})


def _failed(item: Planned, out_dir: Path, error: str) -> NotebookOutcome:
    name = item.output_name or item.notebook.stem
    return NotebookOutcome(name, item.params_file, False, 0.0, out_dir / f"{name}.ipynb", None, error=error)


def run_on_cluster(cluster: Cluster, plan: list[Planned], store_url: str, out_dir: Path, batch: str,
                   outcomes: list[NotebookOutcome], stream: TextIO | None = None) -> None:
    """Submit every planned notebook as a task needing one `bench` unit, print each worker's
    progress, and write each finished task's report files into `out_dir` as they come. `outcomes`
    gets each outcome as its task ends (in plan order once all have); a task that could not
    complete (every worker it was given died) is a failed outcome naming why. An interrupt
    cancels the tasks still queued and keeps the outcomes so far."""
    from distributed import as_completed

    stream = stream or sys.stderr
    client = cluster.client
    lock = threading.Lock()

    names = {address: facts["name"] for address, facts in cluster.workers.items()}
    ours = f"benchlib-{batch}-"

    def on_progress(event) -> None:
        _, msg = event
        with lock:
            _say(stream, f"{msg.get('host')} | {msg.get('line')}")

    def on_membership(event) -> None:
        """Workers leaving (a dead host: its task goes to another) and joining, as they happen."""
        _, msg = event
        action, address = msg.get("action"), msg.get("worker")
        if action == "remove-worker":
            lost = [str(k)[len(ours):] for k in msg.get("processing-tasks") or [] if str(k).startswith(ours)]
            again = f"; its task {', '.join(lost)} goes to another worker" if lost else ""
            with lock:
                _say(stream, f"{names.get(address, address)} | left the cluster{again}")
        elif action == "add-worker":
            with lock:
                _say(stream, f"{address} | joined the cluster")

    client.subscribe_topic(PROGRESS_TOPIC, on_progress)
    client.subscribe_topic("all", on_membership)
    # A plan names each notebook x set once (output_name when a notebook runs with several sets).
    tasks = [Task(batch, item.output_name or item.notebook.stem, item.notebook.stem, item.params,
                  item.params_file, item.output_name, store_url) for item in plan]
    futures = {client.submit(run_task, task, key=f"benchlib-{batch}-{task.key}", resources={RESOURCE: 1},
                             pure=False, retries=0): i for i, task in enumerate(tasks)}
    _say(stream, f"submitted {len(tasks)} task(s) to {cluster.address}; each needs {RESOURCE}=1")
    by_index: dict[int, NotebookOutcome] = {}
    done_per_worker: dict[str, int] = {}
    try:
        for future in as_completed(futures, loop=client.loop):
            index = futures[future]
            try:
                record = future.result()
            except Exception as exc:  # KilledWorker after every allowed attempt, a benchlib error on the worker
                text = " ".join(str(exc).split())[:300]
                outcome = _failed(plan[index], out_dir, f"{type(exc).__name__}: {text}")
                _say(stream, f"{tasks[index].key}: FAILED on the cluster: {outcome.error}")
            else:
                for name, data in record.pop("files", {}).items():
                    dest = out_dir / name
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    dest.write_bytes(base64.b64decode(data))
                outcome = _outcome(record, out_dir)
                worker = str(record.get("reused_by") or record["worker"])
                done_per_worker[worker] = done_per_worker.get(worker, 0) + 1
                status = "ok" if outcome.ok else f"FAILED: {outcome.error or outcome.render_error}"
                _say(stream, f"{worker} | {outcome.notebook}: {status} ({outcome.seconds:.0f} s; published "
                             f"{', '.join(record['published']) or 'nothing new'}) - {len(by_index) + 1}/{len(tasks)} "
                             "done; per worker: " + ", ".join(f"{w} {n}" for w, n in sorted(done_per_worker.items())))
            by_index[index] = outcome
            outcomes.append(outcome)
    except BaseException:
        client.cancel(list(futures))
        raise
    finally:
        with contextlib.suppress(Exception):
            client.unsubscribe_topic(PROGRESS_TOPIC)
            client.unsubscribe_topic("all")
    outcomes[:] = [by_index[i] for i in sorted(by_index)]


def publish_unpublished(shared, local=None, *, statuses: tuple[str, ...] = ("aborted",)) -> list[str]:
    """Publish this host's cluster runs that ended without their task publishing them (the
    worker died mid-run, the next benchlib process marked them aborted): the shared store then
    shows the attempt beside its retry. Runs measured outside a cluster task stay local."""
    from ..data.store import Store

    local = local or Store.default_local()
    if not local.run_ids():
        return []
    rows = local.query("select run_id from runs where cluster_task is not null and status in (select unnest(?))",
                       [list(statuses)])
    published = []
    known = set(shared.run_ids())
    for run_id in rows["run_id"]:
        if run_id not in known and shared.publish(local, run_id, meta={"published_by": "liveness"}):
            published.append(run_id)
    return published
