"""Preparing engines: every server image the planned notebooks will start, resolved (pulled or
built) before the first notebook starts, with the console kept informed. Built inside the first
notebook instead, a cold machine's image builds (FerretDB's Go build ~3 min) left the console
silent and were charged to that notebook's harness time."""
from __future__ import annotations

import contextlib
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Iterator, TextIO

from ..engines import get_engine
from ..core.errors import BenchlibError
from ..run.progress import duration

# The console is never silent longer than this while an image builds.
HEARTBEAT_S = 15.0
UNDER_VALGRIND = " under valgrind"  # an engine's image under valgrind, as the console names it


def _say(stream: TextIO, text: str) -> None:
    try:
        stream.write(text + "\n")
        stream.flush()
    except (OSError, ValueError):
        pass  # a closed console must not stop the batch


class _Heartbeat(threading.Thread):
    """A line every `interval` seconds while a build runs: elapsed time against the last build's,
    and the build's latest step or output line."""

    def __init__(self, key: str, doing: str, expected_s: float | None, stream: TextIO, interval: float):
        super().__init__(name=f"benchlib-build-{key}", daemon=True)
        self.key, self.doing, self.expected_s, self.stream, self.interval = key, doing, expected_s, stream, interval
        self.started = time.monotonic()
        self.latest = ""
        self.stopping = threading.Event()

    def step(self, text: str, stage: bool) -> None:
        # A stage and Docker's instruction lines ("Step 3/7 : RUN ...") are worth a line at once;
        # other output (apt's) shows up in the next heartbeat.
        if stage or text.startswith("Step "):
            _say(self.stream, f"  {self.key}: {text[:160]}")
        self.latest = text

    def run(self) -> None:
        while not self.stopping.wait(self.interval):
            elapsed = duration(time.monotonic() - self.started)
            expected = f" (last time {duration(self.expected_s)})" if self.expected_s else ""
            latest = f" | {self.latest[:120]}" if self.latest else ""
            _say(self.stream, f"  {self.key}: still {self.doing}, {elapsed} elapsed{expected}{latest}")

    def stop(self) -> None:
        self.stopping.set()
        self.join(timeout=5)


@contextlib.contextmanager
def _heartbeat(key: str, doing: str, expected_s: float | None, stream: TextIO,
               interval: float) -> Iterator[_Heartbeat]:
    from ..containers.images import reporting_builds

    beat = _Heartbeat(key, doing, expected_s, stream, interval)
    beat.start()
    try:
        with reporting_builds(beat.step):
            yield beat
    finally:
        beat.stop()


@dataclass
class Prepared:
    seconds: float = 0.0
    failed: dict[str, str] = field(default_factory=dict)  # engine key -> why its image is missing


def prepare_engines(keys: list[str], *, valgrind: list[str] | tuple[str, ...] = (), stream: TextIO | None = None,
                    interval: float = HEARTBEAT_S) -> Prepared:
    """Resolve the image of every server engine in `keys` (embedded engines need none), and of
    those in `valgrind` their image under valgrind (a layer on their own), one console line each:
    cached, or what is built from which recipe and how long its last build took, then heartbeats
    until it is done. A failed build is reported and left to the caller (a batch leaves it to the
    notebooks, which record an engine that cannot start like any other start failure)."""
    from ..containers.images import last_build_seconds, record_build_seconds, resolve_image

    stream = stream or sys.stderr
    servers = [(key, False) for key in keys if get_engine(key).server is not None]
    servers += [(key, True) for key in valgrind if get_engine(key).server is not None]
    prepared = Prepared()
    if not servers:
        return prepared
    started = time.perf_counter()
    names = [f"{key}{UNDER_VALGRIND if counted else ''}" for key, counted in servers]
    _say(stream, f"preparing engines: {len(servers)} server image(s): {', '.join(names)}")
    for (name, (key, counted)) in zip(names, servers):
        engine = get_engine(key)
        key = name  # what the console and the build times call it
        t0 = time.perf_counter()
        try:
            planned = resolve_image(engine, build=False, valgrind=counted)
            if planned.present:
                _say(stream, f"  {key}: {planned.ref} cached ({planned.source}), "
                             f"{time.perf_counter() - t0:.1f} s")
                continue
            expected = last_build_seconds(key)
            doing = "pulling" if planned.source == "official" else "building"
            _say(stream, f"  {key}: {_what(engine, planned, counted)}; "
                         + (f"last time took {duration(expected)}" if expected else "no earlier time recorded"))
            with _heartbeat(key, doing, expected, stream, interval):
                resolved = resolve_image(engine, valgrind=counted)
        except Exception as exc:  # Docker's own errors too: the notebooks record what cannot start
            detail = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            prepared.failed[key] = detail if isinstance(exc, BenchlibError) else f"{type(exc).__name__}: {detail}"
            _say(stream, f"  {key}: FAILED after {time.perf_counter() - t0:.0f} s: {prepared.failed[key]}")
            continue
        seconds = time.perf_counter() - t0
        record_build_seconds(key, resolved.ref, seconds)
        _say(stream, f"  {key}: {resolved.ref} ready in {duration(seconds)}")
    prepared.seconds = time.perf_counter() - started
    _say(stream, f"preparing engines: done in {duration(prepared.seconds)}")
    return prepared


def _what(engine, planned, valgrind: bool = False) -> str:
    """`building its image from recipes/postgres on Debian trixie (postgresql-17)`, or the pull.
    Not the image's tag: it is known only once what it builds on is built."""
    if valgrind:
        return "building its valgrind layer (valgrind from its image's package source, the server wrapped)"
    if planned.source == "official":
        return f"pulling {planned.ref}"
    return f"building its image from {engine.server.recipe.description}"
