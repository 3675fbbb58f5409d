"""Random draws that are PyTorch's numbers for the same seed: symgrad's generator is
PyTorch's MT19937, and ``rand``, ``randint``, ``uniform_`` (so ``nn.Linear``'s and
``nn.init``'s uniform initialisations) and ``randperm`` compute their values from its words
as PyTorch's CPU kernels do.  Compared with PyTorch 2.13, exactly."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import same_outcome


def _draws(lib, seed):
    g = lib.Generator().manual_seed(seed)
    out = [lib.rand(5, generator=g, dtype=d) for d in (lib.float16, lib.float32, lib.float64)]
    out.append(lib.empty(4).uniform_(-3.7, 1e-3, generator=g))
    out.append(lib.empty(2, 2, dtype=lib.float64).uniform_(5, 9, generator=g))
    out.append(lib.randint(-5, 2 ** 33, (3,), generator=g))
    out.append(lib.randint(2, (6,), generator=g, dtype=lib.bool))
    out.append(lib.randint(3, 7, (2, 3), generator=g, dtype=lib.int32))
    return out


@pytest.mark.parametrize("seed", [0, 123, 2 ** 63 - 1])
def test_uniform_and_integer_draws_are_pytorchs(seed):
    same_outcome(lambda lib: _draws(lib, seed), expect_error=False)


def test_seeded_module_initialisation_is_pytorchs():
    def scenario(lib):
        lib.manual_seed(7)
        model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 1))
        w = lib.empty(2, 5)
        lib.nn.init.xavier_uniform_(w)
        return [p.detach() for p in model.parameters()] + [w, lib.rand(2), lib.randperm(6)]
    same_outcome(scenario, expect_error=False)


def test_normal_draws_are_pytorchs(torch):
    """randn/normal_: PyTorch's Box-Muller in blocks of 16, and below 16 elements one by one
    with a value kept for the next draw; float64 to the last bit or so, float32 to its
    last bits (PyTorch's vectorised log, sin and cos)."""
    import symgrad

    def draws(lib):
        lib.manual_seed(0)
        out = [lib.randn(5, dtype=lib.float64), lib.randn(3, dtype=lib.float64),
               lib.randn(3), lib.empty(7).normal_(2.0, 0.5), lib.randn(37, dtype=lib.float64),
               lib.empty(40, dtype=lib.float64).normal_(-1, 3), lib.randn(4, 4), lib.randn(20)]
        out.append(lib.randn(3, generator=lib.Generator().manual_seed(5)))
        return [t.numpy().astype("float64") for t in out]

    for k, (want, got) in enumerate(zip(draws(torch), draws(symgrad))):
        if k < 6:
            assert abs(want - got).max() <= 4 * np.finfo(np.float64).eps * abs(want).max(), k
        else:
            np.testing.assert_allclose(got, want, rtol=3e-6, atol=3e-6)
