"""Findings as data: what a run found, one row per comparison, with one verdict rule.

A workload's analysis returns a findings table (`FINDING_COLUMNS`): the subject (engine against
its base, the step or phase, the regime), the metric and unit, both values with their 95% CIs, the
ratio with its CI on the log scale, the `Verdict`, the seed's figure where the seed has one, and
the ids of the caveats that bear on the row. Reports, the indexes, the explorer and
`benchlib changes` read these rows; none of them decides a verdict again. Sentences are rendered
from rows by `render` with a workload's phrase table: no layer builds a verdict's words itself.

The one noise rule (`judge`), in order:
- `n/a`: no ratio (a side was not measured, or a net cost at or below zero: its CI reaches zero);
- `floor`: a side's cost sits at the smallest cost a window shows whatever ran in it (`floor`, in
  the metric's unit, given by the workload: ~1 ms of CPU per server window here): the ratio is of
  two fixed overheads, not of the work;
- `untested`: one measurement on a side (`n` < 2), so no noise estimate, whatever CI a caller
  gives it (a size on disk measured once is one value, not an exact one);
- `noise`: Welch's test on the log scale cannot tell the two apart (5%, two-sided);
- `same`: Welch tells them apart, but within `threshold` (seed 003's 5%) on the log scale;
- `drift`: told apart, but in the direction the host's own speed moved between the two sides,
  and the CI reaches into the band between 1 and what the host alone makes the ratio
  (`host_factor`: the subject's calibration loop over the base's; inverted for a rate): the host
  alone could make it. A difference against the host's direction is decided: the host hid some of
  it. Instruction counts do not move with the host's speed: no band (`drift_applies`);
- `better` / `worse`: for the subject against the base, by the metric's direction.
`not_comparable` is set by a workload where the two sides did different work; the caveat ids say
why. `false_positive` is set where the two sides are the same work on the same host, code and
builds (a rerun): a difference the rule flags there is its own false positive, counted as such
(`false_positives`), never called a change."""
from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

import pandas as pd

from . import results

THRESHOLD = 0.05  # seed 003's highlighting: a change under 5% is not called one

# Metrics counted by the machine itself rather than timed: the host's speed does not move them.
COUNTED_UNITS = frozenset({"instructions", "Gi", "bytes", "pages", "rows", "reads", "operations"})


class Verdict(str, enum.Enum):
    BETTER = "better"
    WORSE = "worse"
    SAME = "same"
    NOISE = "noise"
    DRIFT = "drift"
    UNTESTED = "untested"
    FLOOR = "floor"
    NOT_COMPARABLE = "not_comparable"
    FALSE_POSITIVE = "false_positive"
    NA = "n/a"

    @property
    def decided(self) -> bool:
        """Whether the run tells the two apart (or shows them equal): what an answer may state."""
        return self in (Verdict.BETTER, Verdict.WORSE, Verdict.SAME)

    @property
    def support(self) -> int:
        """How well the run supports a row with this verdict, for choosing the line an index shows:
        decided 3; tested but not told apart 2; one measurement, no test 1; no comparison 0."""
        if self.decided:
            return 3
        return {Verdict.UNTESTED: 1, Verdict.FLOOR: 1, Verdict.NOT_COMPARABLE: 0, Verdict.NA: 0}.get(self, 2)


# The verdict's words, one place for every report, index and explorer.
VERDICT_WORDS = {
    Verdict.BETTER: "beyond noise", Verdict.WORSE: "beyond noise", Verdict.SAME: "within 5%",
    Verdict.NOISE: "within noise", Verdict.DRIFT: "within the host's drift",
    Verdict.UNTESTED: "measured once", Verdict.FLOOR: "at the floor", Verdict.NOT_COMPARABLE: "not comparable", Verdict.NA: "no ratio",
    Verdict.FALSE_POSITIVE: "flagged on a rerun",
}

# A decided verdict from counts that repeat (a counted unit whose CI over two or more repetitions is
# narrower than the threshold): Welch's test is passed by construction, the threshold alone decided
# it, and its words say so.
EXACT_WORDS = {Verdict.BETTER: "over 5% (counts repeat)", Verdict.WORSE: "over 5% (counts repeat)",
               Verdict.SAME: "within 5% (counts repeat)"}

NET_NOT_POSITIVE = "n/a (net ≤ 0)"  # a ratio of net costs where one is at or below zero: no ratio


# The answer of a comparison of identical reruns: how often the rule flagged a difference that is not
# there, beside how many it would at its 5% level by chance alone.
FALSE_POSITIVE_LINE = ("{flagged} of {n} flagged on {on}: the false-positive rate ({rate:.0%}; by "
                       "chance alone at 5%, about {expected:.1f})")
IDENTICAL_RERUNS = "identical reruns"  # what {on} names unless the rerun differs (fewer engines)


def false_positives(found: pd.DataFrame) -> pd.DataFrame:
    """Rows of two identical runs (a rerun): every difference the rule flagged is a false positive."""
    flagged = found["verdict"].isin([Verdict.BETTER.value, Verdict.WORSE.value])
    return found.assign(verdict=found["verdict"].where(~flagged, Verdict.FALSE_POSITIVE.value))


