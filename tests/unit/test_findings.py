"""The one verdict rule and the seed comparison, on findings tables: rows (repetitions summarized as
every workload summarizes them) in, verdicts out; then how rows become an answer's lines."""
import math

import pandas as pd
import pytest

from benchlib.data import findings as F
from benchlib.data import results
from benchlib.data.findings import SeedAgreement, Verdict


def _summary(costs: dict[str, dict[str, list[float]]]) -> pd.DataFrame:
    """`engine -> step -> repetitions` through results.summarize, as a workload's analysis does."""
    rows = [{"engine": e, "phase": p, "value": v} for e, steps in costs.items() for p, values in steps.items()
            for v in values]
    return results.summarize(pd.DataFrame(rows), columns=("value",), by=("engine", "phase"))


def _verdicts(found: pd.DataFrame) -> dict[tuple[str, str], str]:
    return {(r.engine, r.step): r.verdict for r in found.itertuples()}


BASE = [1.0, 1.01, 0.99, 1.0]


def test_every_verdict_from_repetitions():
    summary = _summary({
        "base": {"cheaper": BASE, "dearer": BASE, "tied": BASE, "close": BASE, "once": BASE, "gone": BASE},
        "x": {"cheaper": [0.5, 0.51, 0.49, 0.5],  # told apart, far under 1
              "dearer": [1.3, 1.31, 1.29, 1.3],
              "tied": [0.9, 1.2, 1.1, 0.8],  # Welch cannot tell it from the base
              "close": [1.03, 1.031, 1.029, 1.03],  # told apart, but within seed 003's 5%
              "once": [1.5],  # one repetition: no noise estimate
              "gone": [0.0, 0.0, 0.0, 0.0]},  # no positive ratio
    })
    found = F.compare(summary, base_engine="base", metric="cpu_time", unit="s")
    assert list(found.columns[:len(F.FINDING_COLUMNS)]) == F.FINDING_COLUMNS
    assert _verdicts(found) == {("x", "cheaper"): "better", ("x", "dearer"): "worse", ("x", "tied"): "noise",
                                ("x", "close"): "same", ("x", "once"): "untested", ("x", "gone"): "n/a"}
    # Throughput: higher is better, so the same ratios read the other way.
    higher = F.compare(summary, base_engine="base", metric="tps", unit="tps", higher_is_better=True,
                       steps=["cheaper", "dearer"])
    assert _verdicts(higher) == {("x", "cheaper"): "worse", ("x", "dearer"): "better"}


def test_the_drift_band_holds_timed_ratios_the_way_the_host_moved_and_never_counted_ones():
    summary = _summary({"base": {"a": BASE, "b": BASE}, "x": {"a": [1.2, 1.21, 1.19, 1.2], "b": [1.6, 1.61, 1.59, 1.6]}})
    # x's host ran 1.24x slower than the base's (run 01's caveat): a 1.2x CPU ratio could be the
    # host's alone; 1.6x could not.
    timed = F.compare(summary, base_engine="base", metric="cpu_time", unit="s", host_factor=1.24)
    assert _verdicts(timed) == {("x", "a"): "drift", ("x", "b"): "worse"}
    assert set(timed["host_factor"]) == {1.24}
    # The base's host ran slower: it inflated the base's cost, so x's 1.2x is understated, not explained.
    assert _verdicts(F.compare(summary, base_engine="base", metric="cpu_time", unit="s", host_factor=1 / 1.24)) \
        == {("x", "a"): "worse", ("x", "b"): "worse"}
    # Instructions do not move with the host's speed: the band does not apply, the row keeps its verdict.
    counted = F.compare(summary, base_engine="base", metric="instructions_user", unit="instructions", host_factor=1.24)
    assert _verdicts(counted) == {("x", "a"): "worse", ("x", "b"): "worse"} and counted["host_factor"].isna().all()
    assert not F.drift_applies("instructions") and F.drift_applies("s")


def test_judge_holds_a_difference_only_the_way_the_hosts_speed_moved():
    """Hostile read 43 (07 #1): MyRocks 1.83x (1.2-2.8) MariaDB's CPU was held as "within the host's
    drift", though MariaDB, the base, ran the slower loop (165 vs 132 ms): the host understated it."""
    worse = (1.83, 1.2, 2.8, True)
    assert F.judge(*worse, host_factor=132 / 165) is Verdict.WORSE  # the base's host slower: decided
    assert F.judge(*worse, host_factor=1.25) is Verdict.DRIFT  # the subject's host slower: its CI reaches 1.2
    assert F.judge(*worse, host_factor=1.15) is Verdict.WORSE  # slower, but the CI clears its band
    cheaper = (0.6, 0.5, 0.75, True)
    assert F.judge(*cheaper, host_factor=1 / 1.4) is Verdict.DRIFT  # the base's host 1.4x slower: 0.75 within
    assert F.judge(*cheaper, host_factor=1.4) is Verdict.BETTER  # the subject's host slower, cheaper all the same
    # A rate: a slower host does less per second, so the band is the factor's inverse.
    faster = (1.3, 1.2, 1.4, True)
    assert F.judge(*faster, higher_is_better=True, host_factor=1 / 1.25) is Verdict.DRIFT
    assert F.judge(*faster, higher_is_better=True, host_factor=1.25) is Verdict.BETTER
    assert F.judge(0.7, 0.65, 0.8, True, higher_is_better=True, host_factor=1.3) is Verdict.DRIFT
    # No factor (NaN, None, 1): no band.
    for none in (None, float("nan"), 1.0):
        assert F.judge(*worse, host_factor=none) is Verdict.WORSE
    assert (F.host_ratio(1.25), F.host_ratio(1.25, higher_is_better=True)) == (1.25, 0.8)


