"""The layers between an object and its row, each offering the same four operations on one
object: persist, load by id, update (three members changed, the object written back) and erase.
Every operation is its own transaction, committed before it returns, except in `orm_batch`,
which commits once per batch of objects (the unit of work SQLAlchemy's Session is built for).

Each layer holds objects of its own kind, built before a measured window (an application holds
its objects already): a plain slotted class for the driver and Core layers, the mapped class for
the ORM layers."""
from __future__ import annotations

from datetime import datetime, timedelta
from operator import attrgetter
from typing import Any, Callable

from .dialects import COLUMNS, FLOATS, INTS, MEMBERS, STRINGS, TABLE, TIMESTAMP, ApiDialect

OPERATIONS = ("persist", "load", "update", "erase")
EPOCH = datetime(2012, 3, 1, 12, 0, 0)  # seed 002's year


class Thing:
    """The application's object for layers without a mapper."""

    __slots__ = COLUMNS

    def __init__(self, *values: Any):
        for name, value in zip(COLUMNS, values):
            setattr(self, name, value)


_values = attrgetter(*COLUMNS)
_members = attrgetter(*MEMBERS)


def object_values(object_id: int) -> tuple:
    """Deterministic member values of object `object_id` (24 members, id first)."""
    n = object_id
    return (n, *(n * 7 + k for k in range(len(INTS))), *(n / 3 + k for k in range(len(FLOATS))),
            *(f"member {k} of object {n}" for k in range(len(STRINGS))), EPOCH + timedelta(microseconds=n))


def change(obj: Any) -> None:
    """What an update does to an object before writing it back: three members of three kinds."""
    obj.i1 += 1
    obj.f1 += 0.5
    obj.s1 = obj.s1[:40] + "!"


class Layer:
    """One layer opened on one engine and transport; `objects(ids)` builds its own objects."""

    def __init__(self, dialect: ApiDialect, instance: Any, unix_socket: bool, batch_size: int):
        self.dialect = dialect
        self.instance = instance
        self.unix_socket = unix_socket
        self.batch_size = batch_size

    def objects(self, ids: list[int]) -> list[Any]:
        return [Thing(*object_values(i)) for i in ids]

    # One call per operation; the batch ORM overrides `run` to commit per batch instead.
    def persist(self, obj: Any) -> None: ...
    def load(self, object_id: int) -> Any: ...
    def update(self, obj: Any) -> None: ...
    def erase(self, obj: Any) -> None: ...

    def run(self, operation: str, objects: list[Any]) -> list[Any]:
        """Apply `operation` to every object; load returns the loaded objects."""
        if operation == "load":
            load = self.load
            return [load(o.id) for o in objects]
        op: Callable[[Any], None] = getattr(self, operation)
        for obj in objects:
            op(obj)
        return objects

    def close(self) -> None: ...


class EmptyLayer(Layer):
    """The harness alone: the same loop and calls, no database. Its time per operation is what
    the measuring loop itself adds to every other layer's."""

    def persist(self, obj): pass
    def load(self, object_id): return None
    def update(self, obj): pass
    def erase(self, obj): pass


class DriverLayer(Layer):
    """The DB-API driver on its own: SQL text and tuples, commit after each operation."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.execute_kwargs = dict(self.dialect.plain)
        self.conn = self._connect()
        d = self.dialect
        self._sql = {"persist": d.insert, "load": d.select, "update": d.update, "erase": d.delete}
        self._begin = d.begin
        self._ts = d.timestamp
        self.cur = self._cursor(self.conn)  # one cursor for every operation, as DB-API code keeps one

    def _connect(self) -> Any:
        conn = self.instance.connect(unix_socket=self.unix_socket)
        self.dialect.manual_commit(conn)
        return conn

    def _cursor(self, conn: Any) -> Any:
        return self.dialect.cursor(conn)

    def _do(self, sql: str, params: tuple) -> None:
        if self._begin:
            self._begin(self.conn)
        self.cur.execute(sql, params, **self.execute_kwargs)

    def persist(self, obj):
        v = _values(obj)
        self._do(self._sql["persist"], (*v[:-1], self._ts(v[-1])))
        self.conn.commit()

    def load(self, object_id):
        self._do(self._sql["load"], (object_id,))
        row = self.cur.fetchone()
        self.conn.commit()
        return Thing(*row)

    def update(self, obj):
        change(obj)
        v = _members(obj)
        self._do(self._sql["update"], (*v[:-1], self._ts(v[-1]), obj.id))
        self.conn.commit()

    def erase(self, obj):
        self._do(self._sql["erase"], (obj.id,))
        self.conn.commit()

    def close(self) -> None:
        if self.cur is not self.conn:
            self.cur.close()
        self.conn.close()


class PreparedLayer(DriverLayer):
    """The driver with server-side prepared statements (psycopg `prepare=True`): parsed and
    planned once per connection, then executed by name."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.execute_kwargs = dict(self.dialect.prepare or {})


