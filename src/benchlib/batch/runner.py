"""A checked plan executed into a new report folder: engines prepared, then each notebook in
turn (a failure is recorded and the next one runs), then the folder's summary, index and
manifest and the site index, written even after an interrupt. With a shared store each
notebook's runs are published to it once the notebook is over; with a cluster the notebooks run
on its workers instead (cluster.py), each worker publishing its own."""
from __future__ import annotations

import secrets
import sys
from pathlib import Path

from ..core.settings import get_settings
from .execute import Interrupted, NotebookOutcome, execute, utc_now
from .plan import Planned, plan_engines, plan_valgrind
from .prepare import prepare_engines
from .site import new_report_dir, point_latest, write_folder, write_site_index


def run_notebooks(name: str, kind: str, plan: list[Planned], *, out_dir: Path | None = None,
                  out_root: Path | None = None, progress: bool = True, cluster: str | None = None,
                  store: str | None = None) -> tuple[Path, list[NotebookOutcome]]:
    """Execute a checked plan into a new report folder (`kind` run or batch, named after `name`),
    then write the folder's summary, index and manifest and the site index. An interrupted run
    still gets them, listing what finished. `store`: where runs are read and published (default:
    the settings' store); `cluster`: a Dask scheduler address, whose workers execute the plan and
    publish to `store`, which must then be shared. Both are checked before anything starts."""
    from ..core.errors import ParameterError
    from ..data.store import Store

    shared = Store.open(store).shared if store is not None else Store.default().shared
    connected = None
    if cluster is not None:
        from .cluster import check_address, connect, describe_workers

        check_address(cluster)
        if shared is None:
            raise ParameterError("a cluster batch needs a shared store for its workers' runs: --store "
                                 "s3://bucket/prefix (or BENCHLIB_STORE)")
        shared.check()
        connected = connect(cluster, shared.url)
        for line in describe_workers(connected):
            print(line, file=sys.stderr, flush=True)
    elif shared is not None:
        shared.check(write=True)
    root = Path(out_root or get_settings().reports_dir)
    out_dir = Path(out_dir) if out_dir else new_report_dir(name, root)
    out_dir.mkdir(parents=True, exist_ok=True)
    started_at = utc_now()
    outcomes: list[NotebookOutcome] = []
    complete = False
    preparing_seconds = 0.0
    try:
        if connected is not None:
            from .cluster import run_on_cluster

            batch = f"{started_at:%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}"
            run_on_cluster(connected, plan, shared.url, out_dir, batch, outcomes)
        else:
            preparing_seconds = prepare_engines(plan_engines(plan), valgrind=plan_valgrind(plan)).seconds
            for item in plan:
                try:
                    outcome = execute(item.notebook, out_dir, item.params, params_file_name=item.params_file,
                                      progress=progress, output_name=item.output_name)
                except Interrupted as exc:
                    outcomes.append(exc.outcome)
                    raise
                if shared is not None:
                    _publish(shared, outcome, out_dir)
                outcomes.append(outcome)
        complete = True
    finally:
        if connected is not None:
            connected.client.close()
        write_folder(out_dir, kind, name, outcomes, started_at, complete, preparing_seconds)
        if out_dir.parent.resolve() == root.resolve():
            point_latest(root, out_dir)
            write_site_index(root)
    return out_dir, outcomes


def _publish(shared, outcome: NotebookOutcome, out_dir: Path) -> None:
    """Publish the notebook's runs; a store that fails now is said, and the batch goes on (the
    runs stay in this host's store, to publish later)."""
    from ..core.errors import StoreError
    from ..data.liveness import reap_dead_runs
    from .publish import publish_outcome

    reap_dead_runs()  # a kernel that died mid-run left its run 'running': it is published as aborted
    try:
        publish_outcome(shared, outcome, out_dir)
    except StoreError as exc:
        outcome.publish_error = str(exc)
        print(f"benchlib: {outcome.notebook}: runs not published: {exc}", file=sys.stderr, flush=True)
