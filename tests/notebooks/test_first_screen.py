"""Each report that states an answer, as a reader first sees it: at 1280x900 in headless Chromium
the first screen holds the notebook's title, every line of the answer with its numbers, how sure
the run is, and the whole of the answer's chart. It reads the tiny reports the smoke tests render
(the session's one tiny execution per notebook), so it adds seconds. Covered: every notebook whose
cells call `report.answer()` (01 first; the others as their ports land)."""
import json
import re
import shutil

import pytest

from benchlib.batch import layout
from benchlib.batch.execute import answer_of

from benchlib import batch

pytestmark = [pytest.mark.notebook, pytest.mark.docker, pytest.mark.browser,
              pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium is installed by `make setup`")]

ANSWERING = [nb for nb in batch.notebooks()
             if any(".answer()" in "".join(c["source"]) for c in json.loads(nb.read_text())["cells"])]


def _squeezed(text: str) -> str:
    return re.sub(r"\s+", "", text)


def test_the_dml_notebook_is_among_those_answering():
    assert "01-dml-cpu-cost" in {nb.stem for nb in ANSWERING}


@pytest.mark.parametrize("answering", ANSWERING, ids=[nb.stem for nb in ANSWERING])
def test_the_first_screen_shows_the_answer_with_its_numbers(answering, tiny_outcomes):
    outcome = tiny_outcomes(answering)
    assert outcome.ok, outcome.error
    stated = answer_of(outcome.executed)
    assert stated.get("lines"), f"{answering.stem}'s report states no answer"
    assert outcome.answer == stated["answer"]  # what the indexes show
    screen = layout.first_screen(outcome.html)
    assert screen.height == layout.HEIGHT and screen.answered
    seen = _squeezed(screen.text)
    assert _squeezed(outcome.title) in seen, screen.text[:300]
    for line in stated["lines"]:
        assert re.search(r"\d", line), line
        assert _squeezed(line) in seen, f"not on the first screen: {line!r}\nseen: {screen.text[:1500]}"
    # A rerun's answer line counts its rows itself and the page leaves the certainty line out (06).
    assert _squeezed(stated["certainty"]) in seen or stated["certainty_shown"] is False
    assert screen.chart_bottom is not None and screen.chart_bottom <= screen.height, \
        f"the answer's chart ends at {screen.chart_bottom} px in a {screen.height} px window"
    assert screen.wide_tables == [], f"tables overflowing the first screen's width: {screen.wide_tables}"