def test_the_host_factor_is_the_subjects_loop_over_the_bases_and_names_whose_host_was_slower():
    """Hostile read 43 (02 #1): "the host's own speed moved 85%" came from SQLite's loop, in none
    of the ratios; a pair's factor reads its two engines only, with its sign."""
    loops = {"postgres": [0.090, 0.092, 0.094], "mariadb": [0.093, 0.093, 0.095], "sqlite": [0.170, 0.171]}
    df = pd.DataFrame([{"run_id": "r", "instance_id": e, "engine": e, "repetition": i, "metric": "calibration_cpu_time",
                        "window": "calibration", "value": v} for e, vs in loops.items() for i, v in enumerate(vs)])
    assert results.host_factor(df, "mariadb", "postgres") == pytest.approx(0.093 / 0.092)
    assert results.host_factor(df, "postgres", "sqlite") == pytest.approx(0.092 / 0.1705)
    assert math.isnan(results.host_factor(df, "mysql", "postgres"))  # no loops: no factor, never 1
    assert F.host_words(0.093 / 0.092, "MariaDB", "PostgreSQL") == "host speed matched within 1%"
    assert F.host_words(1.25, "MyRocks", "MariaDB") == "MyRocks's host ran 1.25x slower"
    assert F.host_words(1 / 1.25, "MyRocks", "MariaDB") == "MariaDB's host ran 1.25x slower"
    assert F.host_words(float("nan"), "MyRocks", "MariaDB") == ""
    # Hostile read 46d (05 clusters #1): which way a pair's host speed moves its ratio, named from 10% apart.
    assert F.host_bias(1.05, "MyRocks", "MariaDB") == "" and F.host_bias(float("nan"), "MyRocks", "MariaDB") == ""
    assert F.host_bias(1.25, "MyRocks", "MariaDB").endswith("reads high")  # the subject's cost inflated
    assert F.host_bias(1 / 1.25, "MyRocks", "MariaDB").startswith("MariaDB's") and \
        F.host_bias(1 / 1.25, "MyRocks", "MariaDB").endswith("reads low")
    assert F.host_bias(1.25, "MyRocks", "MariaDB", higher_is_better=True).endswith("reads low")  # a rate: fewer per s
    row = F.finding(engine="x", base_engine="base", step="a", metric="cpu_time", unit="s", host_factor=1.25,
                    contrast={"ratio": 1.2, "ratio_low": 1.1, "ratio_high": 1.3, "beyond_noise": True, "n": 3,
                              "base_n": 3})
    assert row["verdict"] == "drift" and F.fields_of(row)["words"] == \
        "within the host's drift (this engine's host ran 1.25x slower)"


def test_judge_branches_at_their_edges():
    assert F.judge(None, None, None, True) is Verdict.NA
    assert F.judge(float("nan"), None, None, True) is Verdict.NA
    assert F.judge(-0.4, -1, 0.2, True) is Verdict.NA
    assert F.judge(2.0, 1.5, 2.5, None) is Verdict.UNTESTED
    assert F.judge(2.0, 1.5, 2.5, float("nan")) is Verdict.UNTESTED
    assert F.judge(2.0, 0.5, 8.0, False) is Verdict.NOISE
    # 5% is symmetric on the log scale: 1/1.05 is as far from 1 as 1.05.
    assert F.judge(1.05, 1.04, 1.06, True) is Verdict.SAME and F.judge(1 / 1.05, 0.94, 0.96, True) is Verdict.SAME
    assert F.judge(1.06, 1.055, 1.065, True) is Verdict.WORSE
    # The band reads the CI's end nearest 1, not the ratio itself.
    assert F.judge(1.3, 1.1, 1.5, True, host_factor=1.2) is Verdict.DRIFT
    assert F.judge(1.3, 1.25, 1.35, True, host_factor=1.2) is Verdict.WORSE
    assert F.judge(0.7, 0.6, 0.85, True, host_factor=1 / 1.2) is Verdict.DRIFT  # 1/0.85 = 1.18, inside 1.2
    assert F.judge(0.7, 0.6, 0.8, True, host_factor=1 / 1.2) is Verdict.BETTER  # 1/0.8 = 1.25, beyond it
    assert F.judge(1.3, None, None, True, host_factor=1.4) is Verdict.DRIFT  # no CI: the ratio itself
    assert F.judge(1.3, 0.9, 1.5, True, host_factor=1.1) is Verdict.DRIFT  # an end across 1 reaches any band
    assert F.judge(0.5, 0.4, 0.6, True, higher_is_better=True) is Verdict.WORSE
    assert [v for v in Verdict if v.decided] == [Verdict.BETTER, Verdict.WORSE, Verdict.SAME]


