"""The model builder's checks on the short paths it takes for plain numbers and plain shapes."""
import numpy as np
import pytest

import fgraph as fg
from fgraph.nodes import Normal
from fgraph.nodes.normal import NormalMeanVariance


def test_a_node_with_an_unknown_or_a_missing_interface_is_refused():
    with fg.Model() as model:
        x = Normal("x", mean=0.0, var=1.0)
        with pytest.raises(fg.ModelError, match=r"node 'a': NormalMeanVariance has no interface \['precision'\]"):
            model.add_node(NormalMeanVariance, "a", {"out": x, "mean": 0.0, "var": 1.0, "precision": 1.0})
        with pytest.raises(fg.ModelError, match=r"node 'b': interface\(s\) \['var'\] of NormalMeanVariance are not "
                                                r"connected"):
            model.add_node(NormalMeanVariance, "b", {"out": x, "mean": 0.0})
        with pytest.raises(fg.ModelError, match=r"node 'c': NormalMeanVariance has no interface \['scale'\]"):
            model.add_node(NormalMeanVariance, "c", {"out": x, "mean": 0.0, "scale": 1.0})  # as many, one wrong


@pytest.mark.parametrize("value, message", [
    (float("nan"), "contains NaN or infinite values"),
    (float("inf"), "contains NaN or infinite values"),
    (0.0, "strictly positive"),
    (-1, "strictly positive"),
    (np.float64(-2.0), "strictly positive"),
])
def test_plain_numbers_are_checked_like_arrays(value, message):
    with fg.Model():
        with pytest.raises(fg.ModelError, match=message):
            Normal("x", mean=0.0, var=value)


@pytest.mark.parametrize("power", [0.0, 1.5, -0.5, float("nan")])
def test_a_plain_float_power_outside_the_unit_interval_is_refused(power):
    with fg.Model():
        with pytest.raises(fg.ModelError, match="power must lie in"):
            Normal("x", mean=0.0, var=1.0, power=power)


def test_threads_build_and_fit_models_independently():
    """Each thread has its own stack of models under construction: thread a adds its observation and leaves its
    ``with fg.Model()`` block while thread b is inside its own, opened after a's; each model gets its own
    variables, and both fits equal the closed form."""
    import threading

    a_inside, b_inside, a_left = threading.Event(), threading.Event(), threading.Event()
    found = {}

    def thread_a():
        with fg.Model() as model:
            mean = Normal("mean", mean=0.0, var=10.0)
            a_inside.set()
            b_inside.wait()
            Normal("x", mean=mean, var=1.0, observed=1.0)
        a_left.set()
        found["a"] = model

    def thread_b():
        a_inside.wait()
        with fg.Model() as model:
            mean = Normal("mean", mean=0.0, var=10.0)
            b_inside.set()
            a_left.wait()
            Normal("x", mean=mean, var=1.0, observed=3.0)
        found["b"] = model

    threads = [threading.Thread(target=thread_a), threading.Thread(target=thread_b)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for name, value in (("a", 1.0), ("b", 3.0)):
        assert set(found[name].variables) == {"mean", "x"}
        posterior = fg.infer(found[name], algorithm="bp").marginal("mean")
        assert posterior.mean == pytest.approx(value * 10.0 / 11.0, rel=1e-12)  # N(0, 10) prior, unit noise


def test_the_repr_of_a_model_says_what_it_holds():
    import fgraph as fg
    from fgraph.nodes import Gamma, Normal

    with fg.Model("hierarchy") as model:
        mu = Normal("mu", mean=0.0, var=10.0)
        tau = Gamma("tau", shape=1.0, rate=1.0)
        Normal("y", mean=mu, precision=tau, observed=np.ones(50))
    assert repr(model) == ("Model('hierarchy': 3 factors (NormalMeanVariance, GammaNode, NormalMeanPrecision); "
                           "latent: mu, tau; observed: y[50])")
    with fg.Model(copies=3) as copied:
        for k in range(10):
            Normal(f"x{k}", mean=0.0, var=1.0, batch_shape=(2,))
    assert repr(copied) == ("Model('model': 10 factors (NormalMeanVariance ×10); latent: x0[2], x1[2], x2[2], "
                            "x3[2], x4[2], x5[2], x6[2], x7[2], … (2 more); observed: none; copies [3])")
