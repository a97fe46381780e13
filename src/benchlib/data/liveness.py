"""Telling a dead run from a live one.

A run row says `running` from its start until its owner writes the final status. An owner killed
with SIGKILL (or a host that lost power) never writes it, so every run records its owner process
(`owner`: "host:pid:process-start-ticks", the format of the containers' owner label) and any
later benchlib process can judge it: a `running` run whose owner is gone is rewritten as `aborted`,
with when, by whom and why in `status_note`. Runs of other hosts are left alone (their owners
cannot be checked from here)."""
from __future__ import annotations

import os
import socket

from ..host.owners import owner_alive
from .store import Store, utcnow


def reap_dead_runs(store: Store | None = None) -> list[str]:
    """Mark `running` runs whose owner process is gone as `aborted`. Returns their run ids."""
    store = store or Store.default_local()  # runs this host measures; a shared store holds only finished ones
    if not store.run_ids():
        return []
    con = store.connect()
    try:
        columns = {row[0] for row in con.execute("describe runs").fetchall()}
        if "owner" not in columns:
            return []  # no run recorded an owner yet (a store older than schema v2)
        # Through Arrow: DuckDB's Python rows need pytz for timestamps with a time zone.
        rows = con.sql("select * exclude (schema_version) from runs "
                       "where status = 'running' and owner is not null").to_arrow_table().to_pylist()
    finally:
        con.close()
    aborted = []
    for row in rows:
        if owner_alive(row["owner"]):
            continue
        host, pid, _ = row["owner"].split(":", 2)
        now = utcnow()
        row.update(status="aborted", ended_at=now,
                   status_note=f"owner process {pid} on {host} is gone; decided by {os.getpid()} on "
                               f"{socket.gethostname()} at {now:%Y-%m-%d %H:%M:%S} UTC")
        store.write_run(row)
        aborted.append(row["run_id"])
    return aborted
