"""Factor nodes. Every module here is imported and its ``__all__`` re-exported,
so adding a node is adding a file: ``from nodes import Normal, Gamma``."""
import importlib
import pkgutil

__all__ = []
for _module_info in pkgutil.iter_modules(__path__):
    _module = importlib.import_module(f"{__name__}.{_module_info.name}")
    for _name in getattr(_module, "__all__", ()):
        globals()[_name] = getattr(_module, _name)
        __all__.append(_name)

# The model-comparison API moved to fgraph.comparison (it builds models from
# nodes; it is not one). Its names are forwarded on first use, so that
# ``from nodes import average`` keeps working without importing it with every node.
_MOVED_TO_COMPARISON = frozenset({
    "average", "select", "combine", "selection_settings", "combination_settings", "ModelComparison", "compare",
    "combine_online", "OnlineCombination", "dirichlet_model_reduction",
})


def __getattr__(name: str):
    if name in _MOVED_TO_COMPARISON:
        import fgraph.comparison

        return getattr(fgraph.comparison, name)
    raise AttributeError(f"module 'nodes' has no attribute {name!r}")
