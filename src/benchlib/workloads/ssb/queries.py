"""The Star Schema Benchmark's 13 queries (O'Neil, O'Neil, Chen and Revilak) in ClickHouse's flat
variant, the form seed 001 ran them: on the denormalised `lineorder_flat` table (ClickHouse's SSB
page, the article's "[1]"). One departure from the original SSB text comes with that variant: Q1.3's
week is the ISO week (toISOWeek: 7-13 February 1994), not SSB's d_weeknuminyear (5-11 February).
ClickHouse runs them with its date functions; for the other engines the date functions become
`extract(...)`, as the seed adapted them for BigQuery:

    toYear(LO_ORDERDATE) = 1993       ->  extract(year from LO_ORDERDATE) = 1993
    toISOWeek(LO_ORDERDATE) = 6       ->  extract(ISOWeek from LO_ORDERDATE) = 6
    toYYYYMM(LO_ORDERDATE) = 199712   ->  extract(year ...) = 1997 and extract(month ...) = 12

(PostgreSQL's and DuckDB's `extract(week ...)` is the ISO week.) An output alias is never used in a
WHERE clause (PostgreSQL does not allow it), so the date function is repeated there.

An answer is compared as a multiset of rows, numbers as exact integers where they are integral:
a checksum of that and the row count are what each engine's answer must share with DuckDB's."""
from __future__ import annotations

import decimal
import hashlib
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable


@dataclass(frozen=True)
class DateFunctions:
    """How a dialect writes the three date predicates the queries need."""

    name: str
    year: Callable[[str], str]
    year_month_is: Callable[[str, int], str]  # the column's year and month equal yyyymm
    iso_week: Callable[[str], str]


CLICKHOUSE_DATES = DateFunctions("ClickHouse (toYear, toYYYYMM, toISOWeek: the SSB text as seed 001 ran it)",
                                 year=lambda c: f"toYear({c})",
                                 year_month_is=lambda c, ym: f"toYYYYMM({c}) = {ym}",
                                 iso_week=lambda c: f"toISOWeek({c})")
EXTRACT_DATES = DateFunctions("extract(year / month / week from ...) (seed 001's adaptation for BigQuery)",
                              year=lambda c: f"extract(year from {c})",
                              year_month_is=lambda c, ym: (f"extract(year from {c}) = {ym // 100} and "
                                                           f"extract(month from {c}) = {ym % 100}"),
                              iso_week=lambda c: f"extract(week from {c})")

_D = "lo_orderdate"


def _q1(where: Callable[[DateFunctions], str]) -> Callable[[DateFunctions], str]:
    return lambda f: f"select sum(lo_extendedprice * lo_discount) as revenue from lineorder_flat where {where(f)}"


def _q2(where: str) -> Callable[[DateFunctions], str]:
    return lambda f: (f"select sum(lo_revenue) as revenue, {f.year(_D)} as year, p_brand from lineorder_flat "
                      f"where {where} group by year, p_brand order by year, p_brand")


def _q3(group: tuple[str, str], where: Callable[[DateFunctions], str]) -> Callable[[DateFunctions], str]:
    c, s = group
    return lambda f: (f"select {c}, {s}, {f.year(_D)} as year, sum(lo_revenue) as revenue from lineorder_flat "
                      f"where {where(f)} group by {c}, {s}, year order by year asc, revenue desc")


def _years(f: DateFunctions, first: int, last: int) -> str:
    return f"{f.year(_D)} >= {first} and {f.year(_D)} <= {last}"


_UK = "(c_city = 'UNITED KI1' or c_city = 'UNITED KI5') and (s_city = 'UNITED KI1' or s_city = 'UNITED KI5')"
_AMERICA = "c_region = 'AMERICA' and s_region = 'AMERICA'"
_MFGR = "(p_mfgr = 'MFGR#1' or p_mfgr = 'MFGR#2')"

