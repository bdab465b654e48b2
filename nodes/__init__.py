"""Factor nodes. Every module here is imported and its ``__all__`` re-exported,
so adding a node is adding a file: ``from fgraph.nodes import Normal, Gamma``.

The folder ``nodes/`` of the repository is installed as ``fgraph.nodes``."""
import importlib
import pkgutil

__all__ = []
for _module_info in pkgutil.iter_modules(__path__):
    _module = importlib.import_module(f"{__name__}.{_module_info.name}")
    for _name in getattr(_module, "__all__", ()):
        globals()[_name] = getattr(_module, _name)
        __all__.append(_name)
