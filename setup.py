"""The package layout, which pyproject.toml cannot state: the repository's folders ``nodes/`` and ``rules/``
(they show the layers of the engine) are installed as ``fgraph.nodes`` and ``fgraph.rules``, so that the
distribution installs one top-level name, ``fgraph``. Everything else is in pyproject.toml."""
from setuptools import find_namespace_packages, setup

PACKAGE_DIR = {"fgraph.nodes": "nodes", "fgraph.rules": "rules"}
EXCLUDE = ["*__pycache__*"]
# namespace packages too: the data folders (fgraph/datasets/data, fgraph/examples/data) travel as package data
packages = find_namespace_packages(include=["fgraph", "fgraph.*"], exclude=EXCLUDE)
for name, folder in PACKAGE_DIR.items():
    packages += [name] + [f"{name}.{sub}" for sub in find_namespace_packages(where=folder, exclude=EXCLUDE)]

setup(packages=packages, package_dir=PACKAGE_DIR)
