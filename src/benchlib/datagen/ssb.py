"""The Star Schema Benchmark's tables (O'Neil, O'Neil and Chen, "Star Schema Benchmark"; its dbgen
is TPC-H's with `#ifdef SSB` changes), generated from a seed, streamed in chunks of column arrays.

    lineorder = ssb.LineOrder(ssb.Scale.from_lineorders(1_000_000), seed=1)
    for chunk in lineorder.chunks(order="random"):   # ~65,000 rows at a time, whatever the scale
        ...chunk.columns["lo_custkey"], chunk.rows(), chunk.to_arrow()
    lineorder.row_count, lineorder.rows_per_customer()

What follows SSB's dbgen (build.c: mk_order, mk_cust, mk_supp, mk_part; the date table):
- cardinalities at scale factor SF: customer 30,000 x SF, supplier 2,000 x SF, part 200,000 x
  floor(1 + log2 SF), date the 2,557 days of 1992-1998, orders 1,500,000 x SF with 1-7 line orders
  each (uniform), so ~6,000,000 x SF lineorder rows;
- order keys sparse as dbgen makes them (the low 3 bits of the order number kept, 2 bits of zeros
  above them: 8 keys used in every 32);
- an order's customer uniform over all customers, moved off multiples of 3 (dbgen's
  CUST_MORTALITY): a third of the customers have no orders, those just above a multiple of 3 get
  twice the orders of the others;
- order date uniform from 1992-01-01 to 151 days before 1998-12-31, commit date 30-90 days later,
  dates as SSB's integer date keys (yyyymmdd, the foreign key of the date table);
- quantity 1-50, discount 0-10 (%), tax 0-8 (%); extended price = quantity x the part's retail
  price (dbgen's formula, in cents), revenue, supply cost and the order's total price as dbgen
  computes them; order priority and ship mode from dbgen's lists.

What differs is the source of randomness. dbgen draws from seeded streams in row order; here every
value is a hash of (seed, column, row number): a counter-based generator, so any range of orders,
in any order, is generated on its own with the same content. That makes a shuffled table as cheap
to stream as a sorted one. The distributions are SSB's; the rows are not dbgen's rows. Free text
(addresses) is random characters, not dbgen's grammar."""
from __future__ import annotations

import datetime as dt
import hashlib
import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Iterator, Sequence

import numpy as np

ORDERS = ("key", "random")  # rows in primary-key order, or shuffled across the whole table
LINEORDERS_PER_SF = 6_000_000  # SSB's nominal lineorder rows per scale factor (4 lines per order on average)
ORDERS_PER_SF = 1_500_000
CUSTOMERS_PER_SF = 30_000
SUPPLIERS_PER_SF = 2_000
PARTS_BASE = 200_000
ORDERS_PER_CHUNK = 16_384  # ~65,000 line orders, ~10 MB of arrays: the unit of streaming and of shuffling
FIRST_DAY, LAST_DAY = dt.date(1992, 1, 1), dt.date(1998, 12, 31)
ORDER_DATE_LAST = (LAST_DAY - FIRST_DAY).days - 151  # dbgen: END_DATE minus the longest ship + receipt delay
MAX_LINES = 7
CUST_MORTALITY = 3

PRIORITIES = ("1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECIFIED", "5-LOW")
SHIP_MODES = ("REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB")
SEGMENTS = ("AUTOMOBILE", "BUILDING", "FURNITURE", "MACHINERY", "HOUSEHOLD")
REGIONS = ("AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST")
NATIONS = (("ALGERIA", 0), ("ARGENTINA", 1), ("BRAZIL", 1), ("CANADA", 1), ("EGYPT", 4), ("ETHIOPIA", 0),
           ("FRANCE", 3), ("GERMANY", 3), ("INDIA", 2), ("INDONESIA", 2), ("IRAN", 4), ("IRAQ", 4), ("JAPAN", 2),
           ("JORDAN", 4), ("KENYA", 0), ("MOROCCO", 0), ("MOZAMBIQUE", 0), ("PERU", 1), ("CHINA", 2),
           ("ROMANIA", 3), ("SAUDI ARABIA", 4), ("VIETNAM", 2), ("RUSSIA", 3), ("UNITED KINGDOM", 3),
           ("UNITED STATES", 1))
