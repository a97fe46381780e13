"""Draw docs/cluster.svg, the README's figure of the distributed path: N benchmark hosts, one
Dask scheduler, one bucket, what each costs and what limits the scale. Plain SVG written by
this script (no plotting library, no browser), so the figure changes with the text below it.

    .venv/bin/python scripts/cluster_diagram.py [docs/cluster.svg]"""
from __future__ import annotations

import sys
from html import escape
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WIDTH, HEIGHT = 1000, 560
INK, MUTED, LINE = "#1f2933", "#52606d", "#9aa5b1"
FILL = {"client": "#e8f0fe", "scheduler": "#fef3e2", "host": "#e6f6ec", "bucket": "#f3e8fd"}


def box(x: int, y: int, w: int, h: int, kind: str, title: str, lines: list[str]) -> str:
    out = [f'<rect x="{x}" y="{y}" width="{w}" height="{h}" rx="8" fill="{FILL[kind]}" stroke="{LINE}"/>',
           f'<text x="{x + 12}" y="{y + 22}" font-weight="bold" fill="{INK}">{escape(title)}</text>']
    for i, line in enumerate(lines):
        out.append(f'<text x="{x + 12}" y="{y + 42 + 17 * i}" fill="{MUTED}" font-size="12.5">{escape(line)}</text>')
    return "\n".join(out)


def arrow(x1: int, y1: int, x2: int, y2: int, label: str = "", dx: int = 6, dy: int = -6) -> str:
    text = (f'<text x="{(x1 + x2) // 2 + dx}" y="{(y1 + y2) // 2 + dy}" fill="{INK}" font-size="12">{escape(label)}</text>'
            if label else "")
    return f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="{INK}" stroke-width="1.4" marker-end="url(#head)"/>{text}'


def diagram() -> str:
    parts = [
        box(20, 30, 250, 118, "client", "Any host: laptop, CI", [
            "benchlib batch --set default \\", "  --cluster tcp://scheduler:8786 \\",
            "  --store s3://bucket/prefix", "checks plan, workers, bucket first"]),
        box(375, 30, 250, 118, "scheduler", "dask scheduler (one)", [
            "one task per notebook x set,", "each needing bench=1;", "a dead worker's task goes to another",
            "cost: a small VM or the CI host"]),
        box(730, 30, 250, 118, "bucket", "S3 bucket (or MinIO)", [
            "runs/<id>/: 3 Parquet files, notebook,", "  HTML (~5 MB), figures; marker last",
            "read by benchlib runs, reports, 06", "cost: storage + requests per run"]),
    ]
    hosts_y = 250
    for i, (name, klass) in enumerate([("host 1", "c6i.large"), ("host 2", "c6i.large"), ("host N", "m7g.large")]):
        x = 20 + i * 330
        parts.append(box(x, hosts_y, 300, 150, "host", f"benchmark {name} ({klass})", [
            "dask worker --nthreads 1 --resources bench=1", "Docker engine: one measured engine at a time",
            "own results store: windows as they end", "images built here once, then cached",
            "cost: the instance price, declared", f"BENCHLIB_HOST_CLASS={klass}"]))
        parts.append(arrow(500, 148, x + 150, hosts_y, "task" if i == 0 else "", -60, 0))
        parts.append(arrow(x + 250, hosts_y, 855, 148))
    parts.append(f'<text x="868" y="205" fill="{INK}" font-size="12">publish each run</text>')
    parts.append(arrow(270, 89, 375, 89, "submit"))
    parts.append(f'<text x="652" y="{hosts_y + 80}" fill="{INK}" font-size="22">…</text>')
    limits = [
        "What limits the scale: not the scheduler (Dask schedules thousands of tasks per second; a task here runs minutes),",
        "but per host: engine starts (~1-4 s each, hundreds per notebook), image builds on a fresh host (minutes: FerretDB",
        "and MinIO are Go builds), and one measurement at a time. N hosts run N notebooks at once; the bucket takes each",
        "finished run in one publish (seconds), and readers list completion markers, then read each run once into a cache.",
    ]
    for i, line in enumerate(limits):
        parts.append(f'<text x="20" y="{450 + 20 * i}" fill="{INK}" font-size="13">{escape(line)}</text>')
    parts.append(f'<text x="20" y="{HEIGHT - 12}" fill="{MUTED}" font-size="11">Drawn by scripts/cluster_diagram.py</text>')
    body = "\n".join(parts)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" '
            f'font-family="Helvetica, Arial, sans-serif" font-size="14">\n'
            f'<defs><marker id="head" markerWidth="10" markerHeight="8" refX="9" refY="4" orient="auto">'
            f'<path d="M0,0 L10,4 L0,8 z" fill="{INK}"/></marker></defs>\n'
            f'<rect width="100%" height="100%" fill="white"/>\n{body}\n</svg>\n')


if __name__ == "__main__":
    dest = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "cluster.svg"
    dest.write_text(diagram())
    print(dest)
