"""Progress: what a notebook reports per step, and the runner's one console line about it."""
import io
import json
import os
import pty
import select
import time

import pytest

from benchlib.run import progress
from benchlib.run.progress import Progress, console_line, follow


def _records(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_steps_are_written_as_json_lines_with_eta(tmp_path, monkeypatch):
    path = tmp_path / "progress.jsonl"
    monkeypatch.setenv(progress.PROGRESS_FILE_ENV, str(path))
    monkeypatch.setenv(progress.NOTEBOOK_ENV, "01-dml-cpu-cost")
    with Progress(total=3, unit="phases", desc="dml", bar=False) as p:
        with p.step(engine="postgres", repetition=1, repetitions=1, phase="insert"):
            time.sleep(0.05)
        with pytest.raises(RuntimeError), p.step(engine="postgres", repetition=1, repetitions=1, phase="update"):
            raise RuntimeError("a failing step still counts as done")
        p.skip()
    records = _records(path)
    assert [(r["event"], r["done"]) for r in records] == [
        ("start", 0), ("start", 0), ("done", 1), ("start", 1), ("done", 2), ("done", 3), ("close", 3)]
    assert {r["notebook"] for r in records} == {"01-dml-cpu-cost"} and {r["total"] for r in records} == {3}
    assert records[1]["labels"] == {"engine": "postgres", "repetition": 1, "repetitions": 1, "phase": "insert"}
    assert records[1]["eta_s"] is None and records[2]["eta_s"] > 0 and records[-1]["eta_s"] == 0
    assert records[2]["elapsed_s"] >= 0.05


def test_without_a_progress_file_only_the_bar_is_drawn(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv(progress.PROGRESS_FILE_ENV, raising=False)
    with Progress(total=2, desc="dml") as p:
        with p.step(engine="sqlite", phase="insert"):
            pass
    err = capsys.readouterr().err
    assert "dml" in err and "sqlite | insert" in err and list(tmp_path.iterdir()) == []


def test_console_line():
    record = {"t": 1000.0, "labels": {"engine": "postgres", "repetition": 2, "repetitions": 3, "phase": "insert"},
              "done": 14, "total": 60, "unit": "phases", "eta_s": 190.0}
    assert (console_line("01-dml-cpu-cost", record, 72, now=1005.0)
            == "01-dml-cpu-cost | postgres rep 2/3 | insert | 14/60 phases | 1m12s elapsed | ETA 3m05s")
    assert console_line("01-dml-cpu-cost", None, 3.2) == "01-dml-cpu-cost | starting | 3s elapsed"


def test_follow_prints_whole_lines_at_most_every_interval_when_not_a_terminal(tmp_path, monkeypatch):
    path = tmp_path / "progress.jsonl"
    monkeypatch.setenv(progress.PROGRESS_FILE_ENV, str(path))
    out = io.StringIO()
    with follow(path, "01-x", stream=out, interval=1.0):
        time.sleep(0.7)  # the first line says the notebook is starting
        p = Progress(total=20, notebook="01-x", bar=False)
        for i in range(20):
            with p.step(engine="duckdb", repetition=i + 1):
                time.sleep(0.1)
        p.close()
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("01-x | starting | ")
    assert lines[-1].startswith("01-x | duckdb rep 20 | 20/20 steps | ")  # the final state is always shown
    assert 3 <= len(lines) <= 5, lines  # ~2.7 s of steps, one line per second at most
    assert "\r" not in out.getvalue()


def test_follow_repeats_an_unchanged_line_so_a_long_step_is_never_silent(tmp_path):
    path = tmp_path / "progress.jsonl"
    out = io.StringIO()
    with follow(path, "01-x", stream=out, interval=5.0, still_running=1.0):
        path.write_text(json.dumps({"t": time.time(), "labels": {"phase": "load"}, "done": 0, "total": 2,
                                    "unit": "phases", "eta_s": None}) + "\n")
        time.sleep(3.4)  # one step, longer than still_running three times over
    lines = out.getvalue().splitlines()
    loads = [line for line in lines if "01-x | load | 0/2 phases" in line]
    assert len(loads) >= 2, lines  # the same step, printed again while it runs
    elapsed = [line.split(" | ")[-1] for line in loads]
    assert len(set(elapsed)) == len(elapsed), elapsed  # each repeat says how long it has run


def test_follow_updates_one_line_in_place_on_a_terminal(tmp_path):
    path = tmp_path / "progress.jsonl"
    leader, follower = pty.openpty()
    with os.fdopen(follower, "w") as tty:
        with follow(path, "01-x", stream=tty, interval=5.0):
            path.write_text(json.dumps({"t": time.time(), "labels": {"phase": "insert"}, "done": 1, "total": 2,
                                        "unit": "phases", "eta_s": 1.0}) + "\n")
            time.sleep(2.5)
        chunks = []
        while select.select([leader], [], [], 0.2)[0]:
            chunks.append(os.read(leader, 65536))
    os.close(leader)
    text = b"".join(chunks).decode().replace("\r\n", "\n")  # the terminal's own newline translation
    assert text.count("\r") >= 2 and text.endswith("\n") and text.count("\n") == 1, repr(text)
    assert "01-x | insert | 1/2 phases" in text
