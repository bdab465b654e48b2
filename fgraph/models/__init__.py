"""Models assembled from nodes, with scikit-learn estimators on top.

A model here is a graph of :mod:`nodes` built, compiled and run by the
engine; the estimators wrap it in scikit-learn's interface (``fit``,
``predict_proba``, ``score``, pipelines, cross-validation). This package sits
above the nodes and rules, beside :mod:`fgraph.comparison`: ``import fgraph``
does not load it (nor scikit-learn), the estimators are imported from their
modules::

    from fgraph.models.logistic_regression import BayesianLogisticRegression

scikit-learn is an optional dependency (the ``models`` extra:
``pip install fgraph-mp[models]``).
"""
