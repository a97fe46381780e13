"""FerretDB over PostgreSQL: the MongoDB wire protocol where no MongoDB server can be had (no
registry reachable, and neither Debian nor PyPI ships one). A stand-in, reported as FerretDB with
its backend, never as MongoDB: FerretDB translates each command into SQL on PostgreSQL, so its
costs are FerretDB's and PostgreSQL's, not MongoDB's (WiredTiger)."""
from .gobuild import GoBinary
from .base import Engine, Recipe, Server, Version
from .clients import DocumentClient

# FerretDB from its Go module at one exact version (the proxy refuses listing, so no @latest).
# It embeds build/version/*.txt at compile time and panics at start unless version.txt holds its
# version (its git tag normally writes it).
FERRETDB = GoBinary(
    module="github.com/FerretDB/FerretDB", version="v1.24.0",
    checksum="h1:7WJmezL48Bj9bYWnhT/bEJgX5gjT5s7LFdHTqkN25rA=",  # as sum.golang.org publishes it
    package="./cmd/ferretdb", output="ferretdb", min_go="1.22",
    generated={"build/version/version.txt": "v1.24.0\n", "build/version/package.txt": "benchlib\n"},
)

# FerretDB 1.x without its experimental new authentication offers PLAIN only, and passes the
# client's user and password on to PostgreSQL (scram-sha-256 inside the container). PLAIN sends
# the password unencrypted: acceptable on 127.0.0.1 only, where the port is published.
CLIENT = DocumentClient(options=(("authMechanism", "PLAIN"), ("authSource", "$external")))

_NO_OFFICIAL = ("benchlib builds FerretDB from its Go module over the postgres@17 recipe's PostgreSQL; FerretDB's "
                "own images are not used")

ENGINE = Engine(
    key="ferretdb",
    title="FerretDB (PostgreSQL backend)",
    color="#6B8E23",
    family="document",
    client=CLIENT,
    server=Server(
        port=27017,
        # The postgres recipe's conventions: the backend's user, password and database.
        env=lambda c: {"POSTGRES_PASSWORD": c.password, "POSTGRES_USER": c.user, "POSTGRES_DB": c.database},
        user="postgres",
        # The postgres@17 recipe's image plus FerretDB, built on the host with its Go.
        versions=(Version("1.24", None, Recipe("ferretdb", "trixie", f"FerretDB {FERRETDB.version}, host Go build",
                                               base_recipe="postgres@17", host_build=FERRETDB),
                          no_official_reason=_NO_OFFICIAL),),
        default="1.24",
        # Extra arguments go to FerretDB as `--flag=value`.
        config_command=lambda config: [f"--{k.replace('_', '-')}={v}" for k, v in config.items()] or None,
    ),
    note="FerretDB 1.24 is a MongoDB wire-protocol proxy over PostgreSQL 17 in the same container (both in its "
         "cgroup): a stand-in for MongoDB's protocol, not MongoDB's storage engine. Its update_many rewrites "
         "each document as its own SQL UPDATE, so it says nothing about what "
         "MongoDB's update costs.",
    durability_note="its PostgreSQL at the image's settings (not readable over the MongoDB protocol)",
    isolation_note="its PostgreSQL at the image's settings (not readable over the MongoDB protocol)",
    no_valgrind_reason="its container runs two programs (FerretDB's Go binary in front of PostgreSQL) and the "
                       "valgrind wrapper starts one server program; FerretDB under valgrind was never tried",
)
