"""`benchlib` command line: engines on this host, one-off starts, notebook runs and batches, runs
in the store, clean-up. `benchlib --help` lists the commands."""
from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import sys
import time
from pathlib import Path

from .core.errors import BenchlibError


def _engines(args: argparse.Namespace) -> int:
    from .host import perf
    from .host.docker_host import docker_reachable
    from .engines import ALL_ENGINES
    from .containers.images import availability
    from .workloads import supporting

    ok, docker_detail = docker_reachable()
    print(f"Docker: {'reachable' if ok else 'NOT reachable'} - {docker_detail}")
    support = perf.probe()
    print(f"perf:   {support.version or 'missing'} - {support.describe()}")
    print()
    print(f"{'engine':20} {'kind':9} {'family':9} {'status':12} detail")
    for key, engine in ALL_ENGINES.items():  # each engine's default, then every key@version
        if engine.server is not None:
            if ok:
                status = availability(engine)
                state, detail = status.status, status.detail
            else:
                state, detail = "unavailable", "Docker not reachable"
        else:
            state, detail = "embedded", engine.embedded.library()
        print(f"{key:20} {engine.kind:9} {engine.family:9} {state:12} {detail}")
        print(f"{'':20} workloads: {', '.join(supporting(engine)) or 'none'}")
        if engine.defaults_note:
            print(f"{'':20} note: {engine.defaults_note}")
    return 0


def _start(args: argparse.Namespace) -> int:
    from .engines import get_engine
    from .containers.lifecycle import start

    for key in args.engines:  # every key checked before the first container starts
        get_engine(key)
    for key in args.engines:
        t0 = time.perf_counter()
        with start(key) as instance:
            p = instance.provenance
            where = f"127.0.0.1:{instance.port}" if instance.port else "in-process"
            print(f"{key}: {p['server_version']}")
            print(f"  image {p['image_ref']} ({p['image_source']}), {where}, "
                  f"ready in {p['startup_seconds']:.2f}s (start() total {time.perf_counter() - t0:.2f}s)")
            if p.get("client_path"):
                print(f"  benchlib's clients use {p['client_path']}")
            print(f"  durability: {p['durability']}")
    return 0


def _overrides(pairs: list[str]) -> dict:
    from .batch import parse_override

    return dict(parse_override(p) for p in pairs or [])


def _reap_dead() -> None:
    """What killed runners left: runs still marked running, perf windows and their folders."""
    from .host import perf
    from .data.liveness import reap_dead_runs

    for run_id in reap_dead_runs():
        print(f"marked run {run_id} aborted: its owner process is gone", file=sys.stderr)
    perf.reap_orphans()


def _run(args: argparse.Namespace) -> int:
    from .batch import (Planned, check_parameters, engines_to_run, find_notebook, load_params, params_file,
                        run_notebooks, valgrind_to_run)

    from .host.provenance import declared_host_class

    declared_host_class()  # a malformed host price is one line here, not a failed cell in the kernel
    overrides = _overrides(args.param)
    notebook = find_notebook(args.notebook)
    pfile = Path(args.params) if args.params else params_file(notebook, args.set)
    params = load_params(pfile, overrides)
    checked = check_parameters(notebook, params)  # before any kernel starts and before any report folder exists
    _reap_dead()
    planned = Planned(notebook, params, args.params or pfile.name, engines=engines_to_run(checked),
                      valgrind=valgrind_to_run(checked))
    _, (outcome,) = run_notebooks(notebook.stem, "run", [planned], out_dir=Path(args.out) if args.out else None)
    print(f"{'ok' if outcome.ok else 'FAILED'}: {outcome.notebook} in {outcome.seconds:.0f}s")
    print(f"  executed notebook: {outcome.executed}")
    print(f"  report: {outcome.html}")
    if outcome.error:
        print(f"  error: {outcome.error}", file=sys.stderr)
    if outcome.render_error:
        print(f"  report not rendered: {outcome.render_error}", file=sys.stderr)
    return 0 if outcome.ok else 1


