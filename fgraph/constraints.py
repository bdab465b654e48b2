"""Local constraints: how each node's posterior factorises, and form constraints on variables.

* ``factorization``: per node name (or node type), one of

  - ``"bp"``: sum-product, one cluster of all latent interfaces (exact on trees);
  - ``"mf"``: mean-field, every interface its own cluster (VMP);
  - a list of clusters, e.g. ``[("out", "mean"), ("precision",)]`` (structured VMP).

  Nodes not named get the algorithm's default (``"bp"`` for ``algorithm="bp"``,
  ``"mf"`` for ``algorithm="vmp"``).
* ``operator``: per node name, the alternative operator (rule set) to use,
  e.g. a logistic factor by ``"polya_gamma"`` or a Gaussian approximation.
* ``form``: per variable name, ``"point_mass"`` constrains ``q(x)`` to a point
  mass at the mode of its belief (e.g. Bayesian model selection).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from fgraph.errors import ModelError, ModelTypeError

FORMS = ("point_mass",)
_EXAMPLES = {"factorization": "mf", "form": "point_mass", "operator": "moment_matching"}


@dataclass
class Constraints:
    factorization: dict = field(default_factory=dict)
    form: dict = field(default_factory=dict)
    operator: dict = field(default_factory=dict)

    def operator_for(self, node):
        """The operator (alternative rule set) chosen for ``node``, or ``None`` for the default."""
        return self.operator.get(node.name, getattr(node, "operator", None))

    @classmethod
    def coerce(cls, value) -> "Constraints":
        if value is None:
            return cls()
        if isinstance(value, Constraints):
            return value
        if isinstance(value, dict):
            unknown = set(value) - {"factorization", "form", "operator"}
            if unknown:
                raise ModelError(
                    f"constraints: unknown key(s) {sorted(unknown)}; use 'factorization', 'form' and 'operator'"
                )
            parts = {}
            for key in ("factorization", "form", "operator"):
                part = value.get(key, {})
                if not isinstance(part, dict):
                    raise ModelTypeError(
                        f"constraints[{key!r}] must be a dict keyed by {'variable' if key == 'form' else 'node'} "
                        f"name, got {part!r}; e.g. {{{key!r}: {{'y': {_EXAMPLES[key]!r}}}}}"
                    )
                parts[key] = dict(part)
            return cls(parts["factorization"], parts["form"], parts["operator"])
        raise ModelTypeError(f"constraints must be a Constraints object or a dict, got {type(value).__name__}")

    def spec_for(self, node, default: str):
        """The factorization spec of ``node``: ``"bp"``, ``"mf"`` or a list of clusters."""
        spec = self.factorization.get(node.name)
        if spec is None:
            for key, value in self.factorization.items():
                if isinstance(key, type) and isinstance(node, key):
                    spec = value
                    break
        if spec is None and default == "bp" and getattr(node, "variational_only", False):
            return "mf"  # see FactorNode.variational_only
        return default if spec is None else spec

    def clusters_for(self, node, latent_interfaces: list, default: str) -> list:
        """The clusters (tuples of latent interfaces) of ``node``'s local posterior."""
        spec = self.spec_for(node, default)
        if spec == "bp":
            return [tuple(latent_interfaces)] if latent_interfaces else []
        if spec == "mf":
            if hasattr(node, "mean_field_clusters"):  # a node that defines what "variational" means for it
                spec = node.mean_field_clusters()
            else:
                return [(i,) for i in latent_interfaces]
        elif isinstance(spec, str):
            raise ModelError(f"node {node.name!r}: factorization must be 'bp', 'mf' or a list of clusters, got {spec!r}")
        if not isinstance(spec, (list, tuple)) or any(isinstance(c, str) or not isinstance(c, (list, tuple)) for c in spec):
            raise ModelTypeError(
                f"node {node.name!r}: a factorization is a list of clusters, each a tuple of interface names, "
                f"e.g. [('out', 'mean'), ('precision',)]; got {spec!r}"
            )
        clusters = [tuple(c) for c in spec]
        named = [i for c in clusters for i in c]
        unknown = set(named) - set(node.interfaces)
        if unknown:
            raise ModelError(f"node {node.name!r}: factorization names unknown interface(s) {sorted(unknown)}")
        if len(named) != len(set(named)):
            raise ModelError(f"node {node.name!r}: an interface appears in two clusters of the factorization")
        # clamped interfaces are never inferred; drop them, add forgotten latent ones as singletons
        clusters = [tuple(i for i in c if i in latent_interfaces) for c in clusters]
        clusters = [c for c in clusters if c]
        for interface in latent_interfaces:
            if interface not in named:
                clusters.append((interface,))
        return clusters

    def form_of(self, variable_name: str):
        form = self.form.get(variable_name)
        if form is not None and form not in FORMS:
            raise ModelError(f"variable {variable_name!r}: unknown form constraint {form!r}; use one of {FORMS}")
        return form