def false_positive_line(found: pd.DataFrame, on: str = IDENTICAL_RERUNS) -> str:
    """FALSE_POSITIVE_LINE over the rows the rule tested (one measurement a side tests nothing);
    `on`: what the runs were ("a rerun of 2 of the base run's 4 engines")."""
    tested = found[~found["verdict"].isin([v.value for v in UNTESTABLE])]
    flagged = int((tested["verdict"] == Verdict.FALSE_POSITIVE.value).sum())
    return FALSE_POSITIVE_LINE.format(flagged=flagged, n=len(tested), on=on, rate=flagged / len(tested) if len(tested) else 0,
                                      expected=0.05 * len(tested))


def drift_applies(unit: str) -> bool:
    return unit not in COUNTED_UNITS


def host_ratio(host_factor: float | None, higher_is_better: bool = False) -> float:
    """What the host's speed alone makes a ratio subject / base: `host_factor` (the subject's
    calibration loop over the base's, results.host_factor) for a cost, its inverse for a rate
    (a slower host does less per second); 1 where unknown."""
    if not (_finite(host_factor) and host_factor > 0):
        return 1.0
    return 1 / host_factor if higher_is_better else float(host_factor)


def judge(ratio: float | None, low: float | None, high: float | None, beyond_noise: bool | None, *,
          higher_is_better: bool = False, threshold: float = THRESHOLD, host_factor: float | None = None,
          n: int | None = None, base_n: int | None = None, at_floor: bool = False) -> Verdict:
    """The one noise rule (module docstring). `ratio` is subject / base; `low`, `high` its 95% CI;
    `beyond_noise` Welch's answer (None: untestable); `host_factor` the subject's calibration loop
    over the base's (1.25: the subject's host ran 1.25x slower; None or NaN: unknown, and no band
    for counted metrics); `n`, `base_n` the measurements on each side, where known; `at_floor`
    whether a side's cost sits at the workload's floor (`at_floor`)."""
    if ratio is None or not _finite(ratio) or ratio <= 0 or (_finite(low) and low <= 0):
        return Verdict.NA
    if at_floor:
        return Verdict.FLOOR
    if beyond_noise is None or beyond_noise != beyond_noise or any(_finite(k) and k < 2 for k in (n, base_n)):
        return Verdict.UNTESTED
    if not beyond_noise:
        return Verdict.NOISE
    if abs(math.log(ratio)) <= math.log1p(threshold) + 1e-12:  # 1/1.05 is exactly as far as 1.05
        return Verdict.SAME
    by_host = host_ratio(host_factor, higher_is_better)
    # Only a difference the way the host moved can be the host's: against it, the host hid some of it.
    if abs(math.log(by_host)) > 1e-12 and (ratio > 1) == (by_host > 1):
        nearest = ratio
        if _finite(low) and _finite(high):
            nearest = low if ratio > 1 else high
        # An end on the other side of 1 is as near as it gets.
        near = abs(math.log(nearest)) if nearest > 0 and (nearest > 1) == (ratio > 1) else 0.0
        if near <= abs(math.log(by_host)) + 1e-12:
            return Verdict.DRIFT
    return Verdict.BETTER if (ratio > 1) == higher_is_better else Verdict.WORSE


class SeedAgreement(str, enum.Enum):
    WITHIN = "within"  # the seed's ratio lies inside this run's CI, one narrow enough to tell (SEED_RESOLVED_SPAN)
    CLOSE = "close"  # the seed's outside the CI, but this run's ratio is within THRESHOLD of it
    UNRESOLVED = "unresolved"  # the seed's inside a CI too wide to tell it from a ratio THRESHOLD-or-more away
    SAME_DIRECTION = "same_direction"  # both on the same side of 1, the seed's outside the CI
    OPPOSITE = "opposite"  # the seed's ratio is on the other side of 1
    UNDETERMINED = "undetermined"  # this run's CI spans 1 and misses the seed's: no direction to compare
    UNTESTED = "untested"  # this run's ratio has no CI
    NOT_COMPARABLE = "not_comparable"  # the seed measured something else (another network, another scope)
    NO_SEED = "no_seed"


SEED_WORDS = {
    SeedAgreement.WITHIN: "the seed's within the CI", SeedAgreement.SAME_DIRECTION: "same direction as the seed, size differs",
    SeedAgreement.CLOSE: f"within {THRESHOLD:.0%} of the seed's",
    SeedAgreement.UNRESOLVED: "not resolved at this precision",
    SeedAgreement.OPPOSITE: "opposite to the seed",
    SeedAgreement.UNTESTED: "not testable here",  # with its reason (`seed_untested_reason`)
    SeedAgreement.NOT_COMPARABLE: "not comparable with the seed",
    SeedAgreement.UNDETERMINED: "direction undetermined, the seed's outside the CI", SeedAgreement.NO_SEED: "no seed figure",
}


# How a cell of a grid marks its agreement with the seed (legend: SEED_WORDS).
SEED_MARKS = {SeedAgreement.WITHIN: "✓", SeedAgreement.CLOSE: "✓", SeedAgreement.UNRESOLVED: "~",
              SeedAgreement.SAME_DIRECTION: "≈", SeedAgreement.OPPOSITE: "✗",
              SeedAgreement.UNTESTED: "", SeedAgreement.NOT_COMPARABLE: "", SeedAgreement.UNDETERMINED: "?",
              SeedAgreement.NO_SEED: ""}