def test_a_workload_marks_rows_not_comparable_and_says_why():
    c = {"ratio": 3.0, "ratio_low": 2.9, "ratio_high": 3.1, "beyond_noise": True, "mean": 3.0, "base_mean": 1.0}
    row = F.finding(engine="x", base_engine="base", step="load", metric="cpu_time", unit="s", contrast=c,
                    verdict=Verdict.NOT_COMPARABLE, caveats=["different-work"])
    assert row["verdict"] == "not_comparable" and row["caveats"] == ("different-work",)


@pytest.mark.parametrize("ratio, low, high, seed, expected", [
    (1.3, 1.2, 1.4, None, SeedAgreement.NO_SEED),
    (1.3, 1.2, 1.4, float("nan"), SeedAgreement.NO_SEED),
    (1.3, 1.2, 1.4, 0.0, SeedAgreement.NO_SEED),
    (None, None, None, 1.29, SeedAgreement.UNTESTED),
    (1.3, 1.2, 1.4, 1.29, SeedAgreement.WITHIN),
    (1.3, 1.2, 1.4, 0.78, SeedAgreement.OPPOSITE),
    (1.3, 1.2, 1.4, 2.5, SeedAgreement.SAME_DIRECTION),
    (1.3, None, None, 2.5, SeedAgreement.UNTESTED),  # same side, but no CI to say whether it is inside
    (1.3, None, None, 0.5, SeedAgreement.UNTESTED),  # one repetition: no direction, even across 1
    (1.0, 0.8, 1.25, 0.5, SeedAgreement.UNDETERMINED),  # a CI across 1 is no direction, so never opposite
    (1.1, 0.9, 1.3, 2.0, SeedAgreement.UNDETERMINED),
    (1.3, 0.9, 1.4, 1.0, SeedAgreement.WITHIN),
])
def test_against_seed(ratio, low, high, seed, expected):
    assert F.against_seed(ratio, low, high, seed) is expected


def test_seed_ratios_travel_on_the_rows_and_the_seed_line_counts_them():
    summary = _summary({"postgres": {"insert": BASE, "update": BASE, "select": BASE},
                        "mysql": {"insert": [1.3, 1.31, 1.29, 1.3], "update": [0.5, 0.51, 0.49, 0.5],
                                  "select": [2.0, 2.01, 1.99, 2.0]}})
    seed = {("mysql", "insert"): 1.3, ("mysql", "update"): 1.5}
    found = F.compare(summary, base_engine="postgres", metric="cpu_time", unit="s", seed=seed)
    assert list(found["seed"]) == ["within", "opposite", "no_seed"]
    assert found["seed_ratio"].iloc[:2].tolist() == [1.3, 1.5] and math.isnan(float(found["seed_ratio"].iloc[2] or "nan"))
    assert F.seed_line(found) == ("Against the seed's 2 ratios: the seed's within the CI (1); opposite to the seed (1).")
    assert F.certainty(found) == "3 of 3 comparisons decided"


def test_answer_lines_one_per_engine_decided_first_then_grouped_by_verdict_words():
    summary = _summary({"postgres": {"insert": BASE, "update": BASE, "select": BASE},
                        "mysql": {"insert": [1.3, 1.31, 1.29, 1.3], "update": [0.9, 1.2, 1.1, 0.8],
                                  "select": [1.5]},
                        "sqlite": {"insert": [0.5, 0.51, 0.49, 0.5], "update": [0.2, 0.21, 0.19, 0.2],
                                   "select": [0.9, 1.2, 1.1, 0.8]}})
    found = F.compare(summary, base_engine="postgres", metric="cpu_time", unit="s")
    phrases = F.Phrases(line_by="engine", line="{subject} vs {base}: {items}")
    lines = F.render_lines(found, phrases)
    assert lines[0].startswith("MySQL vs PostgreSQL: insert 1.3x (1.")
    assert lines[0].endswith("; within noise: update 1x; measured once: select 1.5x")
    assert lines[1].startswith("SQLite vs PostgreSQL: insert 0.5x (") and lines[1].endswith("; within noise: select 1x")
    # The answer's limit counts lines, not rows: two engines' rows are two lines.
    found["headline"] = True
    assert len(F.headline(found, 1, by="engine")) == 3 and set(F.headline(found, 1, by="engine")["engine"]) == {"mysql"}
    # One line per row without line_by.
    assert len(F.render_lines(found.head(2))) == 2



