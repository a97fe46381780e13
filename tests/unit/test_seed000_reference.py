"""Seed 000's reference holds the article's exact per-phase counts, and every ratio comes from them,
never from the article's rounded summary row (issue 37, item 2)."""
import pytest

from benchlib.data import results


def test_the_reference_holds_the_articles_exact_counts():
    ref = results.reference("seed000_dml_instructions").set_index(["engine", "phase"])
    assert ref.loc[("postgres", "select"), "instructions"] == 1_391_096_618
    assert ref.loc[("mysql", "select"), "instructions"] == 3_324_827_627
    assert ref.loc[("postgres", "insert"), "instructions"] == 52_812_253_895
    assert ref.loc[("mysql", "delete"), "instructions"] == 47_284_490_837
    assert (ref["instructions_gi"] == ref["instructions"] / 1e9).all()  # the same figure, unrounded
    # The summary row is each exact count rounded, kept beside it.
    assert ref.loc[("postgres", "select"), "summary_gi"] == 1 and ref.loc[("mysql", "select"), "summary_gi"] == 3
    assert len(ref) == 40 and ref["instructions"].gt(0).all()


def test_ratios_come_from_the_exact_counts():
    ratios = results.ratios_to(results.reference("seed000_dml_instructions"), "instructions_gi", base_engine="mysql").set_index(
        ["engine", "phase"])["ratio"]
    assert ratios[("postgres", "select")] == pytest.approx(0.418, abs=5e-4)  # the summary row says 1/3
    assert ratios[("postgres", "insert")] == pytest.approx(52_812_253_895 / 68_011_238_184)
    to_postgres = results.ratios_to(results.reference("seed000_dml_instructions"), "instructions_gi").set_index(["engine", "phase"])["ratio"]
    assert to_postgres[("mysql", "select")] == pytest.approx(3_324_827_627 / 1_391_096_618)  # 2.39, not 3
