"""Containers benchlib starts beside the engines and never measures: MinIO, the S3 server of the
shared results store (shared_store.py) for tests and for teams without an S3 service.

A service's image is resolved like an engine's (images.py): its official image where present or
pullable, else its recipe built offline. MinIO publishes no images for its source releases since
October 2025 and its module is not tagged on the Go module proxy, so the offline build takes the
module at one pseudo-version (checksum checked) and builds only its main package, with
`-trimpath -ldflags "-s -w"`. Measured on a fresh 2-core host: see the README (Shared store)."""
from __future__ import annotations

import contextlib
import secrets
import time
import urllib.request
from dataclasses import dataclass
from typing import Iterator

from ..engines.base import Credentials, Recipe, Server, Version
from ..core.errors import EngineStartError
from ..engines.gobuild import GoBinary

MINIO_MODULE_VERSION = "v0.0.0-20260212201848-7aac2a2c5b7c"  # `@latest` on the proxy, 2026-02-12

MINIO = GoBinary(
    module="github.com/minio/minio", version=MINIO_MODULE_VERSION,
    checksum="h1:/qdoYujxF5MBLDMVLeiYJ/7fBa1HikX39Dvzb9Ji8pA=",  # as sum.golang.org publishes it
    package=".", output="minio", min_go="1.24", ldflags="-s -w",
)


@dataclass(frozen=True)
class Service:
    """A key and a Server declaration, as an engine has, without a client: images.resolve_image
    resolves it the same way; nothing measures it."""

    key: str
    server: Server


MINIO_SERVICE = Service("minio", Server(
    port=9000,
    env=lambda c: {"MINIO_ROOT_USER": c.user, "MINIO_ROOT_PASSWORD": c.password, "MINIO_BROWSER": "off"},
    user="benchlib",
    versions=(Version(
        "2026-02", "minio/minio:RELEASE.2025-04-22T22-12-26Z",  # the last official images predate the module
        Recipe("minio", "bookworm", f"MinIO {MINIO_MODULE_VERSION}, host Go build", host_build=MINIO)),),
    default="2026-02",
    config_command=lambda config: ["server", "/data", "--address", ":9000"],
    startup_timeout=30.0,
))


@dataclass(frozen=True)
class ObjectServer:
    """A running S3 server: where it answers and the credentials a client needs (fresh per start)."""

    endpoint_url: str
    access_key: str
    secret_key: str
    image_ref: str
    image_source: str
    container_id: str

    def env(self) -> dict[str, str]:
        """The AWS environment a client (s3fs, a worker, the CLI) reads its credentials from."""
        return {"AWS_ENDPOINT_URL": self.endpoint_url, "AWS_ACCESS_KEY_ID": self.access_key,
                "AWS_SECRET_ACCESS_KEY": self.secret_key, "AWS_DEFAULT_REGION": "us-east-1"}

    def __repr__(self) -> str:  # never print the secret, not even in a traceback
        return f"ObjectServer({self.endpoint_url}, image={self.image_ref!r})"


@contextlib.contextmanager
def start_minio() -> Iterator[ObjectServer]:
    """MinIO in a container, port 9000 on 127.0.0.1 only, a fresh random root user and password,
    its data inside the container (gone with it). Stopped and removed on exit."""
    from .images import resolve_image
    from .lifecycle import loopback_container, reap_stale, resource_labels, track

    reap_stale()
    image = resolve_image(MINIO_SERVICE)
    server = MINIO_SERVICE.server
    creds = Credentials(f"benchlib-{secrets.token_hex(4)}", secrets.token_urlsafe(24), "")
    container = loopback_container(image.ref, server.port, server.env(creds), resource_labels(MINIO_SERVICE, None))
    container.with_command(server.command({}))
    stop = None
    try:
        container.start()
        stop = track(container)
        url = f"http://127.0.0.1:{container.get_exposed_port(server.port)}"
        _wait_ready(url, container, server.startup_timeout)
        yield ObjectServer(url, creds.user, creds.password, image.ref, image.source, container.get_container_id())
    finally:
        if stop is not None:
            stop()
        elif container.get_wrapped_container() is not None:
            with contextlib.suppress(Exception):
                container.stop()


def _wait_ready(url: str, container, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    wrapped = container.get_wrapped_container()
    while True:
        try:
            with urllib.request.urlopen(f"{url}/minio/health/ready", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        wrapped.reload()
        if wrapped.status in ("exited", "dead") or time.monotonic() > deadline:
            logs = wrapped.logs(tail=15).decode(errors="replace")
            raise EngineStartError(f"MinIO did not answer at {url} within {timeout:.0f} s; last log lines:\n{logs}")
        time.sleep(0.1)
