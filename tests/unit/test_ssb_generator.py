"""The SSB generator (benchlib.datagen.ssb): deterministic from its seed, streamed in chunks whose
size does not change the content, a shuffled order holding exactly the sorted one's rows, SSB's
rows per customer and order, and new orders that never collide with loaded keys."""
import csv

import numpy as np
import pytest

from benchlib.datagen import ssb

SCALE = ssb.Scale.from_lineorders(60_000)  # 15,000 orders: a chunk of 16,384 orders holds them all ...
SMALL_CHUNKS = 997  # ... so the tests also cut them into many chunks of an odd size


def rows(generator, order="key", per_chunk=None):
    chunks = generator.chunks(order) if per_chunk is None else generator.chunks(order, per_chunk)
    return [r for chunk in chunks for r in chunk.rows()]


def test_same_seed_same_table_other_seed_other_table():
    a, b = rows(ssb.LineOrder(SCALE, seed=7)), rows(ssb.LineOrder(SCALE, seed=7))
    assert a == b
    assert rows(ssb.LineOrder(SCALE, seed=8)) != a


def test_chunk_size_does_not_change_the_rows():
    generator = ssb.LineOrder(SCALE, seed=3)
    assert rows(generator) == rows(generator, per_chunk=SMALL_CHUNKS)
    assert rows(generator, "random") == rows(generator, "random", per_chunk=ssb.ORDERS_PER_CHUNK)


def test_rows_arrive_in_primary_key_order_or_shuffled_and_are_the_same_rows():
    generator = ssb.LineOrder(SCALE, seed=1)
    ordered = rows(generator, per_chunk=SMALL_CHUNKS)
    keys = [(r[0], r[1]) for r in ordered]
    assert keys == sorted(keys) and len(set(keys)) == len(keys) == generator.row_count
    shuffled = rows(generator, "random", per_chunk=SMALL_CHUNKS)
    assert sorted(shuffled) == ordered
    shuffled_keys = [(r[0], r[1]) for r in shuffled]
    # Shuffled over the whole table: few neighbours in the stream are neighbours in key order.
    ascending = sum(a < b for a, b in zip(shuffled_keys, shuffled_keys[1:])) / (len(shuffled_keys) - 1)
    assert 0.4 < ascending < 0.6


def test_streamed_a_chunk_at_a_time():
    generator = ssb.LineOrder(ssb.Scale.from_lineorders(2_000_000), seed=1)
    chunks = generator.chunks("random")
    first = next(chunks)
    assert len(first) < 8 * ssb.ORDERS_PER_CHUNK  # one chunk of orders, not the table
    assert isinstance(chunks, type(x for x in ()))  # a generator: nothing beyond the chunk asked for is made
    assert len(first) + sum(len(c) for c in chunks) == generator.row_count


def test_peak_memory_does_not_grow_with_the_row_count():
    """Ten times the rows, streamed: this process's peak (VmHWM, reset before each pass) must not
    grow with them. 4M line orders held whole would take over a GiB."""
    from benchlib.workloads.load_fetch.workload import PeakRss

    class Readings:
        def record(self, metric, value, *args, **kwargs):
            self.value = value

    def growth(n: int) -> float:
        readings, peak = Readings(), PeakRss()
        for _ in ssb.LineOrder(ssb.Scale.from_lineorders(n), seed=1).chunks("random"):
            pass
        peak.record(readings, "client")
        return readings.value

    small, large = growth(400_000), growth(4_000_000)
    assert small is not None, "this kernel refused the VmHWM reset"
    assert large < max(2 * small, small + 16 * 2 ** 20), (small, large)


