"""The documentation site builds without a warning, and its node pages cover every node.

``mkdocs build --strict`` (``mkdocs.yml`` at the repository root) turns every warning into a failure: a
broken link or anchor between pages, a page missing from the navigation, a link to a file of the
repository outside ``docs/`` that does not exist (``docs/hooks/repository_links.py``), a docstring the
API reference cannot parse. The node pages are generated from the rule registry at build time
(``docs/hooks/node_pages.py``); the test checks that the built site has a section for every node type the
registry knows and every node type ``fgraph.nodes`` exports, so a new node cannot be left out.

Skipped, saying so, when mkdocs, mkdocs-material or mkdocstrings-python is not installed (the ``docs``
extra). One build serves the module's tests.
"""
from __future__ import annotations

import importlib.util
import inspect
import logging
import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parent.parent
HOOKS = ROOT / "docs" / "hooks"


def _missing_site_tools() -> list:
    """The packages of the ``docs`` extra that are not installed: mkdocs, mkdocs-material, mkdocstrings-python."""
    return [name for name in ("mkdocs", "material", "mkdocstrings_handlers") if importlib.util.find_spec(name) is None]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    missing = _missing_site_tools()
    if missing:
        pytest.skip(f"the documentation site needs {', '.join(missing)}: pip install -e '.[docs]'")
    site_dir = tmp_path_factory.mktemp("site")
    environment = dict(os.environ, NO_MKDOCS_2_WARNING="1", OPENBLAS_NUM_THREADS="1")
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site_dir)],
        cwd=ROOT, env=environment, capture_output=True, text=True,
    )
    return SimpleNamespace(path=site_dir, returncode=built.returncode, output=built.stdout + built.stderr)


def test_the_site_builds_strictly(site):
    assert site.returncode == 0, "mkdocs build --strict failed:\n" + site.output


def test_the_node_pages_have_a_section_for_every_node_type(site):
    if site.returncode != 0:
        pytest.fail("the site did not build (see test_the_site_builds_strictly):\n" + site.output)
    from fgraph import registry
    from fgraph.node import FactorNode
    import fgraph.nodes

    exported = {value for name in fgraph.nodes.__all__
                if inspect.isclass(value := getattr(fgraph.nodes, name)) and issubclass(value, FactorNode)}
    project = {t for t in registry.node_types() if t.__module__.startswith("fgraph.nodes.")}
    expected = {(t.__module__.rsplit(".", 1)[-1], t.__name__) for t in exported | project}
    assert len(expected) > 30

    documented = set()
    for page in (site.path / "nodes").glob("*/index.html"):
        headings = re.findall(r"<h2 id=\"[^\"]*\"><code>(\w+)</code>", page.read_text(encoding="utf-8"))
        documented |= {(page.parent.name, name) for name in headings}
    missing = sorted(f"{module}.{name}" for module, name in expected - documented)
    assert not missing, f"node types without a section on their generated page (site/nodes/<module>/): {missing}"
    index = (site.path / "nodes" / "index.html").read_text(encoding="utf-8")
    assert all(f'href="{module}/"' in index for module, _ in expected)


def test_a_node_page_tables_its_rules_and_energy(site):
    if site.returncode != 0:
        pytest.fail("the site did not build (see test_the_site_builds_strictly):\n" + site.output)
    page = (site.path / "nodes" / "normal" / "index.html").read_text(encoding="utf-8")
    assert "fgraph.rules.normal_mean_variance.out.sum_product" in page
    assert "message on <code>mean</code>: <code>UnivariateNormal</code>" in page
    assert "fgraph.nodes.normal._normal_mean_variance_energy" in page


def _hook(name: str):
    spec = importlib.util.spec_from_file_location(f"docs_hook_{name}", HOOKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _render_links(markdown: str, repo_url: str | None = None) -> str:
    hook = _hook("repository_links")
    config = {"docs_dir": str(ROOT / "docs"), "config_file_path": str(ROOT / "mkdocs.yml"),
              "repo_url": repo_url, "extra": {}}
    page = SimpleNamespace(file=SimpleNamespace(src_uri="tutorials/page.md"))
    return hook.on_page_markdown(markdown, page=page, config=config, files=None)


def test_links_out_of_docs_become_repository_paths_or_links():
    text = "See [the script](../../benchmarks/gmm.py) and [a page](../gmm.md).\n```text\n[x](../../nowhere.py)\n```"
    assert _render_links(text) == (
        "See the script (`benchmarks/gmm.py`) and [a page](../gmm.md).\n```text\n[x](../../nowhere.py)\n```"
    )
    assert _render_links("[`benchmarks/`](../../benchmarks/)") == "`benchmarks/`"
    assert _render_links("[s](../../benchmarks/gmm.py#L3)", repo_url="https://example.org/r/") == (
        "[s](https://example.org/r/blob/main/benchmarks/gmm.py#L3)"
    )


def test_a_link_out_of_docs_to_a_missing_file_is_a_warning(caplog):
    with caplog.at_level(logging.WARNING, logger="mkdocs.hooks.repository_links"):
        _render_links("[gone](../../benchmarks/no_such_benchmark.py)")
    assert "benchmarks/no_such_benchmark.py" in caplog.text and "does not exist" in caplog.text
