"""Autograd semantics of symgrad against PyTorch 2.13 (the oracle).

Every scenario is written once as a function of the library (``lib`` is ``torch`` or
``symgrad``) and run in both; the tests compare the outcomes: values, error types and
messages, warnings, and the order in which hooks fire.
"""

import warnings

import numpy as np
import pytest

import symgrad
from conftest import both, check_same, functions, outcome, same_outcome

torch = pytest.importorskip("torch")


# =========================================================================== 1. errors
def _backward_leaf_no_grad(lib):
    lib.tensor(1.0).backward()


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


def _int_requires_grad_false_ok(lib):
    t = lib.tensor([1, 2])
    t.requires_grad = False
    t.requires_grad_(False)


def _nonleaf_grad_read(lib):
    x = lib.tensor(1.0, requires_grad=True)
    y = x * 2
    y.backward()
    assert y.grad is None


def _nonleaf_requires_grad_false_method(lib):
    x = lib.tensor(1.0, requires_grad=True)
    (x * 2).requires_grad_(False)


def _grad_shape_mismatch_autograd_grad(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    lib.autograd.grad([x * 2, x * 3], x, grad_outputs=(lib.ones(2), lib.ones(2, 1)))


def _grad_shape_mismatch_several_roots(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    lib.autograd.backward([x * 2, x.sum()], [lib.ones(2), lib.ones(2)])


def _numpy_requires_grad(lib):
    lib.tensor([1.0, 2.0], requires_grad=True).numpy()


def _numpy_nonleaf(lib):
    (lib.tensor([1.0, 2.0], requires_grad=True) * 2).numpy()


def _detach_view_inplace(lib):
    x = lib.ones(2, 3, requires_grad=True)
    x[0].detach_()


def _broadcast_mismatch(lib):
    lib.ones(2) + lib.ones(3)


def _broadcast_mismatch_2d(lib):
    lib.ones(2, 3) * lib.ones(4, 1, 2)


def _matmul_2d_shapes(lib):
    lib.ones(2, 3) @ lib.ones(2, 3)


def _mean_int(lib):
    lib.tensor([1, 2]).mean()


def _index_out_of_range(lib):
    lib.ones(3)[5]


def _index_negative_out_of_range(lib):
    lib.ones(2, 3)[:, -4]


def _sum_dim_out_of_range(lib):
    lib.ones(3).sum(2)


def _retain_grad_leaf_ok(lib):
    x = lib.ones(2, requires_grad=True)
    x.retain_grad()
    assert x.grad is None


def _backward_empty_inputs(lib):
    x = lib.ones(2, requires_grad=True)
    x.sum().backward(inputs=[])


ERROR_SCENARIOS = [
    # The errors that test_autograd_api.py, test_tensor_snippets.py and
    # test_ops_against_torch.py compare already (non-scalar backward, shape and dtype errors
    # of mm/dot/mv/cat/reshape/view/expand, requires_grad on integers, ...) are not repeated.
    _backward_leaf_no_grad, _backward_twice_saved_exp, _grad_twice_saved,
    _saved_access_after_free,
    _inplace_leaf(None, ("add_", 1.0)), _inplace_leaf(None, ("mul_", 2.0)),
    _inplace_leaf(None, ("zero_",)), _inplace_leaf(None, ("fill_", 3.0)),
    _inplace_leaf(None, ("sub_", 1.0)), _inplace_leaf(None, ("div_", 2.0)),
    _inplace_leaf_operator, _inplace_leaf_setitem, _inplace_on_view_of_leaf,
    _inplace_on_view_chain_of_leaf, _grad_shape_mismatch_several_roots,
    _saved_input_modified, _saved_leafish_input_modified, _saved_result_modified,
    _saved_result_modified_twice, _nonleaf_requires_grad_false_method,
    _grad_shape_mismatch_autograd_grad, _numpy_requires_grad, _numpy_nonleaf,
    _detach_view_inplace, _broadcast_mismatch, _broadcast_mismatch_2d, _matmul_2d_shapes,
    _mean_int, _index_out_of_range, _index_negative_out_of_range, _sum_dim_out_of_range,
    _backward_empty_inputs,
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
    _, warned = outcome(_nonleaf_grad_read, symgrad)
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
    assert outcome(scenario, symgrad) == (("ok", None), [])


def test_backward_twice_without_saved_tensors_works():
    # add and sum save nothing that can be freed: a second backward just accumulates.
    def scenario(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = (x + 1).sum()
        y.backward()
        y.backward()
        return x.grad
    check_same(scenario)
    assert both(scenario)[1][0].tolist() == [2.0, 2.0]


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
    (kind, *error), _ = outcome(_saved_result_modified_twice, symgrad)
    assert kind == "error" and "is at version 2; expected version 0" in error[1]
    assert "output 0 of Sigmoid" in error[1]


# =========================================================================== 2. semantics
def _val(g):
    """A gradient as a plain Python value for logs (None stays None), to 6 digits."""
    return None if g is None else np.round(g.detach().double().numpy(), 6).tolist()


def test_gradients_accumulate_across_backward_calls():
    def scenario(lib):
        x = lib.tensor([1.0, -2.0], requires_grad=True)
        seen = []
        for k in range(3):
            (x * x * (k + 1)).sum().backward()
            seen.append(x.grad.clone())
        grad_obj = x.grad
        (x.sin()).sum().backward()
        return seen, x.grad, grad_obj is x.grad
    check_same(scenario)


def test_grad_is_updated_in_place_and_zero_resets():
    def scenario(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        (x * 3).sum().backward()
        g = x.grad
        (x * 4).sum().backward()
        before = g.clone()
        x.grad.zero_()
        (x * 5).sum().backward()
        return before, g, x.grad, x.grad._version > 0
    check_same(scenario)


def test_retain_graph_allows_second_backward():
    def scenario(lib):
        x = lib.tensor([0.5, 1.5], requires_grad=True)
        y = (x.exp() * x).sum()
        y.backward(retain_graph=True)
        first = x.grad.clone()
        y.backward(retain_graph=True)
        y.backward()
        return first, x.grad
    check_same(scenario)


def test_retain_grad_on_non_leaves():
    def scenario(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 3
        y.retain_grad()
        y.retain_grad()  # twice is harmless
        z = y.sin()
        z.retain_grad()
        w = z.sum()
        w.retain_grad()
        w.backward(retain_graph=True)
        first = (y.grad.clone(), z.grad.clone(), w.grad.clone())
        w.backward()
        return first, y.grad, z.grad, w.grad, y.retains_grad, x.retains_grad, y.is_leaf
    check_same(scenario)


def _hook_log_scenario(lib, retain_first):
    log = []
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    if retain_first:
        y.retain_grad()
    y.register_hook(lambda g: log.append(("tensor hook 1", _val(g))))
    y.register_hook(lambda g: g * 10)
    y.register_hook(lambda g: log.append(("tensor hook 3", _val(g))))
    if not retain_first:
        y.retain_grad()
    y.grad_fn.register_prehook(lambda go: log.append(("prehook", _val(go[0]))))
    y.grad_fn.register_hook(
        lambda gi, go: log.append(("node hook", [_val(v) for v in gi], _val(go[0]))))
    acc = y.grad_fn.next_functions[0][0]
    acc.register_prehook(lambda go: log.append(("acc prehook", _val(go[0]))))
    acc.register_hook(lambda gi, go: log.append(
        ("acc hook", [_val(v) for v in gi], _val(go[0]), _val(x.grad))))
    x.register_hook(lambda g: log.append(("leaf hook", _val(g), _val(x.grad))))
    z = (y * y).sum()
    z.register_hook(lambda g: log.append(("root hook", _val(g))))
    z.backward()
    log.append(("y.grad", _val(y.grad)))
    log.append(("x.grad", _val(x.grad)))
    return log


@pytest.mark.parametrize("retain_first", [True, False])
def test_hook_order_matches_torch(retain_first):
    want = _hook_log_scenario(torch, retain_first)
    got = _hook_log_scenario(symgrad, retain_first)
    assert got == want


def test_hook_return_values_replace_gradients():
    def scenario(lib):
        log = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        w = lib.tensor([3.0, 4.0], requires_grad=True)
        y = x * w
        y.grad_fn.register_prehook(lambda go: (go[0] + 1,))
        y.grad_fn.register_hook(lambda gi, go: (gi[0] * 2, None))
        x.register_hook(lambda g: g - 0.5)
        w.register_hook(lambda g: log.append(_val(g)))
        y.sum().backward()
        return x.grad, w.grad, log
    check_same(scenario)


def test_leaf_hook_runs_before_accumulation_and_post_accumulate_hook_after():
    def scenario(lib):
        log = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        x.register_hook(lambda g: log.append(("hook", _val(g), _val(x.grad))))
        x.register_post_accumulate_grad_hook(lambda t: log.append(("post", _val(t.grad))))
        (x * 3).sum().backward()
        (x * 4).sum().backward()
        return log
    check_same(scenario)


def test_hook_storing_the_gradient_is_not_changed_by_later_accumulation():
    def scenario(lib):
        kept = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        x.register_hook(lambda g: kept.append(g))
        a = x * 3
        (a + a).sum().backward()
        (x * 5).sum().backward()
        return kept, x.grad
    check_same(scenario)


def test_removed_hooks_do_not_run():
    def scenario(lib):
        log = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        handles = [
            y.register_hook(lambda g: log.append("tensor")),
            y.grad_fn.register_prehook(lambda go: log.append("prehook")),
            y.grad_fn.register_hook(lambda gi, go: log.append("hook")),
            x.register_hook(lambda g: g * 100),
        ]
        keep = y.register_hook(lambda g: log.append("kept"))
        for h in handles:
            h.remove()
        handles[0].remove()  # removing twice is fine
        y.sum().backward()
        del keep
        return log, x.grad
    check_same(scenario)


def test_hooks_on_captured_tensors_in_autograd_grad():
    def scenario(lib):
        x = lib.tensor(2.0, requires_grad=True)
        y = x * 3
        y.register_hook(lambda g: g * 10)
        z = y * y
        out = [lib.autograd.grad(z, [y], retain_graph=True),
               lib.autograd.grad(z, [y, x], retain_graph=True)]
        y.grad_fn.register_prehook(lambda g: (g[0] * 100,))
        out.append(lib.autograd.grad(z, [y], retain_graph=True))
        out.append(lib.autograd.grad(z, [y, x], retain_graph=True))
        x.register_hook(lambda g: g + 1)
        out.append(lib.autograd.grad(z, [y, x], retain_graph=True))
        out.append(lib.autograd.grad(z, [x]))
        return out, x.grad
    check_same(scenario)


def test_backward_inputs_leaves_and_non_leaves():
    def scenario(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        w = lib.tensor([0.5, -1.0], requires_grad=True)
        y = x * w
        z = (y.exp() * w).sum()
        z.backward(inputs=[w], retain_graph=True)
        r1 = (x.grad, w.grad.clone())
        z.backward(inputs=[y, x], retain_graph=True)
        r2 = (x.grad.clone(), w.grad.clone(), y.grad.clone(), y.retains_grad)
        z.backward(inputs=x)
        return r1, r2, x.grad, w.grad, y.grad
    check_same(scenario)


def test_autograd_grad_leaves_and_non_leaves():
    def scenario(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x ** 3
        z = (y * x).sum()
        gy, gx = lib.autograd.grad(z, [y, x], retain_graph=True)
        (gx2,) = lib.autograd.grad(z, x, grad_outputs=lib.tensor(2.0))
        return gy, gx, gx2, x.grad, y.grad_fn is not None
    check_same(scenario)


def test_autograd_grad_dict_inputs():
    def scenario(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        return lib.autograd.grad((y * y).sum(), {"a": x, "b": y})
    check_same(scenario)


def test_autograd_backward_several_roots():
    def scenario(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        a = x * x
        b = x.sin().sum()
        lib.autograd.backward([a, b], [lib.tensor([1.0, 10.0]), None], retain_graph=True)
        first = x.grad.clone()
        lib.autograd.backward((a.sum(), b), retain_graph=False)
        return first, x.grad
    check_same(scenario)


def test_autograd_backward_root_is_a_leaf():
    def scenario(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        x.backward(lib.tensor([3.0, 4.0]))
        lib.autograd.backward(x, lib.tensor([1.0, 1.0]))
        return x.grad
    check_same(scenario)


def test_autograd_grad_several_outputs_with_grad_outputs():
    def scenario(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        a = x.exp()
        b = (x * x).sum()
        return lib.autograd.grad([a, b], x, [lib.tensor([1.0, 0.0, 2.0]), lib.tensor(3.0)])
    check_same(scenario)


def test_create_graph_to_fourth_order():
    def scenario(lib):
        x = lib.tensor(1.5, dtype=lib.float64, requires_grad=True)
        y = x ** 4
        out = []
        g = y
        for _ in range(4):
            (g,) = lib.autograd.grad(g, x, create_graph=True)
            out.append((g.item(), g.requires_grad, type(g.grad_fn).__name__))
        return out
    check_same(scenario)
    got = both(scenario)[1]
    assert [v for v, _, _ in got] == [4 * 1.5 ** 3, 12 * 1.5 ** 2, 24 * 1.5, 24.0]


def test_create_graph_third_order_vector_and_names():
    def scenario(lib):
        x = lib.tensor([0.3, -0.7, 1.1], dtype=lib.float64, requires_grad=True)
        y = (x.sin() * x.exp() + x ** 3).sum()
        (g1,) = lib.autograd.grad(y, x, create_graph=True)
        (g2,) = lib.autograd.grad(g1.sum(), x, create_graph=True)
        (g3,) = lib.autograd.grad(g2.sum(), x)
        return g1, g2, g3
    check_same(scenario)


def test_backward_create_graph_grad_has_grad_fn():
    def scenario(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        (x ** 3).sum().backward(create_graph=True)
        g = x.grad
        info = (g.requires_grad, g.is_leaf, type(g.grad_fn).__name__)
        gx = g.clone()
        x.grad = None
        gx.sum().backward()
        return info, x.grad
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_same(scenario)


def test_backward_create_graph_second_call_adds_out_of_place():
    def scenario(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        (x ** 2).sum().backward(create_graph=True)
        first = x.grad
        (x ** 2).sum().backward(create_graph=True)
        return first, x.grad, first is x.grad, type(x.grad.grad_fn).__name__
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_same(scenario)


def test_nodes_are_callable_by_hand():
    def scenario(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        w = lib.tensor([3.0, 4.0], requires_grad=True)
        y = x * w
        gi = y.grad_fn(lib.tensor([1.0, 10.0]))
        s = (x * 2).sum()
        gs = s.grad_fn(lib.tensor(1.0))
        acc = y.grad_fn.next_functions[0][0]
        r = acc(lib.tensor([5.0, 6.0]))
        r2 = acc(lib.tensor([1.0, 1.0]))
        return (gi, gs, r, r2, x.grad, type(acc).__name__, acc.variable is x,
                y.grad_fn.name(), acc.name())
    check_same(scenario)


def test_node_called_by_hand_records_a_graph_in_grad_mode():
    def scenario(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x.sin()
        g = y.grad_fn(lib.ones(2))
        with lib.no_grad():
            g2 = y.grad_fn(lib.ones(2))
        return g, g.requires_grad, g2.requires_grad, type(g.grad_fn).__name__
    check_same(scenario)


def test_next_functions_and_saved_values():
    def scenario(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        c = lib.tensor([3.0, 4.0])
        y = (x * c + x).pow(2)
        fn = y.grad_fn
        add = fn.next_functions[0][0]
        mul = add.next_functions[0][0]
        return (fn.name(), add.name(), mul.name(),
                [(type(n).__name__ if n is not None else None, i)
                 for n, i in mul.next_functions],
                fn._saved_exponent, fn._saved_self, mul._saved_other)
    check_same(scenario)


# -------------------------------------------------------------------------- versions
def test_version_counter():
    def scenario(lib):
        x = lib.ones(3)
        v = [x._version]
        x.add_(1)
        x.mul_(2)
        x[0] = 5.0
        v.append(x._version)
        d = x.detach()
        d.add_(1)
        v.append((x._version, d._version))
        data = x.data
        data.add_(1)
        v.append((x._version, data._version))
        x += 1
        y = x + 1
        v.append((x._version, y._version))
        view = x[1:]
        view.mul_(3)
        v.append((x._version, view._version))
        x.zero_()
        x.fill_(2.0)
        x.copy_(lib.ones(3))
        v.append(x._version)
        return v, x
    check_same(scenario)


def test_detach_shares_data_and_version_error_through_detach():
    def scenario(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = a.sigmoid()
        d = b.detach()
        d.mul_(2)
        b.sum().backward()
    same_outcome(scenario)


def test_data_does_not_bump_version_so_backward_uses_new_values():
    def scenario(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = a.exp()
        b.data.mul_(2)
        b.sum().backward()
        return a.grad, b
    check_same(scenario)


def test_detach_and_detach_():
    def scenario(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        d = y.detach()
        info = [d.requires_grad, d.is_leaf, d.grad_fn is None]
        y.detach_()
        info += [y.requires_grad, y.is_leaf, y.grad_fn is None]
        y.requires_grad_()
        info.append(y.requires_grad)
        x2 = lib.tensor([1.0], requires_grad=True)
        x2.detach_()
        info.append(x2.requires_grad)
        return info, d
    check_same(scenario)


# -------------------------------------------------------------------------- grad modes
def test_grad_modes():
    def scenario(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        r = []
        with lib.no_grad():
            y = x * 2
            r.append((y.requires_grad, lib.is_grad_enabled()))
            with lib.enable_grad():
                r.append(((x * 2).requires_grad, lib.is_grad_enabled()))
            r.append(lib.is_grad_enabled())
        r.append(lib.is_grad_enabled())
        with lib.set_grad_enabled(False):
            r.append(((x * 2).requires_grad, lib.is_grad_enabled()))
        r.append(lib.is_grad_enabled())
        lib.set_grad_enabled(False)
        r.append(((x * 2).requires_grad, lib.is_grad_enabled()))
        lib.set_grad_enabled(True)
        r.append(lib.is_grad_enabled())

        @lib.no_grad()
        def f(t):
            return t * 2

        @lib.enable_grad()
        def g(t):
            return t * 2

        @lib.set_grad_enabled(False)
        def h(t):
            return t * 2

        @lib.inference_mode()
        def k(t):
            return t * 2

        r.append((f(x).requires_grad, lib.is_grad_enabled()))
        with lib.no_grad():
            r.append(g(x).requires_grad)
        r.append((h(x).requires_grad, lib.is_grad_enabled()))
        r.append((k(x).requires_grad, lib.is_grad_enabled()))
        with lib.inference_mode():
            r.append(((x * 2).requires_grad, lib.is_grad_enabled(),
                      lib.is_inference_mode_enabled()))
        with lib.inference_mode(False):
            r.append(((x * 2).requires_grad, lib.is_inference_mode_enabled()))
        r.append(lib.is_inference_mode_enabled())
        with lib.autograd.no_grad():
            r.append(lib.autograd.grad_mode.no_grad is lib.no_grad)
        return r
    check_same(scenario)


def test_no_grad_restores_mode_after_exception():
    def scenario(lib):
        try:
            with lib.no_grad():
                raise KeyError("boom")
        except KeyError:
            pass
        return lib.is_grad_enabled()
    check_same(scenario)
    assert symgrad.is_grad_enabled()


def test_no_grad_leaf_in_place_is_allowed():
    def scenario(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with lib.no_grad():
            x.add_(1)
            x[0] = 5.0
            x.mul_(2)
        return x, x.requires_grad, x.is_leaf, x._version
    check_same(scenario)


def test_in_place_on_non_leaf_is_recorded():
    def scenario(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        y.add_(1)
        name1 = type(y.grad_fn).__name__
        y.mul_(x)
        name2 = type(y.grad_fn).__name__
        y.sum().backward()
        return name1, name2, x.grad, y
    check_same(scenario)


def test_accumulate_grad_node_hooks_and_post_accumulate_hooks_order():
    def scenario(lib):
        log = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 3
        acc = y.grad_fn.next_functions[0][0]
        acc.register_hook(lambda gi, go: log.append(("acc hook", gi, _val(go[0]))))
        acc.register_prehook(lambda go: log.append(("acc prehook", _val(go[0]))))
        x.register_post_accumulate_grad_hook(lambda t: log.append(("post", _val(t.grad))))
        x.register_hook(lambda g: log.append(("tensor hook", _val(g))))
        acc.register_prehook(lambda go: (go[0] * 2,))
        y.sum().backward()
        return log, x.grad
    check_same(scenario)


def test_undefined_gradients_still_reach_hooks_as_none():
    # A node hook that returns None for an input makes that gradient undefined;
    # PyTorch still runs the nodes below, handing None to their hooks.
    def scenario(lib):
        log = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        w = lib.tensor([3.0, 4.0], requires_grad=True)
        a = w * 2
        a.register_hook(lambda g: log.append(("a hook", _val(g))))
        a.grad_fn.register_prehook(lambda g: log.append(("a pre", _val(g[0]))))
        a.grad_fn.register_hook(
            lambda gi, go: log.append(("a post", [_val(v) for v in gi], _val(go[0]))))
        w.register_hook(lambda g: log.append(("w hook", _val(g))))
        y = x * a
        y.grad_fn.register_hook(lambda gi, go: (gi[0] * 2, None))
        y.sum().backward()
        return log, x.grad, w.grad
    check_same(scenario)


def _hook_error(register):
    def scenario(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 3
        register(lib, x, y)
        y.sum().backward()
    return scenario


@pytest.mark.parametrize("register", [
    lambda lib, x, y: y.grad_fn.register_prehook(lambda go: (go[0], go[0])),
    lambda lib, x, y: y.grad_fn.register_prehook(lambda go: go[0]),
    lambda lib, x, y: y.grad_fn.register_hook(lambda gi, go: gi[0]),
    lambda lib, x, y: y.grad_fn.register_hook(lambda gi, go: [gi[0] * 2]),
    lambda lib, x, y: y.grad_fn.register_hook(lambda gi, go: (gi[0], gi[0])),
    lambda lib, x, y: y.grad_fn.next_functions[0][0].register_hook(lambda gi, go: go),
    lambda lib, x, y: y.register_hook(lambda g: g.sum()),
    lambda lib, x, y: y.register_hook(lambda g: 3.0),
    lambda lib, x, y: y.register_hook(lambda g: g.double()),
    lambda lib, x, y: x.register_hook(lambda g: g[:1]),
    lambda lib, x, y: y.register_post_accumulate_grad_hook(lambda t: None),
    lambda lib, x, y: lib.ones(2).register_post_accumulate_grad_hook(lambda t: None),
], ids=["prehook_count", "prehook_not_tuple", "hook_not_tuple", "hook_list", "hook_count",
        "acc_hook_count", "tensor_hook_size", "tensor_hook_float", "tensor_hook_dtype",
        "leaf_hook_size", "post_acc_non_leaf", "post_acc_no_grad"])
def test_hook_misuse_errors_match_torch(register):
    same_outcome(_hook_error(register))


# -------------------------------------------------------------------------- Function
def _functions(lib):
    """Custom autograd Functions defined against ``lib`` (the same code in both)."""

    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_backward(x)
            ctx.k = k
            return x ** 3 * k

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 3 * x ** 2 * ctx.k, None

    class Probe(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b, c):
            ctx.log = [("forward", ctx.needs_input_grad)]
            return a * b * c

        @staticmethod
        def backward(ctx, g):
            ctx.log.append(("backward", ctx.needs_input_grad))
            return g * 2, g * 3, None

    class Two(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * 2, a * 3

        @staticmethod
        def backward(ctx, g1, g2):
            ctx.seen = (_val(g1), _val(g2))
            (a,) = ctx.saved_tensors
            return g1 * 2 + g2 * 3 * a

    class Ident(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a

        @staticmethod
        def backward(ctx, g):
            return g * 5

    class Sq(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return 2 * a * g

    class Split(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            idx = lib.tensor([1, 0])
            ctx.mark_non_differentiable(idx)
            return a * 1, idx

        @staticmethod
        def backward(ctx, g, g_idx):
            ctx.seen = _val(g_idx)
            return g

    class NoMaterialize(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.set_materialize_grads(False)
            return a * 2, a * 3

        @staticmethod
        def backward(ctx, g1, g2):
            ctx.seen = (g1 is None, g2 is None)
            return (g1 if g1 is not None else 0) + (g2 if g2 is not None else 0)

    class NoBackward(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

    return {f.__name__: f for f in (Cube, Probe, Two, Ident, Sq, functions(lib)["ExpOut"], Split,
                                     NoMaterialize, NoBackward)}


def test_function_forward_backward_and_node():
    def scenario(lib):
        F = _functions(lib)
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = F["Cube"].apply(x, 2.0)
        fn = y.grad_fn
        info = (repr(y), type(fn).__name__, fn.name(), fn.next_functions[0][1],
                type(fn.next_functions[0][0]).__name__, len(fn.next_functions),
                fn.saved_tensors[0] is x, fn.k, fn.needs_input_grad,
                repr(fn).startswith("<torch.autograd.function.CubeBackward object at"))
        y.sum().backward()
        return info, x.grad
    check_same(scenario)


def test_function_needs_input_grad_and_no_grad():
    def scenario(lib):
        F = _functions(lib)
        a = lib.tensor(1.0, requires_grad=True)
        b = lib.tensor(2.0)
        out = F["Probe"].apply(a, b, 3)
        out.backward()
        r = [out.grad_fn.log, a.grad, b.grad, out.requires_grad, out.is_leaf]
        with lib.no_grad():
            o2 = F["Probe"].apply(a, b, 3)
        r.append((o2.requires_grad, o2.grad_fn))
        o3 = F["Probe"].apply(b, b, 3)
        r.append((o3.requires_grad, o3.grad_fn))
        return r
    check_same(scenario)


def test_function_saved_tensors_are_freed_after_backward():
    def scenario(lib):
        F = _functions(lib)
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = F["Cube"].apply(x, 1.0)
        y.sum().backward(retain_graph=True)
        y.grad_fn.saved_tensors  # still there
        y.sum().backward()
        y.grad_fn.saved_tensors
    same_outcome(scenario)


def test_function_without_saved_tensors_backpropagates_twice():
    def scenario(lib):
        F = _functions(lib)
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = F["Ident"].apply(x).sum()
        y.backward()
        y.backward()
        return x.grad
    check_same(scenario)


def test_function_double_backward_through_differentiable_backward():
    def scenario(lib):
        F = _functions(lib)
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        y = F["Cube"].apply(x, 1.5)
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        (g2,) = lib.autograd.grad(g.sum(), x, create_graph=True)
        (g3,) = lib.autograd.grad(g2.sum(), x)
        return g, g2, g3, type(g.grad_fn).__name__
    check_same(scenario)


def test_function_multiple_outputs():
    def scenario(lib):
        F = _functions(lib)
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        p, q = F["Two"].apply(a)
        r = [p.grad_fn is q.grad_fn, type(p.grad_fn).__name__]
        s = p.sin() + q * 10
        r.append([(type(n).__name__, i) for n, i in s.grad_fn.next_functions])
        r.append([(type(n).__name__, i) for n, i in
                  s.grad_fn.next_functions[1][0].next_functions])
        s.sum().backward()
        r += [p.grad_fn.seen, a.grad.clone()]
        a.grad = None
        p, q = F["Two"].apply(a)
        q.sum().backward()  # output 0 gets no gradient: zeros are materialized
        r += [p.grad_fn.seen, a.grad]
        return r
    check_same(scenario)


def test_function_multiple_outputs_hooks_retain_grad_and_autograd_grad():
    def scenario(lib):
        F = _functions(lib)
        log = []
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        p, q = F["Two"].apply(a)
        q.register_hook(lambda g: log.append(("q", _val(g))))
        p.register_hook(lambda g: g * 100)
        q.retain_grad()
        p.retain_grad()
        p.grad_fn.register_prehook(lambda go: log.append(("pre", [_val(g) for g in go])))
        p.grad_fn.register_hook(lambda gi, go: log.append(
            ("post", [_val(g) for g in gi], [_val(g) for g in go])))
        loss = (p * 1 + q * 2).sum()
        gq, gp, ga = lib.autograd.grad(loss, [q, p, a], retain_graph=True)
        loss.backward()
        return log, gq, gp, ga, p.grad, q.grad, a.grad
    check_same(scenario)


def test_function_returning_its_input_gives_a_new_tensor():
    def scenario(lib):
        F = _functions(lib)
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        o = F["Ident"].apply(a)
        r = (o is a, type(o.grad_fn).__name__, a.grad_fn, a.is_leaf)
        o.sum().backward()
        return r, a.grad
    check_same(scenario)


def test_function_mark_non_differentiable_and_materialize():
    def scenario(lib):
        F = _functions(lib)
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        v, i = F["Split"].apply(a)
        r = [v.requires_grad, i.requires_grad, i.grad_fn, i.dtype == lib.int64]
        v.sum().backward()
        r += [v.grad_fn.seen, a.grad]
        p, q = F["NoMaterialize"].apply(a)
        q.sum().backward()
        r += [p.grad_fn.seen, a.grad]
        return r
    check_same(scenario)


@pytest.mark.parametrize("which", ["input", "output"])
def test_function_saved_tensor_modified_in_place(which):
    def scenario(lib):
        F = _functions(lib)
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        if which == "input":
            b = a * 1
            c = F["Sq"].apply(b)
            b.add_(1)
        else:
            c = F["ExpOut"].apply(a)
            c.mul_(2)
        c.sum().backward()
    same_outcome(scenario)


class _Ret:
    """What a test backward returns, chosen per scenario."""


@pytest.mark.parametrize("result", [
    "ok", "wrong_shape", "grad_for_number", "extra_none", "extra_value", "float",
    "expandable", "other_dtype", "unchecked_shape_for_no_grad_input",
])
def test_function_backward_results_checked_as_torch(result):
    def scenario(lib):
        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, k, x, y):
                return x * k + y

            @staticmethod
            def backward(ctx, g):
                return {
                    "ok": lambda: (None, g, g),
                    "wrong_shape": lambda: (None, g.sum(), g),
                    "grad_for_number": lambda: (g, g, g),
                    "extra_none": lambda: (None, g, g, None, None),
                    "extra_value": lambda: (None, g, g, 1),
                    "float": lambda: (None, 3.0, None),
                    "expandable": lambda: (None, g.expand(3, 2), None),
                    "other_dtype": lambda: (None, g.double(), None),
                    "unchecked_shape_for_no_grad_input": lambda: (None, g, g.sum()),
                }[result]()

        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = lib.tensor([1.0, 2.0], requires_grad=result == "ok")
        F.apply(2.0, x, y).sum().backward()
        return x.grad, x.grad.dtype == lib.float32
    same_outcome(scenario, expect_error=False)
    if outcome(scenario, torch)[0][0] == "ok":
        check_same(scenario)


def test_function_without_backward_raises_as_torch():
    def scenario(lib):
        F = _functions(lib)
        F["NoBackward"].apply(lib.tensor(1.0, requires_grad=True)).backward()
    same_outcome(scenario)


def test_function_instantiation_warns_as_torch():
    def scenario(lib):
        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a
        F()
    same_outcome(scenario, expect_error=False)
    with pytest.warns(DeprecationWarning, match="should not be instantiated"):
        scenario(symgrad)


def test_function_gradcheck_and_node_called_by_hand():
    F = _functions(symgrad)
    x = symgrad.tensor([0.3, -1.2], dtype=symgrad.float64, requires_grad=True)
    assert symgrad.autograd.gradcheck(lambda t: F["Cube"].apply(t, 2.0), (x,))
    assert symgrad.autograd.gradgradcheck(lambda t: F["Cube"].apply(t, 2.0), (x,))
    y = F["Cube"].apply(x, 2.0)
    # As PyTorch's: a custom Function's node runs the user's backward through .apply
    # (calling the node itself is a TypeError there).
    g, none = y.grad_fn.apply(symgrad.ones(2, dtype=symgrad.float64))
    assert none is None
    np.testing.assert_allclose(g.detach().numpy(), 6 * x.detach().numpy() ** 2)


def test_user_functions_are_not_added_to_the_op_table():
    _functions(symgrad)
    assert not [k for k in symgrad.ops.OPS if k.startswith("function:")]


# -------------------------------------------------------------------------- Parameter
def test_parameter_basics():
    def scenario(lib):
        p = lib.nn.Parameter(lib.tensor([1.0, 2.0]))
        r = [repr(p), str(p), p.is_leaf, p.requires_grad, p.grad_fn,
             isinstance(p, lib.Tensor), repr(type(p))]
        r.append([type(v).__name__ for v in (p * 2, p + 1, p.sum(), p[0], -p, p.detach(),
                                              p.data, p.clone(), p.exp())])
        r.append(repr(p * 2))
        (p * p).sum().backward()
        r.append(p.grad)
        with lib.no_grad():
            p.add_(1)
        r.append(repr(p))
        r.append(repr(lib.nn.Parameter(lib.tensor([1.0, 2.0]), requires_grad=False)))
        r.append(repr(lib.nn.Parameter(lib.tensor([1, 2]), requires_grad=False)))
        r.append(repr(lib.nn.Parameter()))
        q = lib.tensor([1.0, 2.0])
        pq = lib.nn.Parameter(q)
        q.add_(5)
        r.append((repr(pq), pq._version))
        return r
    check_same(scenario)


@pytest.mark.parametrize("scenario", [
    lambda lib: lib.nn.Parameter(lib.tensor([1, 2])),
    lambda lib: lib.nn.Parameter(lib.tensor([1.0, 2.0])).add_(1),
], ids=["int", "inplace"])
def test_parameter_errors(scenario):
    same_outcome(scenario)


# -------------------------------------------------------------------------- legacy
LEGACY = {
    "tensor_list": lambda lib: lib.Tensor([1, 2]),
    "tensor_sizes": lambda lib: lib.Tensor(2, 3).shape,
    "tensor_empty": lambda lib: lib.Tensor(),
    "tensor_zero_size": lambda lib: lib.Tensor(0),
    "tensor_nested": lambda lib: lib.Tensor([[1, 2], [3, 4]]).requires_grad_(),
    "tensor_tuple": lambda lib: lib.Tensor((1, 2)),
    "float": lambda lib: lib.FloatTensor([1, 2]),
    "double": lambda lib: lib.DoubleTensor([1, 2]),
    "half": lambda lib: lib.HalfTensor([1, 2.5]),
    "long": lambda lib: lib.LongTensor([1.7, 2]),
    "bool": lambda lib: lib.BoolTensor([1, 0]),
    "double_sizes": lambda lib: (lib.DoubleTensor(2).shape, lib.DoubleTensor(2).dtype),
    "type_is_tensor": lambda lib: [type(c([1.0])).__name__ for c in (
        lib.Tensor, lib.FloatTensor, lib.DoubleTensor, lib.HalfTensor)],
    "isinstance": lambda lib: [isinstance(lib.tensor([1.0]), lib.FloatTensor),
                               isinstance(lib.tensor([1.0]), lib.DoubleTensor),
                               isinstance(lib.tensor([1]), lib.LongTensor),
                               isinstance(1.0, lib.FloatTensor),
                               isinstance(lib.tensor([1.0]), lib.Tensor)],
    "type_names": lambda lib: [lib.tensor([1.0]).type(), lib.DoubleTensor([1]).type(),
                               repr(lib.FloatTensor), repr(lib.Tensor)],
    "dtypes": lambda lib: [lib.Tensor([1.0]).dtype, lib.HalfTensor([1.0]).dtype],
    "alias_of_int_tensor": lambda lib: lib.Tensor(lib.tensor([1, 2])),
    "alias_shares_memory": lambda lib: _alias_shares(lib),
    "tutorial": lambda lib: _legacy_tutorial(lib),
}


def _alias_shares(lib):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.Tensor(a)
    r = [repr(b), b.requires_grad, b._version]
    with lib.no_grad():
        b[0] = 5
    return r + [repr(a), a._version, b._version]


def _legacy_tutorial(lib):
    x = lib.Tensor([4])
    x.requires_grad_()
    f = 5 * x ** 2 + 3
    f.backward()
    return repr(x.grad), repr(f)


@pytest.mark.parametrize("which", sorted(LEGACY))
def test_legacy_constructors(which):
    want = LEGACY[which](torch)
    got = LEGACY[which](symgrad)
    if isinstance(want, (torch.Tensor, symgrad.Tensor)):
        assert repr(got) == repr(want)
    else:
        assert str(got) == str(want)


@pytest.mark.parametrize("scenario", [
    lambda lib: lib.DoubleTensor(lib.tensor([1.0, 2.0])),
    lambda lib: lib.Tensor([1, 2], requires_grad=True),
    lambda lib: lib.FloatTensor([1, 2], requires_grad=True),
    lambda lib: lib.Tensor([1, 2], foo=1),
    lambda lib: lib.Tensor(2.5),
    lambda lib: lib.Tensor("ab"),
    lambda lib: lib.Tensor(2, 3.0),
], ids=["dtype_mismatch", "requires_grad_kw", "typed_requires_grad_kw", "unknown_kw",
        "number", "string", "float_size"])
def test_legacy_constructor_errors(scenario):
    same_outcome(scenario)


# -------------------------------------------------------------------------- views
VIEW_IN_PLACE = {
    "slice_of_non_leaf": lambda lib: _view_scenario_slice(lib),
    "base_changed_after_view": lambda lib: _view_scenario_base_changed(lib),
    "setitem_non_leaf": lambda lib: _view_scenario_setitem(lib),
    "transpose_column": lambda lib: _view_scenario_transpose(lib),
    "base_without_grad": lambda lib: _view_scenario_base_without_grad(lib),
    "view_of_view": lambda lib: _view_scenario_view_of_view(lib),
    "no_grad_writes_through": lambda lib: _view_scenario_no_grad(lib),
    "zero_d_base": lambda lib: _view_scenario_zero_d(lib),
    "create_graph": lambda lib: _view_scenario_create_graph(lib),
    "single_element_view": lambda lib: _view_scenario_element(lib),
}


def _view_scenario_element(lib):
    a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = a * 1
    v = y[1]
    v.mul_(5)
    (v * 2 + y.sum()).backward()
    return a.grad, type(v.grad_fn).__name__, y


def _view_scenario_slice(lib):
    a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = a * 1
    v = y[0:2]
    v.mul_(2)
    r = (type(y.grad_fn).__name__, y.grad_fn.name(), type(v.grad_fn).__name__,
         [type(n).__name__ if n is not None else None for n, _ in y.grad_fn.next_functions],
         y._version, v._version, repr(y))
    (y * lib.tensor([1.0, 10.0, 100.0])).sum().backward()
    return r, a.grad


def _view_scenario_base_changed(lib):
    a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = a * 1
    v = y[0:2]
    y.mul_(3)
    z = v * v
    r = (repr(v), repr(z), type(z.grad_fn.next_functions[0][0]).__name__)
    z.sum().backward()
    return r, a.grad


def _view_scenario_setitem(lib):
    a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = lib.tensor(5.0, requires_grad=True)
    y = a * 1
    y[1] = w * 2
    (y * y).sum().backward()
    return a.grad, w.grad, y.grad_fn.name()


def _view_scenario_transpose(lib):
    a = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = a * 1
    col = y.t()[0]
    col.mul_(10)
    (y * lib.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    return a.grad, y, type(col.grad_fn).__name__


def _view_scenario_base_without_grad(lib):
    base = lib.zeros(2, 3)
    w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    base[1].add_(w * 2)
    r = (base.requires_grad, base.grad_fn.name(), base.is_leaf)
    (base * base).sum().backward()
    return r, w.grad, base


def _view_scenario_view_of_view(lib):
    a = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    y = a * 2
    m = y.view(2, 2)
    m[0].mul_(m[1].detach().clone())
    m[1, 1] = 0.0
    y.sum().backward()
    return a.grad, y, type(m.grad_fn).__name__


def _view_scenario_no_grad(lib):
    x = lib.zeros(3)
    x[0].add_(1)
    x[1:].mul_(3)
    v = x[2]
    v += 5
    t = lib.ones(2, 2)
    t.t()[0].fill_(7)
    return x, x._version, t


def _view_scenario_zero_d(lib):
    a = lib.tensor(2.0, requires_grad=True)
    z = a * 1
    v = z.view(-1)
    v.mul_(3)
    out = v.view(z.shape) + z
    out.backward()
    return a.grad, out, type(v.grad_fn).__name__, z.grad_fn.name()


def _view_scenario_create_graph(lib):
    a = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
    y = a ** 2
    y[1:].mul_(a[1:])
    (g,) = lib.autograd.grad(y.sum(), a, create_graph=True)
    (g2,) = lib.autograd.grad(g.sum(), a)
    return g, g2


@pytest.mark.parametrize("which", sorted(VIEW_IN_PLACE))
def test_in_place_through_views_matches_torch(which):
    check_same(VIEW_IN_PLACE[which])


def test_in_place_through_view_frees_the_wrapped_op_after_backward():
    def scenario(lib):
        a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = a * 1
        y[0:2].mul_(lib.tensor([2.0, 3.0], requires_grad=True))
        s = y.sum()
        s.backward(retain_graph=True)
        s.backward()
        s.backward()
    same_outcome(scenario)


def test_in_place_on_expanded_view_raises_as_torch():
    def scenario(lib):
        x = lib.zeros(3)
        x.expand(2, 3).add_(1)
    same_outcome(scenario)


def test_in_place_through_view_checks_saved_versions():
    def scenario(lib):
        a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = a * 2
        z = y * y  # saves y
        y[1:].mul_(2)
        z.sum().backward()
    same_outcome(scenario)


def test_detached_view_shares_the_version_counter_of_the_base():
    def scenario(lib):
        a = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        m = a.exp().view(2, 2)
        d = m[1].detach()
        m[0].mul_(d)  # saves d
        m[1, 1] = 0.0  # bumps the counter d shares
        m.sum().backward()
    same_outcome(scenario)


def test_grad_mode_decorators_with_and_without_parentheses_and_generators():
    def scenario(lib):
        x = lib.ones(2, requires_grad=True)

        def probe(a):
            return (a * 2).requires_grad, lib.is_grad_enabled()

        r = [lib.no_grad(probe)(x), lib.no_grad()(probe)(x), lib.inference_mode(probe)(x),
             lib.inference_mode()(probe)(x), lib.inference_mode(False)(probe)(x)]
        with lib.no_grad():
            r.append(lib.enable_grad(probe)(x))
        r.append(lib.set_grad_enabled(False)(probe)(x))
        r.append(lib.is_grad_enabled())

        @lib.no_grad()
        def gen():
            yield probe(x)
            got = yield lib.is_grad_enabled()
            yield got

        g = gen()
        r.append(next(g))
        r.append(lib.is_grad_enabled())  # the mode is restored between steps
        r.append(next(g))
        r.append(g.send("sent"))
        r.append(repr(lib.set_grad_enabled(True)))
        r.append(lib.no_grad.__name__)
        return r
    check_same(scenario)


def test_node_classes_print_as_pytorch_prints_them():
    outs = []
    for lib in (torch, symgrad):
        x = lib.ones(2, requires_grad=True)
        y = (x * 2).sum()
        outs.append([repr(type(y.grad_fn)), repr(type(y.grad_fn.next_functions[0][0])),
                     repr(type(y.grad_fn.next_functions[0][0].next_functions[0][0]))])
    assert outs[0] == outs[1]
