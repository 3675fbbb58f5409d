"""``symgrad.autograd.functional`` and ``gradcheck`` against PyTorch 2.13 (the oracle).

Each case is written once against a library (``lib`` is ``torch`` or ``symgrad``) and run
in both; results are compared value by value and in structure (nesting of tuples,
``requires_grad``), errors by type and message.
"""


import numpy as np
import pytest

import symgrad
from conftest import check_same, functions, outcome, same_outcome, saving_function

torch = pytest.importorskip("torch")


# --------------------------------------------------------------------------- helpers
def check_close(case, rtol=1e-10, atol=1e-12):
    """:func:`conftest.check_same` to float64 precision (the cases compute in float64)."""
    check_same(case, rtol=rtol, atol=atol)


def _x(lib):
    return lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64)


def _y(lib):
    return lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64)


def _ones(lib, *shape):
    return lib.ones(*shape, dtype=lib.float64)


def f_vec(a):
    return a.sin() * a


def f_two(a, b):
    return a.exp().sum() * b, a * 2


def f_cube(a):
    return (a ** 3).sum()


def f_mixed(a, b):
    return (a ** 2).sum() * b.sum() + (a.sin() * 3).sum() + (b * b.exp()).sum()


# =========================================================================== functional
JACOBIAN_CASES = {
    "vector": lambda lib: lib.autograd.functional.jacobian(f_vec, _x(lib)),
    "tuple_in_tuple_out": lambda lib: lib.autograd.functional.jacobian(
        f_two, (_x(lib), _y(lib))),
    "tuple_of_one": lambda lib: lib.autograd.functional.jacobian(f_vec, (_x(lib),)),
    "scalar_output": lambda lib: lib.autograd.functional.jacobian(f_cube, _x(lib)),
    "matrix_input": lambda lib: lib.autograd.functional.jacobian(
        lambda m: m @ m, _y(lib)),
    "create_graph": lambda lib: lib.autograd.functional.jacobian(
        f_vec, _x(lib), create_graph=True),
    "vectorize": lambda lib: lib.autograd.functional.jacobian(f_vec, _x(lib), vectorize=True),
    "independent_output": lambda lib: lib.autograd.functional.jacobian(
        lambda a: _x(lib) * 2, _x(lib)),
    "unused_input": lambda lib: lib.autograd.functional.jacobian(
        lambda a, b: a * 2, (_x(lib), _y(lib))),
    "float32": lambda lib: lib.autograd.functional.jacobian(
        lambda a: a.exp(), lib.tensor([0.5, 1.0])),
}


@pytest.mark.parametrize("case", sorted(JACOBIAN_CASES))
def test_jacobian_matches_torch(case):
    check_close(JACOBIAN_CASES[case], rtol=1e-6 if case == "float32" else 1e-10)


def test_jacobian_forward_mode_values_match_torch():
    # Forward mode gives the same values; the signs of zeros may differ (PyTorch's forward
    # AD and symgrad's reverse rows round zeros differently).
    def case(lib):
        return lib.autograd.functional.jacobian(f_vec, _x(lib), strategy="forward-mode",
                                                vectorize=True)
    check_close(case)


HESSIAN_CASES = {
    "vector": lambda lib: lib.autograd.functional.hessian(f_cube, _x(lib)),
    "tuple": lambda lib: lib.autograd.functional.hessian(f_mixed, (_x(lib), _y(lib))),
    "matrix": lambda lib: lib.autograd.functional.hessian(
        lambda m: (m.sin() * m).sum(), _y(lib)),
    "create_graph": lambda lib: lib.autograd.functional.hessian(
        f_mixed, (_x(lib), _y(lib)), create_graph=True),
    "linear_is_zero": lambda lib: lib.autograd.functional.hessian(
        lambda a: (a * 2).sum(), _x(lib)),
    "one_element_output": lambda lib: lib.autograd.functional.hessian(
        lambda a: (a ** 2).sum().reshape(1, 1), _x(lib)),
}


@pytest.mark.parametrize("case", sorted(HESSIAN_CASES))
def test_hessian_matches_torch(case):
    check_close(HESSIAN_CASES[case])


def _v3(lib):
    return lib.tensor([1.0, -2.0, 0.5], dtype=lib.float64)


