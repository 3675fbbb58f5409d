"""``symgrad.func`` against ``torch.func`` (PyTorch 2.13) in the same run.

Each scenario is written once against a library ``lib`` and run in both: values, dtypes,
``requires_grad`` and pytree structure of the results must agree (``check_same``); for
bad calls, the type and message of the error (``same_outcome``).
"""
from __future__ import annotations

from functools import partial

import numpy as np
import pytest

import symgrad
from conftest import check_same, oracle, outcome, same_outcome

pytest.importorskip("torch")

RNG = np.random.default_rng(7)
X = RNG.standard_normal(4)
Y = RNG.standard_normal(4)
W = RNG.standard_normal((3, 4))
B = RNG.standard_normal(3)
XB = RNG.standard_normal((5, 4))


def t(lib, a, **kw):
    return lib.tensor(a, dtype=lib.float64, **kw)


def predict(lib, w, b, x):
    return lib.nn.functional.linear(x, w, b).tanh()


# --------------------------------------------------------------------------- values
SCENARIOS = {
    "grad": lambda lib: lib.func.grad(lambda x: (x.sin() * x).sum())(t(lib, X)),
    "grad_argnums_tuple": lambda lib: lib.func.grad(
        lambda x, y: (x * y.exp()).sum(), argnums=(0, 1))(t(lib, X), t(lib, Y)),
    "grad_argnums_negative": lambda lib: lib.func.grad(
        lambda x, y: (x * y ** 2).sum(), argnums=-1)(t(lib, X), t(lib, Y)),
    "grad_dict": lambda lib: lib.func.grad(
        lambda p, x: (p["w"] @ x + p["b"]).pow(2).sum())(
            {"w": t(lib, W), "b": t(lib, B)}, t(lib, X)),
    "grad_has_aux": lambda lib: lib.func.grad(
        lambda x: ((x ** 2).sum(), {"double": x * 2, "n": (x.sum(),)}), has_aux=True)(
            t(lib, X)),
    "grad_of_grad": lambda lib: lib.func.grad(lib.func.grad(lambda x: x.sin() * x ** 3))(
        t(lib, 0.7)),
    "grad_requires_grad_input": lambda lib: lib.func.grad(lambda x: (x ** 3).sum())(
        t(lib, X, requires_grad=True)),
    "grad_unused_input": lambda lib: lib.func.grad(lambda x, y: (x * 2).sum(),
                                                   argnums=1)(t(lib, X), t(lib, Y)),
    "grad_and_value": lambda lib: lib.func.grad_and_value(
        lambda x: x.exp().sum())(t(lib, X)),
    "grad_and_value_aux": lambda lib: lib.func.grad_and_value(
        lambda x: (x.exp().sum(), x.cos()), has_aux=True)(t(lib, X)),
    "vjp": lambda lib: (lambda o, f: (o, f(t(lib, Y))))(
        *lib.func.vjp(lambda x: x.sin() * x, t(lib, X))),
    "vjp_two_primals_tuple_out": lambda lib: (lambda o, f: (o, f((t(lib, B), t(lib, Y)))))(
        *lib.func.vjp(lambda w, x: (w @ x, x.exp()), t(lib, W), t(lib, X))),
    "vjp_aux": lambda lib: (lambda o, f, a: (o, f(t(lib, Y)), a))(
        *lib.func.vjp(lambda x: (x.cos(), x.sum()), t(lib, X), has_aux=True)),
    "jvp": lambda lib: lib.func.jvp(lambda x: x.sin() * x.exp(), (t(lib, X),), (t(lib, Y),)),
    "jvp_two": lambda lib: lib.func.jvp(lambda w, x: (w @ x).tanh(), (t(lib, W), t(lib, X)),
                                        (t(lib, W) * 0.5, t(lib, Y))),
    "jvp_aux": lambda lib: lib.func.jvp(lambda x: (x ** 2, x.sum()), (t(lib, X),),
                                        (t(lib, Y),), has_aux=True),
    "linearize": lambda lib: (lambda o, f: (o, f(t(lib, Y)), f(t(lib, X))))(
        *lib.func.linearize(lambda x: x.sin().exp(), t(lib, X))),
    "jacrev": lambda lib: lib.func.jacrev(partial(predict, lib), argnums=2)(
        t(lib, W), t(lib, B), t(lib, X)),
    "jacrev_argnums_tuple": lambda lib: lib.func.jacrev(partial(predict, lib), argnums=(0, 1))(
        t(lib, W), t(lib, B), t(lib, X)),
    "jacrev_pytree_out": lambda lib: lib.func.jacrev(
        lambda x: {"a": x.sin(), "b": (x.sum(), x.view(2, 2))})(t(lib, X)),
    "jacrev_chunked": lambda lib: lib.func.jacrev(lambda x: x.outer(x).softmax(1),
                                                  chunk_size=3)(t(lib, X)),
    "jacrev_has_aux": lambda lib: lib.func.jacrev(lambda x: (x.exp(), x.cos()), has_aux=True)(
        t(lib, X)),
    "jacrev_of_jacrev": lambda lib: lib.func.jacrev(lib.func.jacrev(
        lambda x: (x.sin() * x.sum()).softmax(0)))(t(lib, X)),
    "jacrev_matrix_in": lambda lib: lib.func.jacrev(lambda w: (w @ t(lib, X)).relu())(
        t(lib, W)),
    "jacfwd": lambda lib: lib.func.jacfwd(partial(predict, lib), argnums=2)(
        t(lib, W), t(lib, B), t(lib, X)),
    "jacfwd_argnums_tuple": lambda lib: lib.func.jacfwd(partial(predict, lib), argnums=(1, 2))(
        t(lib, W), t(lib, B), t(lib, X)),
    "jacfwd_has_aux": lambda lib: lib.func.jacfwd(lambda x: (x.exp() * x, x.cos()),
                                                  has_aux=True)(t(lib, X)),
    "jacfwd_of_jacfwd": lambda lib: lib.func.jacfwd(lib.func.jacfwd(
        lambda x: x.sin() * x.sum()))(t(lib, X[:3])),
    "hessian": lambda lib: lib.func.hessian(lambda x: (x.sin() * x).sum() * x.prod())(
        t(lib, X)),
    "hessian_argnums": lambda lib: lib.func.hessian(
        lambda w, x: (w @ x).tanh().sum(), argnums=1)(t(lib, W), t(lib, X)),
    "hessian_of_vector_function": lambda lib: lib.func.hessian(partial(predict, lib),
                                                               argnums=2)(
        t(lib, W), t(lib, B), t(lib, X)),
    "hvp_fwd_over_rev": lambda lib: lib.func.jvp(lib.func.grad(lambda x: x.sin().sum()),
                                                 (t(lib, X),), (t(lib, Y),)),
    "hvp_rev_over_rev": lambda lib: lib.func.vjp(lib.func.grad(lambda x: (x.sin() * x).sum()),
                                                 t(lib, X))[1](t(lib, Y)),
    "functional_call": lambda lib: _functional(lib),
    "stack_module_state": lambda lib: _stacked(lib),
    "functional_call_tied": lambda lib: _tied(lib, True),
    "functional_call_untied": lambda lib: _tied(lib, False),
    "ensemble_vmap": lambda lib: _ensemble(lib),
    "per_sample_grads": lambda lib: _per_sample(lib),
}


