"""benchmarks/unrolled.py: the compiled chain equals the peer's Kalman smoother, evidence included."""
import pytest

import fgraph as fg
from benchmarks import unrolled


def test_the_compiled_chain_gives_the_kalman_smoother():
    y = unrolled.simulate(30)
    result = fg.run(fg.compile(unrolled.build(y)))
    peer = unrolled.kalman_smoother(y)
    for t in range(30):
        q = result.marginal(f"x{t + 1}")
        assert float(q.mean) == pytest.approx(peer["mean"][t], abs=1e-12)
        assert float(q.var) == pytest.approx(peer["var"][t], abs=1e-12)
    assert result.log_evidence == pytest.approx(peer["log_evidence"], rel=1e-12)
