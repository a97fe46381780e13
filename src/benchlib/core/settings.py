"""Where benchlib keeps things. Paths come from the package location or the environment,
never from the current directory, so a notebook executed by papermill from any folder
writes to the same store."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parents[1]
# Package data sits beside the layer that reads it.
RECIPES_DIR = PACKAGE_DIR / "containers" / "recipes"
REPORT_TEMPLATE_DIR = PACKAGE_DIR / "present" / "report_template"


def _project_root() -> Path:
    """The repository checkout when benchlib is installed editable from it, else ~/.benchlib."""
    candidate = PACKAGE_DIR.parent.parent
    if (candidate / "pyproject.toml").exists() and (candidate / "notebooks").is_dir():
        return candidate
    return Path.home() / ".benchlib"


@dataclass(frozen=True)
class Settings:
    project_root: Path
    data_dir: Path
    reports_dir: Path
    image_policy: str  # auto | official | local
    # Where "official" images come from instead of Docker Hub: a mirror or private registry
    # holding them under their Hub names (`<mirror>/library/postgres:17`); None: Docker Hub.
    registry_mirror: str | None = None
    debian_mirror: str | None = None  # the Debian mirror offline image builds use (None: the host's own)
    # The store results are read from: None (this host's results_dir), another local folder, or a
    # shared store `s3://bucket/prefix` (read together with this host's own runs; shared_store.py).
    store: str | None = None

    @property
    def results_dir(self) -> Path:
        return self.data_dir / "results"

    @property
    def reference_dir(self) -> Path:
        return self.project_root / "data" / "reference"

    @property
    def notebooks_dir(self) -> Path:
        return self.project_root / "notebooks"

    @property
    def params_dir(self) -> Path:
        return self.project_root / "papermill_params"


IMAGE_POLICIES = ("auto", "official", "local")


def get_settings() -> Settings:
    """Read settings afresh each call: tests and the batch runner change the environment."""
    root = Path(os.environ.get("BENCHLIB_PROJECT_ROOT", _project_root()))
    data_dir = Path(os.environ.get("BENCHLIB_DATA_DIR", root / "data"))
    reports_dir = Path(os.environ.get("BENCHLIB_REPORTS_DIR", root / "reports"))
    policy = os.environ.get("BENCHLIB_IMAGE_POLICY", "auto")
    if policy not in IMAGE_POLICIES:
        from .errors import ParameterError

        raise ParameterError(f"BENCHLIB_IMAGE_POLICY={policy!r} is not one of {', '.join(IMAGE_POLICIES)}")
    mirror = os.environ.get("BENCHLIB_REGISTRY_MIRROR", "").strip()
    # Docker references carry no scheme: accept a pasted URL all the same.
    mirror = re.sub(r"^[a-z]+://", "", mirror).rstrip("/") or None
    return Settings(root, data_dir, reports_dir, policy, mirror,
                    os.environ.get("BENCHLIB_DEBIAN_MIRROR", "").strip() or None,
                    os.environ.get(STORE_ENV, "").strip() or None)


STORE_ENV = "BENCHLIB_STORE"