def test_identical_counts_are_certain_where_identical_cpu_ticks_are_not():
    """Two starts of SQLite counted the same instructions to the one (valgrind): the ratio is
    exact and decided; the same identical figures in CPU seconds (4 ms ticks) stay untestable."""
    import pandas as pd

    from benchlib.data import results

    summary = results.summarize(pd.DataFrame({"engine": ["a", "a", "b", "b"], "phase": ["insert"] * 4,
                                              "value": [7_089_298.0, 7_089_298.0, 8_000_000.0, 8_000_000.0]}),
                                columns=("value",), by=("engine", "phase"))
    counted = F.compare(summary, base_engine="a", metric="instructions_user", unit="instructions")
    assert counted.iloc[0]["verdict"] == F.Verdict.WORSE
    assert counted.iloc[0]["ratio_low"] == counted.iloc[0]["ratio_high"] == pytest.approx(8_000_000 / 7_089_298)
    timed = F.compare(summary, base_engine="a", metric="cpu_time", unit="s")
    assert timed.iloc[0]["verdict"] == F.Verdict.UNTESTED


def test_a_seed_is_tested_only_by_a_ci_that_could_miss_it():
    """Hostile read 40: 01's four 'within the CI' came from CIs like 0.0281-13.3, and a net cost
    not above zero gave a negative bound; 07 counted a not-comparable row as agreeing."""
    assert F.against_seed(1.2, 1.1, 1.3, 1.25) == SeedAgreement.WITHIN
    # Spans 473x: the seed inside it is not resolved (hostile read 46b, 04 #3: one rule, decided or not), and
    # outside it, undecided, missed by nothing the run states: untested.
    assert F.against_seed(0.61, 0.0281, 13.3, 0.418) == SeedAgreement.UNRESOLVED
    assert F.against_seed(0.61, 0.0281, 13.3, 20.0) == SeedAgreement.UNTESTED
    assert F.against_seed(0.0554, -0.16, 0.271, 0.215) == SeedAgreement.UNTESTED  # reaches below zero
    assert F.against_seed(2.0, 0.4, 3.9, 1.29) == SeedAgreement.UNRESOLVED  # 9.75x: tested, but tells nothing
    row = F.finding(engine="rocksdb", base_engine="mysql", step="fetch", metric="cpu_time", unit="s",
                    contrast={"ratio": 2.43, "ratio_low": 1.5, "ratio_high": 6.0, "beyond_noise": True},
                    seed_ratio=5.33, verdict=Verdict.NOT_COMPARABLE)
    assert row["seed"] == SeedAgreement.UNTESTED.value


def test_a_seed_that_measured_another_setup_is_shown_as_such_and_counted_apart():
    """Hostile read 41: 04's TCP row (seed 002 crossed gigabit Ethernet, this run a bridge on one
    host) read 'untested', as if a wider CI could have tested it."""
    row = F.finding(engine="postgres", base_engine="postgres", step="tcp vs unix", metric="wall_time", unit="s",
                    contrast={"ratio": 1.0, "ratio_low": 0.99, "ratio_high": 1.01, "beyond_noise": False},
                    seed_ratio=2.56, seed_comparable=False)
    assert row["seed"] == SeedAgreement.NOT_COMPARABLE.value
    assert F.seed_line(pd.DataFrame([row])) == "Against the seed's 1 ratio: not comparable with the seed (1)."


def test_one_measurement_is_never_beyond_noise_whatever_ci_it_carries():
    """Hostile read 40 (08): a size on disk measured once, given a zero-width CI, read 'beyond noise'.
    One value a side is untested; counts that repeated exactly over repetitions stay decided and
    say the threshold alone decided them."""
    once = {"ratio": 0.296, "ratio_low": 0.296, "ratio_high": 0.296, "beyond_noise": True, "n": 1, "base_n": 1}
    row = F.finding(engine="x", base_engine="base", step="on disk", metric="bytes on disk", unit="bytes",
                    contrast=once, seed_ratio=0.3)
    assert row["verdict"] == Verdict.UNTESTED.value and row["seed"] == SeedAgreement.UNTESTED.value
    assert F.judge(2.0, 2.0, 2.0, True, n=2, base_n=1) is Verdict.UNTESTED
    summary = _summary({"a": {"insert": [7e6, 7e6]}, "b": {"insert": [9e6, 9e6]}})
    counted = F.compare(summary, base_engine="a", metric="instructions_user", unit="instructions").iloc[0]
    assert counted["verdict"] == Verdict.WORSE.value
    assert F.fields_of(counted)["words"] == F.EXACT_WORDS[Verdict.WORSE] != F.VERDICT_WORDS[Verdict.WORSE]
    timed = F.compare(_summary({"a": {"s": BASE}, "b": {"s": [1.3, 1.31, 1.29, 1.3]}}), base_engine="a",
                      metric="cpu_time", unit="s").iloc[0]
    assert F.fields_of(timed)["words"] == F.VERDICT_WORDS[Verdict.WORSE]


