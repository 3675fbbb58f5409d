"""A node that saves its op's own outputs (``("result", k)`` in the record's plan) against
PyTorch 2.13: ``F.group_norm``'s node keeps its mean and rstd (outputs 1 and 2, saved as
``result1`` and ``result2``) with no patching after ``apply``: what a saved-tensor pack
hook sees and in which order, the saved attributes, the second order through them."""
from __future__ import annotations

import numpy as np
import pytest

import symgrad
from symgrad import ops
from conftest import check_same

torch = pytest.importorskip("torch")


def _inputs(L, weight: bool = True):
    x = L.tensor(np.linspace(-1.0, 2.0, 24).reshape(2, 4, 3) ** 2, requires_grad=True)
    w = L.tensor([1.0, -0.5, 2.0, 0.25], dtype=L.float64, requires_grad=True) \
        if weight else None
    b = L.tensor([0.1, 0.2, -0.3, 0.0], dtype=L.float64, requires_grad=True) \
        if weight else None
    return x, w, b


def test_the_plan_names_the_outputs():
    plan = dict(zip(ops.NATIVE_GROUP_NORM.saves, ops.NATIVE_GROUP_NORM.plan))
    assert plan["result1"] == ("result", 1) and plan["result2"] == ("result", 2)
    assert plan["input"] == ("input", 0)
    # a single-output op's saved outputs are derived as before (layer norm's mean, rstd)
    assert dict(zip(ops.NATIVE_LAYER_NORM.saves, ops.NATIVE_LAYER_NORM.plan))["result1"] \
        == ("derived", "result1")


@pytest.mark.parametrize("weight", [True, False], ids=["affine", "plain"])
def test_pack_and_unpack_order(weight):
    """Operands by name, then the outputs, as PyTorch's pack hook sees them; unpacked in
    that order by backward."""
    def run(L):
        x, w, b = _inputs(L, weight)
        events = []

        def pack(t):
            events.append(("pack", tuple(t.shape), t.grad_fn is not None))
            return t

        def unpack(t):
            events.append(("unpack", tuple(t.shape)))
            return t
        with L.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = L.nn.functional.group_norm(x, 2, w, b)
        events.append(("forward done",))
        (y * y).sum().backward()
        return [events, x.grad]
    check_same(run)


def test_saved_outputs_as_torch():
    """``_saved_result1`` unpacks as a new tensor of the node (not the output object), a
    ``_raw_saved_result1`` exists, and the values are each group's mean and rstd."""
    def run(L):
        x, w, b = _inputs(L)
        node = L.nn.functional.group_norm(x, 2, w, b).grad_fn
        mean, rstd = node._saved_result1, node._saved_result2
        return [mean, rstd, type(mean.grad_fn).__name__, mean.grad_fn is node,
                mean._version, hasattr(node, "_raw_saved_result1"),
                node._saved_input is x]
    check_same(run)


def test_second_order_through_the_saved_outputs():
    """Gradients of gradients reach the input through the node's outputs 1 and 2."""
    def run(L):
        x, w, b = _inputs(L)
        y = L.nn.functional.group_norm(x, 2, w, b)
        gx, gw = L.autograd.grad((y ** 3).sum(), (x, w), create_graph=True)
        return L.autograd.grad((gx * gx).sum() + gw.sum(), (x, w))
    check_same(run, rtol=1e-5, atol=1e-6)
