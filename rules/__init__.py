"""Update rules, one sub-package per node type and one module per interface.

Importing this package imports every rule module below it, which registers
the rules with :mod:`fgraph.registry`; adding a rule is adding a file.
"""
import importlib
import pkgutil

import fgraph.nodes  # noqa: F401  (node modules register their average energies)

for _module_info in pkgutil.walk_packages(__path__, prefix=f"{__name__}."):
    importlib.import_module(_module_info.name)