def test_a_ratio_of_net_costs_at_or_below_zero_is_no_ratio():
    """Hostile read 40 (01): '0.0554x (-0.16-0.271)' on a log-scale CI, with a seed check mark."""
    c = {"ratio": 0.0554, "ratio_low": -0.16, "ratio_high": 0.271, "beyond_noise": True, "n": 2, "base_n": 2}
    row = F.finding(engine="postgres", base_engine="mysql", step="update", metric="net", unit="s", contrast=c,
                    seed_ratio=0.215)
    assert row["verdict"] == Verdict.NA.value and row["seed"] == SeedAgreement.UNTESTED.value
    assert F.fields_of(row)["ratio"] == F.fields_of(row)["ratio_only"] == F.NET_NOT_POSITIVE
    assert F.fmt_ratio(-0.5, -1.0, 0.2) == F.NET_NOT_POSITIVE and F.fmt_ratio(0.5, 0.4, 0.6).startswith("0.5x")


def test_an_undecided_ratio_whose_ci_spans_over_ten_times_prints_no_point_value():
    """Hostile read 41: "within noise: insert 0.397x" whose CI was 0.015-10.5 reads as "2.5x cheaper"."""
    def row(low, high, n=2):
        return F.finding(engine="mysql", base_engine="postgres", step="insert", metric="cpu_time", unit="s",
                         contrast={"ratio": 0.397, "ratio_low": low, "ratio_high": high, "beyond_noise": False,
                                   "n": n, "base_n": n})
    phrases = F.Phrases(line_by="engine", line="{subject} / {base}: {items}")
    [wide] = F.render_lines(pd.DataFrame([row(0.015, 10.5)]), phrases)
    [narrow] = F.render_lines(pd.DataFrame([row(0.35, 0.45)]), phrases)
    assert F.WIDE_GROUP.format(words=F.VERDICT_WORDS[Verdict.NOISE]) in wide and "0.397x" not in wide
    assert "0.397x" in narrow and F.WIDE_CI not in narrow
    [once] = F.render_lines(pd.DataFrame([row(None, None, n=1)]), phrases)  # no CI at all: the point stays
    assert "0.397x" in once


def test_a_side_at_the_cpu_floor_gets_no_verdict_and_no_point_value():
    """Hostile read 41 (01): every engine's select cost ~1 ms, the window's own cost; a ratio of two
    floors called "2.46x beyond noise" is the overheads', not the work's."""
    summary = _summary({"base": {"select": [0.00116, 0.00117], "insert": [0.05, 0.051]},
                        "x": {"select": [0.00285, 0.00286], "insert": [0.014, 0.0141]}})
    floored = F.compare(summary, base_engine="base", metric="cpu_time", unit="s", floor=F.CPU_FLOOR_SECONDS)
    assert _verdicts(floored) == {("x", "select"): "floor", ("x", "insert"): "better"}
    assert _verdicts(F.compare(summary, base_engine="base", metric="cpu_time", unit="s"))[("x", "select")] == "worse"
    row = floored[floored["step"] == "select"].iloc[0].to_dict()
    assert not Verdict.FLOOR.decided and row["seed"] == SeedAgreement.NO_SEED.value
    [line] = F.render_lines(floored, F.Phrases(line_by="engine", line="{subject}: {items}"))
    assert F.VERDICT_WORDS[Verdict.FLOOR] in line and F.fmt_number(row["ratio"]) + "x" not in line
    # At the floor comes before every test: one measurement a side at the floor is still at the floor.
    assert F.judge(2.0, None, None, None, at_floor=True) == Verdict.FLOOR
    assert F.judge(None, None, None, True, at_floor=True) == Verdict.NA


def test_a_grid_of_ratios_whose_cis_all_span_over_ten_times_says_nothing():
    """Hostile read 41 (01): the "Why the ratios differ" grid, every cell 0.015-10.5 or wider."""
    def row(low, high, verdict="noise"):
        return {"ratio": 1.0, "ratio_low": low, "ratio_high": high, "verdict": verdict}
    wide = [row(0.015, 10.5), row(None, None, "untested"), row(0.0, 2.0, "n/a"), row(0.5, 2.0, "floor")]
    assert F.all_wide(pd.DataFrame(wide))
    assert not F.all_wide(pd.DataFrame(wide + [row(0.5, 4.9)]))