def seed_untested_reason(row: Mapping[str, Any]) -> str:
    """Why a row with a seed figure does not test it, in a few words: its verdict's where that
    tests nothing (measured once, at the floor, no ratio, different work), else its CI's width."""
    verdict = Verdict(row["verdict"])
    if verdict in UNTESTABLE:
        return VERDICT_WORDS[verdict]
    if _finite(row.get("floor_bound")):  # decided by the floor's bound: a bound tests no seed's size
        return VERDICT_WORDS[Verdict.FLOOR]
    if any(_finite(row.get(k)) and row.get(k) < 2 for k in ("n", "base_n")) or not _finite(row.get("ratio_low")):
        return VERDICT_WORDS[Verdict.UNTESTED]
    if row.get("ratio_low") <= 0:
        return VERDICT_WORDS[Verdict.NA]
    return f"CI over {SEED_TESTABLE_SPAN:g}x wide"


def seed_words(row: Mapping[str, Any]) -> str:
    """A row's agreement with the seed in words; an untested one says why, a not comparable one
    its `seed_reason` where the row carries one ("threads share one interpreter lock")."""
    agreement = SeedAgreement(row.get("seed") or SeedAgreement.NO_SEED.value)
    words = SEED_WORDS[agreement]
    if agreement == SeedAgreement.UNTESTED:
        return f"{words}: {seed_untested_reason(row)}"
    reason = row.get("seed_reason")
    return f"{words} ({reason})" if agreement == SeedAgreement.NOT_COMPARABLE and isinstance(reason, str) \
        and reason else words


# A stored metric's name in words, where a findings table or line names it.
METRIC_WORDS = {"cpu_time": "engine CPU", "wall_time": "wall time", "instructions_user": "user-space instructions",
                "tps": "TPS", "latency_p95": "p95 latency"}


# A ratio's CI wider than this (high / low) prints no point ratio, and undecided, a seed outside it is
# counted as untested (two repetitions give t = 12.7); a seed inside it is UNRESOLVED, as inside any CI
# wider than SEED_RESOLVED_SPAN.
SEED_TESTABLE_SPAN = 10.0
# A seed inside a CI wider than this (about ±25%, high / low over 1.25²) is not told from a ratio
# five times the threshold away: not resolved at this precision, never "reproduced".
SEED_RESOLVED_SPAN = 1.25 ** 2

# How a row stands against the seed: agreeing (inside a resolving CI, or within THRESHOLD of it),
# or missing it (a report says why each of these does).
SEED_AGREES = frozenset({SeedAgreement.WITHIN, SeedAgreement.CLOSE})
SEED_MISSED = frozenset({SeedAgreement.SAME_DIRECTION, SeedAgreement.OPPOSITE, SeedAgreement.UNDETERMINED})


def against_seed(ratio: float | None, low: float | None, high: float | None, seed_ratio: float | None, *,
                 decided: bool = False) -> SeedAgreement:
    """How this run's ratio (with its 95% CI) stands against the seed's (`SeedAgreement`). `decided`: whether the row's verdict is (`Verdict.decided`): its CI, however wide, is then a
    bound on one side of 1 (`WIDE_CI`), which a seed figure can lie inside or outside of."""
    if seed_ratio is None or not _finite(seed_ratio) or seed_ratio <= 0:
        return SeedAgreement.NO_SEED
    # Without a CI (one repetition) there is no direction to set beside the seed's, even across 1;
    # nor with one that reaches zero (a net cost not above zero).
    if ratio is None or not _finite(ratio) or not (_finite(low) and _finite(high)) or low <= 0:
        return SeedAgreement.UNTESTED
    # The seed inside a CI too wide to resolve it is not resolved, however wide and whatever the verdict:
    # one rule for a decided 23x-wide CI and an undecided 26x-wide one (hostile read 46b, 04 #3).
    if low <= seed_ratio <= high:
        return SeedAgreement.UNRESOLVED if _span(low, high) > SEED_RESOLVED_SPAN else SeedAgreement.WITHIN
    # Outside an undecided CI over SEED_TESTABLE_SPAN, the seed is missed by nothing this run can state.
    if _span(low, high) > SEED_TESTABLE_SPAN and not decided:
        return SeedAgreement.UNTESTED
    # The threshold that calls two engines' costs the same calls this run's and the seed's ratios the same.
    if abs(math.log(ratio / seed_ratio)) <= math.log1p(THRESHOLD) + 1e-12:
        return SeedAgreement.CLOSE
    if low <= 1 <= high:
        return SeedAgreement.UNDETERMINED
    if (ratio > 1) != (seed_ratio > 1) and abs(math.log(seed_ratio)) > 1e-12:
        return SeedAgreement.OPPOSITE
    return SeedAgreement.SAME_DIRECTION


# Verdicts whose row tests no seed figure, whatever its CI.
UNTESTABLE = frozenset({Verdict.NOT_COMPARABLE, Verdict.UNTESTED, Verdict.NA, Verdict.FLOOR})

# What a server engine's window costs in CPU whatever ran in it (the window's own opening and
# closing): every engine's select of 2,000 rows cost 1.0-1.2 ms at the tiny set. A side under
# twice this is too close to it for its ratio to be the work's.
CPU_FLOOR_SECONDS = 0.002


def at_floor(contrast: Mapping[str, Any], floor: float | None) -> bool:
    """Whether either side's mean in a `results.contrast` dict is under `floor` (None: no floor)."""
    return floor is not None and any(_finite(v) and v < floor for v in (contrast.get("mean"), contrast.get("base_mean")))