class CDriverLayer(DriverLayer):
    """The same statements through the engine's C driver (`dialect.c_driver`), where its default
    driver is pure Python: the difference is the driver's own CPU, the server's work is the same."""

    def _connect(self) -> Any:
        instance = self.instance
        conn = self.dialect.c_driver.connect(instance.socket_endpoint if self.unix_socket else instance.endpoint, 10.0)
        conn.autocommit = False
        self.execute_kwargs = {}
        return conn

    def _cursor(self, conn: Any) -> Any:
        return conn.cursor()


class CPreparedLayer(CDriverLayer):
    """The C driver's server-side prepared statements (MySQL binary protocol: prepared once per
    statement text on the connection, then COM_STMT_EXECUTE): seed 002's ODB path."""

    def _cursor(self, conn: Any) -> Any:
        return self.dialect.c_driver.prepared_cursor(conn)


def _sa_table():
    """The object's table as SQLAlchemy sees it (created by the dialect's DDL, never by SQLAlchemy),
    and the mapped class the ORM layers load into."""
    global _SA
    if _SA is None:
        from sqlalchemy import BigInteger, Column, DateTime, Double, MetaData, String, Table
        from sqlalchemy.orm import registry

        kinds = {**{c: BigInteger for c in INTS}, **{c: Double for c in FLOATS},
                 **{c: (lambda: String(64)) for c in STRINGS}, TIMESTAMP: DateTime}
        table = Table(TABLE, MetaData(), Column("id", BigInteger, primary_key=True, autoincrement=False),
                      *(Column(c, kind()) for c, kind in kinds.items()))

        class OrmThing:
            def __init__(self, *values: Any):
                for name, value in zip(COLUMNS, values):
                    setattr(self, name, value)

        registry().map_imperatively(OrmThing, table)
        _SA = (table, OrmThing)
    return _SA


_SA: tuple[Any, Any] | None = None


class CoreLayer(Layer):
    """SQLAlchemy Core: compiled insert/select/update/delete constructs on a pooled connection,
    one `engine.begin()` block per operation."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        from sqlalchemy import bindparam, delete, insert, select, update

        self.table, _ = _sa_table()
        t = self.table
        plain = dict(self.dialect.sqlalchemy_plain)
        self.engine = self.instance.sqlalchemy_engine(unix_socket=self.unix_socket,
                                                      **({"connect_args": plain} if plain else {}))
        self._insert = insert(t)
        self._select = select(t).where(t.c.id == bindparam("key"))
        self._update = update(t).where(t.c.id == bindparam("key"))
        self._delete = delete(t).where(t.c.id == bindparam("key"))

    def persist(self, obj):
        with self.engine.begin() as c:
            c.execute(self._insert, dict(zip(COLUMNS, _values(obj))))

    def load(self, object_id):
        with self.engine.begin() as c:
            return Thing(*c.execute(self._select, {"key": object_id}).one())

    def update(self, obj):
        change(obj)
        with self.engine.begin() as c:
            c.execute(self._update, {**dict(zip(MEMBERS, _members(obj))), "key": obj.id})

    def erase(self, obj):
        with self.engine.begin() as c:
            c.execute(self._delete, {"key": obj.id})

    def close(self) -> None:
        self.engine.dispose()


class OrmObjectLayer(CoreLayer):
    """SQLAlchemy ORM, a Session per object: what a request handler touching one row does.
    Update and erase first load the object into the session (the ORM changes only objects it
    tracks), so they include a SELECT."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        from sqlalchemy.orm import sessionmaker

        _, self.cls = _sa_table()
        self.sessions = sessionmaker(self.engine, expire_on_commit=False)

    def objects(self, ids):
        return [self.cls(*object_values(i)) for i in ids]

    def persist(self, obj):
        with self.sessions.begin() as s:
            s.add(obj)

    def load(self, object_id):
        with self.sessions.begin() as s:
            return s.get(self.cls, object_id)

    def update(self, obj):
        with self.sessions.begin() as s:
            change(s.get(self.cls, obj.id))

    def erase(self, obj):
        with self.sessions.begin() as s:
            s.delete(s.get(self.cls, obj.id))


class OrmBatchLayer(OrmObjectLayer):
    """SQLAlchemy ORM, a Session per batch of `batch_size` objects, committed once: the unit of
    work flushes a batch's inserts together (executemany / insertmanyvalues)."""

    def run(self, operation, objects):
        cls, out = self.cls, []
        for start in range(0, len(objects), self.batch_size):
            batch = objects[start:start + self.batch_size]
            with self.sessions.begin() as s:
                if operation == "persist":
                    s.add_all(batch)
                elif operation == "load":
                    out += [s.get(cls, o.id) for o in batch]
                elif operation == "update":
                    for o in batch:
                        change(s.get(cls, o.id))
                else:
                    for o in batch:
                        s.delete(s.get(cls, o.id))
        return out if operation == "load" else objects


LAYERS: dict[str, type[Layer]] = {
    "driver": DriverLayer, "prepared": PreparedLayer, "c_driver": CDriverLayer, "c_prepared": CPreparedLayer,
    "core": CoreLayer, "orm_object": OrmObjectLayer,
    "orm_batch": OrmBatchLayer,
}
