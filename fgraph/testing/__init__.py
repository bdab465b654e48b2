"""Independent computations to hold models against: hand-written numpy references that share no code with the
engine. The tests use them as oracles and the benchmarks as peers; users may check their own models with them.

* :mod:`fgraph.testing.cmn_reference` — CAVI for the conditional mixture network (CAVI-CMN), in numpy.
* :mod:`fgraph.testing.gmm_reference` — variational Bayes for the Bayesian Gaussian mixture, in numpy.
"""