COLORS = ("almond", "antique", "aquamarine", "azure", "beige", "bisque", "black", "blanched", "blue", "blush",
          "brown", "burlywood", "burnished", "chartreuse", "chiffon", "chocolate", "coral", "cornflower",
          "cornsilk", "cream", "cyan", "dark", "deep", "dim", "dodger", "drab", "firebrick", "floral", "forest",
          "frosted", "gainsboro", "ghost", "goldenrod", "green", "grey", "honeydew", "hot", "indian", "ivory",
          "khaki", "lace", "lavender", "lawn", "lemon", "light", "lime", "linen", "magenta", "maroon", "medium",
          "metallic", "midnight", "mint", "misty", "moccasin", "navajo", "navy", "olive", "orange", "orchid",
          "pale", "papaya", "peach", "peru", "pink", "plum", "powder", "puff", "purple", "red", "rose", "rosy",
          "royal", "saddle", "salmon", "sandy", "seashell", "sienna", "sky", "slate", "smoke", "snow", "spring",
          "steel", "tan", "thistle", "tomato", "turquoise", "violet", "wheat", "white", "yellow")
TYPES = tuple(f"{a} {b} {c}" for a in ("STANDARD", "SMALL", "MEDIUM", "LARGE", "ECONOMY", "PROMO")
              for b in ("ANODIZED", "BURNISHED", "PLATED", "POLISHED", "BRUSHED")
              for c in ("TIN", "NICKEL", "BRASS", "STEEL", "COPPER"))
CONTAINERS = tuple(f"{a} {b}" for a in ("SM", "LG", "MED", "JUMBO", "WRAP")
                   for b in ("CASE", "BOX", "BAG", "JAR", "PKG", "PACK", "CAN", "DRUM"))