PRODUCT_CASES = {
    "vjp": lambda lib: lib.autograd.functional.vjp(f_vec, _x(lib), _v3(lib)),
    "vjp_scalar_no_v": lambda lib: lib.autograd.functional.vjp(f_cube, _x(lib)),
    "vjp_tuples": lambda lib: lib.autograd.functional.vjp(
        f_two, (_x(lib), _y(lib)), (_ones(lib, 2, 2), _v3(lib))),
    "vjp_create_graph": lambda lib: lib.autograd.functional.vjp(
        f_vec, _x(lib), _v3(lib), create_graph=True),
    "vjp_unused_input": lambda lib: lib.autograd.functional.vjp(
        lambda a, b: a * 2, (_x(lib), _y(lib)), _v3(lib)),
    "jvp": lambda lib: lib.autograd.functional.jvp(f_vec, _x(lib), _v3(lib)),
    "jvp_tuples": lambda lib: lib.autograd.functional.jvp(
        f_two, (_x(lib), _y(lib)), (_v3(lib), _ones(lib, 2, 2))),
    "jvp_create_graph": lambda lib: lib.autograd.functional.jvp(
        f_vec, _x(lib), _v3(lib), create_graph=True),
    "jvp_single_element_no_v": lambda lib: lib.autograd.functional.jvp(
        lambda a: a.exp() * 2, lib.tensor(0.3, dtype=lib.float64)),
    "hvp": lambda lib: lib.autograd.functional.hvp(f_cube, _x(lib), _v3(lib)),
    "vhp": lambda lib: lib.autograd.functional.vhp(f_cube, _x(lib), _v3(lib)),
    "hvp_tuples": lambda lib: lib.autograd.functional.hvp(
        f_mixed, (_x(lib), _y(lib)), (_v3(lib), _ones(lib, 2, 2))),
    "vhp_tuples_create_graph": lambda lib: lib.autograd.functional.vhp(
        f_mixed, (_x(lib), _y(lib)), (_v3(lib), _ones(lib, 2, 2)), create_graph=True),
    "hvp_create_graph": lambda lib: lib.autograd.functional.hvp(
        f_cube, _x(lib), _v3(lib), create_graph=True),
    "hvp_linear": lambda lib: lib.autograd.functional.hvp(
        lambda a: (a * 3).sum(), _x(lib), _v3(lib)),
}


@pytest.mark.parametrize("case", sorted(PRODUCT_CASES))
def test_products_match_torch(case):
    check_close(PRODUCT_CASES[case])


def test_hvp_equals_hessian_times_v_and_vhp_its_transpose():
    x, v = _x(symgrad), _v3(symgrad)
    h = symgrad.autograd.functional.hessian(f_cube, x).numpy()
    _, hv = symgrad.autograd.functional.hvp(f_cube, x, v)
    _, vh = symgrad.autograd.functional.vhp(f_cube, x, v)
    np.testing.assert_allclose(hv.numpy(), h @ v.numpy())
    np.testing.assert_allclose(vh.numpy(), v.numpy() @ h)


def test_jacobian_and_hessian_agree_with_central_differences():
    x = np.array([0.3, -0.8, 1.7])

    def f(a):  # every output depends on every input
        return np.sin(a) * np.exp(a).sum()

    jac = symgrad.autograd.functional.jacobian(lambda a: a.sin() * a.exp().sum(),
                                               symgrad.tensor(x)).numpy()
    eps = 1e-6
    num = np.stack([(f(x + d) - f(x - d)) / (2 * eps) for d in np.eye(3) * eps], axis=1)
    np.testing.assert_allclose(jac, num, rtol=1e-7, atol=1e-9)

    def g(a):
        return (np.sin(a) * a ** 2).sum()

    hess = symgrad.autograd.functional.hessian(lambda a: (a.sin() * a ** 2).sum(),
                                               symgrad.tensor(x)).numpy()
    h = 1e-4
    num_h = np.array([[(g(x + di + dj) - g(x + di - dj) - g(x - di + dj) + g(x - di - dj))
                       / (4 * h * h) for dj in np.eye(3) * h] for di in np.eye(3) * h])
    np.testing.assert_allclose(hess, num_h, rtol=1e-5, atol=1e-6)


def test_create_graph_results_are_differentiable_as_in_torch():
    def case(lib):
        x = lib.tensor([0.5, -1.0], dtype=lib.float64, requires_grad=True)
        j = lib.autograd.functional.jacobian(lambda a: a ** 3, x, create_graph=True)
        j.sum().backward()
        g1 = x.grad.clone()
        x.grad = None
        _, hv = lib.autograd.functional.hvp(f_cube, x, lib.tensor([1.0, 2.0],
                                                                  dtype=lib.float64),
                                            create_graph=True)
        hv.sum().backward()
        g2 = x.grad.clone()
        x.grad = None
        h = lib.autograd.functional.hessian(lambda a: (a.sin() * a ** 2).sum(), x,
                                            create_graph=True)
        (h ** 2).sum().backward()
        return j, g1, hv, g2, h, x.grad
    check_close(case)