def _batch(args: argparse.Namespace) -> int:
    from .batch import plan_batch, run_notebooks

    from .host.provenance import declared_host_class

    if not args.cluster:
        declared_host_class()  # this host measures: its declared price must read
    overrides = _overrides(args.param)
    if args.cluster:
        from .batch.cluster import check_address

        check_address(args.cluster)  # a typo is one line before the plan is even read
    plan = plan_batch(args.set, only=args.only, overrides=overrides)
    _reap_dead()
    out_dir, outcomes = run_notebooks(args.set, "batch", plan, cluster=args.cluster)
    print((out_dir / "summary.txt").read_text(), end="")
    print(f"reports: {out_dir / 'index.html'}")
    failed = [o for o in outcomes if not o.ok]
    if failed:
        print(f"{len(failed)} of {len(outcomes)} notebook(s) failed", file=sys.stderr)
        return 1
    return 0


def _runs(args: argparse.Namespace) -> int:
    import pandas as pd

    from .data.results import runs
    from .data.store import Store

    _reap_dead()
    store = Store.default()
    if store.shared is not None:
        store.shared.check()
    if args.show:
        return _show_run(args.show)
    df = runs(experiment=args.experiment, limit=args.limit)
    if df.empty:
        print("no runs in the store yet")
        return 0
    with pd.option_context("display.width", 200, "display.max_colwidth", 60):
        columns = ["run_id", "experiment", "notebook", "status", "started_at", "hostname", "host_class",
                   "host_fingerprint", "worker", "git_sha", "error", "status_note"]
        print(df[[c for c in columns if c in df]].to_string(index=False))
    return 0


def _show_run(run_id: str) -> int:
    """One run: its row, provenance summary, and every failure with its full traceback."""
    from .data.results import instances, run_info

    info = run_info(run_id)
    for key in ("run_id", "experiment", "notebook", "status", "started_at", "ended_at", "hostname", "cpu_model",
                "kernel", "host_class", "host_price", "host_price_unit", "pmu", "host_fingerprint", "cluster_task",
                "worker", "benchlib_version", "git_sha", "status_note"):
        print(f"{key}: {info.get(key)}")
    print("parameters: " + ", ".join(f"{k}={v!r}" for k, v in info["parameters"].items()))
    for row in instances(run_id).itertuples():
        print(f"instance {row.instance_id}: {row.image_ref} ({row.image_source}) {row.server_version}")
    if info["failures"]:
        for what, trace in info["failures"].items():
            print(f"\nfailed: {what}\n{trace.rstrip()}")
    elif info.get("error"):
        print(f"error: {info['error']}")
    return 0


def _cleanup(args: argparse.Namespace) -> int:
    from .host import perf
    from .containers.lifecycle import managed_containers, managed_networks, managed_volumes, reap_stale
    from .data.liveness import reap_dead_runs

    aborted = reap_dead_runs()
    print(f"marked {len(aborted)} run(s) of dead processes aborted{': ' if aborted else ''}{', '.join(aborted)}")
    print(f"removed {len(perf.reap_orphans())} perf window folder(s) of dead processes")

    if args.all:
        containers = managed_containers()
        for c in containers:
            c.remove(force=True, v=True)
        volumes = managed_volumes()
        for v in volumes:
            v.remove(force=True)
        networks = managed_networks()  # clusters' networks: empty once their containers are gone
        for n in networks:
            n.remove()
        print(f"removed {len(containers)} benchlib container(s), {len(volumes)} data volume(s) and "
              f"{len(networks)} cluster network(s)")
    else:
        print(f"removed {len(reap_stale())} stale benchlib container(s) and data volume(s)")
    return 0


def _images(args: argparse.Namespace) -> int:
    from .batch import prepare_engines
    from .engines import ENGINES, get_engine

    keys = args.engines or [k for k, e in ENGINES.items() if e.server is not None and e.server.recipe]
    for key in keys:
        if get_engine(key).server is None:
            print(f"{key}: embedded, no image")
    # The batch's own step: a line per image, docker's build steps, a heartbeat while a build runs.
    prepared = prepare_engines(keys, stream=sys.stdout)
    return 1 if prepared.failed else 0


