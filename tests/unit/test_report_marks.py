"""The shared report layer's footnote marks: the answer's and the findings table's."""
import re

import pandas as pd

from benchlib.data import findings as F
from benchlib.present.report import RunReport

CONTRAST = {"mean": 2.0, "base_mean": 1.0, "ratio": 2.0, "ratio_low": 1.8, "ratio_high": 2.2, "beyond_noise": True,
            "n": 3, "base_n": 3}


class MarkedReport(RunReport):
    """Rows only: the first row (cited `a`) is left out of the body table, as 07 leaves a pair out."""

    def __init__(self, found: pd.DataFrame):
        self.found = found

    def findings(self) -> pd.DataFrame:
        return self.found

    def caveat_notes(self) -> list[F.Caveat]:
        return [F.Caveat(c, f"note {c}") for c in "abc"]

    def shown_and_left_out(self, found):
        return found.iloc[1:], found.iloc[:1]


def test_an_answer_mark_is_numbered_as_the_body_table_under_it_numbers_its_notes():
    """Hostile read 47 (07): the answer's "⁴" used a numbering over rows the body table leaves out,
    whose notes stop at 2."""
    rows = [F.finding(engine=e, base_engine="postgres", step="fetch", metric="latency", unit="ms", contrast=CONTRAST,
                      caveats=cs) for e, cs in (("sqlite", ("a",)), ("mariadb", ("b",)), ("ferretdb", ("c",)))]
    report = MarkedReport(F.table(rows))
    marks = report.answer_marks()
    table = report.findings_table().data
    notes = dict(re.findall(r"<li value='(\d+)'>note (\w)", table))
    assert marks == {"b": 1, "c": 2} and {c: int(n) for n, c in notes.items()} == marks
    assert report.footnote(rows[2], marks) == "<sup>2</sup>" and "<sup>2</sup>" in table
    # A caveat every shown row cites is said in the caption: no answer mark points to it.
    rows[1]["caveats"] = ("c",)
    assert MarkedReport(F.table(rows)).answer_marks() == {}