def test_inputs_are_copied_so_closed_over_tensors_are_constants():
    def case(lib):
        x = _x(lib)
        return lib.autograd.functional.jacobian(lambda a: a * x, x)
    check_close(case)


def test_functional_leaves_grad_mode_and_inputs_untouched():
    x = _x(symgrad)
    with symgrad.no_grad():
        j = symgrad.autograd.functional.jacobian(f_vec, x)
        _, vj = symgrad.autograd.functional.vjp(f_vec, x, _v3(symgrad))
        assert not symgrad.is_grad_enabled()
    assert symgrad.is_grad_enabled()
    assert not x.requires_grad and x.grad is None
    assert not j.requires_grad and not vj.requires_grad


FUNCTIONAL_ERRORS = {
    "jacobian_bad_input": lambda lib: lib.autograd.functional.jacobian(f_vec, 3.0),
    "jacobian_list_input": lambda lib: lib.autograd.functional.jacobian(f_vec, [_x(lib)]),
    "jacobian_bad_output": lambda lib: lib.autograd.functional.jacobian(
        lambda a: (a, 3), _x(lib)),
    "jacobian_strict_independent": lambda lib: lib.autograd.functional.jacobian(
        lambda a: _x(lib) * 2, _x(lib), strict=True),
    "jacobian_strict_unused": lambda lib: lib.autograd.functional.jacobian(
        lambda a, b: a * 2, (_x(lib), _y(lib)), strict=True),
    "jacobian_strict_vectorize": lambda lib: lib.autograd.functional.jacobian(
        f_vec, _x(lib), strict=True, vectorize=True),
    "jacobian_forward_no_vectorize": lambda lib: lib.autograd.functional.jacobian(
        f_vec, _x(lib), strategy="forward-mode"),
    "jacobian_forward_create_graph": lambda lib: lib.autograd.functional.jacobian(
        f_vec, _x(lib), strategy="forward-mode", create_graph=True),
    "jacobian_bad_strategy": lambda lib: lib.autograd.functional.jacobian(
        f_vec, _x(lib), strategy="sideways"),
    "hessian_vector_output": lambda lib: lib.autograd.functional.hessian(f_vec, _x(lib)),
    "hessian_tuple_output": lambda lib: lib.autograd.functional.hessian(
        lambda a: (a.sum(), a.sum()), _x(lib)),
    "hessian_strict_linear": lambda lib: lib.autograd.functional.hessian(
        lambda a: a.sum() * 2, _x(lib), strict=True),
    "vjp_no_v_vector_output": lambda lib: lib.autograd.functional.vjp(f_vec, _x(lib)),
    "vjp_v_wrong_length": lambda lib: lib.autograd.functional.vjp(
        f_two, (_x(lib), _y(lib)), (_ones(lib, 2, 2),)),
    "vjp_v_wrong_size_in_tuple": lambda lib: lib.autograd.functional.vjp(
        f_two, (_x(lib), _y(lib)), (_ones(lib, 2, 2), _ones(lib, 2))),
    "vjp_v_wrong_size": lambda lib: lib.autograd.functional.vjp(f_vec, _x(lib),
                                                                _ones(lib, 2)),
    "vjp_v_tuple_for_single": lambda lib: lib.autograd.functional.vjp(
        f_vec, _x(lib), (_v3(lib), _v3(lib))),
    "vjp_strict_detached": lambda lib: lib.autograd.functional.vjp(
        lambda a: a.detach(), _x(lib), _v3(lib), strict=True),
    "vjp_strict_unused": lambda lib: lib.autograd.functional.vjp(
        lambda a, b: a * 2, (_x(lib), _y(lib)), _v3(lib), strict=True),
    "jvp_no_v_vector_input": lambda lib: lib.autograd.functional.jvp(f_vec, _x(lib)),
    "jvp_strict_unused": lambda lib: lib.autograd.functional.jvp(
        lambda a, b: a * 2, (_x(lib), _y(lib)), (_v3(lib), _ones(lib, 2, 2)), strict=True),
    "hvp_vector_output": lambda lib: lib.autograd.functional.hvp(f_vec, _x(lib), _v3(lib)),
    "hvp_no_v": lambda lib: lib.autograd.functional.hvp(f_cube, _x(lib)),
    "vhp_strict_linear": lambda lib: lib.autograd.functional.vhp(
        lambda a: a.sum() * 2, _x(lib), _v3(lib), strict=True),
    "vhp_tuple_output": lambda lib: lib.autograd.functional.vhp(
        lambda a: (a.sum(),), _x(lib), _v3(lib)),
}


