"""`benchlib` command line: engines on this host, one-off starts, notebook runs and batches, runs
in the store, clean-up. `benchlib --help` lists the commands."""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from .errors import BenchlibError


def _engines(args: argparse.Namespace) -> int:
    from . import perf
    from .docker_host import docker_reachable
    from .engines import ENGINES
    from .images import availability

    ok, docker_detail = docker_reachable()
    print(f"Docker: {'reachable' if ok else 'NOT reachable'} - {docker_detail}")
    support = perf.probe()
    print(f"perf:   {support.version or 'missing'} - {support.describe()}")
    print()
    print(f"{'engine':10} {'kind':9} {'family':9} {'status':12} detail")
    for key, engine in ENGINES.items():
        if engine.server is not None:
            if ok:
                status = availability(engine)
                state, detail = status.status, status.detail
            else:
                state, detail = "unavailable", "Docker not reachable"
        else:
            state, detail = "embedded", engine.embedded.library()
        print(f"{key:10} {engine.kind:9} {engine.family:9} {state:12} {detail}")
    return 0


def _start(args: argparse.Namespace) -> int:
    from .engines import get_engine
    from .lifecycle import start

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
    return 0


def _overrides(pairs: list[str]) -> dict:
    from .batch import parse_override

    return dict(parse_override(p) for p in pairs or [])


def _check_parameter_names(notebook: Path, params: dict) -> None:
    import papermill as pm

    known = set(pm.inspect_notebook(str(notebook)))
    unknown = sorted(set(params) - known)
    if unknown:
        from .errors import ParameterError

        raise ParameterError(f"{notebook.stem} has no parameter(s) {', '.join(unknown)}; "
                             f"its parameters are: {', '.join(sorted(known))}")


def _run(args: argparse.Namespace) -> int:
    from .batch import execute, find_notebook, load_params, params_file
    from .settings import get_settings
    from .store import utcnow

    notebook = find_notebook(args.notebook)
    pfile = Path(args.params) if args.params else params_file(notebook, args.set)
    params = load_params(pfile, _overrides(args.param))
    _check_parameter_names(notebook, params)
    out_dir = Path(args.out) if args.out else get_settings().reports_dir / f"{utcnow():%Y%m%dT%H%M%SZ}-{notebook.stem}"
    outcome = execute(notebook, out_dir, params, params_file_name=str(pfile) if pfile else None, progress=True)
    print(f"{'ok' if outcome.ok else 'FAILED'}: {outcome.notebook} in {outcome.seconds:.0f}s")
    print(f"  executed notebook: {outcome.executed}")
    print(f"  report: {outcome.html}")
    if outcome.error:
        print(f"  error: {outcome.error}", file=sys.stderr)
    return 0 if outcome.ok else 1


def _batch(args: argparse.Namespace) -> int:
    from .batch import run_batch

    out_dir, outcomes = run_batch(args.set, only=args.only, overrides=_overrides(args.param))
    print((out_dir / "summary.txt").read_text(), end="")
    print(f"reports: {out_dir / 'index.html'}")
    failed = [o for o in outcomes if not o.ok]
    if failed:
        print(f"{len(failed)} of {len(outcomes)} notebook(s) failed", file=sys.stderr)
        return 1
    return 0


def _runs(args: argparse.Namespace) -> int:
    import pandas as pd

    from .results import runs

    df = runs(experiment=args.experiment, limit=args.limit)
    if df.empty:
        print("no runs in the store yet")
        return 0
    with pd.option_context("display.width", 200, "display.max_colwidth", 60):
        print(df[["run_id", "experiment", "notebook", "status", "started_at", "hostname", "git_sha", "error"]]
              .to_string(index=False))
    return 0


def _cleanup(args: argparse.Namespace) -> int:
    from .lifecycle import managed_containers, reap_stale

    if args.all:
        containers = managed_containers()
        for c in containers:
            c.remove(force=True, v=True)
        print(f"removed {len(containers)} benchlib container(s)")
    else:
        print(f"removed {len(reap_stale())} stale benchlib container(s)")
    return 0


def _images(args: argparse.Namespace) -> int:
    from .engines import ENGINES, get_engine
    from .images import resolve_image

    keys = args.engines or [k for k, e in ENGINES.items() if e.server is not None and e.server.recipe]
    for key in keys:
        engine = get_engine(key)
        if engine.server is None:
            print(f"{key}: embedded, no image")
            continue
        t0 = time.perf_counter()
        resolved = resolve_image(engine)
        print(f"{key}: {resolved.ref} ({resolved.source}) in {time.perf_counter() - t0:.1f}s")
    return 0


def _export(args: argparse.Namespace) -> int:
    from .store import Store

    dest = Store.default().export_runs(args.run_ids, Path(args.to))
    print(f"exported {len(args.run_ids)} run(s) to {dest}")
    return 0


def _import(args: argparse.Namespace) -> int:
    from .store import Store

    new = Store.default().import_runs(Path(args.source))
    print(f"imported {len(new)} new run(s): {', '.join(new) or '-'}")
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="benchlib", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("engines", help="list engines and whether they can run on this host (and why not)")
    s.set_defaults(func=_engines)

    s = sub.add_parser("start", help="start engines one by one, print version and start-to-ready time, stop")
    s.add_argument("engines", nargs="+", metavar="ENGINE")
    s.set_defaults(func=_start)

    s = sub.add_parser("run", help="execute one notebook with papermill and render its report")
    s.add_argument("notebook", help="notebook path, file name or number prefix (e.g. 01)")
    s.add_argument("-p", "--params", help="YAML parameter file (default: papermill_params/<notebook>/<set>.yaml)")
    s.add_argument("--set", default="default", help="parameter set name (default: default)")
    s.add_argument("-P", "--param", action="append", metavar="NAME=VALUE", help="override one parameter (YAML value)")
    s.add_argument("--out", help="output folder (default: reports/<time>-<notebook>)")
    s.set_defaults(func=_run)

    s = sub.add_parser("batch", help="execute every notebook with its parameter set; exit 1 if any failed")
    s.add_argument("--set", default="default", help="parameter set name (default: default)")
    s.add_argument("--only", nargs="+", metavar="NOTEBOOK", help="run only these notebooks")
    s.add_argument("-P", "--param", action="append", metavar="NAME=VALUE", help="override one parameter")
    s.set_defaults(func=_batch)

    s = sub.add_parser("runs", help="list recent runs in the results store")
    s.add_argument("--experiment")
    s.add_argument("--limit", type=int, default=20)
    s.set_defaults(func=_runs)

    s = sub.add_parser("cleanup", help="remove benchlib containers left by killed runs")
    s.add_argument("--all", action="store_true", help="remove every benchlib container, running or not")
    s.set_defaults(func=_cleanup)

    s = sub.add_parser("images", help="resolve (pull or build) the images of server engines")
    s.add_argument("engines", nargs="*", metavar="ENGINE")
    s.set_defaults(func=_images)

    s = sub.add_parser("export", help="export runs as Parquet, to merge into another store")
    s.add_argument("run_ids", nargs="+", metavar="RUN_ID")
    s.add_argument("--to", required=True, help="destination folder")
    s.set_defaults(func=_export)

    s = sub.add_parser("import", help="merge runs exported by `benchlib export` into this store")
    s.add_argument("source", help="folder written by `benchlib export`")
    s.set_defaults(func=_import)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return args.func(args)
    except BenchlibError as exc:
        print(f"benchlib: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("benchlib: interrupted", file=sys.stderr)
        return 130
