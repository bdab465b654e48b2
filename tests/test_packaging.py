"""The distribution as a user installs it: built by ``python -m build``, accepted by ``twine check``, one
top-level name (``fgraph``) with the licence inside, and a wheel that installs into a fresh virtual environment
beside PyPI's ``rules`` and ``nodes`` and runs the README's example to the README's output."""
import json
import re
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytest.importorskip("build")


def run(command, **options) -> subprocess.CompletedProcess:
    return subprocess.run([str(part) for part in command], capture_output=True, text=True, timeout=900, **options)


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    built = run([sys.executable, "-m", "build", "--outdir", out, ROOT])
    if built.returncode != 0 and "Could not find a version that satisfies" in built.stdout + built.stderr:
        pytest.skip("python -m build could not download setuptools (no package index reachable)")
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    return out


def wheel_of(dist: Path) -> Path:
    (wheel,) = dist.glob("*.whl")
    return wheel


def test_the_wheel_holds_one_top_level_name_and_the_licence(dist):
    names = zipfile.ZipFile(wheel_of(dist)).namelist()
    info = f"{wheel_of(dist).name.split('-py3')[0]}.dist-info"
    assert {name.split("/")[0] for name in names} == {"fgraph", info}
    assert f"{info}/licenses/LICENSE" in names
    assert "fgraph/nodes/normal.py" in names and "fgraph/rules/normal_mean_variance/out.py" in names
    assert "fgraph/datasets/data/iris.csv" in names  # the bundled data travel with the code
    # the library, not the lab: the paper reproductions and their baselines are the examples/ distribution's
    assert "fgraph/examples/quickstart.py" in names
    assert not [name for name in names if "gmm_tvb" in name or "baselines" in name or "_cmn_experiment" in name]
    metadata = zipfile.ZipFile(wheel_of(dist)).read(f"{info}/METADATA").decode()
    assert "Name: fgraph-mp" in metadata and "License-Expression: MIT" in metadata


def test_twine_accepts_the_distribution(dist):
    pytest.importorskip("twine")
    checked = run([sys.executable, "-m", "twine", "check", "--strict", *sorted(dist.iterdir())])
    assert checked.returncode == 0, checked.stdout + checked.stderr


def readme_example() -> tuple:
    """(the code of the README's Usage section, the output it documents)."""
    text = (ROOT / "README.md").read_text()
    usage = text[text.index("## Usage"):]
    code = re.search(r"```python\n(.*?)```", usage, re.S).group(1)
    output = re.search(r"<!-- output -->\n```text\n(.*?)```", usage, re.S).group(1)
    return code, output


def test_the_wheel_installs_beside_pypis_rules_and_nodes_and_runs_the_readme_example(dist, tmp_path):
    environment = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(environment)
    python = environment / "bin" / "python"
    # PyPI's rules and nodes first, then the wheel with its dependencies, as a user would add fgraph to a project
    installed = run([python, "-m", "pip", "install", "--disable-pip-version-check", "rules", "nodes"])
    if installed.returncode != 0 and re.search(r"No matching distribution|Could not find a version|NewConnection",
                                               installed.stdout + installed.stderr):
        pytest.skip("PyPI's rules and nodes cannot be downloaded here (no package index reachable)")
    assert installed.returncode == 0, installed.stderr[-3000:]
    installed = run([python, "-m", "pip", "install", "--disable-pip-version-check", wheel_of(dist)])
    assert installed.returncode == 0, installed.stderr[-3000:]
    code, output = readme_example()
    ran = run([python, "-c", code], cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert ran.stdout == output
    # the other packages' top-level names are theirs, and fgraph still works beside them
    probe = ("import json, rules, nodes, fgraph, fgraph.rules; "
             "print(json.dumps([rules.__file__, nodes.__file__, fgraph.rules.__file__]))")
    files = json.loads(run([python, "-c", probe], cwd=tmp_path).stdout)
    assert "fgraph" not in files[0] and "fgraph" not in files[1] and "fgraph/rules" in files[2]