def floor_bound(contrast: Mapping[str, Any], floor: float | None) -> float:
    """Where one side of a cost is at the floor and the other above it, the bound the floor puts on
    the ratio of the two sides' work (subject / base): the side at the floor did at most `floor` of
    work, and the other at least its CI's low end less the floor (the window's fixed cost is under
    it). Base at the floor: at least (subject's low - floor) / floor; subject at it: at most floor /
    (base's low - floor). NaN where neither or both sides are at the floor, no floor, no CI, or the
    bound is on the far side of 1 (at least 0.4x bounds nothing)."""
    if floor is None or not at_floor(contrast, floor):
        return float("nan")
    low = {side: (contrast.get(mean) - contrast.get(ci)
                  if _finite(contrast.get(mean)) and _finite(contrast.get(ci)) else float("nan"))
           for side, mean, ci in (("subject", "mean", "ci95"), ("base", "base_mean", "base_ci95"))}
    if not all(_finite(v) for v in low.values()):
        return float("nan")
    # A lower bound under 1 (an upper one over 1) bounds the ratio to nothing a verdict could use.
    if contrast["base_mean"] < floor and low["subject"] > 2 * floor:
        return (low["subject"] - floor) / floor
    if contrast["mean"] < floor and low["base"] > 2 * floor:
        return floor / (low["base"] - floor)
    return float("nan")


# A ratio the floor bounds (`floor_bound`) is printed as that bound, saying which side is at the floor.
FLOOR_BOUND = {True: "≥{bound}x (base at the floor)", False: "≤{bound}x (this engine at the floor)"}


FINDING_COLUMNS = [
    "engine", "base_engine", "step", "regime", "metric", "unit", "higher_is_better",
    "value", "value_ci95", "n", "base_value", "base_ci95", "base_n",
    "ratio", "ratio_low", "ratio_high", "welch_t", "welch_dof", "host_factor", "verdict",
    "seed_ratio", "seed", "caveats", "headline",
]


@dataclass(frozen=True)
class Caveat:
    """A caveat that changes the meaning of some numbers: `id` is what findings rows cite; `text`
    is one short sentence, printed beside the number or figure it changes."""
    id: str
    text: str


def finding(*, engine: str, base_engine: str, step: str, metric: str, unit: str, contrast: Mapping[str, Any],
            regime: str = "", higher_is_better: bool = False, host_factor: float | None = None,
            seed_ratio: float | None = None,
            caveats: Iterable[str] = (), headline: bool = False, verdict: Verdict | None = None,
            threshold: float = THRESHOLD, seed_comparable: bool = True, floor: float | None = None) -> dict[str, Any]:
    """One findings row from a `results.contrast` dict (subject against base). `verdict` is set
    only where a workload knows the two sides did different work (`Verdict.NOT_COMPARABLE`);
    `seed_comparable=False` where the seed's figure measured something else (a remote over
    gigabit Ethernet against TCP on this host): shown, tested against nothing. `floor`: the cost
    (in the row's unit) under which a side sits at the floor (`at_floor`). `host_factor`: the
    subject's calibration loop over the base's (results.host_factor), stored where it applies
    (a timed unit), NaN elsewhere."""
    c = contrast
    applied = float(host_factor) if drift_applies(unit) and _finite(host_factor) else float("nan")
    judged = verdict or judge(c.get("ratio"), c.get("ratio_low"), c.get("ratio_high"), c.get("beyond_noise"),
                              higher_is_better=higher_is_better, threshold=threshold, host_factor=applied,
                              n=c.get("n"), base_n=c.get("base_n"), at_floor=at_floor(c, floor))
    # A row at the floor whose bound from it (`floor_bound`) already lies beyond the threshold, and
    # beyond the host's band, is decided by that bound, the rule judging the bound as an exact ratio.
    bound = floor_bound(c, floor) if judged == Verdict.FLOOR and not higher_is_better else float("nan")
    by_bound = judge(bound, bound, bound, True, threshold=threshold, host_factor=applied, n=c.get("n"),
                     base_n=c.get("base_n")) if _finite(bound) and bound > 0 else Verdict.NA
    if by_bound in (Verdict.BETTER, Verdict.WORSE):
        judged = by_bound
    else:
        bound = float("nan")
    return {
        "engine": engine, "base_engine": base_engine, "step": step, "regime": regime, "metric": metric,
        "unit": unit, "higher_is_better": higher_is_better,
        "value": c.get("mean"), "value_ci95": c.get("ci95"), "n": c.get("n"),
        "base_value": c.get("base_mean"), "base_ci95": c.get("base_ci95"), "base_n": c.get("base_n"),
        "ratio": c.get("ratio"), "ratio_low": c.get("ratio_low"), "ratio_high": c.get("ratio_high"),
        "welch_t": c.get("welch_t"), "welch_dof": c.get("welch_dof"), "host_factor": applied, "verdict": judged.value,
        "seed_ratio": seed_ratio,
        # Two sides that did different work, one measurement or no ratio test no seed figure either.
        "seed": (against_seed(c.get("ratio"), c.get("ratio_low"), c.get("ratio_high"), seed_ratio)
                 if not (_finite(seed_ratio) and seed_ratio > 0) else
                 SeedAgreement.NOT_COMPARABLE if not seed_comparable else
                 SeedAgreement.UNTESTED if judged in UNTESTABLE or _finite(bound) else
                 against_seed(c.get("ratio"), c.get("ratio_low"), c.get("ratio_high"), seed_ratio,
                              decided=judged.decided)).value,
        "caveats": tuple(caveats), "headline": headline,
        **({"floor": floor} if floor is not None else {}),
        **({"floor_bound": bound} if _finite(bound) else {}),
    }