@pytest.mark.parametrize("case", sorted(FUNCTIONAL_ERRORS))
def test_functional_errors_match_torch(case):
    same_outcome(FUNCTIONAL_ERRORS[case])


# --------------------------------------------------------------------------- functional sweep
_SWEEP_FUNCTIONS = {
    "cube_sum": (1, lambda L: (lambda x: (x ** 3).sum())),
    "exp_vec": (1, lambda L: (lambda x: x.exp())),
    "const": (1, lambda L: (lambda x: L.ones(2) * 3)),
    "linear": (1, lambda L: (lambda x: x * 2)),
    "lin_sum": (1, lambda L: (lambda x: (x * 2).sum())),
    "tuple_out": (1, lambda L: (lambda x: (x ** 2, x.sum()))),
    "prod_sum": (2, lambda L: (lambda x, y: (x * y).sum())),
    "unused_y": (2, lambda L: (lambda x, y: (x ** 2).sum())),
    "mix": (2, lambda L: (lambda x, y: (x ** 2 * y).sum())),
}


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("api", ["jacobian", "hessian", "vjp", "jvp", "hvp", "vhp"])
@pytest.mark.parametrize("fname", sorted(_SWEEP_FUNCTIONS))
def test_functional_sweep_same_as_torch(fname, api, strict, create_graph):
    """Every functional API on linear, nonlinear, constant, tuple-valued and
    partly-unused functions: values, nesting, grad_fn names and strict-mode errors."""
    n_args, make = _SWEEP_FUNCTIONS[fname]

    def run(L):
        f = make(L)
        inputs = (L.tensor([1.0, 2.0]), L.tensor([0.5, -1.0])) if n_args == 2 else \
            L.tensor([1.0, 2.0])
        F = L.autograd.functional
        kw = {"create_graph": create_graph, "strict": strict}
        if api in ("jacobian", "hessian"):
            return getattr(F, api)(f, inputs, **kw)
        if api == "vjp":
            out = f(*inputs) if n_args == 2 else f(inputs)
            v = tuple(L.ones_like(o) for o in out) if isinstance(out, tuple) else \
                L.ones_like(out)
            return F.vjp(f, inputs, v, **kw)
        v = (L.ones(2), L.ones(2)) if n_args == 2 else L.ones(2)
        return getattr(F, api)(f, inputs, v, **kw)

    assert outcome(run, symgrad) == outcome(run, torch)



# =========================================================================== gradcheck
def _bad_functions(lib):
    """Squares with a wrong gradient (3x where 2x is right) and with the right one through
    a detached input (hiding the second derivative)."""
    return (saving_function(lib, "WrongBackward", lambda x: x ** 2, lambda x, g: g * 3 * x),
            saving_function(lib, "OnceDifferentiable", lambda x: x ** 2,
                            lambda x, g: g * 2 * x.detach()))


def _xg(lib):
    return lib.tensor([0.3, -0.7], dtype=lib.float64, requires_grad=True)


def _yg(lib):
    return lib.tensor([[1.0, 2.0]], dtype=lib.float64, requires_grad=True)


