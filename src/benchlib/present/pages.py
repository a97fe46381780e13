"""Files of the reports site that the batch runner and the explorer both write and read: each
folder's manifest, the site's templates, pages written whole. Below both, so neither imports the
other for them."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ..host.provenance import benchlib_version
from ..core.settings import REPORT_TEMPLATE_DIR


def read_manifests(root: Path) -> list[dict]:
    """Manifests of every report folder under root, newest first. A folder without one (an older
    benchlib's, or one whose runner was killed) is listed with what its name says."""
    manifests = []
    for folder in Path(root).iterdir() if Path(root).is_dir() else []:
        if not folder.is_dir() or folder.is_symlink() or folder.name.startswith("."):
            continue
        try:
            manifest = json.loads((folder / "manifest.json").read_text())
        except (OSError, ValueError):
            manifest = {"kind": "unknown", "name": folder.name, "complete": False, "outcomes": [],
                        "started_at": None, "note": "no manifest (an older benchlib's folder, or its runner was killed)"}
        manifest["folder"] = folder.name
        manifests.append(with_status(manifest))
    # Folder names start with the UTC start time, so they sort by age even without a manifest.
    return sorted(manifests, key=lambda m: m["folder"], reverse=True)


def with_status(manifest: dict) -> dict:
    outcomes = manifest.get("outcomes", [])
    failed = sum(1 for o in outcomes if not o.get("ok"))
    if not manifest.get("complete"):
        status = "incomplete"
    elif failed:
        status = f"{failed} of {len(outcomes)} failed"
    else:
        status = "ok"
    return {**manifest, "status": status}


def render_template(template: str, **context: Any) -> str:
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(REPORT_TEMPLATE_DIR / "site"),
                             autoescape=True, trim_blocks=True, lstrip_blocks=True)
    return env.get_template(template).render(**context, benchlib_version=benchlib_version())


def write_text(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)  # readers (a browser, a concurrent run's index) never see half a page