def compare(summary: pd.DataFrame, *, base_engine: str, by: str = "phase", column: str = "value", metric: str,
            unit: str, regime: str = "", higher_is_better: bool = False, host_factor: float | None = None,
            seed: Mapping[tuple[str, str], float] | None = None, steps: Iterable[str] | None = None,
            caveats: Callable[[str, str], Iterable[str]] | None = None, threshold: float = THRESHOLD,
            floor: float | None = None) -> pd.DataFrame:
    """Every engine of a `results.summarize` table against `base_engine`, per `by` (phase, test):
    the findings rows. `seed`: (engine, step) -> the seed's ratio to its base; `caveats`:
    (engine, step) -> the caveat ids that bear on that row; `floor`, `host_factor`: as `finding`'s."""
    s = summary.set_index(["engine", by])
    rows = []
    wanted = None if steps is None else set(steps)
    for (engine, step), row in s.iterrows():
        if engine == base_engine or (base_engine, step) not in s.index or (wanted is not None and step not in wanted):
            continue
        c = results.contrast(s.loc[(base_engine, step)], row, column, threshold, exact=unit in COUNTED_UNITS)
        rows.append(finding(engine=engine, base_engine=base_engine, step=step, metric=metric, unit=unit,
                            contrast=c, regime=regime, higher_is_better=higher_is_better, host_factor=host_factor,
                            seed_ratio=(seed or {}).get((engine, step)),
                            caveats=caveats(engine, step) if caveats else (), threshold=threshold, floor=floor))
    return table(rows)