def _linear(lib, seed: int):
    m = lib.nn.Linear(4, 3)
    rng = np.random.default_rng(seed)
    with lib.no_grad():
        m.weight.copy_(lib.tensor(rng.standard_normal((3, 4)), dtype=lib.float32))
        m.bias.copy_(lib.tensor(rng.standard_normal(3), dtype=lib.float32))
    return m


def _functional(lib):
    m = _linear(lib, 1)
    x = lib.tensor(X, dtype=lib.float32)
    p = {"weight": lib.ones(3, 4), "bias": lib.zeros(3)}
    out = lib.func.functional_call(m, p, (x,))
    out2 = lib.func.functional_call(m, ({"weight": lib.ones(3, 4)}, {"bias": lib.ones(3)}), x)
    return out, out2, m(x), m.weight.requires_grad


def _tied(lib, tie_weights: bool):
    """Two names for one parameter: a value given for one reaches both when tied."""
    class Tied(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = lib.nn.Linear(2, 2, bias=False)
            self.b = lib.nn.Linear(2, 2, bias=False)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.a(x) + self.b(x)
    m = Tied()
    with lib.no_grad():
        m.a.weight.copy_(lib.tensor([[1., 2.], [3., 4.]]))
    x = lib.tensor([1., -1.])
    return (lib.func.functional_call(m, {"a.weight": lib.eye(2)}, (x,), tie_weights=tie_weights),
            lib.func.functional_call(m, {"b.weight": lib.eye(2)}, (x,), tie_weights=tie_weights))


def _stacked(lib):
    models = [_linear(lib, s) for s in range(3)]
    params, buffers = lib.func.stack_module_state(models)
    return params, buffers, [(k, v.is_leaf) for k, v in params.items()]


def _ensemble(lib):
    models = [_linear(lib, s) for s in range(3)]
    params, buffers = lib.func.stack_module_state(models)
    base = models[0]
    data = lib.tensor(RNG.standard_normal((3, 2, 4)) if False else XB[:3, None, :].repeat(
        2, 1), dtype=lib.float32)

    def fmodel(p, b, x):
        return lib.func.functional_call(base, (p, b), (x,))
    return (lib.func.vmap(fmodel)(params, buffers, data).detach(),
            lib.func.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, data[0]).detach())