def test_a_phrase_tables_wide_template_says_an_undecided_row_whose_ci_is_too_wide_without_its_point():
    """Hostile read 41 (03): "0.662x (0.00148-297) PostgreSQL's 1,526 TPS (within noise)"."""
    phrases = F.Phrases(default="{subject}: {ratio} {base}'s ({words})",
                        templates={F.WIDE: "{subject}: {value} against {base}'s {base_value} ({words})"})

    def row(low, high, beyond_noise=False):
        return F.finding(engine="mysql", base_engine="postgres", step="rw", metric="tps", unit="TPS",
                         contrast={"ratio": 0.662, "ratio_low": low, "ratio_high": high, "beyond_noise": beyond_noise,
                                   "n": 2, "base_n": 2, "mean": 1011.0, "base_mean": 1526.0})
    assert "0.662x" not in F.render(row(0.00148, 297), phrases) and "1,526" in F.render(row(0.00148, 297), phrases)
    assert "0.662x (0.6-0.7)" in F.render(row(0.6, 0.7), phrases)  # narrow: the point and its CI
    assert "0.662x" in F.render(row(0.5, 0.9, beyond_noise=True), phrases)  # decided: always its ratio


def test_a_count_reads_singular_or_plural():
    from benchlib.present.report import plural

    assert (plural(1, "repetition"), plural(2, "repetition"), plural(1_000, "row")) == (
        "1 repetition", "2 repetitions", "1,000 rows")


def test_a_seed_figure_left_untested_says_why_and_which_set_tests_it():
    """Hostile read 42: 'untested against the seed (4)' gave no reason and no parameter set."""
    wide = F.finding(engine="mysql", base_engine="postgres", step="insert", metric="cpu_time", unit="s",
                     contrast={"ratio": 0.333, "ratio_low": 0.00463, "ratio_high": 23.9, "beyond_noise": False,
                               "n": 2, "base_n": 2}, seed_ratio=40.0)
    once = F.finding(engine="mysql", base_engine="postgres", step="load", metric="tps", unit="1/s",
                     contrast={"ratio": 1.45, "beyond_noise": None, "n": 1, "base_n": 1}, seed_ratio=0.597)
    floor = F.finding(engine="mysql", base_engine="postgres", step="select", metric="cpu_time", unit="s",
                      contrast={"ratio": 0.704, "ratio_low": 0.249, "ratio_high": 1.99, "beyond_noise": False,
                                "mean": 0.0008, "base_mean": 0.0012, "n": 2, "base_n": 2},
                      seed_ratio=2.39, floor=F.CPU_FLOOR_SECONDS)
    assert [r["seed"] for r in (wide, once, floor)] == [SeedAgreement.UNTESTED.value] * 3
    reasons = [F.seed_untested_reason(r) for r in (wide, once, floor)]
    assert reasons == ["CI over 10x wide", F.VERDICT_WORDS[Verdict.UNTESTED], F.VERDICT_WORDS[Verdict.FLOOR]]
    assert all(reason in F.seed_words(r) for reason, r in zip(reasons, (wide, once, floor)))
    line = F.seed_line(pd.DataFrame([wide, wide, once, floor]), tested_by="article")
    assert "2 CI over 10x wide" in line and "--set article" in line
    assert "--set" not in F.seed_line(pd.DataFrame([wide]))
    # Hostile read 47 (08): each untested row is counted under its own reason, never its neighbour's.
    assert F.seed_line(pd.DataFrame([once, wide])) == \
        "Against the seed's 2 ratios: not testable here (1 measured once, 1 CI over 10x wide)."


def test_at_the_floor_is_defined_by_its_threshold_where_it_is_counted():
    """Hostile read 42 (01 #3): 'at the floor' was defined nowhere."""
    row = F.finding(engine="mysql", base_engine="postgres", step="select", metric="cpu_time", unit="s",
                    contrast={"ratio": 0.704, "ratio_low": 0.249, "ratio_high": 1.99, "beyond_noise": False,
                              "mean": 0.0008, "base_mean": 0.0012, "n": 2, "base_n": 2}, floor=F.CPU_FLOOR_SECONDS)
    assert row["verdict"] == Verdict.FLOOR.value
    assert "under 2 ms" in F.certainty(F.table([row]))
    assert "under" not in F.certainty(F.table([{**row, "verdict": Verdict.NOISE.value}]))


def _decided(ratio, low, high, seed_ratio=None):
    return F.finding(engine="sqlite", base_engine="postgres", step="insert", metric="cpu_time", unit="s",
                     contrast={"ratio": ratio, "ratio_low": low, "ratio_high": high, "beyond_noise": True,
                               "n": 3, "base_n": 3}, seed_ratio=seed_ratio)