_ALPHANUMERIC = np.frombuffer(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789, ", dtype=np.uint8)

_GAMMA = np.uint64(0x9E3779B97F4A7C15)


# -- schema ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Column:
    """`kind`: int8/int16/int32/int64 (SQL tinyint-smallint-integer-bigint as an engine has them) or
    text (at most `width` characters)."""

    name: str
    kind: str
    width: int | None = None


@dataclass(frozen=True)
class Table:
    name: str
    columns: tuple[Column, ...]
    primary_key: tuple[str, ...]
    indexes: dict[str, tuple[str, ...]]  # secondary indexes a loader creates: name -> columns

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    def column(self, name: str) -> Column:
        return next(c for c in self.columns if c.name == name)


def _cols(*spec: tuple) -> tuple[Column, ...]:
    return tuple(Column(*s) for s in spec)


LINEORDER = Table("lineorder", _cols(
    ("lo_orderkey", "int64"), ("lo_linenumber", "int8"), ("lo_custkey", "int32"), ("lo_partkey", "int32"),
    ("lo_suppkey", "int32"), ("lo_orderdate", "int32"), ("lo_orderpriority", "text", 15),
    ("lo_shippriority", "int8"), ("lo_quantity", "int8"), ("lo_extendedprice", "int32"),
    ("lo_ordtotalprice", "int32"), ("lo_discount", "int8"), ("lo_revenue", "int32"), ("lo_supplycost", "int32"),
    ("lo_tax", "int8"), ("lo_commitdate", "int32"), ("lo_shipmode", "text", 10),
), primary_key=("lo_orderkey", "lo_linenumber"), indexes={"lineorder_custkey": ("lo_custkey",)})

CUSTOMER = Table("customer", _cols(
    ("c_custkey", "int32"), ("c_name", "text", 25), ("c_address", "text", 25), ("c_city", "text", 10),
    ("c_nation", "text", 15), ("c_region", "text", 12), ("c_phone", "text", 15), ("c_mktsegment", "text", 10),
), primary_key=("c_custkey",), indexes={})

SUPPLIER = Table("supplier", _cols(
    ("s_suppkey", "int32"), ("s_name", "text", 25), ("s_address", "text", 25), ("s_city", "text", 10),
    ("s_nation", "text", 15), ("s_region", "text", 12), ("s_phone", "text", 15),
), primary_key=("s_suppkey",), indexes={})

PART = Table("part", _cols(
    ("p_partkey", "int32"), ("p_name", "text", 22), ("p_mfgr", "text", 6), ("p_category", "text", 7),
    ("p_brand1", "text", 9), ("p_color", "text", 11), ("p_type", "text", 25), ("p_size", "int8"),
    ("p_container", "text", 10),
), primary_key=("p_partkey",), indexes={})

DATE = Table("date", _cols(
    ("d_datekey", "int32"), ("d_date", "text", 18), ("d_dayofweek", "text", 9), ("d_month", "text", 9),
    ("d_year", "int16"), ("d_yearmonthnum", "int32"), ("d_yearmonth", "text", 7), ("d_daynuminweek", "int8"),
    ("d_daynuminmonth", "int8"), ("d_daynuminyear", "int16"), ("d_monthnuminyear", "int8"),
    ("d_weeknuminyear", "int8"), ("d_sellingseason", "text", 12), ("d_lastdayinweekfl", "int8"),
    ("d_lastdayinmonthfl", "int8"), ("d_holidayfl", "int8"), ("d_weekdayfl", "int8"),
), primary_key=("d_datekey",), indexes={})

TABLES: dict[str, Table] = {t.name: t for t in (LINEORDER, CUSTOMER, SUPPLIER, PART, DATE)}


@dataclass(frozen=True)
class Scale:
    """SSB's scale factor; fractional factors scale every table but the date table linearly."""

    sf: float

    def __post_init__(self) -> None:
        if not (isinstance(self.sf, (int, float)) and self.sf > 0 and math.isfinite(self.sf)):
            raise ValueError(f"scale factor must be a number > 0, got {self.sf!r}")

    @classmethod
    def from_lineorders(cls, rows: int) -> "Scale":
        """The scale factor whose nominal lineorder count is `rows` (the exact count varies by
        well under 1%: 1-7 lines per order)."""
        return cls(rows / LINEORDERS_PER_SF)

    @property
    def orders(self) -> int:
        return max(1, round(ORDERS_PER_SF * self.sf))

    @property
    def customers(self) -> int:
        return max(1, round(CUSTOMERS_PER_SF * self.sf))

    @property
    def suppliers(self) -> int:
        return max(1, round(SUPPLIERS_PER_SF * self.sf))

    @property
    def parts(self) -> int:
        if self.sf < 1:
            return max(1, round(PARTS_BASE * self.sf))
        return PARTS_BASE * int(math.floor(1 + math.log2(self.sf)))

    def rows(self, table: str) -> int:
        """Rows of `table` (lineorder: its nominal count; `LineOrder.row_count` is exact)."""
        return {"lineorder": 4 * self.orders, "customer": self.customers, "supplier": self.suppliers,
                "part": self.parts, "date": len(_days())}[table]


# -- counter-based randomness ------------------------------------------------------------------------
def _mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser: a bijection of uint64 that scatters neighbouring inputs."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


class Streams:
    """Independent random streams of one table, addressed by row number: `uniform("quantity",
    rows, 1, 50)` is the same for a row whichever chunk asks."""

    def __init__(self, seed: int, table: str):
        self.seed, self.table = int(seed), table
        self._keys: dict[str, np.uint64] = {}

    def key(self, stream: str) -> np.uint64:
        if stream not in self._keys:
            digest = hashlib.blake2b(f"{self.seed}/{self.table}/{stream}".encode(), digest_size=8).digest()
            self._keys[stream] = np.uint64(int.from_bytes(digest, "little"))
        return self._keys[stream]

    def bits(self, stream: str, index: np.ndarray) -> np.ndarray:
        return _mix(index.astype(np.uint64) * _GAMMA + self.key(stream))

    def uniform(self, stream: str, index: np.ndarray, low: int, high: int) -> np.ndarray:
        """Integers uniform in [low, high] (inclusive, as dbgen's RANDOM)."""
        span = np.uint64(high - low + 1)
        return (self.bits(stream, index) % span).astype(np.int64) + low

    def permute(self, stream: str, positions: np.ndarray, n: int) -> np.ndarray:
        """A pseudo-random permutation of [0, n) applied to `positions`: a 4-round Feistel network
        on the smallest even number of bits covering n, walked until it lands inside [0, n)."""
        half = max(1, ((max(n - 1, 1)).bit_length() + 1) // 2)
        mask = np.uint64((1 << half) - 1)
        shift = np.uint64(half)
        keys = [self.key(f"{stream}/round{r}") for r in range(4)]

        def feistel(x: np.ndarray) -> np.ndarray:
            left, right = x >> shift, x & mask
            for k in keys:
                left, right = right, left ^ (_mix(right * _GAMMA + k) & mask)
            return (left << shift) | right

        out = positions.astype(np.uint64)
        todo = np.ones(len(out), dtype=bool)
        while todo.any():
            out[todo] = feistel(out[todo])
            todo = out >= np.uint64(n)
        return out.astype(np.int64)


# -- chunks -----------------------------------------------------------------------------------------
@dataclass
class Chunk:
    """Some rows of a table as column arrays (int64 arrays; text columns as object arrays of str)."""

    table: Table
    columns: dict[str, np.ndarray]

    def __len__(self) -> int:
        return len(next(iter(self.columns.values())))

    def rows(self) -> Iterator[tuple]:
        """Row tuples of Python ints and strs, in the table's column order (what DB-API drivers bind)."""
        return zip(*(self.columns[c].tolist() for c in self.table.names))

    def to_arrow(self):
        import pyarrow as pa

        types = {"int8": pa.int8(), "int16": pa.int16(), "int32": pa.int32(), "int64": pa.int64(), "text": pa.string()}
        arrays = [pa.array(self.columns[c.name], type=types[c.kind]) for c in self.table.columns]
        return pa.RecordBatch.from_arrays(arrays, names=list(self.table.names))


class Generator:
    """A table's rows in chunks; subclasses produce `_chunk(numbers)` for row numbers (1-based)."""

    schema: Table
    unit = "rows"

    def __init__(self, scale: Scale, seed: int = 1):
        self.scale, self.seed = scale, int(seed)
        self.streams = Streams(seed, self.schema.name)

    @property
    def units(self) -> int:
        """How many generation units (rows; orders for lineorder) the table has."""
        return self.scale.rows(self.schema.name)

    @property
    def row_count(self) -> int:
        return self.units

    def chunks(self, order: str = "key", per_chunk: int = 65_536) -> Iterator[Chunk]:
        """Every row once: in primary-key order, or shuffled across the whole table (a seeded
        permutation of the units, then the rows of each chunk shuffled among themselves)."""
        if order not in ORDERS:
            raise ValueError(f"order must be one of {', '.join(ORDERS)}, got {order!r}")
        n = self.units
        for start in range(0, n, per_chunk):
            positions = np.arange(start, min(start + per_chunk, n), dtype=np.int64)
            numbers = (positions if order == "key" else self.streams.permute("order", positions, n)) + 1
            chunk = self._chunk(numbers)
            if order == "random":
                shuffle = np.argsort(self.streams.bits("shuffle", self._row_ids(chunk)), kind="stable")
                chunk = Chunk(chunk.table, {k: v[shuffle] for k, v in chunk.columns.items()})
            yield chunk

    def _row_ids(self, chunk: Chunk) -> np.ndarray:
        return chunk.columns[self.schema.primary_key[0]]

    def _chunk(self, numbers: np.ndarray) -> Chunk:
        raise NotImplementedError


class LineOrder(Generator):
    """SSB's fact table, generated per order (1-7 line orders each) as dbgen's mk_order does."""

    schema = LINEORDER
    unit = "orders"

    @property
    def units(self) -> int:
        return self.scale.orders

    def chunks(self, order: str = "key", per_chunk: int = ORDERS_PER_CHUNK) -> Iterator[Chunk]:
        return super().chunks(order, per_chunk)

    # -- per order ---------------------------------------------------------------------------------
    def lines(self, orders: np.ndarray) -> np.ndarray:
        return self.streams.uniform("lines", orders, 1, MAX_LINES)

    def customers(self, orders: np.ndarray) -> np.ndarray:
        """dbgen's customer of each order: uniform, then off multiples of CUST_MORTALITY (up by
        one, or down by one at the top of the range)."""
        top = self.scale.customers
        cust = self.streams.uniform("custkey", orders, 1, top)
        dead = cust % CUST_MORTALITY == 0
        cust[dead] += 1
        over = cust > top
        cust[over] = top - 1
        return cust

    @staticmethod
    def order_keys(orders: np.ndarray, sequence: int = 0) -> np.ndarray:
        """dbgen's sparse keys: the low 3 bits of the order number kept, then 2 bits of `sequence`
        (0 for the loaded table; dbgen's refresh inserts use 1-3, which puts them in the gaps
        between loaded keys)."""
        return ((orders >> 3) << 5) | (sequence << 3) | (orders & 7)

    def new_orders(self, orders: np.ndarray, sequence: int) -> Chunk:
        """Orders that are not in the table, as dbgen's refresh inserts make them: order numbers
        beyond the table's with sequence 0 (keys after the last one: arriving in key order), or any
        order number with sequence 1-3 (keys in the gaps between the loaded ones: arriving at
        random places in the key order). Their values are drawn from streams of their own."""
        if not 0 <= sequence <= 3:
            raise ValueError(f"sequence must be 0-3 (2 bits of the sparse key), got {sequence}")
        if sequence == 0 and len(orders) and int(orders.min()) <= self.units:
            raise ValueError(f"order numbers must be above the table's {self.units:,} with sequence 0")
        return self._chunk(np.asarray(orders, dtype=np.int64), sequence)

    def _chunk(self, orders: np.ndarray, sequence: int = 0) -> Chunk:
        s = self.streams
        number = orders + (sequence << 40)  # stream position: a refresh order's values are its own
        lines = self.lines(number)
        total = int(lines.sum())
        first = np.cumsum(lines) - lines  # each order's first row in the chunk
        order_of_row = np.repeat(np.arange(len(orders)), lines)
        line = np.arange(total) - first[order_of_row] + 1
        o = orders[order_of_row]
        row = number[order_of_row] * 8 + line  # a line's own stream position (at most 7 lines per order)
        order_date = s.uniform("orderdate", number, 0, ORDER_DATE_LAST)
        partkey = s.uniform("partkey", row, 1, self.scale.parts)
        quantity = s.uniform("quantity", row, 1, 50)
        discount = s.uniform("discount", row, 0, 10)
        tax = s.uniform("tax", row, 0, 8)
        retail = retail_price(partkey)
        extended = retail * quantity
        revenue = extended * (100 - discount) // 100
        line_total = revenue * (100 + tax) // 100
        order_total = np.add.reduceat(line_total, first) if total else line_total
        days = _datekeys()
        return Chunk(LINEORDER, {
            "lo_orderkey": self.order_keys(o, sequence), "lo_linenumber": line,
            "lo_custkey": self.customers(number)[order_of_row],
            "lo_partkey": partkey, "lo_suppkey": s.uniform("suppkey", row, 1, self.scale.suppliers),
            "lo_orderdate": days[order_date][order_of_row],
            "lo_orderpriority": _pick(PRIORITIES, s.uniform("priority", number, 0, len(PRIORITIES) - 1))[order_of_row],
            "lo_shippriority": np.zeros(total, dtype=np.int64), "lo_quantity": quantity,
            "lo_extendedprice": extended, "lo_ordtotalprice": order_total[order_of_row], "lo_discount": discount,
            "lo_revenue": revenue, "lo_supplycost": 6 * retail // 10, "lo_tax": tax,
            "lo_commitdate": days[order_date[order_of_row] + s.uniform("commitdate", row, 30, 90)],
            "lo_shipmode": _pick(SHIP_MODES, s.uniform("shipmode", row, 0, len(SHIP_MODES) - 1)),
        })

    def _row_ids(self, chunk: Chunk) -> np.ndarray:
        return chunk.columns["lo_orderkey"] * 8 + chunk.columns["lo_linenumber"]

    # -- whole-table facts, streamed -----------------------------------------------------------------
    def _order_blocks(self) -> Iterator[np.ndarray]:
        for start in range(1, self.units + 1, ORDERS_PER_CHUNK * 16):
            yield np.arange(start, min(start + ORDERS_PER_CHUNK * 16, self.units + 1), dtype=np.int64)

    @cached_property
    def row_count(self) -> int:
        """The exact number of line orders (a pass over the orders' line counts only)."""
        return int(sum(int(self.lines(block).sum()) for block in self._order_blocks()))

    def rows_per_customer(self) -> np.ndarray:
        """Line orders per customer key (index = c_custkey; index 0 unused): what a fetch of one
        customer's line orders must return."""
        counts = np.zeros(self.scale.customers + 1, dtype=np.int64)
        for block in self._order_blocks():
            counts += np.bincount(self.customers(block), weights=self.lines(block),
                                  minlength=len(counts)).astype(np.int64)
        return counts

    def key_range(self) -> tuple[int, int]:
        """The smallest and largest order key."""
        return int(self.order_keys(np.array([1]))[0]), int(self.order_keys(np.array([self.units]))[0])


def retail_price(partkey: np.ndarray) -> np.ndarray:
    """dbgen's part retail price in cents (rpb_routine)."""
    return 90000 + (partkey // 10) % 20001 + (partkey % 1000) * 100


def _pick(values: Sequence[str], codes: np.ndarray) -> np.ndarray:
    return np.asarray(values, dtype=object)[codes]


def _days() -> list[dt.date]:
    return [FIRST_DAY + dt.timedelta(days=i) for i in range((LAST_DAY - FIRST_DAY).days + 1)]


_DATEKEYS: np.ndarray | None = None


def _datekeys() -> np.ndarray:
    global _DATEKEYS
    if _DATEKEYS is None:
        _DATEKEYS = np.array([d.year * 10000 + d.month * 100 + d.day for d in _days()], dtype=np.int64)
    return _DATEKEYS


def _strings(streams: Streams, stream: str, numbers: np.ndarray, low: int, high: int) -> np.ndarray:
    """Random text of low..high characters per row (dbgen's V_STR addresses)."""
    lengths = streams.uniform(f"{stream}/length", numbers, low, high)
    chars = np.stack([streams.uniform(f"{stream}/{i}", numbers, 0, len(_ALPHANUMERIC) - 1)
                      for i in range(high)], axis=1)
    table = _ALPHANUMERIC[chars]
    return np.array([bytes(r[:n]).decode() for r, n in zip(table, lengths)], dtype=object)


def _places(streams: Streams, numbers: np.ndarray) -> dict[str, np.ndarray]:
    """Nation, region, city (the nation's first 9 characters and a digit) and phone, as dbgen's gen_city and gen_phone."""
    nation = streams.uniform("nation", numbers, 0, len(NATIONS) - 1)
    digit = streams.uniform("city", numbers, 0, 9)
    names = np.array([n for n, _ in NATIONS], dtype=object)
    regions = np.array([REGIONS[r] for _, r in NATIONS], dtype=object)
    parts = [streams.uniform(f"phone/{i}", numbers, lo, hi) for i, (lo, hi) in
             enumerate(((100, 999), (100, 999), (1000, 9999)))]
    return {
        "nation": names[nation], "region": regions[nation],
        "city": np.array([f"{n[:9]:<9}{d}" for n, d in zip(names[nation], digit.tolist())], dtype=object),
        "phone": np.array([f"{10 + k:02d}-{a:03d}-{b:03d}-{c:04d}" for k, a, b, c in
                           zip(nation.tolist(), *(p.tolist() for p in parts))], dtype=object),
    }


def _party(prefix: str, tag: str, streams: Streams, numbers: np.ndarray) -> dict[str, np.ndarray]:
    """The columns customer and supplier share: key, name (`Customer#000000001`), address, city,
    nation, region, phone."""
    p = _places(streams, numbers)
    return {f"{prefix}_{k}": v for k, v in {
        "key": numbers, "name": np.array([f"{tag}#{n:09d}" for n in numbers.tolist()], dtype=object),
        "address": _strings(streams, "address", numbers, 10, 25), "city": p["city"], "nation": p["nation"],
        "region": p["region"], "phone": p["phone"]}.items()}


class Customer(Generator):
    schema = CUSTOMER

    def _chunk(self, numbers: np.ndarray) -> Chunk:
        columns = _party("c", "Customer", self.streams, numbers)
        columns["c_custkey"] = columns.pop("c_key")
        columns["c_mktsegment"] = _pick(SEGMENTS, self.streams.uniform("segment", numbers, 0, len(SEGMENTS) - 1))
        return Chunk(CUSTOMER, columns)


class Supplier(Generator):
    schema = SUPPLIER

    def _chunk(self, numbers: np.ndarray) -> Chunk:
        columns = _party("s", "Supplier", self.streams, numbers)
        columns["s_suppkey"] = columns.pop("s_key")
        return Chunk(SUPPLIER, columns)


class Part(Generator):
    """SSB's part: manufacturer 1-5, category 1-5 within it, brand 1-40 within that (MFGR#1, MFGR#12,
    MFGR#1221), name of two colours, the first of which is p_color."""

    schema = PART

    def _chunk(self, numbers: np.ndarray) -> Chunk:
        s = self.streams
        mfgr, cat, brand = (s.uniform("mfgr", numbers, 1, 5), s.uniform("category", numbers, 1, 5),
                            s.uniform("brand", numbers, 1, 40))
        first = _pick(COLORS, s.uniform("color", numbers, 0, len(COLORS) - 1))
        second = _pick(COLORS, s.uniform("color2", numbers, 0, len(COLORS) - 1))
        return Chunk(PART, {
            "p_partkey": numbers, "p_name": np.array([f"{a} {b}" for a, b in zip(first, second)], dtype=object),
            "p_mfgr": np.array([f"MFGR#{m}" for m in mfgr.tolist()], dtype=object),
            "p_category": np.array([f"MFGR#{m}{c}" for m, c in zip(mfgr.tolist(), cat.tolist())], dtype=object),
            "p_brand1": np.array([f"MFGR#{m}{c}{b}" for m, c, b in zip(mfgr.tolist(), cat.tolist(), brand.tolist())],
                                 dtype=object),
            "p_color": first, "p_type": _pick(TYPES, s.uniform("type", numbers, 0, len(TYPES) - 1)),
            "p_size": s.uniform("size", numbers, 1, 50),
            "p_container": _pick(CONTAINERS, s.uniform("container", numbers, 0, len(CONTAINERS) - 1)),
        })


_SEASONS = ((12, 24, 12, 31, "Christmas"), (6, 1, 8, 31, "Summer"), (1, 1, 2, 28, "Winter"),
            (3, 1, 5, 31, "Spring"), (9, 1, 11, 30, "Fall"))
_HOLIDAYS = {(1, 1), (7, 4), (12, 24), (12, 25), (12, 31), (11, 11), (5, 25), (9, 1), (11, 24), (2, 14)}


class Date(Generator):
    """SSB's date dimension: one row per day of 1992-1998 (no randomness)."""

    schema = DATE

    def _chunk(self, numbers: np.ndarray) -> Chunk:
        days = [FIRST_DAY + dt.timedelta(days=int(n) - 1) for n in numbers]

        def season(d: dt.date) -> str:
            return next((name for m1, d1, m2, d2, name in _SEASONS if (m1, d1) <= (d.month, d.day) <= (m2, d2)),
                        "Winter")

        def col(values: list[Any]) -> np.ndarray:
            return np.array(values, dtype=object if values and isinstance(values[0], str) else np.int64)

        return Chunk(DATE, {
            "d_datekey": col([d.year * 10000 + d.month * 100 + d.day for d in days]),
            "d_date": col([f"{d:%B} {d.day}, {d.year}" for d in days]),
            "d_dayofweek": col([f"{d:%A}" for d in days]), "d_month": col([f"{d:%B}" for d in days]),
            "d_year": col([d.year for d in days]), "d_yearmonthnum": col([d.year * 100 + d.month for d in days]),
            "d_yearmonth": col([f"{d:%b}{d.year}" for d in days]),
            "d_daynuminweek": col([d.isoweekday() % 7 + 1 for d in days]),  # Sunday = 1
            "d_daynuminmonth": col([d.day for d in days]), "d_daynuminyear": col([d.timetuple().tm_yday for d in days]),
            "d_monthnuminyear": col([d.month for d in days]),
            "d_weeknuminyear": col([(d.timetuple().tm_yday - 1) // 7 + 1 for d in days]),
            "d_sellingseason": col([season(d) for d in days]),
            "d_lastdayinweekfl": col([int(d.isoweekday() == 6) for d in days]),
            "d_lastdayinmonthfl": col([int((d + dt.timedelta(days=1)).day == 1) for d in days]),
            "d_holidayfl": col([int((d.month, d.day) in _HOLIDAYS) for d in days]),
            "d_weekdayfl": col([int(d.isoweekday() <= 5) for d in days]),
        })


GENERATORS: dict[str, type[Generator]] = {"lineorder": LineOrder, "customer": Customer, "supplier": Supplier,
                                          "part": Part, "date": Date}


def generator(table: str, scale: Scale, seed: int = 1) -> Generator:
    if table not in GENERATORS:
        raise ValueError(f"table must be one of {', '.join(GENERATORS)}, got {table!r}")
    return GENERATORS[table](scale, seed)


def write_csv(chunks: Iterator[Chunk], path, *, delimiter: str = ",") -> int:
    """Stream chunks into a headerless CSV file (no quoting: SSB's text has no delimiters or
    quotes); returns the rows written."""
    import pyarrow.csv as pcsv

    rows = 0
    writer = None
    try:
        for chunk in chunks:
            batch = chunk.to_arrow()
            if writer is None:
                writer = pcsv.CSVWriter(str(path), batch.schema, write_options=pcsv.WriteOptions(
                    include_header=False, delimiter=delimiter, quoting_style="none"))
            writer.write_batch(batch)
            rows += len(chunk)
    finally:
        if writer is not None:
            writer.close()
    return rows