def test_ssb_shape_lines_customers_keys_and_prices():
    generator = ssb.LineOrder(SCALE, seed=1)
    table = np.array(rows(generator), dtype=object)
    orderkey, line, custkey = (table[:, i].astype(np.int64) for i in range(3))
    lines = np.bincount(np.unique(orderkey, return_inverse=True)[1])
    assert lines.min() == 1 and lines.max() == ssb.MAX_LINES and 3.8 < lines.mean() < 4.2  # 1-7, uniform
    assert ((orderkey >> 3) & 3 == 0).all()  # dbgen's sparse keys: bits 3-4 zero in the loaded table
    assert custkey.min() >= 1 and custkey.max() <= SCALE.customers and not (custkey % 3 == 0).any()
    per_customer = generator.rows_per_customer()
    assert per_customer.sum() == generator.row_count == len(table)
    assert (per_customer[1:][np.arange(1, SCALE.customers + 1) % 3 == 0] == 0).all()  # a third without orders
    with_rows = per_customer[per_customer > 0]
    # ~6M line orders per 30,000 x 2/3 customers: ~300 per customer with orders, as in SSB
    assert 250 < with_rows.mean() < 350
    assert np.array_equal(np.bincount(custkey, minlength=len(per_customer)), per_customer)
    names = ssb.LINEORDER.names
    col = {n: table[:, i] for i, n in enumerate(names)}
    assert set(col["lo_orderpriority"]) <= set(ssb.PRIORITIES) and set(col["lo_shipmode"]) == set(ssb.SHIP_MODES)
    retail = ssb.retail_price(col["lo_partkey"].astype(np.int64))
    assert (col["lo_extendedprice"] == retail * col["lo_quantity"]).all()
    assert (col["lo_revenue"] == col["lo_extendedprice"] * (100 - col["lo_discount"]) // 100).all()
    assert (19920101 <= col["lo_orderdate"].astype(int)).all() and (col["lo_commitdate"] > col["lo_orderdate"]).all()


def test_new_orders_never_collide_with_loaded_keys():
    generator = ssb.LineOrder(SCALE, seed=1)
    loaded = {(r[0], r[1]) for r in rows(generator)}
    low, high = generator.key_range()
    after = generator.new_orders(np.arange(generator.units + 1, generator.units + 50), 0)
    gaps = generator.new_orders(np.arange(1, 50) * 300, 1)
    for chunk, inside in ((after, False), (gaps, True)):
        keys = set(zip(chunk.columns["lo_orderkey"].tolist(), chunk.columns["lo_linenumber"].tolist()))
        assert not keys & loaded
        assert all((low < k < high) == inside for k, _ in keys)
    with pytest.raises(ValueError, match="above the table"):
        generator.new_orders(np.array([5]), 0)


def test_csv_is_what_the_bulk_paths_read(tmp_path):
    generator = ssb.LineOrder(ssb.Scale.from_lineorders(5_000), seed=2)
    path = tmp_path / "lineorder.csv"
    assert ssb.write_csv(generator.chunks("random"), path) == generator.row_count
    with open(path, newline="") as f:
        read = [tuple(int(v) if v.isdigit() else v for v in row) for row in csv.reader(f)]
    assert read == rows(generator, "random")


def test_every_ssb_table_has_a_deterministic_generator():
    scale = ssb.Scale(0.01)
    for name, table in ssb.TABLES.items():
        generator = ssb.generator(name, scale, seed=5)
        produced = rows(generator, per_chunk=101) if name != "lineorder" else rows(generator)
        assert produced == rows(ssb.generator(name, scale, seed=5))
        assert len(produced) == generator.row_count and all(len(r) == len(table.columns) for r in produced)
        keys = [r[0] for r in produced] if len(table.primary_key) == 1 else [r[:2] for r in produced]
        assert len(set(keys)) == len(keys), name
    assert ssb.Scale(0.01).rows("date") == 2557 and ssb.Scale(4).parts == 600_000
    with pytest.raises(ValueError, match="table must be one of"):
        ssb.generator("orders", scale)
    with pytest.raises(ValueError, match="scale factor must be a number > 0, got 0"):
        ssb.Scale(0)
