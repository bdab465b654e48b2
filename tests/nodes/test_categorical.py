"""Categorical node: label/one-hot data conversion, average energy, validation."""
import numpy as np
import pytest
from scipy import integrate, stats

import fgraph as fg
from fgraph.families import Categorical as CategoricalDistribution, Dirichlet as DirichletDistribution, PointMass
from fgraph.nodes import Categorical, Dirichlet
from fgraph.nodes.categorical import CategoricalNode
from tests.rules.tables import energy

P = np.array([0.2, 0.5, 0.3])


def test_integer_labels_become_one_hot():
    with fg.Model() as model:
        z = Categorical("z", P, observed=np.array([2, 0, 1, 1]))
    assert z.batch_shape == (4,) and z.event_shape == (3,)
    np.testing.assert_array_equal(model.data["z"], [[0, 0, 1], [1, 0, 0], [0, 1, 0], [0, 1, 0]])


def test_scalar_label_and_one_hot_data():
    with fg.Model() as model:
        Categorical("a", P, observed=1)
        Categorical("b", P, observed=[[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])
    np.testing.assert_array_equal(model.data["a"], [0, 1, 0])
    np.testing.assert_array_equal(model.data["b"], [[0, 0, 1], [1, 0, 0]])


def test_number_of_categories_from_a_dirichlet_variable():
    with fg.Model() as model:
        theta = Dirichlet("theta", np.ones(4))
        z = Categorical("z", theta, observed=[3, 0])
    assert z.event_shape == (4,)
    np.testing.assert_array_equal(model.data["z"], [[0, 0, 0, 1], [1, 0, 0, 0]])


@pytest.mark.parametrize("data, words", [
    (np.array([0, 3]), "0..2"),
    (np.array([-1]), "0..2"),
    ([0.0, 2.0], "integer"),  # float labels are not guessed at
    ([[0.5, 0.5, 0.0]], "not one-hot"),
])
def test_rejects_bad_data(data, words):
    with fg.Model():
        with pytest.raises(fg.DataError, match=words):
            Categorical("z", P, observed=data)


def test_rejects_p_off_the_simplex():
    with fg.Model():
        with pytest.raises(fg.ModelError, match="'p'.*sum to one"):
            Categorical("z", [0.5, 0.6])


def test_energy_against_integration():
    """-Σ_k E[out_k] E[log p_k]; for Dir(2, 3), p_0 ~ Beta(2, 3) and E[log p_k] comes from quadrature."""
    mean_log = [integrate.quad(lambda u: np.log(v(u)) * stats.beta.pdf(u, 2.0, 3.0), 0.0, 1.0)[0]
                for v in (lambda u: u, lambda u: 1.0 - u)]
    result = energy(CategoricalNode, {"q_out": CategoricalDistribution([0.2, 0.8]), "q_p": DirichletDistribution([2.0, 3.0])})
    np.testing.assert_allclose(result, -(0.2 * mean_log[0] + 0.8 * mean_log[1]), rtol=1e-9)


def test_energy_with_point_masses():
    # out = e_1, p = (0, 1/2, 1/2): log 2; the impossible category 0 has weight 0
    result = energy(CategoricalNode, {"q_out": PointMass([0.0, 1.0, 0.0], 1), "q_p": PointMass([0.0, 0.5, 0.5], 1)})
    np.testing.assert_allclose(result, np.log(2.0), rtol=1e-12)


@pytest.mark.parametrize("copies", [0, 2])
def test_the_summed_energy_over_a_plate_equals_the_sum_of_the_energies(copies):
    """``batch_total``: −Σ_k (Σ_n E[out_nk]) E[log p_k] for a p shared by the plate, one sum per copy; None when p
    varies over the plate or has an impossible category (the per-element form is summed then)."""
    from fgraph.nodes.categorical import _categorical_energy, _categorical_energy_total

    rng = np.random.default_rng(4)
    n = 2000  # above the size at which the plate sums become a matrix product
    copy_shape = (copies,) if copies else ()
    q_out = CategoricalDistribution(rng.dirichlet(np.ones(3), size=copy_shape + (n,)))
    q_p = DirichletDistribution(rng.uniform(0.5, 3.0, size=copy_shape + ((1,) if copies else ()) + (3,)))
    node = CategoricalNode("z", copy_shape + (n,))
    node.copy_ndim = len(copy_shape)
    per_element = np.broadcast_to(_categorical_energy(q_out, q_p, node), copy_shape + (n,))
    total, count = _categorical_energy_total(q_out, q_p, node)
    assert count == n
    np.testing.assert_allclose(total, per_element.sum(-1), rtol=1e-12)
    varying = DirichletDistribution(rng.uniform(0.5, 3.0, size=copy_shape + (n, 3)))
    assert _categorical_energy_total(q_out, varying, node) is None
    assert _categorical_energy_total(q_out, PointMass(np.array([0.0, 0.5, 0.5]), 1), node) is None
