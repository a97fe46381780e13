"""Which image an engine runs from: the official one when present or pullable, else a local
build of the engine's recipe on a Debian base image that benchlib makes itself."""
from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .engines import Engine
from .errors import EngineUnavailableError, ImageBuildError
from .settings import RECIPES_DIR, get_settings

BASE_IMAGE = "benchlib/debian-base:bookworm"
BASE_SUITE = "bookworm"
DEFAULT_MIRROR = "http://deb.debian.org/debian"


@dataclass(frozen=True)
class ResolvedImage:
    ref: str
    image_id: str
    source: str  # official | local-build
    digest: str | None
    note: str


@dataclass(frozen=True)
class Availability:
    status: str  # official | local-build | unavailable
    detail: str


def _get_image(client, ref: str):
    import docker.errors

    try:
        return client.images.get(ref)
    except docker.errors.ImageNotFound:
        return None


_REGISTRY_UNREACHABLE = re.compile(r"no such host|dial tcp|i/o timeout|connection refused|network is unreachable"
                                   r"|Temporary failure in name resolution", re.I)


@functools.lru_cache(maxsize=None)
def _pull(ref: str) -> tuple[bool, str]:
    """Try a pull once per process: offline, the answer is the same every time."""
    from .docker_host import docker_client

    try:
        docker_client().images.pull(ref)
        return True, "pulled"
    except Exception as exc:
        return False, _pull_failure(ref, exc)


@functools.lru_cache(maxsize=None)
def _pullable(ref: str) -> tuple[bool, str]:
    """Ask the registry for the manifest only: whether a pull would work, without pulling."""
    from .docker_host import docker_client

    try:
        docker_client().api.inspect_distribution(ref)
        return True, "pullable"
    except Exception as exc:
        return False, _pull_failure(ref, exc)


def _pull_failure(ref: str, exc: Exception) -> str:
    message = str(getattr(exc, "explanation", None) or exc).splitlines()[0]
    if _REGISTRY_UNREACHABLE.search(message):
        message = "no image registry reachable from this host"
    return f"cannot pull {ref} ({message[:300]})"


def _official(client, ref: str, allow_pull: bool) -> tuple[object | None, str]:
    image = _get_image(client, ref)
    if image is not None:
        return image, "present locally"
    if not allow_pull:
        ok, why = _pullable(ref)
        return (_NotBuilt(ref), "will be pulled on first start") if ok else (None, why)
    ok, why = _pull(ref)
    return (_get_image(client, ref), why) if ok else (None, why)


def resolve_image(engine: Engine, *, build: bool = True) -> ResolvedImage:
    """The image to start `engine` from: the official one (pulled when missing), else the local
    recipe, built when missing. With build=False nothing is pulled or built: an answer of what
    would happen, for `availability`."""
    from .docker_host import docker_client

    server = engine.server
    if server is None:
        raise EngineUnavailableError(f"{engine.key} is embedded: it has no image")
    client = docker_client()
    policy = get_settings().image_policy
    why_not_official = "image policy is 'local'"
    if policy in ("auto", "official"):
        image, why = _official(client, server.official_image, allow_pull=build)
        if image is not None:
            digests = getattr(image, "attrs", {}).get("RepoDigests") or []
            return ResolvedImage(server.official_image, image.id, "official", digests[0] if digests else None,
                                 f"official image, {why}")
        why_not_official = why
        if policy == "official":
            raise EngineUnavailableError(f"{engine.key}: {why} and BENCHLIB_IMAGE_POLICY=official")
    if server.recipe is None:
        raise EngineUnavailableError(f"{engine.key}: {why_not_official}; {server.no_recipe_reason}")
    ref, image = local_image(engine, build=build)
    note = (f"local build of recipes/{server.recipe} from Debian packages "
            f"(official {server.official_image} unavailable: {why_not_official})")
    return ResolvedImage(ref, image.id, "local-build", None, note)


def availability(engine: Engine) -> Availability:
    """What `resolve_image` would do, without pulling or building anything."""
    from .docker_host import docker_client

    try:
        resolved = resolve_image(engine, build=False)
    except EngineUnavailableError as exc:
        return Availability("unavailable", str(exc))
    except ImageBuildError as exc:
        return Availability("unavailable", str(exc))
    if resolved.source == "official":
        return Availability("official", f"{resolved.ref} ({resolved.note})")
    built = _get_image(docker_client(), resolved.ref) is not None
    return Availability("local-build", f"{resolved.ref} {'built' if built else 'will be built on first start'}; "
                                       f"{resolved.note}")


# ---------------------------------------------------------------------------------------------
# Local builds


class _NotBuilt:
    """Stands in for an image that would be pulled or built: availability checks do neither."""

    def __init__(self, ref: str):
        self.id = f"(not built: {ref})"