def test_a_decided_ratio_whose_ci_spans_over_ten_times_is_said_by_its_bound():
    """Hostile read 43 (01 #4): "insert 0.0538x (0.0063-0.459)", a CI 73x wide, printed to three
    figures as decided, where an undecided 20x-wide one said "CI over 10x wide"."""
    phrases = F.Phrases(line_by="engine", line="{subject} / {base}: {items}")
    [line] = F.render_lines(pd.DataFrame([_decided(0.0538, 0.0063, 0.459), _decided(0.22, 0.125, 0.387)]), phrases)
    assert "insert ≤0.459x " + F.WIDE_CI in line and "0.0538" not in line and "0.22x (0.125-0.387)" in line
    wide = F.Phrases(default="{subject}: {ratio} ({words})",
                     templates={F.WIDE: "{subject}: {value} against {base}'s {base_value} ({words}, CI over 10x wide)"})
    assert "0.0538" not in F.render(_decided(0.0538, 0.0063, 0.459), wide)
    assert not F.all_wide(pd.DataFrame([_decided(0.0538, 0.0063, 0.459)]))  # a bound is a ratio a reader can use


def test_a_decided_ratio_whose_wide_ci_holds_the_seeds_is_not_resolved_against_it():
    """Hostile read 43 (01 #3): "6.25x (1.84-21.3) worse, beyond noise" had no mark beside seed 000's 4.66x;
    hostile read 46a (01 default #1): a CI that wide holding the seed's is no agreement either."""
    assert _decided(6.25, 1.84, 21.3, seed_ratio=4.66)["seed"] == SeedAgreement.UNRESOLVED.value
    assert _decided(6.25, 1.84, 21.3, seed_ratio=1.2)["seed"] == SeedAgreement.SAME_DIRECTION.value
    assert _decided(6.25, 1.84, 21.3, seed_ratio=0.5)["seed"] == SeedAgreement.OPPOSITE.value
    # Undecided, the same one rule (hostile read 46b, 04 #3: MySQL's undecided 26x-wide CI read 'not testable'
    # beside SQLite's decided 23x-wide one): the seed inside it is not resolved.
    assert F.against_seed(6.25, 0.5, 21.3, 4.66) == SeedAgreement.UNRESOLVED
    assert F.against_seed(1.21, 0.236, 6.24, 0.846) == F.against_seed(0.09, 0.0188, 0.432, 0.262, decided=True) \
        == SeedAgreement.UNRESOLVED


def test_the_findings_caption_names_the_pairs_whose_hosts_ran_apart():
    """Hostile read 43 (08 #1, 05 #2): PostgreSQL, the base of every ratio, ran on a host 1.96x slower than
    chDB's, and the page did not say so. One clause, from the compared pairs' own factors."""
    rows = F.table([{"engine": e, "base_engine": b, "host_factor": f} for e, b, f in (
        ("chdb", "postgres", 0.092 / 0.180), ("chdb", "postgres", 0.092 / 0.170), ("duckdb", "postgres", 1.65),
        ("mariadb", "postgres", 1.04),  # within HOST_NAMED: not named
        ("postgres", "postgres", 2.0),  # a layer against its own engine: not a pair of hosts
        ("sqlite", "postgres", float("nan")))])
    assert F.host_pairs_line(rows, title=str.title) == (
        "Host speed: Postgres's host ran 1.96x slower than Chdb's; Duckdb's host ran 1.65x slower than Postgres's.")
    assert F.host_pairs_line(rows.iloc[3:]) == ""


@pytest.mark.parametrize("ratio, low, high, seed, expected", [
    # Hostile read 46a (01 instructions #3): 1.35x against the seed's 1.29x, 4.6% apart, counts that
    # repeat (a narrow CI): the 5% rule that calls two engines' costs the same calls these the same.
    (1.35, 1.349, 1.351, 1.29, SeedAgreement.CLOSE),
    (1.35, 1.349, 1.351, 1.28, SeedAgreement.SAME_DIRECTION),  # 5.5% apart
    (1/1.35, 1/1.351, 1/1.349, 1/1.29, SeedAgreement.CLOSE),  # the same on the other side of 1
    # Hostile read 46a (01 default #1): the seed inside CIs 1.6-3x wide was "the seed's within the CI".
    (0.62, 0.376, 1.01, 0.72, SeedAgreement.UNRESOLVED),
    (2.01, 1.16, 3.49, 2.39, SeedAgreement.UNRESOLVED),
    (1.3, 1.05, 1.65, 1.2, SeedAgreement.UNRESOLVED),  # 1.571x: just over ±25%
    (1.3, 1.05, 1.65, 2.0, SeedAgreement.SAME_DIRECTION),  # a wide CI that misses the seed's still misses it
    (1.3, 1.1, 1.7, 1.2, SeedAgreement.WITHIN),  # 1.545x: resolved
])
def test_the_seed_agrees_within_the_threshold_and_a_wide_ci_does_not_resolve_it(ratio, low, high, seed, expected):
    assert F.against_seed(ratio, low, high, seed) is expected
    assert (expected in F.SEED_AGREES) == (expected in (SeedAgreement.WITHIN, SeedAgreement.CLOSE))


