"""SQL fragments shared by several engine modules."""
from __future__ import annotations


def digits_cross_join_insert(n: int) -> str:
    """MySQL-family row generator from seed 000: a cross join of digit tables.

    MySQL caps recursive CTEs at 1000 iterations by default, so the article crosses a
    10-row CTE with itself; we take just enough digit columns for n rows."""
    width = max(1, len(str(max(n - 1, 0))))
    digits = " union all ".join(f"select {d}" for d in range(1, 10))
    tables = ", ".join(f"x x{i}" for i in range(width))
    number = " + ".join(f"{10 ** i} * x{i}.x" if i else "x0.x" for i in range(width))
    return (
        f"insert into demo(value) with x as (select 0 as x union all {digits}) "
        f"select {number} + 1 from {tables} limit {n}"
    )