def table(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Rows in the findings schema (missing columns empty), in the order given."""
    df = pd.DataFrame(list(rows))
    for col in FINDING_COLUMNS:
        if col not in df:
            df[col] = pd.Series(dtype=object)
    return df[FINDING_COLUMNS + [c for c in df.columns if c not in FINDING_COLUMNS]]


# -- rendering ----------------------------------------------------------------------------------------
def fmt_number(value: float | None, digits: int = 3) -> str:
    if value is None or not _finite(value):
        return "n/a"
    if abs(value) >= 10 ** digits:
        return f"{value:,.0f}"
    return f"{value:.{digits}g}"


def fmt_ratio(ratio: float | None, low: float | None = None, high: float | None = None, digits: int = 3) -> str:
    """`1.29x (1.27-1.31)`: on the log scale a CI is not symmetric, so its two ends are printed. A
    ratio or CI end at or below zero (a net cost not above zero) is no ratio: `n/a (net ≤ 0)`.
    `digits`: significant digits (`seed_digits`)."""
    if ratio is None or not _finite(ratio):
        return "n/a"
    if ratio <= 0 or (_finite(low) and low <= 0):
        return NET_NOT_POSITIVE
    if _finite(low) and _finite(high):
        return f"{fmt_number(ratio, digits)}x ({fmt_number(low, digits)}-{fmt_number(high, digits)})"
    return f"{fmt_number(ratio, digits)}x"


def seed_digits(row: Mapping[str, Any], digits: int = 3) -> int:
    """The significant digits a row's ratio, its CI and the seed's ratio are printed to: `digits`,
    or more where a CI end reads the same as the seed's at that precision (its seed comparison then
    turns on a digit not printed: "1.03x (0.818-1.29) ?" against the seed's 1.29)."""
    seed, ends = row.get("seed_ratio"), [row.get(k) for k in ("ratio_low", "ratio_high")]
    if not (_finite(seed) and seed > 0):
        return digits
    while digits < 6 and any(_finite(e) and fmt_number(e, digits) == fmt_number(seed, digits) for e in ends):
        digits += 1
    return digits


@dataclass(frozen=True)
class Phrases:
    """A workload's phrase table: one template per verdict (falling back to `default`), filled
    from a findings row's fields plus the renderer's: {subject} {base} (engine titles), {ratio}
    (ratio with its CI), {value} {base_value} (with units), {step}, {regime}, {metric}, {words}
    (the verdict's words), {ratio_only} (the ratio without its CI), {n}, {seed_ratio}, {seed_words},
    {more_less} ("more" / "less" by the ratio).

    `line_by` (a findings column, e.g. "engine") renders the answer one line per value of that
    column instead of one per row: `line` filled with the first row's fields and {items}: the
    decided rows' `item` templates, then the undecided rows' `undecided` templates grouped under
    their verdict's words ("insert 0.13x (0.04-0.45); within noise: update 0.09x, select 1.5x").

    `values`: more columns of a row shown as numbers in the row's shown unit, which {shown_unit}
    names once (a part's cost: {commit}); a row's other extra columns reach the templates as they are. `directed`: whether better / worse mean
    something for these rows (not for two parts of one engine's cost, which are only told apart)."""
    templates: Mapping[str, str] = field(default_factory=dict)
    default: str = "{subject}, {step}: {ratio} {base}'s {metric} ({words})"
    seed: str = "seed: {seed_ratio:.2f}x, {seed_words}"
    unit_scale: Mapping[str, tuple[float, str]] = field(default_factory=dict)  # unit -> (divide by, shown unit)
    line_by: str | None = None
    line: str = "{subject} / {base}: {items}"
    item: str = "{step} {ratio}"
    undecided: str = "{step} {ratio_only}"
    values: tuple[str, ...] = ()
    missing: str = "n/a"  # how a `values` column without a value reads
    directed: bool = True

    def template(self, verdict: str) -> str:
        return self.templates.get(verdict, self.default)

    def template_of(self, fields: Mapping[str, Any]) -> str:
        """A row's template: `WIDE` (where the table has one) for a row whose CI is too wide for its
        point to be printed, else its verdict's."""
        if WIDE in self.templates and fields["wide"]:
            return self.templates[WIDE]
        return self.template(fields["verdict"])


DEFAULT_PHRASES = Phrases()


def fields_of(row: Mapping[str, Any], phrases: Phrases = DEFAULT_PHRASES,
              title: Callable[[str], str] | None = None) -> dict[str, Any]:
    from ..engines import engine_title  # late: the catalog loads every engine module; rows carry keys

    title = title or engine_title
    scale, shown = phrases.unit_scale.get(row["unit"], (1.0, row["unit"]))
    value = lambda v: phrases.missing if v is None or not _finite(v) else f"{fmt_number(v / scale)} {shown}".strip()  # noqa: E731
    verdict = Verdict(row["verdict"])
    ratio = row.get("ratio")
    digits = seed_digits(row)
    return {
        **{k: v for k, v in row.items() if k not in FINDING_COLUMNS},
        **{k: row.get(k) for k in FINDING_COLUMNS},
        **{k: fmt_number(row[k] / scale) if _finite(row.get(k)) else phrases.missing for k in phrases.values},
        "shown_unit": shown, "mark": "",
        "metric": METRIC_WORDS.get(row.get("metric"), row.get("metric")),  # rows carry the stored name
        # A row set beside something within one engine (a layer, a part, a run) names it: `base_label`.
        "subject": title(row["engine"]),
        "base": label if isinstance(label := row.get("base_label"), str) and label else title(row["base_engine"]),
        "ratio": (ratio_text := fmt_ratio(ratio, row.get("ratio_low"), row.get("ratio_high"), digits)
                  if not _finite(bounded := row.get("floor_bound")) else
                  FLOOR_BOUND[bounded >= 1].format(bound=fmt_number(bounded))),
        # A ratio whose CI spans more than SEED_TESTABLE_SPAN says nothing by its point: undecided,
        # nothing at all; decided, the CI's end nearest 1 as a bound. A ratio of two floors has no
        # point to print: the step and its verdict's words say it all.
        "wide": (wide := verdict != Verdict.FLOOR and ratio_text != NET_NOT_POSITIVE and not _finite(bounded)
                 and _span(row.get("ratio_low"), row.get("ratio_high")) > SEED_TESTABLE_SPAN),
        "ratio_only": "" if verdict == Verdict.FLOOR else ratio_text if ratio_text == NET_NOT_POSITIVE
        or _finite(bounded) else
        (f"{_bound(ratio, row.get('ratio_low'), row.get('ratio_high'))} {WIDE_CI}" if verdict.decided else WIDE_CI)
        if wide else fmt_ratio(ratio),
        "value": value(row.get("value")), "base_value": value(row.get("base_value")),
        "words": verdict_words(row), "seed_words": seed_words(row),
        "more_less": "more" if _finite(ratio) and ratio > 1 else "less",
        # The CI's end nearest 1 as a bound ("≥1.67x"), and whose host ran slower (`drift` verdict).
        "bound": _bound(ratio, row.get("ratio_low"), row.get("ratio_high")),
        "host_words": host_words(row.get("host_factor"), *HOST_SIDES, matched=0.0),
        "seed_ratio": row.get("seed_ratio") if _finite(row.get("seed_ratio")) else float("nan"),
        "seed_text": fmt_number(row.get("seed_ratio"), digits),  # to as many digits as the CI it is set beside
        "host_bias": host_bias(row.get("host_factor"), title(row["engine"]), title(row["base_engine"]),
                               higher_is_better=bool(row.get("higher_is_better")))
        if host_named(row.get("host_factor")) else "",
    }


# Whose host ran slower, by how much: beside a `drift` verdict, and where a report names a pair's host speed.
HOST_SLOWER = "{side}'s host ran {factor}x slower"
HOST_MATCHED = "host speed matched within {within:.0%}"
HOST_SIDES = ("this engine", "the base")  # how a row's sides are named in its host words


def host_words(host_factor: float | None, subject: str, base: str, matched: float = THRESHOLD) -> str:
    """`host_factor` (the subject's calibration loop over the base's) in words: whose host ran
    slower, or that they matched within `matched` (0 beside a `drift` verdict, which a host that
    moved at all may hold); "" where unknown."""
    if not (_finite(host_factor) and host_factor > 0):
        return ""
    if abs(math.log(host_factor)) <= math.log1p(matched):
        return HOST_MATCHED.format(within=math.exp(abs(math.log(host_factor))) - 1)
    slower, factor = (subject, host_factor) if host_factor > 1 else (base, 1 / host_factor)
    return HOST_SLOWER.format(side=slower, factor=fmt_number(factor))


# Beside a findings table: the compared pairs whose hosts ran this far apart or further (a decided
# ratio's size moves with it too: a base on a slow host makes the subject look cheaper).
HOST_NAMED = 0.10
HOST_PAIRS = "Host speed: {pairs}."
HOST_PAIR = "{slower}'s host ran {factor}x slower than {faster}'s"


def host_named(host_factor: float | None) -> bool:
    """Whether a pair's hosts ran HOST_NAMED or further apart (`host_factor` as `host_words`')."""
    return _finite(host_factor) and host_factor > 0 and abs(math.log(host_factor)) >= math.log1p(HOST_NAMED)


# Beside one ratio whose pair's hosts ran HOST_NAMED apart: whose ran slower, and which way that moves the ratio.
HOST_BIAS = "{slower}: the ratio reads {way}"


def host_bias(host_factor: float | None, subject: str, base: str, *, higher_is_better: bool = False) -> str:
    """HOST_BIAS where the pair's hosts ran HOST_NAMED or further apart, else "": the ratio reads
    high where the host alone moves it above 1 (`host_ratio`), low where below."""
    if not host_named(host_factor):
        return ""
    return HOST_BIAS.format(slower=host_words(host_factor, subject, base, matched=0.0),
                            way="high" if host_ratio(host_factor, higher_is_better) > 1 else "low")


def host_pairs_line(found: pd.DataFrame, title: Callable[[str], str] | None = None) -> str:
    """HOST_PAIRS over the compared pairs of two engines (not a part, a layer or a run against
    itself) whose `host_factor` lies HOST_NAMED or further from 1: its furthest where a pair has
    several (regimes, steps); "" where none does."""
    from ..engines import engine_title  # late, as fields_of

    title = title or engine_title
    if found.empty or "host_factor" not in found:
        return ""
    rows = found[(found["engine"] != found["base_engine"])].assign(
        host_factor=pd.to_numeric(found["host_factor"], errors="coerce")).dropna(subset=["host_factor"])
    rows = rows[rows["host_factor"] > 0]
    pairs = []
    for (engine, base), g in rows.groupby(["engine", "base_engine"], sort=False):
        factor = float(g["host_factor"].loc[g["host_factor"].map(lambda f: abs(math.log(f))).idxmax()])
        if host_named(factor):
            slower, faster = (engine, base) if factor > 1 else (base, engine)
            pairs.append(HOST_PAIR.format(slower=title(slower), faster=title(faster),
                                          factor=fmt_number(max(factor, 1 / factor))))
    return HOST_PAIRS.format(pairs="; ".join(pairs)) if pairs else ""


WIDE_CI = f"(CI over {SEED_TESTABLE_SPAN:g}x wide)"
WIDE = "wide"  # a phrase table's template for a row whose CI is too wide to print its point
WIDE_GROUP = "{words}, CI over " + f"{SEED_TESTABLE_SPAN:g}x wide"  # an answer's group of such ratios


def _span(low: float | None, high: float | None) -> float:
    """How many times its low end a CI's high end is: inf where it reaches zero, 0 where there is none."""
    if not (_finite(low) and _finite(high)):
        return 0.0
    return high / low if low > 0 else math.inf


def all_wide(rows: pd.DataFrame) -> bool:
    """Whether no row of `rows` has a ratio a reader can use: each one's CI spans more than
    SEED_TESTABLE_SPAN (undecided: a decided one is a bound), reaches zero, or is missing, or the row
    sits at the floor (a grid of such rows is dropped, not drawn)."""
    return all(Verdict(r["verdict"]) in (Verdict.FLOOR, Verdict.NA) or not 0 < _span(r["ratio_low"], r["ratio_high"])
               <= (math.inf if Verdict(r["verdict"]).decided else SEED_TESTABLE_SPAN) for r in rows.to_dict("records"))


def _bound(ratio: float | None, low: float | None, high: float | None) -> str:
    if not (_finite(ratio) and _finite(low) and _finite(high)):
        return fmt_ratio(ratio)
    return f"≥{fmt_number(low)}x" if ratio > 1 else f"≤{fmt_number(high)}x"


def verdict_words(row: Mapping[str, Any], *, host: bool = True) -> str:
    """A row's verdict in words; a decided one from counts that repeat says so (EXACT_WORDS), a
    `drift` one whose host ran slower (`host_words`; `host=False`: where a caption or another cell
    of the same pair says it)."""
    verdict = Verdict(row["verdict"])
    low, high, n, base_n = (row.get(k) for k in ("ratio_low", "ratio_high", "n", "base_n"))
    exact = (verdict in EXACT_WORDS and row.get("unit") in COUNTED_UNITS and _finite(low) and low > 0
             and _finite(high) and high / low <= 1 + THRESHOLD and _finite(n) and _finite(base_n)
             and min(n, base_n) >= 2)
    if exact:
        return EXACT_WORDS[verdict]
    slower = host_words(row.get("host_factor"), *HOST_SIDES, matched=0.0) if host and verdict == Verdict.DRIFT else ""
    return f"{VERDICT_WORDS[verdict]} ({slower})" if slower else VERDICT_WORDS[verdict]


def render(row: Mapping[str, Any], phrases: Phrases = DEFAULT_PHRASES, *, with_seed: bool = False,
           mark: str = "") -> str:
    """One sentence from one findings row: the only place a verdict becomes words. `mark`: the
    row's footnote marks, set right after its ratio."""
    f = fields_of(row, phrases)
    f["ratio"] += mark
    f["mark"] = mark  # for a template without {ratio} (WIDE): where its marks go
    text = phrases.template_of(f).format(**f)
    if with_seed and f["seed"] != SeedAgreement.NO_SEED.value:
        text += "; " + phrases.seed.format(**f)
    return text


def render_lines(rows: pd.DataFrame, phrases: Phrases = DEFAULT_PHRASES) -> list[str]:
    """The answer's lines: one rendered row each, or with `phrases.line_by` one line per group of
    rows (in the order the groups first appear)."""
    records = rows.to_dict("records")
    if not phrases.line_by:
        return [render(row, phrases) for row in records]
    groups: dict[Any, list[Mapping[str, Any]]] = {}
    for row in records:
        groups.setdefault(row[phrases.line_by], []).append(row)
    lines = []
    for group in groups.values():
        fields = [fields_of(row, phrases) for row in group]
        # A decided ratio too wide to print is said by its bound (`ratio_only`).
        decided = [phrases.item.format(**{**f, "ratio": f["ratio_only"]} if f["wide"] else f)
                   for f in fields if Verdict(f["verdict"]).decided]
        undecided: dict[str, list[str]] = {}
        for f in fields:
            if not Verdict(f["verdict"]).decided:
                # Ratios too wide to print are grouped under that too, each said by its step alone.
                key = WIDE_GROUP.format(words=f["words"]) if f["wide"] else f["words"]
                undecided.setdefault(key, []).append(phrases.undecided.format(**{**f, "ratio_only": ""} if f["wide"]
                                                                              else f).strip())
        items = "; ".join([", ".join(decided)] * bool(decided)
                          + [f"{words}: {', '.join(parts)}" for words, parts in undecided.items()])
        lines.append(phrases.line.format(**{**fields[0], "items": items}))
    return lines


def headline(findings: pd.DataFrame, limit: int = 5, by: str | None = None) -> pd.DataFrame:
    """The rows an answer states: those marked `headline`, else the decided rows furthest from 1.
    `limit` counts rows, or with `by` (a column) groups of rows: the rows of the first `limit`
    values of that column."""
    if findings.empty:
        return findings
    marked = findings[findings["headline"] == True]  # noqa: E712 (object column)
    if not marked.empty:
        if by:
            return marked[marked[by].isin(list(dict.fromkeys(marked[by]))[:limit])]
        return marked.head(limit)
    decided = findings[findings["verdict"].isin([v.value for v in Verdict if v.decided])]
    pool = decided if not decided.empty else findings
    distance = pool["ratio"].map(lambda r: abs(math.log(r)) if _finite(r) and r > 0 else -1.0)
    return pool.loc[distance.sort_values(ascending=False).index].head(limit)


def caveat_marks(rows: pd.DataFrame, known: Iterable[str] | None = None) -> dict[str, int]:
    """Each caveat id the rows cite (of `known`, where given), numbered 1.. in order of first citation."""
    known = None if known is None else set(known)
    cited = (c for cs in rows["caveats"] for c in (cs or ()) if known is None or c in known) if not rows.empty else ()
    return {c: n for n, c in enumerate(dict.fromkeys(cited), 1)}


def certainty(findings: pd.DataFrame) -> str:
    """How sure the run is, counted from the rows: `7 of 9 comparisons decided (2 within noise)`."""
    if findings.empty:
        return "no comparison measured"
    counts = findings["verdict"].value_counts()
    decided = sum(int(counts.get(v.value, 0)) for v in Verdict if v.decided)
    rest = [f"{int(counts[v.value])} {VERDICT_WORDS[v]}" + (_floor_clause(findings) if v == Verdict.FLOOR else "")
            for v in Verdict if not v.decided and counts.get(v.value)]
    return f"{decided} of {len(findings)} comparisons decided" + (f" ({', '.join(rest)})" if rest else "")


FLOOR_CLAUSE = ": a side under {floor}, a window's fixed cost"


def _floor_clause(findings: pd.DataFrame) -> str:
    """What `at the floor` means, with its threshold, where the rows carry it."""
    at = findings[findings["verdict"] == Verdict.FLOOR.value]
    floors = at[["floor", "unit"]].dropna().drop_duplicates() if "floor" in at else at.iloc[0:0]
    if len(floors) != 1:
        return ""
    floor, unit = floors.iloc[0]
    shown = f"{fmt_number(floor * 1e3)} ms" if unit == "s" and floor < 1 else f"{fmt_number(floor)} {unit}"
    return FLOOR_CLAUSE.format(floor=shown)


def count_line(findings: pd.DataFrame) -> str:
    """`2 of 20 decided`: `certainty` without its breakdown, for an index's one line."""
    decided = int(findings["verdict"].map(lambda v: Verdict(v).decided).sum()) if not findings.empty else 0
    return f"{decided} of {len(findings)} decided"


# Beside the seed's untested rows: the parameter set whose scale tests them.
SEED_TESTED_BY = "--set {name} tests them"


def seed_line(findings: pd.DataFrame, tested_by: str | None = None) -> str:
    """The comparison with the seed in one line: how many of the rows that have a seed figure agree.
    `tested_by`: the parameter set that tests the seed's figures this run could not (said beside
    the untested count)."""
    with_seed = findings[findings["seed"].fillna(SeedAgreement.NO_SEED.value) != SeedAgreement.NO_SEED.value]
    if with_seed.empty:
        return ""
    counts = with_seed["seed"].value_counts()
    parts = [f"{SEED_WORDS[a]} ({int(counts[a.value])})" for a in SeedAgreement
             if counts.get(a.value) and a != SeedAgreement.UNTESTED]
    untested = with_seed[with_seed["seed"] == SeedAgreement.UNTESTED.value]
    if not untested.empty:
        reasons = pd.Series([seed_untested_reason(r) for r in untested.to_dict("records")]).value_counts(sort=False)
        parts.append(f"{SEED_WORDS[SeedAgreement.UNTESTED]} ("
                     + ", ".join(f"{int(k)} {reason}" for reason, k in reasons.items())
                     + (f"; {SEED_TESTED_BY.format(name=tested_by)}" if tested_by else "") + ")")
    ratios = "ratio" if len(with_seed) == 1 else "ratios"
    return f"Against the seed's {len(with_seed)} {ratios}: " + "; ".join(parts) + "."


def _finite(x: Any) -> bool:
    try:
        return x is not None and math.isfinite(float(x))
    except (TypeError, ValueError):
        return False
