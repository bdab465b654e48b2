"""Lazy exports of a package (PEP 562): the names a package exports are looked up in their modules on first use,
so that importing the package imports none of them, nor what they import (scikit-learn for the estimators).

A package's ``__init__`` states what it exports, module by module::

    __all__, __getattr__, __dir__ = lazy_exports(__name__, {"binary": ["BayesianLogisticRegression"], ...})

``from fgraph.models.logistic import BayesianLogisticRegression`` then imports
:mod:`fgraph.models.logistic.binary` and returns its class; a name no module exports is an ``AttributeError``
(and ``from package import submodule`` still imports the submodule).
"""
from __future__ import annotations

import importlib
import sys

__all__ = ["lazy_exports"]


def lazy_exports(package: str, modules: dict) -> tuple:
    """``(__all__, __getattr__, __dir__)`` for ``package`` exporting, for every module of ``modules`` (a name
    relative to the package), the names listed for it. A name listed twice is an error of the package."""
    owners = {}
    for module, names in modules.items():
        for name in names:
            if name in owners:
                raise ImportError(f"{package} exports {name!r} from both .{owners[name]} and .{module}")
            owners[name] = module

    def __getattr__(name: str):
        module = owners.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        setattr(sys.modules[package], name, value)  # looked up once
        return value

    def __dir__() -> list:
        return sorted(set(vars(sys.modules[package])) | set(owners))

    return list(owners), __getattr__, __dir__
