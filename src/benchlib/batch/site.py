"""The reports site: one folder per run or batch (`reports/<UTC time>-<6 hex>-<name>/`, never
overwritten) with its summary.txt, index.html and manifest.json (the outcomes, machine-readable),
`reports/latest` pointing at the newest, and `reports/index.html` listing every folder and the
latest report of each notebook; it is rewritten after every run and batch. Pages are
self-contained: inline CSS only."""
from __future__ import annotations

import json
import os
import secrets
import socket
from pathlib import Path

from ..present.pages import read_manifests, render_template, with_status, write_text
from ..host.provenance import benchlib_version
from ..core.settings import get_settings
from .execute import NotebookOutcome, utc_now
from .harness import harness_shares, summary_lines


def new_report_dir(name: str, root: Path | None = None) -> Path:
    """`<root>/<UTC time>-<6 hex>-<name>/`, created here: unique even for runs started in the same
    second (mkdir fails on a collision and another suffix is drawn)."""
    root = Path(root or get_settings().reports_dir)
    root.mkdir(parents=True, exist_ok=True)
    while True:
        path = root / f"{utc_now():%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}-{name}"
        try:
            path.mkdir()
            return path
        except FileExistsError:
            continue


def point_latest(root: Path, out_dir: Path) -> None:
    latest = root / "latest"
    if latest.exists() and not latest.is_symlink():
        return  # someone's own folder: not ours to replace
    tmp = root / f".latest.{os.getpid()}"
    tmp.unlink(missing_ok=True)
    tmp.symlink_to(out_dir.name)
    os.replace(tmp, latest)  # never a moment without `latest`


NO_ANSWER = "none stated (the report has no answer() output)"


def _outcome_line(o: NotebookOutcome) -> str:
    if not o.ok:
        status = f"FAILED: {o.error}" if o.error else "FAILED"
        if o.render_error:
            status += f"{'; ' if o.error else ': '}report not rendered: {o.render_error}"
    else:
        status = "ok"
    figures = f"{len(o.figures)} figure files" if not o.figure_error else f"figures not exported: {o.figure_error}"
    where = f" on {o.worker}" if o.worker else ""
    published = f"; runs not published: {o.publish_error}" if o.publish_error else ""
    # Problems by count (manifest.json lists them): a sentence per bar would crowd out the answers.
    layout = (f"; report: {len(o.layout_problems)} layout problems at 1280 px" if o.layout_problems else
              f"; report {o.layout}" if o.layout else "")
    sure = o.count or o.certainty
    answer = (f"{o.answer} ({sure})" if sure else o.answer) if o.answer else NO_ANSWER
    return f"{o.notebook}: {status} ({o.seconds:.0f} s{where}, {figures}){published}{layout}\n  answer: {answer}"


def write_folder(out_dir: Path, kind: str, name: str, outcomes: list[NotebookOutcome], started_at,
                 complete: bool = True, preparing_seconds: float = 0.0) -> None:
    """summary.txt, index.html and manifest.json of one run or batch folder."""
    finished_at = utc_now()
    shares = harness_shares(outcomes, (finished_at - started_at).total_seconds())
    lines = [f"{kind} {out_dir.name}" + ("" if complete else " (interrupted)")]
    lines += [_outcome_line(o) for o in outcomes]
    lines += summary_lines(shares, preparing_seconds)
    (out_dir / "summary.txt").write_text("\n".join(lines) + "\n")
    manifest = {
        "kind": kind, "name": name, "folder": out_dir.name, "complete": complete,
        "started_at": started_at.isoformat(timespec="seconds"),
        "finished_at": finished_at.isoformat(timespec="seconds"),
        "host": socket.gethostname(), "benchlib_version": benchlib_version(),
        "outcomes": [o.to_json(out_dir) for o in outcomes],
        "harness": {"notebooks": [s.to_json() for s in shares[:-1]], "total": shares[-1].to_json(),
                    "preparing_engines_s": preparing_seconds},
    }
    write_text(out_dir / "manifest.json", json.dumps(manifest, indent=2, default=str) + "\n")
    write_text(out_dir / "index.html", render_template("folder.html.j2", manifest=with_status(manifest),
                                                       no_answer=NO_ANSWER))


def write_site_index(root: Path | None = None) -> Path:
    """reports/index.html: every run and batch folder, newest first, and the latest report of
    each notebook (title, question, date, engines, status). Self-contained: inline CSS only."""
    root = Path(root or get_settings().reports_dir)
    manifests = read_manifests(root)
    latest: dict[str, dict] = {}
    for manifest in manifests:
        for outcome in manifest.get("outcomes", []):
            if outcome["notebook"] not in latest:
                latest[outcome["notebook"]] = {**outcome, "folder": manifest["folder"]}
    path = root / "index.html"
    write_text(path, render_template("index.html.j2", folders=manifests, no_answer=NO_ANSWER,
                             notebooks=[latest[k] for k in sorted(latest)], generated=utc_now()))
    from ..compare.explorer import write_explorer  # late: it loads the data stack, which validating a run must not

    write_explorer(root)
    return path


