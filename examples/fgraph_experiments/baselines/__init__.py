"""Baselines: gradient and sampling fits of the conditional mixture network (CMN), in JAX; and a numpy port of the
TVB paper's own code for its §6.1 study (:mod:`fgraph_experiments.baselines.tvb_authors_gmm`).

The CAVI-CMN paper (Heins et al., §4) compares coordinate-ascent VI with three other fits of the
same network; this package provides them, written for this project:

* :func:`fgraph_experiments.baselines.mle.fit_mle` — maximum likelihood, full-batch AdaBelief;
* :func:`fgraph_experiments.baselines.bbvi.fit_bbvi` — black-box VI (NumPyro SVI, ``Trace_ELBO``);
* :func:`fgraph_experiments.baselines.nuts.fit_nuts` — the NUTS sampler (NumPyro), the gold standard.

The model, its priors (eq. 4) and its parameterisation are those of the numpy CAVI reference in
the tests (``fgraph/testing/cmn_reference.py``); :mod:`fgraph_experiments.baselines.network` writes them in
JAX and documents where a baseline departs from them (each after the authors' code).

The CMN modules need the optional ``baselines`` extra (``pip install -e "examples[baselines]"``: JAX, optax,
NumPyro, ArviZ). Neither ``import fgraph`` nor ``import fgraph_experiments.baselines`` loads JAX; it is
imported by the submodules above, and importing any of them switches JAX to 64-bit floats
(``jax.config.update("jax_enable_x64", True)``, a process-wide JAX setting), so that the baselines'
numbers can be compared with the numpy reference and with the engine.
"""
