"""`benchlib batch --cluster`: the notebook matrix on Dask workers, every run in one S3 bucket.

Real parts: MinIO in a container (its image built offline from its Go module where no registry
answers), a `dask scheduler` and two `dask worker` processes (one thread, bench=1, each with its
own data folder and host class), the CLI as a user runs it, papermill kernels recording real runs
of the tiny project's notebooks (sqlite), and s3fs reading the bucket back."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cliproject import BENCHLIB, make_project, one_line

pytestmark = [pytest.mark.docker, pytest.mark.notebook]

DASK = Path(sys.executable).parent / "dask"
BUCKET = "bench-results"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def minio():
    from benchlib.containers.services import start_minio
    from benchlib.data.shared_store import SharedStore

    with start_minio() as server:
        os.environ.update(server.env())  # this process's s3fs reads the bucket with the same credentials
        try:
            shared = SharedStore(f"s3://{BUCKET}/cluster")
            shared.fs.mkdir(BUCKET)
            yield server
        finally:
            for key in server.env():
                os.environ.pop(key, None)


class Cluster:
    """A scheduler and two workers as processes on this host, each worker with its own data
    folder, reports folder and host class: two benchmark hosts in miniature."""

    def __init__(self, root: Path, env: dict[str, str]):
        self.root, self.env = root, env
        self.address = f"tcp://127.0.0.1:{_free_port()}"
        self.scheduler = self._spawn([str(DASK), "scheduler", "--host", "127.0.0.1", "--port",
                                      self.address.rsplit(":", 1)[1], "--no-dashboard"], env, "scheduler")
        self.workers: dict[str, subprocess.Popen] = {}

    def _spawn(self, args: list[str], env: dict[str, str], name: str) -> subprocess.Popen:
        log = open(self.root / f"{name}.log", "ab")
        return subprocess.Popen(args, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    def worker_env(self, name: str) -> dict[str, str]:
        return {**self.env, "BENCHLIB_DATA_DIR": str(self.root / name / "data"),
                "BENCHLIB_REPORTS_DIR": str(self.root / name / "reports"),
                "BENCHLIB_HOST_CLASS": f"class-{name[-1]}", "BENCHLIB_HOST_PRICE": "0.05 USD/h",
                "BENCHLIB_STORE": f"s3://{BUCKET}/cluster"}

    def start_worker(self, name: str) -> None:
        self.workers[name] = self._spawn(
            [str(DASK), "worker", self.address, "--nthreads", "1", "--resources", "bench=1", "--name", name,
             "--no-nanny", "--host", "127.0.0.1", "--no-dashboard", "--preload", "benchlib.batch.cluster"],
            self.worker_env(name), name)

    def wait_for(self, names: set[str], timeout: float = 60) -> None:
        from distributed import Client

        deadline = time.monotonic() + timeout
        with Client(self.address, timeout=timeout, set_as_default=False) as client:
            while {w["name"] for w in client.scheduler_info(n_workers=-1)["workers"].values()} != names:
                assert time.monotonic() < deadline, f"workers {names} did not join: see {self.root}/*.log"
                time.sleep(0.2)

    def local_runs(self, name: str):
        from benchlib.data.store import Store

        return Store(self.root / name / "data" / "results").query("select run_id, status, owner from runs")

    def stop(self) -> None:
        for proc in [*self.workers.values(), self.scheduler]:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in [*self.workers.values(), self.scheduler]:
            try:
                proc.wait(timeout=5)  # idle by now: nothing of theirs to close gracefully
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


@pytest.fixture(scope="module")
def project(tmp_path_factory, minio):
    project = make_project(tmp_path_factory.mktemp("cluster") / "project")
    for stem in ("02-tiny", "03-tiny", "04-tiny"):
        project.add_notebook(stem)
    project.env.update(minio.env())
    return project


@pytest.fixture(scope="module")
def cluster(project):
    cluster = Cluster(project.root.parent, project.env)
    try:
        cluster.start_worker("host-a")
        cluster.start_worker("host-b")
        cluster.wait_for({"host-a", "host-b"})
        yield cluster
    finally:
        cluster.stop()


def _client_env(project, **extra) -> dict[str, str]:
    """The submitting host: a data folder of its own, empty, so what it lists comes from the bucket."""
    data = project.root / "client-data"
    return {**project.env, "BENCHLIB_DATA_DIR": str(data), **extra}


def _shared():
    from benchlib.data.shared_store import SharedStore

    return SharedStore(f"s3://{BUCKET}/cluster")


def test_a_cluster_batch_runs_on_both_workers_one_task_at_a_time_and_publishes_every_run(project, cluster):
    env = _client_env(project)
    result = subprocess.run([str(BENCHLIB), "batch", "--set", "tiny",
                             "-P", "seconds=0.5", "--cluster", cluster.address, "--store", f"s3://{BUCKET}/cluster"],
                            env=env, capture_output=True, text=True, timeout=300, cwd=project.root)
    assert result.returncode == 0, result.stderr
    # Per-host progress on the console: each worker's own lines, prefixed with its name.
    for name in ("host-a", "host-b"):
        assert f"  {name}: " in result.stderr and f"\n{name} | " in result.stderr, result.stderr

    shared = _shared()
    markers = [shared.marker(run_id) for run_id in shared.run_ids()]
    assert len(markers) == 4 and {m["status"] for m in markers} == {"ok"}
    assert {m["worker"] for m in markers} == {"host-a", "host-b"}
    for marker in markers:  # every object the marker vouches for is there, at its size
        for name, size in marker["objects"].items():
            assert shared.fs.size(shared.run_key(marker["run_id"], name)) == size
        assert {"runs.parquet", "measurements.parquet", f"notebook/{marker['notebook']}.html"} <= set(marker["objects"])
    # Never two tasks at once on one worker: each worker's task windows follow one another.
    for worker in ("host-a", "host-b"):
        spans = sorted((m["task_started_at"], m["task_ended_at"]) for m in markers if m["worker"] == worker)
        assert all(end <= next_start for (_, end), (next_start, _) in zip(spans, spans[1:])), spans

    # `benchlib runs --store s3://...` from a host whose own store is empty: every run, with its host.
    listed = subprocess.run([str(BENCHLIB), "runs", "--store",
                             f"s3://{BUCKET}/cluster"], env=env, capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0, listed.stderr
    for marker in markers:
        line = next(line for line in listed.stdout.splitlines() if marker["run_id"] in line)
        assert f" class-{marker['worker'][-1]} " in line and f" {marker['worker']} " in line, line

    from benchlib.data.store import Store

    runs = Store.open(f"s3://{BUCKET}/cluster").query(
        "select worker, host_class, host_price, host_price_unit, host_fingerprint, cpu_model, cpu_cores, "
        "memory_bytes, kernel, cgroup_layout, pmu, cluster_task from runs")
    assert set(runs["worker"]) == {"host-a", "host-b"}
    assert set(zip(runs["worker"], runs["host_class"])) == {("host-a", "class-a"), ("host-b", "class-b")}
    assert (runs["host_price"] == 0.05).all() and (runs["host_price_unit"] == "USD/h").all()
    assert runs["host_fingerprint"].str.fullmatch(r"[0-9a-f]{12}").all() and runs["pmu"].notna().all()
    assert runs[["cpu_model", "cpu_cores", "memory_bytes", "kernel", "cgroup_layout"]].notna().all().all()

    # The report folder on the submitting host has every notebook's report, and says where each ran.
    (folder,) = [p for p in project.reports.iterdir() if p.is_dir() and not p.is_symlink()]
    manifest = json.loads((folder / "manifest.json").read_text())
    assert [o["notebook"] for o in manifest["outcomes"]] == ["01-tiny", "02-tiny", "03-tiny", "04-tiny"]
    assert all(o["ok"] and o["worker"] in ("host-a", "host-b") and (folder / o["html"]).exists()
               for o in manifest["outcomes"])


def test_a_worker_killed_mid_run_loses_its_task_to_the_other_worker(project, cluster, tmp_path):
    shared = _shared()
    before = set(shared.run_ids())
    marker = tmp_path / "kernel.pid"
    batch = subprocess.Popen([str(BENCHLIB), "batch", "--set", "tiny",
                              "--only", "01-tiny", "-P", "n=3", "-P", "seconds=2", "-P", f"marker={marker}",
                              "--cluster", cluster.address, "--store", f"s3://{BUCKET}/cluster"],
                             env=_client_env(project), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not (marker.exists() and marker.read_text()):
            assert batch.poll() is None, batch.communicate()
            assert time.monotonic() < deadline, "no kernel started the notebook"
            time.sleep(0.1)
        kernel = int(marker.read_text())
        parent = int(Path(f"/proc/{kernel}/stat").read_text().rsplit(")", 1)[1].split()[1])
        (killed,) = [name for name, proc in cluster.workers.items() if proc.pid == parent]
        time.sleep(1)  # inside the measured run
        cluster.workers[killed].kill()  # the host is gone: no chance to close its run or publish
        cluster.workers[killed].wait()
        _, stderr = batch.communicate(timeout=240)
    finally:
        if batch.poll() is None:
            batch.kill()
            batch.wait()
    assert batch.returncode == 0, stderr
    survivor = ({"host-a", "host-b"} - {killed}).pop()

    new = sorted(set(shared.run_ids()) - before)
    (retried,) = new  # the retry, published once; the killed attempt nowhere
    assert shared.marker(retried)["worker"] == survivor and shared.marker(retried)["status"] == "ok"
    (dead,) = cluster.local_runs(killed).query("status == 'running'")["run_id"]
    assert not shared.fs.exists(shared.run_key(dead))

    # A publisher that died between its objects and its marker: readers still see no such run.
    from benchlib.data.store import Store

    exported = Store(cluster.root / killed / "data" / "results").export_runs([dead], tmp_path / "half")
    shared.fs.put(str(exported / "runs.parquet"), shared.run_key(dead, "runs.parquet"))
    reader = Store.open(f"s3://{BUCKET}/cluster")
    assert dead not in reader.run_ids() and dead not in set(reader.query("select run_id from runs")["run_id"])

    # The console said which worker left and that its task went to another.
    assert f"{killed} | left the cluster; its task 01-tiny goes to another worker" in stderr, stderr

    # The killed host's worker comes back: its dead run is marked aborted and published as such.
    cluster.start_worker(killed)
    cluster.wait_for({"host-a", "host-b"})
    deadline = time.monotonic() + 30
    while shared.marker(dead) is None:
        assert time.monotonic() < deadline, f"the restarted {killed} did not publish {dead}"
        time.sleep(0.2)
    assert shared.marker(dead)["status"] == "aborted" and shared.marker(dead)["published_by"] == "liveness"
    status = Store.open(f"s3://{BUCKET}/cluster").query("select status, status_note from runs where run_id = ?", [dead])
    assert status["status"][0] == "aborted" and "is gone" in status["status_note"][0]


def test_bad_addresses_and_credentials_fail_in_one_line_before_anything_starts(project, cluster, benchlib_containers):
    before = benchlib_containers()
    folders = set(project.reports.iterdir()) if project.reports.exists() else set()
    store = f"s3://{BUCKET}/cluster"
    cases = [
        (["--cluster", "scheduler", "--store", store], {},
         "cluster must be a Dask scheduler address like tcp://host:8786, got 'scheduler'"),
        (["--cluster", f"tcp://127.0.0.1:{_free_port()}", "--store", store], {}, "no Dask scheduler answers at "),
        (["--cluster", cluster.address, "--store", "s3://Results/x"], {}, "store bucket must be an S3 bucket name"),
        (["--cluster", cluster.address], {}, "a cluster batch needs a shared store"),
        (["--cluster", cluster.address, "--store", store], {"AWS_SECRET_ACCESS_KEY": "wrong"}, "refused the credentials"),
        (["--cluster", cluster.address, "--store", "s3://no-such-bucket/x"], {}, "no bucket 'no-such-bucket'"),
    ]
    for args, env, expected in cases:
        result = subprocess.run([str(BENCHLIB), "batch", "--set", "tiny", *args],
                                env=_client_env(project, **env), capture_output=True, text=True, timeout=120)
        assert result.returncode == 2, (args, result.stderr)
        line = one_line(result.stderr)
        assert line.startswith("benchlib: error: ") and expected in line, line
        assert "wrong" not in line and project.env["AWS_SECRET_ACCESS_KEY"] not in line
    assert benchlib_containers() == before
    assert (set(project.reports.iterdir()) if project.reports.exists() else set()) == folders  # no report folder