def test_a_ci_end_that_reads_as_the_seed_is_printed_to_one_more_digit():
    """Hostile read 46a (01 default #1): "1.03x (0.818-1.29) ?" and "1.03x (0.823-1.29) ✓" against the
    seed's 1.29: the same printed bound, opposite verdicts."""
    outside = {"ratio": 1.03, "ratio_low": 0.818, "ratio_high": 1.2894, "seed_ratio": 1.2897}
    inside = {**outside, "ratio_high": 1.2912}
    assert F.seed_digits(outside) == F.seed_digits(inside) == 4
    assert F.fmt_ratio(1.03, 0.818, 1.2894, F.seed_digits(outside)) == "1.03x (0.818-1.289)"
    assert F.fmt_ratio(1.03, 0.818, 1.2912, F.seed_digits(inside)) == "1.03x (0.818-1.291)"
    assert F.fmt_number(1.2894, F.seed_digits(inside)) == "1.289"  # the seed's beside them, as precise
    assert F.seed_digits({**outside, "ratio_high": 1.31}) == 3  # a bound that reads apart keeps 3 digits
    assert F.seed_digits({**outside, "seed_ratio": None}) == 3
    row = F.finding(engine="mysql", base_engine="postgres", step="insert", metric="cpu_time", unit="s",
                    contrast={"ratio": 1.03, "ratio_low": 1.0, "ratio_high": 1.2894, "beyond_noise": True,
                              "n": 3, "base_n": 3}, seed_ratio=1.2897)
    assert F.fields_of(row)["ratio"] == "1.03x (1-1.289)" and F.fields_of(row)["seed_text"] == "1.29"


def _at_floor(mean, ci, base_mean, base_ci, host_factor=None):
    return F.finding(engine="ferretdb", base_engine="postgres", step="select", metric="cpu_time", unit="s",
                     floor=F.CPU_FLOOR_SECONDS, host_factor=host_factor,
                     contrast={"ratio": mean / base_mean, "ratio_low": mean / base_mean * 0.9,
                               "ratio_high": mean / base_mean * 1.1, "beyond_noise": True, "n": 3, "base_n": 3,
                               "mean": mean, "ci95": ci, "base_mean": base_mean, "base_ci95": base_ci})


def test_a_side_at_the_floor_decides_a_row_where_the_floors_bound_lies_beyond_the_threshold():
    """Hostile read 46a (01 more-engines #1): "337x (303-375) | at the floor" where only PostgreSQL's
    select (1.99 ms) sat under the 2 ms floor and FerretDB's cost 672 ms: the base did at most 2 ms of
    work, FerretDB at least 650 - 2 ms, so the ratio is at least 324x."""
    row = _at_floor(0.672, 0.022, 0.00199, 0.0001)
    assert row["verdict"] == Verdict.WORSE.value and row["floor_bound"] == pytest.approx((0.650 - 0.002) / 0.002)
    assert F.fields_of(row)["ratio"] == "≥324x (base at the floor)" and "337" not in F.render(row)
    assert row["seed"] == SeedAgreement.NO_SEED.value
    # The mirror: this engine at the floor, the base at 0.5 s (CI low end 0.45 s): at most 0.002 / 0.448.
    mirror = _at_floor(0.0015, 0.0001, 0.5, 0.05)
    assert mirror["verdict"] == Verdict.BETTER.value and mirror["floor_bound"] == pytest.approx(0.002 / 0.448)
    assert F.fields_of(mirror)["ratio"].startswith("≤0.00446x (this engine at the floor)")
    # A bound that does not decide keeps the row at the floor...
    assert _at_floor(0.0041, 0.0, 0.0015, 0.0001)["verdict"] == Verdict.FLOOR.value  # (4.1 - 2) / 2 = 1.05: not over 5%
    assert "floor_bound" not in _at_floor(0.0041, 0.0, 0.0015, 0.0001)
    assert _at_floor(0.0043, 0.0, 0.0015, 0.0001)["verdict"] == Verdict.WORSE.value  # 1.15x
    # A lower bound under 1 (2.8 ms less 2 over 2 is 0.4x) bounds nothing: not "better".
    assert _at_floor(0.0029, 0.0001, 0.00116, 0.00001)["verdict"] == Verdict.FLOOR.value
    # ...as do both sides at the floor, and a bound the host's band could hold (this engine's host 1.3x slower).
    assert _at_floor(0.0018, 0.0001, 0.0015, 0.0001)["verdict"] == Verdict.FLOOR.value
    assert _at_floor(0.0045, 0.0, 0.0015, 0.0001, host_factor=1.3)["verdict"] == Verdict.FLOOR.value  # 1.25x
    assert _at_floor(0.0045, 0.0, 0.0015, 0.0001, host_factor=1.2)["verdict"] == Verdict.WORSE.value