def _export(args: argparse.Namespace) -> int:
    from .data.store import Store

    dest = Store.default().export_runs(args.run_ids, Path(args.to))
    print(f"exported {len(args.run_ids)} run(s) to {dest}")
    return 0


def _import(args: argparse.Namespace) -> int:
    from .data.store import Store

    new = Store.default().import_runs(Path(args.source))
    print(f"imported {len(new)} new run(s): {', '.join(new) or '-'}")
    return 0


REGRESSION_EXIT = 3  # distinct from errors (1, 2): a gate can tell "slower" from "broken"


def _changes(args: argparse.Namespace) -> int:
    from .compare.changes import describe, find_changes

    found = find_changes(experiment=args.experiment, metric=args.metric, threshold=args.threshold, latest=args.latest)
    print("\n".join(describe(found)))
    return REGRESSION_EXIT if not found.regressions.empty else 0


def _site(args: argparse.Namespace) -> int:
    from .batch import write_site_index
    from .core.settings import get_settings

    root = get_settings().reports_dir
    root.mkdir(parents=True, exist_ok=True)  # before any run has made it
    index = write_site_index(root)  # writes the explorer beside it
    print(f"site index: {index}")
    print(f"explorer:   {root / 'explorer.html'}")
    return 0


def _threshold(text: str) -> float:
    from .core.errors import ParameterError
    from .run.parameters import fraction

    try:
        value: object = float(text)
    except ValueError:
        value = text  # fraction() names it in its message
    try:
        return fraction()("threshold", value, {})
    except ParameterError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def parser() -> argparse.ArgumentParser:
    debug = argparse.ArgumentParser(add_help=False)
    # Accepted before or after the command; SUPPRESS keeps a subcommand from resetting it.
    debug.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                       help="show Python tracebacks (errors are one line without it)")
    store = argparse.ArgumentParser(add_help=False)
    store.add_argument("--store", metavar="PATH|s3://BUCKET/PREFIX",
                       help="the results store to read (and publish runs to): a local folder, or a shared store "
                            "read together with this host's own runs (default: BENCHLIB_STORE, else data/results); "
                            "S3 credentials and endpoint come from the AWS environment (AWS_ACCESS_KEY_ID, "
                            "AWS_SECRET_ACCESS_KEY or AWS_PROFILE, AWS_ENDPOINT_URL)")
    p = argparse.ArgumentParser(prog="benchlib", description=__doc__, parents=[debug])
    sub = p.add_subparsers(dest="command", required=True)

    def command(name: str, summary: str, func, *, reads_store: bool = False) -> argparse.ArgumentParser:
        s = sub.add_parser(name, help=summary, parents=[debug, store] if reads_store else [debug])
        s.set_defaults(func=func)
        return s

    command("engines", "list engines and whether they can run on this host (and why not)", _engines)

    s = command("start", "start engines one by one, print version and start-to-ready time, stop", _start)
    s.add_argument("engines", nargs="+", metavar="ENGINE")

    s = command("run", "execute one notebook with papermill and render its report", _run, reads_store=True)
    s.add_argument("notebook", help="notebook path, file name or number prefix (e.g. 01)")
    s.add_argument("-p", "--params", help="YAML parameter file (default: papermill_params/<notebook>/<set>.yaml)")
    s.add_argument("--set", default="default", help="parameter set name (default: default)")
    s.add_argument("-P", "--param", action="append", metavar="NAME=VALUE", help="override one parameter (YAML value)")
    s.add_argument("--out", help="output folder (default: reports/<UTC time>-<6 hex>-<notebook>)")

    s = command("batch", "execute every notebook with its parameter set; exit 1 if any failed", _batch,
                reads_store=True)
    s.add_argument("--set", default="default", help="parameter set name (default: default)")
    s.add_argument("--only", nargs="+", metavar="NOTEBOOK", help="run only these notebooks")
    s.add_argument("-P", "--param", action="append", metavar="NAME=VALUE", help="override one parameter")
    s.add_argument("--cluster", metavar="ADDRESS",
                   help="run each notebook x parameter set as a task on the Dask workers of this scheduler "
                        "(tcp://host:8786), one at a time per worker offering bench=1; needs a shared --store")

    s = command("runs", "list recent runs in the results store", _runs, reads_store=True)
    s.add_argument("--experiment")
    s.add_argument("--limit", type=int, default=20)
    s.add_argument("--show", metavar="RUN_ID", help="one run in full, with every failure's traceback")

    s = command("cleanup", "remove what killed runs left: containers, perf windows; mark their runs aborted", _cleanup)
    s.add_argument("--all", action="store_true", help="remove every benchlib container, running or not")

    s = command("images", "resolve (pull or build) the images of server engines", _images)
    s.add_argument("engines", nargs="*", metavar="ENGINE")

    s = command("changes", "list changes judged better or worse (findings.judge) between consecutive runs of each series; "
                           f"exit {REGRESSION_EXIT} if one is a regression", _changes, reads_store=True)
    s.add_argument("--experiment", help="only this experiment's runs (default: every experiment)")
    s.add_argument("--threshold", type=_threshold, default=0.05, help="smallest change listed (default: 0.05 = 5%%)")
    s.add_argument("--metric", help="metric id, e.g. client:tps (default: the engine's cost per operation where "
                                    "counted, else per phase window)")
    s.add_argument("--latest", action="store_true", help="only each series' newest pair (a gate on the newest run)")

    command("site", "rewrite reports/index.html and reports/explorer.html (every run in the store)", _site,
            reads_store=True)

    s = command("export", "export runs as Parquet, to merge into another store", _export, reads_store=True)
    s.add_argument("run_ids", nargs="+", metavar="RUN_ID")
    s.add_argument("--to", required=True, help="destination folder")

    s = command("import", "merge runs exported by `benchlib export` into this store", _import)
    s.add_argument("source", help="folder written by `benchlib export`")
    return p


