"""TiDB from the official `pingcap/tidb` image: one tidb-server with its embedded store (unistore),
over the MySQL wire protocol on 4000. Caveat: one tidb-server is NOT a TiDB cluster: no TiKV (the
Raft-replicated storage), no PD; seed 000 ran `tiup playground` (PD + TiKV + TiDB). What it
measures is TiDB's SQL layer over an in-process store.

Runs without authentication: the image's root user has an empty password and the image has no
setting to give it one (the port is published on 127.0.0.1 only). No Testcontainers module."""
from .base import Engine, OFFICIAL_ONLY_NO_VALGRIND, Server, Version
from .clients import mysql_wire

ENGINE = Engine(
    key="tidb",
    title="TiDB",  # the caveat is in the note: the seed's row (a TiKV cluster) shares this title
    color="#DC150B",
    family="mysql",
    client=mysql_wire("select concat('TiDB ', version())"),  # 8.0.11-TiDB-v8.5.1
    server=Server(
        port=4000,
        env=lambda c: {},
        user="root",
        versions=(Version("8.5", "pingcap/tidb:v8.5.1", no_recipe_reason="neither Debian nor PyPI ships TiDB; "
                                                                           "its Go module is not downloadable here"),),
        default="8.5",
        database="test",  # created by TiDB's bootstrap
        # tidb-server options as `--name=value` (the image's entrypoint is /tidb-server).
        config_command=lambda config: ["--store=unistore", "--path=/tmp/tidb",
                                       *[f"--{k.replace('_', '-')}={v}" for k, v in config.items()]],
    ),
    note="TiDB here is one tidb-server over its embedded unistore, not a TiKV cluster (seed 000 ran tiup "
         "playground); it runs without authentication (empty root password, 127.0.0.1 only).",
    no_valgrind_reason=OFFICIAL_ONLY_NO_VALGRIND,
)
