"""The paper reproductions of fgraph: the studies behind its documentation, apart from the library.

Each module without a leading underscore is an example of ``fgraph run`` (it registers through the entry-point
group ``fgraph.examples`` in this distribution's pyproject.toml): the CAVI-CMN experiments (``cmn-uci``,
``cmn-pinwheels``), the Trustworthy-VB coverage studies (``gmm-tvb``, ``bmlr-tvb``), the Gaussian likelihood
approximations and online learning (``likelihood-approx``, ``online-logistic``) and voice activity detection
against WebRTC (``vad``). Their baselines — maximum likelihood, black-box VI and NUTS in JAX/NumPyro
(:mod:`fgraph_experiments.baselines`), the online learners (:mod:`fgraph_experiments.online_baselines`) and the
WebRTC and energy VADs (:mod:`fgraph_experiments.vad_baselines`) — live here too: the library does not ship
them. Install from a checkout with ``pip install -e examples`` (``-e "examples[baselines]"`` for the JAX
baselines); results of the full runs are in the repository's ``results/``.
"""
