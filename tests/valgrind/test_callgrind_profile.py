"""callgrind_profile and instruction_subsystems on real callgrind output: two small processes
run under valgrind here, read as one window."""
import re
import shutil
import subprocess

import pytest

from benchlib.counters.callgrind_profile import CallgrindError, read_window, subsystem_table
from benchlib.counters.instruction_subsystems import SUBSYSTEMS

pytestmark = pytest.mark.valgrind


def _declared_totals(path) -> int:
    text = path.read_text()
    found = re.findall(r"^totals:\s*(\d+)", text, re.M) or re.findall(r"^summary:\s*(\d+)", text, re.M)
    return sum(int(v) for v in found)


@pytest.fixture(scope="module")
def two_processes(tmp_path_factory):
    if shutil.which("valgrind") is None:
        pytest.fail("valgrind is not installed (scripts/setup.sh installs it on Debian)")
    out = tmp_path_factory.mktemp("callgrind")
    for program in (["true"], ["ls", "/"]):
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}/cg.%p",
                        shutil.which(program[0]), *program[1:]], check=True, capture_output=True)
    files = sorted(out.glob("cg.*"))
    assert len(files) == 2
    return files


def test_a_window_of_two_processes_totals_what_their_files_declare(two_processes):
    profile = read_window(two_processes)
    declared = sum(_declared_totals(p) for p in two_processes)
    assert declared > 50_000
    assert profile.total == declared
    assert int(profile.functions["self"].sum()) == declared
    assert [f.total for f in profile.files] == [_declared_totals(p) for p in two_processes]
    # The loader and libc run in every process: their functions are named with their objects.
    objects = set(", ".join(profile.functions["object"]).split(", "))
    assert any(o.startswith("libc.so") for o in objects) and any(o.startswith("ld-linux") for o in objects)
    top = profile.top(10)
    assert top["self_rank"].min() == 1 and top["inclusive_rank"].min() == 1
    assert (top["inclusive"] >= top["self"]).all()
    assert top["inclusive_share"].max() <= 1.0 + 1e-9
    # A process's entry point includes (nearly) everything its process ran.
    assert top["inclusive"].max() >= 0.9 * max(f.total for f in profile.files)


def test_subsystems_sum_to_the_window_total(two_processes):
    profile = read_window(two_processes)
    table = subsystem_table(profile, "postgres")
    assert list(table["subsystem"]) == list(SUBSYSTEMS)
    assert int(table["instructions"].sum()) == profile.total
    by_name = table.set_index("subsystem")["instructions"]
    assert by_name["libc"] > 0 and by_name["memory allocation"] >= 0
    assert abs(table["share"].sum() - 1.0) < 1e-9


def test_a_file_whose_lines_do_not_add_up_is_refused(two_processes, tmp_path):
    text = two_processes[0].read_text()
    lines = text.splitlines()
    # Drop the first cost line of a function body: its file's totals no longer match.
    i = next(i for i, line in enumerate(lines) if line.startswith("fn=")) + 1
    while not re.match(r"^[+-]?\d+ \d+$", lines[i]):
        i += 1
    cut = tmp_path / "cg.cut"
    cut.write_text("\n".join(lines[:i] + lines[i + 1:]) + "\n")
    with pytest.raises(CallgrindError, match="sum to .* totals line says"):
        read_window([cut])
    nototals = tmp_path / "cg.nototals"
    nototals.write_text("\n".join(line for line in lines if not line.startswith(("totals:", "summary:"))) + "\n")
    with pytest.raises(CallgrindError, match="no 'totals:'"):
        read_window([nototals])
    with pytest.raises(CallgrindError, match="no callgrind output file"):
        read_window([])


def test_a_file_counting_another_event_first_is_refused(two_processes, tmp_path):
    other = tmp_path / "cg.dr"
    other.write_text(two_processes[0].read_text().replace("events: Ir", "events: Dr", 1))
    with pytest.raises(CallgrindError, match="first event is 'Dr'"):
        read_window([other])
