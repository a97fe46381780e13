"""`make lab` serves JupyterLab on loopback, also as root; the notebooks' kernelspec is the one
the set-up installs."""
import json
import os
import re
import shlex
import signal
import subprocess
import time

from cliproject import ROOT


def _installed_kernelspec() -> tuple[str, str]:
    """(name, display name) from setup.sh's `ipykernel install` line."""
    line = next(line for line in (ROOT / "scripts" / "setup.sh").read_text().splitlines()
                if "ipykernel install" in line and not line.lstrip().startswith("#"))
    words = shlex.split(line.replace(">/dev/null", ""))
    return words[words.index("--name") + 1], words[words.index("--display-name") + 1]


def test_notebook_kernelspecs_match_the_one_setup_installs():
    name, display_name = _installed_kernelspec()
    notebooks = sorted((ROOT / "notebooks").glob("*.ipynb"))
    assert notebooks
    for path in notebooks:
        spec = json.loads(path.read_text())["metadata"].get("kernelspec", {})
        assert (spec.get("name"), spec.get("display_name")) == (name, display_name), path.name


def test_make_lab_serves_on_loopback(tmp_path):
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime")}
    lab = subprocess.Popen(["make", "-s", "lab"], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, start_new_session=True)
    output = []
    try:
        deadline = time.monotonic() + 120
        url = None
        while url is None and time.monotonic() < deadline:
            line = lab.stdout.readline()
            if not line:
                break  # exited
            output.append(line)
            found = re.search(r"(http://[^/\s]+)/lab\?token=\w+", line)
            url = found.group(1) if found else None
        assert url, "".join(output)
        assert url.startswith("http://127.0.0.1:"), url
        assert lab.poll() is None, "".join(output)
    finally:
        if lab.poll() is None:
            os.killpg(lab.pid, signal.SIGTERM)
            try:
                lab.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(lab.pid, signal.SIGKILL)
                lab.wait()
