"""``symgrad.functorch`` against the ``functorch`` package PyTorch 2.13's wheel ships
(``import functorch``): the same deprecation warnings, results and errors."""
from __future__ import annotations

import importlib
import warnings

import numpy as np
import pytest

import symgrad
from conftest import same_outcome  # noqa: E402

torch = pytest.importorskip("torch")


def _ft(lib):
    return importlib.import_module("functorch" if lib is torch else "symgrad.functorch")


def _warned(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call()
    return result, [(w.category, str(w.message)) for w in caught
                    if "functorch" in str(w.message)]


@pytest.mark.parametrize("api", ["grad", "grad_and_value", "jacrev", "jacfwd", "hessian",
                                 "vmap"])
def test_transforms_warn_and_agree(api):
    got = {}
    for lib in (torch, symgrad):
        x = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64)
        f = (lambda v: v.sin() * 2) if api in ("jacrev", "jacfwd", "vmap") else (
            lambda v: (v.sin() ** 2).sum())
        result, caught = _warned(lambda: getattr(_ft(lib), api)(f)(x))
        value = result[0] if api == "grad_and_value" else result
        got[lib.__name__] = (np.asarray(value.detach().tolist()), caught)
    np.testing.assert_allclose(got["symgrad"][0], got["torch"][0], rtol=1e-12)
    assert got["symgrad"][1] == got["torch"][1] and len(got["torch"][1]) == 1


def test_make_functional_runs_the_copy_on_given_parameters():
    for lib in (torch, symgrad):
        lib.manual_seed(0)
        model = lib.nn.Linear(3, 2)
        (fmodel, params), caught = _warned(lambda: _ft(lib).make_functional(model))
        assert len(caught) == 1 and type(fmodel).__name__ == "FunctionalModule"
        assert params[0] is not model.weight and params[0].requires_grad
        x = lib.ones(4, 3)
        doubled = tuple(p * 2 for p in params)
        assert lib.allclose(fmodel(doubled, x), x @ (2 * model.weight).T + 2 * model.bias)
        (_, frozen), _ = _warned(lambda: _ft(lib).make_functional(
            model, disable_autograd_tracking=True))
        assert not frozen[0].requires_grad


ERRORS = {
    "make_functional_with_buffers_needed": lambda L: _ft(L).make_functional(
        L.nn.BatchNorm1d(3)),
    "ensemble_of_none": lambda L: _ft(L).combine_state_for_ensemble([]),
    "ensemble_of_two_classes": lambda L: _ft(L).combine_state_for_ensemble(
        [L.nn.Linear(2, 2), L.nn.Identity()]),
    "ensemble_train_and_eval": lambda L: _ft(L).combine_state_for_ensemble(
        [L.nn.Linear(2, 2), L.nn.Linear(2, 2).eval()]),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_as_torch(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_outcome(ERRORS[name])
