"""Autograd semantics of symgrad against PyTorch 2.13 (the oracle).

Every scenario is written once as a function of the library (``lib`` is ``torch`` or
``symgrad``) and run in both; the tests compare the outcomes: values, error types and
messages, warnings, and the order in which hooks fire.
"""

import gc
import math
import tracemalloc
import warnings
import weakref

import numpy as np
import pytest

import symgrad

torch = pytest.importorskip("torch")

LIBS = (torch, symgrad)


# --------------------------------------------------------------------------- helpers
def _outcome(lib, scenario):
    """What running ``scenario(lib)`` does: (exception type, message) and warnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            scenario(lib)
            error = None
        except Exception as e:  # noqa: BLE001 - the outcome is what we compare
            error = (_builtin_base(type(e)), str(e))
    warned = [(w.category.__name__, str(w.message)) for w in caught
              if not issubclass(w.category, DeprecationWarning)]
    return error, warned


def _builtin_base(cls):
    """The first built-in exception class of ``cls`` (torch's own subclasses aside)."""
    for c in cls.__mro__:
        if c.__module__ == "builtins":
            return c.__name__
    return cls.__name__


def same_outcome(scenario, expect_error=True):
    """Run ``scenario`` in torch and symgrad; both must fail (or warn) identically."""
    want = _outcome(torch, scenario)
    got = _outcome(symgrad, scenario)
    if expect_error:
        assert want[0] is not None, "the scenario should fail in torch"
    assert got == want


def both(scenario):
    """``scenario(lib)`` in torch and symgrad, results converted to nested numpy/lists."""
    return _plain(scenario(torch)), _plain(scenario(symgrad))


def _plain(x):
    if isinstance(x, (torch.Tensor, symgrad.Tensor)):
        return np.asarray(x.detach().tolist(), dtype=float)
    if isinstance(x, (tuple, list)):
        return type(x)(_plain(v) for v in x)
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    return x


def assert_same(want, got):
    if isinstance(want, np.ndarray) or isinstance(got, np.ndarray):
        assert got is not None and want is not None, (want, got)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    elif isinstance(want, (tuple, list)):
        assert type(got) is type(want) and len(got) == len(want), (want, got)
        for w, g in zip(want, got):
            assert_same(w, g)
    elif isinstance(want, dict):
        assert got.keys() == want.keys()
        for k in want:
            assert_same(want[k], got[k])
    else:
        assert got == want


def check_same(scenario):
    want, got = both(scenario)
    assert_same(want, got)


# =========================================================================== 1. errors
def _nonscalar_backward(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    (x * 2).backward()


def _backward_no_grad(lib):
    lib.tensor([1.0, 2.0]).sum().backward()


def _backward_leaf_no_grad(lib):
    lib.tensor(1.0).backward()


def _backward_twice_saved(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    y.backward()


def _backward_twice_saved_exp(lib):
    x = lib.tensor(1.0, requires_grad=True)
    y = x.exp()
    y.backward()
    y.backward()


def _grad_twice_saved(lib):
    x = lib.tensor(1.0, requires_grad=True)
    y = x.sin()
    lib.autograd.grad(y, x)
    lib.autograd.grad(y, x)


def _saved_access_after_free(lib):
    x = lib.tensor(1.0, requires_grad=True)
    y = x * x
    y.backward()
    y.grad_fn._saved_self


def _grad_unused(lib):
    x = lib.tensor(1.0, requires_grad=True)
    z = lib.tensor(2.0, requires_grad=True)
    lib.autograd.grad(x * 2, [x, z])


def _grad_unused_allowed_false_materialize(lib):
    x = lib.tensor(1.0, requires_grad=True)
    z = lib.tensor(2.0, requires_grad=True)
    lib.autograd.grad(x * 2, [x, z], allow_unused=False, materialize_grads=True)


def _grad_input_no_grad(lib):
    x = lib.tensor(1.0, requires_grad=True)
    z = lib.tensor(2.0)
    lib.autograd.grad(x * 2, [x, z])


def _inplace_leaf(lib, method):
    def scenario(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        getattr(x, method[0])(*method[1:])
    return scenario


def _inplace_leaf_operator(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    x += 1


SETITEM_INDICES = {
    "int": lambda lib: 0, "neg_int": lambda lib: -1, "slice": lambda lib: slice(0, 1),
    "full_slice": lambda lib: slice(None), "full_slice_explicit": lambda lib: slice(0, 2),
    "ellipsis": lambda lib: Ellipsis, "none": lambda lib: None,
    "list": lambda lib: [0], "mask": lambda lib: lib.tensor([[True, False], [False, True]]),
    "row_mask": lambda lib: lib.tensor([True, False]),
    "int_tensor0d": lambda lib: lib.tensor(1), "int_tensor1d": lambda lib: lib.tensor([1]),
    "tuple_int_list": lambda lib: (0, [0]), "tuple_slices": lambda lib: (slice(None),) * 2,
    "tuple_slice_int": lambda lib: (slice(None), 0),
    "tuple_ellipsis_int": lambda lib: (Ellipsis, 1),
}


@pytest.mark.parametrize("which", sorted(SETITEM_INDICES))
def test_setitem_on_leaf_error_matches_torch(which):
    def scenario(lib):
        x = lib.ones(2, 2, requires_grad=True)
        x[SETITEM_INDICES[which](lib)] = 5.0
    same_outcome(scenario)


def _inplace_on_view_of_leaf(lib):
    x = lib.ones(2, 2, requires_grad=True)
    x[0].mul_(2)


def _inplace_on_view_chain_of_leaf(lib):
    x = lib.ones(2, 2, requires_grad=True)
    x.t().unsqueeze(0)[0, 1:].add_(1)


def _inplace_leaf_setitem(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    x[0] = 5.0


def _saved_input_modified(lib):
    a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = a + 1
    c = b * b
    b.add_(1)
    c.sum().backward()


def _saved_leafish_input_modified(lib):
    w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = lib.tensor([1.0, 2.0, 3.0])
    c = (w * b).sum()
    b.mul_(2)
    c.backward()


def _saved_result_modified(lib):
    a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    e = a.exp()
    e.add_(1)
    e.sum().backward()


def _saved_result_modified_twice(lib):
    a = lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64, requires_grad=True)
    e = a.sigmoid()
    e.mul_(2)
    e.mul_(3)
    e.sum().backward()


def _int_requires_grad_ctor(lib):
    lib.tensor([1, 2], requires_grad=True)


def _int_requires_grad_attr(lib):
    t = lib.tensor([1, 2])
    t.requires_grad = True


def _int_requires_grad_method(lib):
    lib.tensor([1, 2]).requires_grad_()


def _bool_requires_grad_method(lib):
    lib.tensor([True]).requires_grad_(True)


def _int_requires_grad_false_ok(lib):
    t = lib.tensor([1, 2])
    t.requires_grad = False
    t.requires_grad_(False)


def _nonleaf_grad_read(lib):
    x = lib.tensor(1.0, requires_grad=True)
    y = x * 2
    y.backward()
    assert y.grad is None


def _nonleaf_requires_grad_false(lib):
    x = lib.tensor(1.0, requires_grad=True)
    (x * 2).requires_grad = False


def _nonleaf_requires_grad_false_method(lib):
    x = lib.tensor(1.0, requires_grad=True)
    (x * 2).requires_grad_(False)


def _grad_shape_mismatch(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    (x * 2).backward(lib.tensor([1.0, 1.0, 1.0]))


def _grad_shape_mismatch_autograd_grad(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    lib.autograd.grad([x * 2, x * 3], x, grad_outputs=(lib.ones(2), lib.ones(2, 1)))


def _grad_shape_mismatch_several_roots(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    lib.autograd.backward([x * 2, x.sum()], [lib.ones(2), lib.ones(2)])


def _item_multi(lib):
    lib.tensor([1.0, 2.0]).item()


def _numpy_requires_grad(lib):
    lib.tensor([1.0, 2.0], requires_grad=True).numpy()


def _numpy_nonleaf(lib):
    (lib.tensor([1.0, 2.0], requires_grad=True) * 2).numpy()


def _view_noncontiguous(lib):
    lib.ones(2, 3).t().view(6)


def _detach_view_inplace(lib):
    x = lib.ones(2, 3, requires_grad=True)
    x[0].detach_()


def _broadcast_mismatch(lib):
    lib.ones(2) + lib.ones(3)


def _broadcast_mismatch_2d(lib):
    lib.ones(2, 3) * lib.ones(4, 1, 2)


def _mm_shapes(lib):
    lib.ones(2, 3).mm(lib.ones(2, 3))


def _matmul_2d_shapes(lib):
    lib.ones(2, 3) @ lib.ones(2, 3)


def _dot_shapes(lib):
    lib.dot(lib.ones(2), lib.ones(3))


def _dot_2d(lib):
    lib.dot(lib.ones(2, 2), lib.ones(2))


def _mv_shapes(lib):
    lib.ones(2, 3).mv(lib.ones(2))


def _matmul_mv_shapes(lib):
    lib.ones(2, 3) @ lib.ones(2)


def _mm_dtype(lib):
    lib.ones(2, 2).mm(lib.ones(2, 2, dtype=lib.float64))


def _reshape_invalid(lib):
    lib.ones(2, 3).reshape(4)


def _reshape_invalid_infer(lib):
    lib.ones(2, 3).reshape(-1, 4)


def _view_invalid(lib):
    lib.ones(3).view(2, 2)


def _mean_int(lib):
    lib.tensor([1, 2]).mean()


def _index_out_of_range(lib):
    lib.ones(3)[5]


def _index_negative_out_of_range(lib):
    lib.ones(2, 3)[:, -4]


def _sum_dim_out_of_range(lib):
    lib.ones(3).sum(2)


def _unsqueeze_dim_out_of_range(lib):
    lib.ones(3).unsqueeze(3)


def _softmax_dim_out_of_range(lib):
    lib.ones(2, 2).softmax(-3)


def _cat_mismatch(lib):
    lib.cat([lib.ones(2, 3), lib.ones(2, 2)])


def _expand_mismatch(lib):
    lib.ones(3).expand(2, 4)


def _retain_grad_no_grad(lib):
    lib.ones(2).retain_grad()


def _hook_no_grad(lib):
    lib.ones(2).register_hook(lambda g: g)


def _retain_grad_leaf_ok(lib):
    x = lib.ones(2, requires_grad=True)
    x.retain_grad()
    assert x.grad is None


def _backward_empty_inputs(lib):
    x = lib.ones(2, requires_grad=True)
    x.sum().backward(inputs=[])


ERROR_SCENARIOS = [
    _nonscalar_backward, _backward_no_grad, _backward_leaf_no_grad, _backward_twice_saved,
    _backward_twice_saved_exp, _grad_twice_saved, _saved_access_after_free, _grad_unused,
    _grad_unused_allowed_false_materialize, _grad_input_no_grad,
    _inplace_leaf(None, ("add_", 1.0)), _inplace_leaf(None, ("mul_", 2.0)),
    _inplace_leaf(None, ("zero_",)), _inplace_leaf(None, ("fill_", 3.0)),
    _inplace_leaf(None, ("sub_", 1.0)), _inplace_leaf(None, ("div_", 2.0)),
    _inplace_leaf_operator, _inplace_leaf_setitem, _inplace_on_view_of_leaf,
    _inplace_on_view_chain_of_leaf, _grad_shape_mismatch_several_roots,
    _saved_input_modified, _saved_leafish_input_modified, _saved_result_modified,
    _saved_result_modified_twice, _int_requires_grad_ctor, _int_requires_grad_attr,
    _int_requires_grad_method, _bool_requires_grad_method, _nonleaf_requires_grad_false,
    _nonleaf_requires_grad_false_method, _grad_shape_mismatch,
    _grad_shape_mismatch_autograd_grad, _item_multi, _numpy_requires_grad, _numpy_nonleaf,
    _view_noncontiguous, _detach_view_inplace, _broadcast_mismatch, _broadcast_mismatch_2d,
    _mm_shapes, _matmul_2d_shapes, _dot_shapes, _dot_2d, _mv_shapes, _matmul_mv_shapes,
    _mm_dtype, _reshape_invalid, _reshape_invalid_infer, _view_invalid, _mean_int,
    _index_out_of_range, _index_negative_out_of_range, _sum_dim_out_of_range,
    _unsqueeze_dim_out_of_range, _softmax_dim_out_of_range, _cat_mismatch,
    _expand_mismatch, _retain_grad_no_grad, _hook_no_grad, _backward_empty_inputs,
]


def _scenario_id(s):
    return s.__name__ if s.__name__ != "scenario" else "inplace_leaf"


@pytest.mark.parametrize("scenario", ERROR_SCENARIOS, ids=_scenario_id)
def test_error_matches_torch(scenario):
    same_outcome(scenario)


@pytest.mark.parametrize("scenario", [
    _nonleaf_grad_read, _int_requires_grad_false_ok, _retain_grad_leaf_ok,
], ids=_scenario_id)
def test_warning_or_success_matches_torch(scenario):
    same_outcome(scenario, expect_error=False)


def test_nonleaf_grad_warning_is_a_user_warning():
    _, warned = _outcome(symgrad, _nonleaf_grad_read)
    assert warned and warned[0][0] == "UserWarning"
    assert "is not a leaf Tensor" in warned[0][1]


def test_nonleaf_grad_with_retain_grad_does_not_warn():
    def scenario(lib):
        x = lib.tensor(1.0, requires_grad=True)
        y = x * 2
        y.retain_grad()
        y.backward()
        assert float(y.grad) == 1.0
    same_outcome(scenario, expect_error=False)
    assert _outcome(symgrad, scenario) == (None, [])


def test_backward_twice_without_saved_tensors_works():
    # add and sum save nothing that can be freed: a second backward just accumulates.
    def scenario(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = (x + 1).sum()
        y.backward()
        y.backward()
        return x.grad
    check_same(scenario)
    assert both(scenario)[1].tolist() == [2.0, 2.0]


def test_backward_twice_mul_by_constant_fails_as_torch():
    # x * 2 saves the Python number only; torch still frees and refuses? Compare.
    def scenario(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = (x * 2).sum()
        y.backward()
        y.backward()
        return x.grad
    same_outcome(scenario, expect_error=False)


def test_allow_unused_and_materialize_grads():
    def scenario(lib):
        x = lib.tensor(1.0, requires_grad=True)
        z = lib.tensor([2.0, 3.0], requires_grad=True)
        a = lib.autograd.grad(x * 2, [x, z], allow_unused=True)
        b = lib.autograd.grad(x * 2, [x, z], materialize_grads=True)
        c = lib.autograd.grad(x * 2, [x, z], allow_unused=True, materialize_grads=True)
        return a[0], a[1] is None, b, c, b[1].shape == z.shape
    check_same(scenario)


def test_version_error_names_the_versions():
    error, _ = _outcome(symgrad, _saved_result_modified_twice)
    assert error is not None and "is at version 2; expected version 0" in error[1]
    assert "output 0 of Sigmoid" in error[1]
