"""Go programs benchlib builds on the host from their module at one exact version (FerretDB).

The module comes from the Go module proxy, its checksum is checked against the one declared, and
it is built as the main module from a writable copy, so that files its build embeds but its
module archive lacks (FerretDB's build/version/version.txt) can be written first. The build runs
on the host, with the host's Go and the host's network trust, and its binary is cached by what
went into it: a recipe's image then only copies it in."""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from ..core.errors import ImageBuildError

_GO_CANDIDATES = ("go", "/usr/local/go/bin/go", "/usr/lib/go/bin/go")


def cache_dir() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "benchlib" / "go"


def find_go() -> tuple[str | None, str | None]:
    """(path, version like '1.26.8') of the first Go found, or (None, None)."""
    for candidate in _GO_CANDIDATES:
        path = shutil.which(candidate)
        if path:
            out = subprocess.run([path, "env", "GOVERSION"], capture_output=True, text=True)
            match = re.match(r"go(\d+(?:\.\d+)*)", out.stdout.strip())
            if out.returncode == 0 and match:
                return path, match.group(1)
    return None, None


def _version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


@dataclass(frozen=True)
class GoBinary:
    module: str  # github.com/FerretDB/FerretDB
    version: str  # v1.24.0
    checksum: str  # h1:... as the Go checksum database publishes it
    package: str  # ./cmd/ferretdb
    output: str  # the binary's file name in the build context
    min_go: str  # the module's `go` directive
    # Files to write into the module copy before building (generated files its archive lacks).
    generated: Mapping[str, str] = field(default_factory=dict)
    ldflags: str = ""  # e.g. "-s -w": no symbol table or DWARF (a smaller binary, a shorter link)

    def problem(self) -> str | None:
        """Why the host cannot build it, or None."""
        go, version = find_go()
        if go is None:
            return (f"building {self.module}@{self.version} needs Go >= {self.min_go} on the host (none found: "
                    "install Debian's golang-go where it is recent enough, or Go from go.dev)")
        if _version_tuple(version) < _version_tuple(self.min_go):
            return f"building {self.module}@{self.version} needs Go >= {self.min_go}; the host's {go} is {version}"
        return None

    def identity(self) -> str:
        """What the binary depends on (for image hashes and its cache): not the host's Go, whose
        version shows in the binary's build info instead."""
        identity = [self.module, self.version, self.checksum, self.package, dict(self.generated)]
        return json.dumps(identity + ([self.ldflags] if self.ldflags else []))

    def _cached(self) -> Path:
        return cache_dir() / "bin" / hashlib.sha256(self.identity().encode()).hexdigest()[:16] / self.output

    def describe(self) -> str:
        """What `build_into` will do, for the console of whoever waits on it."""
        if self._cached().exists():
            return f"{self.module}@{self.version} {self.package} (binary cached)"
        return f"go build {self.module}@{self.version} {self.package} with the host's Go"

    def build_into(self, folder: Path) -> Path:
        """The binary, built (or taken from the cache), copied to folder/output."""
        problem = self.problem()
        if problem:
            raise ImageBuildError(problem)
        cached = self._cached()
        if not cached.exists():
            self._build(cached)
        target = folder / self.output
        shutil.copy2(cached, target)
        return target

    def _build(self, binary: Path) -> None:
        go, _ = find_go()
        env = {**os.environ, "GOTOOLCHAIN": "local", "CGO_ENABLED": "0", "GOFLAGS": "-modcacherw -buildvcs=false",
               "GOMODCACHE": str(cache_dir() / "mod")}

        def run(args: list[str], cwd: Path | None = None) -> str:
            out = subprocess.run([go, *args], cwd=cwd, env=env, capture_output=True, text=True)
            if out.returncode != 0:
                raise ImageBuildError(f"go {' '.join(args)} failed (exit {out.returncode}): "
                                      f"{(out.stderr or out.stdout)[-1500:]}")
            return out.stdout

        info = json.loads(run(["mod", "download", "-json", f"{self.module}@{self.version}"]) or "{}")
        if info.get("Error"):
            raise ImageBuildError(f"go mod download {self.module}@{self.version}: {info['Error']}")
        if info.get("Sum") != self.checksum:
            raise ImageBuildError(f"{self.module}@{self.version}: checksum {info.get('Sum')}, expected {self.checksum}")
        work = binary.parent / "src"
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(info["Dir"], work)
        for name, text in self.generated.items():
            (work / name).write_text(text)
        partial = binary.with_suffix(".partial")
        run(["build", "-trimpath", *(["-ldflags", self.ldflags] if self.ldflags else []), "-o", str(partial),
             self.package], cwd=work)
        partial.rename(binary)  # only a complete binary lands under its cached name
        shutil.rmtree(work, ignore_errors=True)