def _per_sample(lib):
    m = _linear(lib, 3)
    params = {k: v.detach() for k, v in m.named_parameters()}
    x = lib.tensor(XB, dtype=lib.float32)
    y = lib.tensor([0, 2, 1, 1, 0])

    def loss(p, sample, target):
        out = lib.func.functional_call(m, p, (sample.unsqueeze(0),))
        return lib.nn.functional.cross_entropy(out, target.unsqueeze(0))
    return lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(params, x, y)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_same_values(name):
    check_same(SCENARIOS[name], rtol=1e-5, atol=1e-6)


def test_grad_through_regular_autograd():
    """A result of a transform of an input that requires grad is part of its graph."""
    for lib in (symgrad, pytest.importorskip("torch")):
        x = t(lib, X, requires_grad=True)
        g = lib.func.grad(lambda v: (v ** 3).sum())(x)
        g.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), 6 * X)


def test_functional_call_restores_module():
    """The module has its own parameters again after the call, even one that raised."""
    class Failing(symgrad.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = _linear(symgrad, 1)

        def forward(self, x):
            if x.sum() > 100:
                raise ZeroDivisionError("on purpose")
            return self.lin(x)

    m = Failing()
    before = dict(m.named_parameters())
    with pytest.raises(ZeroDivisionError):
        symgrad.func.functional_call(m, {"lin.weight": symgrad.zeros(3, 4)},
                                     (symgrad.full((4,), 50.0),))
    out = symgrad.func.functional_call(m, {"lin.weight": symgrad.zeros(3, 4)},
                                       (symgrad.ones(4),))
    np.testing.assert_allclose(out.detach().numpy(), m.lin.bias.detach().numpy())
    assert dict(m.named_parameters()) == before
    assert all(a is b for a, b in zip(dict(m.named_parameters()).values(), before.values()))


# --------------------------------------------------------------------------- errors
ERRORS = {
    "grad_vector_output": lambda lib: lib.func.grad(lambda x: x)(t(lib, X)),
    "grad_non_tensor_output": lambda lib: lib.func.grad(lambda x: 1.0)(t(lib, X)),
    "grad_argnum_out_of_range": lambda lib: lib.func.grad(lambda x: x.sum(), argnums=2)(
        t(lib, X)),
    "grad_argnums_empty": lambda lib: lib.func.grad(lambda x: x.sum(), argnums=())(t(lib, X)),
    "grad_argnums_float": lambda lib: lib.func.grad(lambda x: x.sum(), argnums=1.0)(t(lib, X)),
    "grad_argnums_repeated": lambda lib: lib.func.grad(lambda x, y: x.sum(), argnums=(0, 0))(
        t(lib, X), t(lib, X)),
    "grad_no_args": lambda lib: lib.func.grad(lambda: lib.ones(()))(),
    "grad_number_input": lambda lib: lib.func.grad(lambda x: x)(1.0),
    "grad_integer_input": lambda lib: lib.func.grad(lambda x: x.sum())(lib.ones(3,
                                                                        dtype=lib.int64)),
    "grad_has_aux_not_pair": lambda lib: lib.func.grad(lambda x: x.sum(), has_aux=True)(
        t(lib, X)),
    "grad_aux_not_tensor": lambda lib: lib.func.grad(lambda x: (x.sum(), "a"),
                                                     has_aux=True)(t(lib, X)),
    "vjp_non_tensor_output": lambda lib: lib.func.vjp(lambda x: 1.0, t(lib, X)),
    "vjp_number_primal": lambda lib: lib.func.vjp(lambda x: x, 1.0),
    "vjp_cotangent_shape": lambda lib: lib.func.vjp(lambda x: x, t(lib, X))[1](t(lib, Y[:2])),
    "vjp_cotangent_structure": lambda lib: lib.func.vjp(lambda x: (x, x), t(lib, X))[1](
        t(lib, Y)),
    "vjp_has_aux_not_pair": lambda lib: lib.func.vjp(lambda x: x, t(lib, X), has_aux=True),
    "jvp_primals_not_tuple": lambda lib: lib.func.jvp(lambda x: x, t(lib, X), (t(lib, X),)),
    "jvp_structures_differ": lambda lib: lib.func.jvp(lambda x: x, (t(lib, X),),
                                                      (t(lib, X), t(lib, X))),
    "jvp_tangent_shape": lambda lib: lib.func.jvp(lambda x: x, (t(lib, X),), (t(lib, Y[:2]),)),
    "jvp_no_primals": lambda lib: lib.func.jvp(lambda: 1, (), ()),
    "jvp_number_primal": lambda lib: lib.func.jvp(lambda x: x, (1.0,), (1.0,)),
    "jvp_non_tensor_output": lambda lib: lib.func.jvp(lambda x: 1.0, (t(lib, X),),
                                                      (t(lib, X),)),
    "jacrev_non_tensor_output": lambda lib: lib.func.jacrev(lambda x: 1.0)(t(lib, X)),
    "jacrev_argnum_out_of_range": lambda lib: lib.func.jacrev(lambda x: x, argnums=1)(
        t(lib, X)),
    "jacfwd_argnum_out_of_range": lambda lib: lib.func.jacfwd(lambda x: x, argnums=1)(
        t(lib, X)),
    "jacrev_chunk_size_0": lambda lib: lib.func.jacrev(lambda x: x, chunk_size=0)(t(lib, X)),
    "hessian_argnum_out_of_range": lambda lib: lib.func.hessian(lambda x: x.sum(),
                                                                argnums=3)(t(lib, X)),
    "linearize_tangent_shape": lambda lib: lib.func.linearize(lambda x: x, t(lib, X))[1](
        t(lib, Y[:2])),
    "vmap_no_inputs": lambda lib: lib.func.vmap(lambda x: x)(),
    "vmap_number_input": lambda lib: lib.func.vmap(lambda x: x)(1.0),
    "vmap_in_dims_list": lambda lib: lib.func.vmap(lambda x: x, in_dims=[0])(t(lib, X)),
    "vmap_in_dims_none": lambda lib: lib.func.vmap(lambda x: x, in_dims=None)(t(lib, X)),
    "vmap_in_dims_structure": lambda lib: lib.func.vmap(lambda x, y: x, in_dims=(0,))(
        t(lib, X), t(lib, X)),
    "vmap_in_dim_out_of_range": lambda lib: lib.func.vmap(lambda x: x, in_dims=1)(t(lib, X)),
    "vmap_in_dim_float": lambda lib: lib.func.vmap(lambda x: x, in_dims=(0.5,))(t(lib, X)),
    "vmap_in_dim_for_number": lambda lib: lib.func.vmap(lambda x, y: x, in_dims=(0, 0))(
        t(lib, X), 1.0),
    "vmap_sizes_differ": lambda lib: lib.func.vmap(lambda x, y: x + y)(t(lib, X),
                                                                      t(lib, Y[:2])),
    "vmap_nothing_mapped": lambda lib: lib.func.vmap(lambda x: x, in_dims=(None,))(t(lib, X)),
    "vmap_non_tensor_output": lambda lib: lib.func.vmap(lambda x: 1.0)(t(lib, X)),
    "vmap_out_dims_float": lambda lib: lib.func.vmap(lambda x: x, out_dims=0.5)(t(lib, X)),
    "vmap_out_dims_structure": lambda lib: lib.func.vmap(lambda x: (x, x), out_dims=(0,))(
        t(lib, X)),
    "vmap_out_dims_none_batched": lambda lib: lib.func.vmap(lambda x: x, out_dims=None)(
        t(lib, X)),
    "vmap_out_dim_out_of_range": lambda lib: lib.func.vmap(lambda x: x, out_dims=2)(
        t(lib, X)),
    "vmap_randomness_value": lambda lib: lib.func.vmap(lambda x: x, randomness="bad")(
        t(lib, X)),
    "vmap_chunk_size_0": lambda lib: lib.func.vmap(lambda x: x, chunk_size=0)(t(lib, X)),
    "vmap_random_op": lambda lib: lib.func.vmap(lambda x: x + lib.rand(4))(t(lib, XB)),
    "vmap_dropout": lambda lib: lib.func.vmap(lambda x: lib.nn.functional.dropout(x, 0.5))(
        t(lib, XB)),
    "vmap_random_in_place": lambda lib: lib.func.vmap(lambda x: x.clone().normal_())(
        t(lib, XB)),
    "functional_call_strict_missing": lambda lib: lib.func.functional_call(
        lib.nn.Linear(2, 2), {"weight": lib.ones(2, 2)}, (lib.ones(2),), strict=True),
    "functional_call_strict_unexpected": lambda lib: lib.func.functional_call(
        lib.nn.Linear(2, 2), {"weight": lib.ones(2, 2), "bias": lib.ones(2), "foo": lib.ones(1)},
        (lib.ones(2),), strict=True),
    "functional_call_repeated_keys": lambda lib: lib.func.functional_call(
        lib.nn.Linear(2, 2), ({"weight": lib.ones(2, 2)}, {"weight": lib.ones(2, 2)}),
        (lib.ones(2),)),
    "functional_call_not_dicts": lambda lib: lib.func.functional_call(lib.nn.Linear(2, 2), 3,
                                                                      (lib.ones(2),)),
    "functional_call_tied_twice": lambda lib: _tied_twice(lib),
    "stack_module_state_none": lambda lib: lib.func.stack_module_state([]),
    "stack_module_state_shapes": lambda lib: lib.func.stack_module_state(
        [lib.nn.Linear(2, 2), lib.nn.Linear(2, 3)]),
    "stack_module_state_modes": lambda lib: lib.func.stack_module_state(
        [lib.nn.Linear(2, 2), lib.nn.Linear(2, 2).eval()]),
}


def _tied_twice(lib):
    m = lib.nn.Module()
    m.a = lib.nn.Linear(2, 2)
    m.b = lib.nn.Linear(2, 2)
    m.b.weight = m.a.weight
    m.forward = lambda x: m.a(x) + m.b(x)
    return lib.func.functional_call(m, {"a.weight": lib.eye(2), "b.weight": lib.ones(2, 2)},
                                    (lib.ones(2),))


# PyTorch's linearize traces with torch.fx, which warns about its own constant folding.
FX_WARNS = {"linearize_tangent_shape"}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_same_error(name):
    if name in FX_WARNS:
        want, got = outcome(ERRORS[name], oracle()), outcome(ERRORS[name], symgrad)
        assert want[0][0] == "error" and got[0] == want[0]
        return
    same_outcome(ERRORS[name])


def test_top_level_names():
    import symgrad as torch
    assert torch.vmap is torch.func.vmap
    assert set(torch.func.__all__) >= {"grad", "grad_and_value", "vjp", "jvp", "linearize",
                                       "jacrev", "jacfwd", "hessian", "vmap",
                                       "functional_call", "stack_module_state"}