def _recipe_hash(recipe_dir: Path, base_id: str) -> str:
    digest = hashlib.sha256(base_id.encode())
    for path in sorted(p for p in recipe_dir.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(recipe_dir)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


@contextlib.contextmanager
def _build_lock(name: str):
    """Two processes (two notebooks, a test and a notebook) must not build the same image at once."""
    lock_dir = Path(tempfile.gettempdir()) / "benchlib-locks"
    lock_dir.mkdir(exist_ok=True)
    with open(lock_dir / (re.sub(r"[^A-Za-z0-9_.-]", "_", name) + ".lock"), "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def local_image(engine: Engine, *, build: bool = True):
    """(ref, image) of the engine's local recipe; builds the base image and recipe when missing."""
    from .docker_host import docker_client

    client = docker_client()
    assert engine.server is not None and engine.server.recipe is not None
    recipe = engine.server.recipe
    recipe_dir = RECIPES_DIR / recipe
    base = _get_image(client, BASE_IMAGE)
    if base is None:
        if not build:
            base_problem = base_image_problem()
            if base_problem:
                raise ImageBuildError(f"{engine.key}: no official image and {base_problem}")
            ref = f"benchlib/{recipe}:local-pending"
            return ref, _NotBuilt(ref)
        base = ensure_base_image()
    ref = f"benchlib/{recipe}:local-{_recipe_hash(recipe_dir, base.id)}"
    image = _get_image(client, ref)
    if image is not None or not build:
        return ref, image or _NotBuilt(ref)
    with _build_lock(ref):
        image = _get_image(client, ref)
        if image is None:
            image = _build(client, recipe_dir, ref)
    return ref, image


def _build(client, recipe_dir: Path, ref: str):
    import docker.errors

    try:
        image, _logs = client.images.build(
            path=str(recipe_dir), tag=ref, rm=True, forcerm=True,
            # The build installs Debian packages: it needs the host's network (and apt mirror).
            network_mode="host", buildargs={"BASE_IMAGE": BASE_IMAGE},
            labels={"benchlib.recipe": recipe_dir.name, "benchlib.recipe_ref": ref},
        )
    except docker.errors.BuildError as exc:
        tail = "".join(str(chunk.get("stream", chunk.get("error", ""))) for chunk in exc.build_log)[-2000:]
        raise ImageBuildError(f"building {ref} from {recipe_dir} failed: {exc.msg}\n{tail}") from None
    except docker.errors.APIError as exc:
        raise ImageBuildError(f"building {ref} from {recipe_dir} failed: {exc}") from None
    return image


def debian_mirror() -> str:
    """The host's own Debian mirror (offline hosts often have only that one), else deb.debian.org."""
    if os.environ.get("BENCHLIB_DEBIAN_MIRROR"):
        return os.environ["BENCHLIB_DEBIAN_MIRROR"]
    sources = sorted(Path("/etc/apt/sources.list.d").glob("*.sources"))
    for path in sources:
        for block in path.read_text().split("\n\n"):
            uris = re.search(r"^URIs:\s*(\S+)", block, re.M)
            suites = re.search(r"^Suites:\s*(.+)$", block, re.M)
            if uris and suites and "security" not in uris.group(1) and BASE_SUITE in suites.group(1).split():
                return uris.group(1)
    legacy = Path("/etc/apt/sources.list")
    if legacy.exists():
        match = re.search(rf"^deb\s+(?:\[[^]]*\]\s+)?(\S+)\s+{BASE_SUITE}\s", legacy.read_text(), re.M)
        if match:
            return match.group(1)
    return DEFAULT_MIRROR


def base_image_problem() -> str | None:
    """Why the base image cannot be built here, or None."""
    if os.geteuid() != 0:
        return "building the Debian base image needs root (debootstrap)"
    if shutil.which("debootstrap") is None:
        return "debootstrap is not installed (apt-get install debootstrap, or `make setup` as root)"
    return None


def ensure_base_image():
    """benchlib/debian-base:bookworm: debootstrap --variant=minbase, then docker import."""
    from .docker_host import docker_client

    client = docker_client()
    with _build_lock(BASE_IMAGE):
        image = _get_image(client, BASE_IMAGE)
        if image is not None:
            return image
        problem = base_image_problem()
        if problem:
            raise ImageBuildError(f"cannot build {BASE_IMAGE}: {problem}")
        mirror = debian_mirror()
        with tempfile.TemporaryDirectory(prefix="benchlib-rootfs-", dir="/var/tmp") as tmp:
            rootfs = Path(tmp) / "rootfs"
            result = subprocess.run(
                ["debootstrap", "--variant=minbase", BASE_SUITE, str(rootfs), mirror],
                capture_output=True, text=True,
            )
            if result.returncode != 0:
                raise ImageBuildError(
                    f"debootstrap {BASE_SUITE} from {mirror} failed (exit {result.returncode}): "
                    f"{(result.stderr or result.stdout)[-1500:]}"
                )
            archive = Path(tmp) / "rootfs.tar"
            with tarfile.open(archive, "w") as tar:
                for entry in sorted(rootfs.iterdir()):
                    tar.add(entry, arcname=entry.name)
            client.api.import_image_from_file(
                str(archive), repository=BASE_IMAGE.split(":")[0], tag=BASE_IMAGE.split(":")[1],
                changes=['CMD ["/bin/bash"]', f'LABEL benchlib.debian_mirror="{mirror}"'],
            )
        return client.images.get(BASE_IMAGE)
