"""Hourly prices per engine and host class (data/reference/engine_prices.csv): seed 004's own,
published, and declared list prices for this host's class. Declared prices are typed in by hand
from a vendor's price list, never measured; each row says what it includes and where it is from.
Read with the csv module: parameters are validated before pandas or Docker is loaded."""
from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import lru_cache

from ...core.errors import ParameterError
from ...core.settings import get_settings

TABLE = "engine_prices"
NO_PRICES = "none"  # the host_class that prices nothing (only CPU-seconds per transaction are given)


@dataclass(frozen=True)
class Price:
    host_class: str
    engine: str
    usd_per_hour: float
    basis: str  # "published" (by a seed) or "declared" (typed in from a price list, not measured)
    offering: str  # what is bought ("managed service", "self-managed instance"): one kind per host class
    instance: str
    includes: str
    source: str
    as_of: str

    @property
    def basis_text(self) -> str:
        """How far the price can be trusted, in the words every report uses."""
        if self.basis == "declared":
            return f"declared, list price as of {self.as_of}, not verified here"
        return f"{self.basis} by seed 004, as of {self.as_of}"


@lru_cache(maxsize=1)
def table() -> tuple[Price, ...]:
    path = get_settings().reference_dir / f"{TABLE}.csv"
    with path.open(newline="") as f:
        return tuple(Price(**{**row, "usd_per_hour": float(row["usd_per_hour"])}) for row in csv.DictReader(f))


def host_classes() -> list[str]:
    return list(dict.fromkeys(p.host_class for p in table()))


def price_key(engine_key: str) -> str:
    """A price is per engine, whatever its pinned version (`postgres@15` is priced as postgres)."""
    return engine_key.partition("@")[0]


def for_host(host_class: str, engines: list[str]) -> dict[str, Price]:
    """The price row of each engine on `host_class`; a host class not in the table, or an engine
    without a row on it, fails naming it (before any container starts)."""
    if host_class == NO_PRICES:
        return {}
    known = host_classes()
    if host_class not in known:
        raise ParameterError(f"host_class must be one of {', '.join([*known, NO_PRICES])}, got {host_class!r}")
    rows = {p.engine: p for p in table() if p.host_class == host_class}
    offerings = sorted({p.offering for p in rows.values()})
    if len(offerings) > 1:
        # Engines ranked by price/performance must be bought the same way: a managed service's
        # hour against a bare instance's would rank the offerings, not the engines.
        raise ParameterError(f"host_class {host_class!r} in data/reference/{TABLE}.csv mixes offerings "
                             f"({', '.join(offerings)}): a host class must price one kind")
    missing = [k for k in engines if price_key(k) not in rows]
    if missing:
        raise ParameterError(f"host_class {host_class!r} has no price for {', '.join(missing)} in "
                             f"data/reference/{TABLE}.csv (it prices {', '.join(rows)})")
    return {k: rows[price_key(k)] for k in engines}


def per_engine_classes(host_class: str) -> list[str]:
    """Variants of `host_class` (named `<host_class>-...`, e.g. the managed-service class beside a
    bare instance's) whose prices differ between engines: only there can USD rank engines
    differently from their throughput."""
    return [k for k in host_classes() if k.startswith(f"{host_class}-")
            and len({p.usd_per_hour for p in table() if p.host_class == k}) > 1]


def prices_on(host_class: str, engines: list[str]) -> dict[str, Price]:
    """The rows `host_class` has for these engines; engines it does not price are left out."""
    rows = {p.engine: p for p in table() if p.host_class == host_class}
    return {k: rows[price_key(k)] for k in engines if price_key(k) in rows}
