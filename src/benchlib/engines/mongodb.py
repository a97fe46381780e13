"""MongoDB from the official `mongo` image, through pymongo. No offline build exists: neither
Debian nor PyPI ships a MongoDB server (FerretDB is the offline stand-in for the wire protocol,
as its own engine, `ferretdb`)."""
from .base import Engine, OFFICIAL_ONLY_NO_VALGRIND, Server, Version
from .clients import DocumentClient

ENGINE = Engine(
    key="mongodb",
    title="MongoDB",
    color="#13AA52",
    family="document",
    client=DocumentClient(),
    server=Server(
        port=27017,
        # The image creates this root user (authSource admin) on first start.
        env=lambda c: {"MONGO_INITDB_ROOT_USERNAME": c.user, "MONGO_INITDB_ROOT_PASSWORD": c.password},
        user="bench",
        versions=(Version("8.0", "mongo:8.0", no_recipe_reason="neither Debian nor PyPI ships a MongoDB server"),),
        default="8.0",
        # mongod options as `--name=value` (the image's entrypoint passes dashed arguments to mongod).
        config_command=lambda config: [f"--{k}={v}" for k, v in config.items()] or None,
        # The entrypoint starts mongod twice (once to create the user) before it listens.
        startup_timeout=120.0,
    ),
    no_valgrind_reason=OFFICIAL_ONLY_NO_VALGRIND,
)