def _say(message: str) -> None:
    print(f"benchlib: {message}", file=sys.stderr, flush=True)


def _silence(stream) -> None:
    """Point a standard stream's descriptor at /dev/null (its buffered text is dropped)."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)


def _quiet_libraries() -> None:
    """Papermill, nbclient and asyncio log to stderr through logging's last-resort handler; after
    Ctrl-C they report the kernel just shut down ("Kernel died while waiting for execute reply",
    "Task exception was never retrieved"). What matters is in the run's outcome and report."""
    for name in ("asyncio", "papermill", "nbclient", "traitlets"):
        logger = logging.getLogger(name)
        logger.addHandler(logging.NullHandler())
        logger.propagate = False


def _use_store(spec: str | None) -> None:
    """`--store` is BENCHLIB_STORE for this command and the kernels it starts; checked for its
    form here (a bad URL is one line), contacted when first read."""
    if spec is None:
        return
    from .core.settings import STORE_ENV
    from .data.store import Store

    Store.open(spec)
    os.environ[STORE_ENV] = spec


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    debug = getattr(args, "debug", False)
    if not debug:
        _quiet_libraries()
    try:
        _use_store(getattr(args, "store", None))
        code = args.func(args)
        sys.stdout.flush()  # a closed pipe (`benchlib runs | head -1`) shows up here, not at exit
        return code
    except BrokenPipeError:
        _silence(sys.stdout)  # the interpreter flushes stdout again at exit
        return 128 + signal.SIGPIPE
    except KeyboardInterrupt:
        if debug:
            raise
        _say("interrupted")
        # Kernel clients and asyncio complain about their torn-down sockets and tasks at exit.
        _silence(sys.stderr)
        return 130
    except BenchlibError as exc:
        if debug:
            raise
        _say(f"error: {exc}")
        return 2
    except Exception as exc:
        if debug:
            raise
        detail = str(exc).strip().splitlines()
        _say(f"unexpected error: {type(exc).__name__}: {detail[0] if detail else ''} "
             "(run with --debug for the traceback)")
        return 1