QUERIES: dict[str, Callable[[DateFunctions], str]] = {
    "Q1.1": _q1(lambda f: f"{f.year(_D)} = 1993 and lo_discount between 1 and 3 and lo_quantity < 25"),
    "Q1.2": _q1(lambda f: f"{f.year_month_is(_D, 199401)} and lo_discount between 4 and 6 and "
                          "lo_quantity between 26 and 35"),
    "Q1.3": _q1(lambda f: f"{f.iso_week(_D)} = 6 and {f.year(_D)} = 1994 and lo_discount between 5 and 7 and "
                          "lo_quantity between 26 and 35"),
    "Q2.1": _q2("p_category = 'MFGR#12' and s_region = 'AMERICA'"),
    "Q2.2": _q2("p_brand >= 'MFGR#2221' and p_brand <= 'MFGR#2228' and s_region = 'ASIA'"),
    "Q2.3": _q2("p_brand = 'MFGR#2239' and s_region = 'EUROPE'"),
    "Q3.1": _q3(("c_nation", "s_nation"), lambda f: f"c_region = 'ASIA' and s_region = 'ASIA' and {_years(f, 1992, 1997)}"),
    "Q3.2": _q3(("c_city", "s_city"), lambda f: f"c_nation = 'UNITED STATES' and s_nation = 'UNITED STATES' and "
                                                f"{_years(f, 1992, 1997)}"),
    "Q3.3": _q3(("c_city", "s_city"), lambda f: f"{_UK} and {_years(f, 1992, 1997)}"),
    "Q3.4": _q3(("c_city", "s_city"), lambda f: f"{_UK} and {f.year_month_is(_D, 199712)}"),
    "Q4.1": lambda f: (f"select {f.year(_D)} as year, c_nation, sum(lo_revenue - lo_supplycost) as profit "
                       f"from lineorder_flat where {_AMERICA} and {_MFGR} group by year, c_nation "
                       "order by year asc, c_nation asc"),
    "Q4.2": lambda f: (f"select {f.year(_D)} as year, s_nation, p_category, sum(lo_revenue - lo_supplycost) as profit "
                       f"from lineorder_flat where {_AMERICA} and ({f.year(_D)} = 1997 or {f.year(_D)} = 1998) and "
                       f"{_MFGR} group by year, s_nation, p_category order by year asc, s_nation asc, p_category asc"),
    "Q4.3": lambda f: (f"select {f.year(_D)} as year, s_city, p_brand, sum(lo_revenue - lo_supplycost) as profit "
                       f"from lineorder_flat where s_nation = 'UNITED STATES' and ({f.year(_D)} = 1997 or "
                       f"{f.year(_D)} = 1998) and p_category = 'MFGR#14' group by year, s_city, p_brand "
                       "order by year asc, s_city asc, p_brand asc"),
}
NAMES = tuple(QUERIES)
# Seed 001: "the cases when Clickhouse is faster (Q1.2, Q1.3 and Q 3.4) can be attributed to scanning
# through a much smaller subset of the data ... a where filter which was more fine-grained than just
# the year".
FINE_GRAINED = ("Q1.2", "Q1.3", "Q3.4")


def sql(name: str, dates: DateFunctions) -> str:
    return QUERIES[name](dates)


def _canonical(value: Any) -> Any:
    """A value as every engine's driver can agree on it: integral numbers as int (PostgreSQL's
    numeric sums and extract(), ClickHouse's UInt16 years, DuckDB's HUGEINT), other numbers to 6
    significant digits, text without trailing blanks."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, decimal.Decimal, float)):
        number = decimal.Decimal(value) if not isinstance(value, float) else decimal.Decimal(repr(value))
        if number == number.to_integral_value():
            return int(number)
        return float(f"{float(number):.6g}")
    if isinstance(value, str):
        return value.rstrip()
    return str(value)


def _digest(lines: list[str]) -> str:
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Answer:
    """An answer's row count and checksum of its rows as a multiset (what must match); `ordered`,
    the checksum in the order returned, is compared apart (rows equal on the ORDER BY keys may
    come in any order)."""

    rows: int
    checksum: str
    ordered: str = field(compare=False, default="")

    @classmethod
    def of(cls, rows: Iterable[Iterable[Any]]) -> "Answer":
        canonical = [repr(tuple(_canonical(v) for v in row)) for row in rows]
        return cls(len(canonical), _digest(sorted(canonical)), _digest(canonical))
