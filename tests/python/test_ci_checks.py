"""What CI relies on: scripts/check_includes.py (the include edges are the ones docs/dependencies.md
lists, and an edge it does not list fails the check, naming the file, the line and the rule),
scripts/check_readmes.py (the folder READMEs name every file of their folder, and only files that
exist), and conftest.require (a peer the tests use fails, not skips, under `make test`)."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "check_includes.py"


def run(root):
    return subprocess.run([sys.executable, str(SCRIPT), "--root", str(root)], capture_output=True, text=True)


def test_the_repository_has_only_allowed_edges():
    r = run(ROOT)
    assert r.returncode == 0, r.stderr
    assert "all allowed" in r.stdout


def make_tree(tmp_path, table_rows, files):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "dependencies.md").write_text(
        "| folder | may include |\n|---|---|\n" + "\n".join(table_rows) + "\n")
    for name, text in files.items():
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "add", "."], cwd=tmp_path, check=True)
    return tmp_path


def test_an_edge_the_table_does_not_list_fails(tmp_path):
    root = make_tree(tmp_path, ["| `sim/serving` | `sim/engine` |", "| `sim/jobs` | `sim/engine` |",
                                "| `sim/engine` | |"],
                     {"sim/engine/time.hpp": "#pragma once\n",
                      "sim/jobs/job.hpp": "#pragma once\n",
                      "sim/serving/replica.hpp": '#pragma once\n#include "sim/engine/time.hpp"\n'
                                                 '#include "sim/jobs/job.hpp"\n'})
    r = run(root)
    assert r.returncode == 1
    assert "sim/serving/replica.hpp:3: includes sim/jobs/job.hpp, but sim/serving may not use sim/jobs" in r.stderr
    assert "sim/engine/time.hpp" not in r.stderr.replace("sim/serving/replica.hpp:3", "")


def test_a_folder_without_a_row_fails(tmp_path):
    root = make_tree(tmp_path, ["| `sim/engine` | |"],
                     {"sim/engine/time.hpp": "#pragma once\n", "sim/newthing/x.cpp": "int x;\n"})
    r = run(root)
    assert r.returncode == 1
    assert "sim/newthing/x.cpp: its folder has no row" in r.stderr


def test_a_missing_peer_fails_under_make_test_and_skips_elsewhere(tmp_path):
    """conftest.require: CI (CLUSTERSIM_REQUIRE_PEERS=1, set by `make test`) fails a test whose
    peer (SimGrid, dask, networkx) is missing instead of skipping it."""
    test = tmp_path / "test_peer.py"
    test.write_text("from conftest import require\n\n"
                    "def test_peer():\n    require('no_such_module_xyz', 'install it')\n")
    (tmp_path / "conftest.py").write_text((ROOT / "tests" / "python" / "conftest.py").read_text())
    import os
    for required, outcome in (("1", "1 failed"), ("", "1 skipped")):
        env = dict(os.environ, CLUSTERSIM_REQUIRE_PEERS=required)
        r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test)],
                           capture_output=True, text=True, cwd=tmp_path, env=env)
        assert outcome in r.stdout, r.stdout + r.stderr


def test_ctest_runs_every_catch2_test_case():
    """ctest has one entry per tests/cpp/<area>/test_<subject>.cpp (Catch2's file-name tag) for each
    area tests/CMakeLists.txt adds: a test case in any other file (a helper header), or in an area
    the list lacks, would be compiled and run by no entry."""
    import re
    areas = set(re.findall(r"^cs_add_test_area\((\w+)", (ROOT / "tests" / "CMakeLists.txt").read_text(), re.M))
    case = re.compile(r"^\s*(TEST_CASE|TEST_CASE_METHOD|TEMPLATE_TEST_CASE|SCENARIO)\s*\(", re.M)
    files = [p for p in (ROOT / "tests" / "cpp").rglob("*") if p.suffix in (".cpp", ".hpp")]
    holding = [p.relative_to(ROOT / "tests" / "cpp") for p in files if case.search(p.read_text())]
    assert holding
    outside = [str(p) for p in holding if len(p.parts) != 2 or p.parts[0] not in areas
               or not (p.name.startswith("test_") and p.suffix == ".cpp")]
    assert not outside, f"test cases no ctest entry runs: {outside}"


READMES = ROOT / "scripts" / "check_readmes.py"


def test_the_folder_readmes_name_their_files():
    r = subprocess.run([sys.executable, str(READMES)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "name every file" in r.stdout


def test_a_readme_that_leaves_a_file_out_or_names_a_missing_one_fails(tmp_path):
    folder = tmp_path / "sim" / "thing"
    folder.mkdir(parents=True)
    for name in ("model.hpp", "model.cpp", "model_solve.cpp", "helper.hpp", "other.cpp"):
        (folder / name).write_text("")
    (folder / "README.md").write_text("The model (`model.hpp`), `gone.hpp` and `sim/thing/old.cpp`.\n")
    r = subprocess.run([sys.executable, str(READMES), "--root", str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 1
    assert r.stderr.splitlines() == [
        "sim/thing/README.md does not name helper.hpp",
        "sim/thing/README.md does not name other.cpp",
        "sim/thing/README.md names gone.hpp, which is not in sim/thing/",
        "sim/thing/README.md names sim/thing/old.cpp, which does not exist",
    ]
    (folder / "README.md").write_text("`model.hpp`, `helper`, `other.cpp`.\n")
    r = subprocess.run([sys.executable, str(READMES), "--root", str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
