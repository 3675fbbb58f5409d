"""Random draws that are PyTorch's numbers for the same seed: symgrad's generator is
PyTorch's MT19937, and ``rand``, ``randint``, ``uniform_`` (so ``nn.Linear``'s and
``nn.init``'s uniform initialisations) and ``randperm`` compute their values from its words
as PyTorch's CPU kernels do.  Compared with PyTorch 2.13, exactly."""
from __future__ import annotations

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
