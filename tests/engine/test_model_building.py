"""The model builder's checks on the short paths it takes for plain numbers and plain shapes."""
import numpy as np
import pytest

import fgraph as fg
from nodes import Normal
from nodes.normal import NormalMeanVariance


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