GRADCHECK_PASS = {
    "sum": lambda lib: lib.autograd.gradcheck(lambda a: (a.sin() * a).sum(), (_xg(lib),)),
    "broadcast": lambda lib: lib.autograd.gradcheck(lambda a, b: a * b, (_xg(lib), _yg(lib))),
    "two_outputs": lambda lib: lib.autograd.gradcheck(
        lambda a, b: (a * b, a.exp()), (_xg(lib), _yg(lib))),
    "single_tensor_input": lambda lib: lib.autograd.gradcheck(lambda a: a.tanh(), _xg(lib)),
    "number_input": lambda lib: lib.autograd.gradcheck(lambda a, k: a * k, (_xg(lib), 3.0)),
    "function": lambda lib: lib.autograd.gradcheck(functions(lib)["Cube"].apply,
                                                   (_xg(lib),)),
    "once_differentiable_first_order": lambda lib: lib.autograd.gradcheck(
        _bad_functions(lib)[1].apply, (_xg(lib),)),
    "gradgradcheck": lambda lib: lib.autograd.gradgradcheck(
        lambda a: a.sin() * a, (_xg(lib),)),
    "gradgradcheck_function": lambda lib: lib.autograd.gradgradcheck(
        functions(lib)["Cube"].apply, (_xg(lib),)),
    "gradgradcheck_two_inputs": lambda lib: lib.autograd.gradgradcheck(
        lambda a, b: (a * b).exp(), (_xg(lib), _yg(lib))),
    "gradgradcheck_given_grad_outputs": lambda lib: lib.autograd.gradgradcheck(
        lambda a: a ** 3, (_xg(lib),),
        (lib.tensor([0.5, -1.0], dtype=lib.float64, requires_grad=True),)),
    "relu_at_zero_fails_quietly": lambda lib: lib.autograd.gradcheck(
        lambda a: a.relu(), (lib.tensor([0.0, 1.0], dtype=lib.float64, requires_grad=True),),
        raise_exception=False),
    # gradgradcheck differentiates the backward as written: a wrong but smooth backward
    # is consistent with its own derivative, so this passes (in PyTorch too).
    "gradgradcheck_wrong_backward": lambda lib: lib.autograd.gradgradcheck(
        lambda a: _bad_functions(lib)[0].apply(a) * 1, (_xg(lib),),
        (lib.tensor([0.5, -1.0], dtype=lib.float64, requires_grad=True),)),
    "wrong_backward_no_raise": lambda lib: lib.autograd.gradcheck(
        _bad_functions(lib)[0].apply, (_xg(lib),), raise_exception=False),
}


@pytest.mark.parametrize("case", sorted(GRADCHECK_PASS))
def test_gradcheck_results_match_torch(case):
    want = GRADCHECK_PASS[case](torch)
    got = GRADCHECK_PASS[case](symgrad)
    assert got is want


GRADCHECK_FAIL = {
    "wrong_backward": lambda lib: lib.autograd.gradcheck(
        _bad_functions(lib)[0].apply, (_xg(lib),)),
    "wrong_backward_single_input": lambda lib: lib.autograd.gradcheck(
        _bad_functions(lib)[0].apply, _xg(lib)),
    "second_input_wrong": lambda lib: lib.autograd.gradcheck(
        lambda a, b: a * _bad_functions(lib)[0].apply(b), (_xg(lib), _yg(lib))),
    "detached_output": lambda lib: lib.autograd.gradcheck(lambda a: a.detach() * 2,
                                                          (_xg(lib),)),
    "no_input_requires_grad": lambda lib: lib.autograd.gradcheck(
        lambda a: a * 2, (lib.tensor([1.0, 2.0], dtype=lib.float64),)),
    "relu_at_zero": lambda lib: lib.autograd.gradcheck(
        lambda a: a.relu(), (lib.tensor([0.0, 1.0], dtype=lib.float64,
                                        requires_grad=True),)),
    "float32_warns_and_fails": lambda lib: lib.autograd.gradcheck(
        lambda a: a * 2, (lib.tensor([1.0, 2.0], requires_grad=True),)),
    "gradgradcheck_once_differentiable": lambda lib: lib.autograd.gradgradcheck(
        _bad_functions(lib)[1].apply, (_xg(lib),),
        (lib.tensor([0.5, -1.0], dtype=lib.float64, requires_grad=True),)),
}


@pytest.mark.parametrize("case", sorted(GRADCHECK_FAIL))
def test_gradcheck_failures_match_torch(case):
    # The error (type, message) and the warnings' categories and texts (PyTorch's warning
    # points into its own file).
    same_outcome(GRADCHECK_FAIL[case])


def test_gradcheck_error_is_a_runtime_error_named_as_torch():
    from symgrad.autograd.gradcheck import GradcheckError
    assert issubclass(GradcheckError, RuntimeError)
    assert symgrad.autograd.GradcheckError is GradcheckError
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect "
                                             "to input 0"):
        GRADCHECK_FAIL["wrong_backward"](symgrad)


def test_gradgradcheck_random_grad_outputs_still_catch_a_hidden_second_derivative():
    wrong = _bad_functions(symgrad)[1]
    with pytest.raises(symgrad.autograd.GradcheckError, match="Jacobian mismatch"):
        symgrad.autograd.gradgradcheck(wrong.apply, (_xg(symgrad),))
    assert symgrad.autograd.gradgradcheck(wrong.apply, (_xg(symgrad),),
                                          raise_exception=False) is False


def test_gradcheck_leaves_inputs_unchanged():
    x = _xg(symgrad)
    before = x.detach().clone()
    symgrad.autograd.gradcheck(lambda a: (a * a).sum(), (x,))
    np.testing.assert_array_equal(x.detach().numpy(), before.numpy())
    assert x.grad is None
