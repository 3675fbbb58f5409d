"""Convolution as PyTorch records it: ``convolution`` (``ConvolutionBackward0``, what
``F.conv1d`` and ``F.conv2d`` run) and its gradients, ``convolution_backward``
(``ConvolutionBackwardBackward0``: one op per output, input, weight and bias).

A convolution is bilinear in (input, weight), plus the bias: with ``B(x, w)`` the
correlation, its gradients are the two adjoints ``Bᵢ(g, w)`` (a transposed convolution,
for the input) and ``Bᵥ(g, x)`` (for the weight), and each of those is bilinear again
with adjoints among ``B``, ``Bᵢ`` and ``Bᵥ``: the three ops below differentiate one
another to any order.

The kernels are vectorised numpy for any number of spatial dims: the windows of the
padded input come from ``sliding_window_view`` (strided and dilated by slicing), products
are ``tensordot`` per group (they run on object arrays of SymPy expressions too), and the
transposed convolution adds each kernel offset's products back into place (one slice
per kernel element, never a loop over pixels).

Layer 1: numpy only.
"""
from __future__ import annotations

import itertools

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from .joint import gradient
from .layers import pad_widths
from .record import Op
from .tables import EVERY_OUTPUT

__all__ = ["CONVOLUTION", "CONVOLUTION_BACKWARD", "CONVOLUTION_BACKWARD_INPUT",
           "CONVOLUTION_BACKWARD_WEIGHT", "CONVOLUTION_BACKWARD_BIAS", "REFLECTION_PAD1D",
           "REFLECTION_PAD1D_BACKWARD", "REFLECTION_PAD2D", "REFLECTION_PAD2D_BACKWARD",
           "REFLECTION_PAD3D", "REFLECTION_PAD3D_BACKWARD", "REPLICATION_PAD1D",
           "REPLICATION_PAD1D_BACKWARD", "REPLICATION_PAD2D", "REPLICATION_PAD2D_BACKWARD",
           "REPLICATION_PAD3D", "REPLICATION_PAD3D_BACKWARD", "PADS", "pad_index",
           "conv_output_size", "window_view"]

# Drawings: an op's local derivative is its rule printed (symgrad.ops.formula); a
# ``local=`` below overrides it where the printed rule reads worse than the label:
# a correlation (⋆) and its adjoints have no elementwise formula, so the labels say which
# product.


def conv_output_size(size: int, kernel: int, stride: int, padding: int,
                     dilation: int) -> int:
    """The length of one spatial dim of a convolution's result."""
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def _pad(x, lo: tuple, hi: tuple, value=0):
    """``x`` with its trailing ``len(lo)`` dims padded by ``value`` (object arrays too)."""
    x = np.asarray(x)
    if not any(lo) and not any(hi):
        return x
    return pad_widths(x, [(0, 0)] * (x.ndim - len(lo)) + list(zip(lo, hi)), value)


def window_view(xp, kernel: tuple, stride: tuple, dilation: tuple, out: tuple):
    """The windows of the (already padded) ``xp`` as a view ``(..., *out, *kernel)``."""
    nd = len(kernel)
    axes = tuple(range(xp.ndim - nd, xp.ndim))
    span = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation))
    w = sliding_window_view(xp, span, axis=axes)
    index = (Ellipsis,) + tuple(slice(0, s * (o - 1) + 1, s) for s, o in zip(stride, out)) \
        + tuple(slice(None, None, d) for d in dilation)
    return w[index]


def _full(values, nd: int) -> tuple:
    """A per-dim tuple: PyTorch saves ``padding='valid'`` as one zero, ``(0,)``."""
    values = tuple(values)
    return values * nd if len(values) == 1 else values


def _geometry(x_shape, w_shape, stride, padding, dilation):
    kernel = tuple(w_shape[2:])
    out = tuple(conv_output_size(n, k, s, p, d) for n, k, s, p, d in
                zip(x_shape[2:], kernel, stride, padding, dilation))
    return kernel, out


def _columns(x, kernel, stride, padding, dilation, out, groups):
    """im2col: per group, the windows of the padded ``x`` as a matrix
    ``(C/g · prod(kernel), N · prod(out))`` (rows channel-major, so that the copy runs
    along the input's contiguous last dim)."""
    nd = len(kernel)
    win = window_view(_pad(x, padding, padding), kernel, stride, dilation, out)
    # (N, C, *out, *kernel) -> (C, *kernel, N, *out)
    win = win.transpose((1,) + tuple(range(2 + nd, 2 + 2 * nd)) + (0,)
                        + tuple(range(2, 2 + nd)))
    cg = x.shape[1] // groups
    return [win[k * cg:(k + 1) * cg].reshape(cg * int(np.prod(kernel)), -1)
            for k in range(groups)]


def _by_group(a, groups):
    """``a`` (rows first) split into ``groups`` equal blocks of rows."""
    n = a.shape[0] // groups
    return [a[k * n:(k + 1) * n] for k in range(groups)]


def _convolution(x, w, b, stride, padding, dilation, transposed, output_padding, groups):
    """``B(x, w) + b``: each output channel correlates its group's input channels; with
    ``transposed``, ``Bᵢ(x, w) + b`` (the adjoint in the input: a transposed convolution,
    ``conv_transpose2d``, whose weight is ``(C_in, C_out/groups, *kernel)``)."""
    if transposed:
        y = _transposed(x, w, stride, padding, dilation, output_padding, groups)
        if b is not None:
            y = y + np.asarray(b).reshape((-1,) + (1,) * (y.ndim - 2))
        return y
    x, w = np.asarray(x), np.asarray(w)
    padding = _full(padding, x.ndim - 2)
    kernel, out = _geometry(x.shape, w.shape, stride, padding, dilation)
    nd = len(kernel)
    cols = _columns(x, kernel, stride, padding, dilation, out, groups)
    y = [wk.reshape(wk.shape[0], -1) @ ck for wk, ck in zip(_by_group(w, groups), cols)]
    y = (y[0] if groups == 1 else np.concatenate(y)).reshape((w.shape[0], x.shape[0]) + out)
    if b is not None:
        y = y + np.asarray(b).reshape((-1,) + (1,) * (nd + 1))
    y = y.swapaxes(0, 1)  # (O, N, *out) -> (N, O, *out)
    return np.ascontiguousarray(y) if y.dtype != object else y


def _transposed(x, w, stride, padding, dilation, output_padding, groups):
    """The transposed convolution of ``x`` with ``w``: ``Bᵢ(x, w)`` at PyTorch's output size
    ``(n - 1)·stride - 2·padding + dilation·(k - 1) + output_padding + 1``."""
    x, w = np.asarray(x), np.asarray(w)
    nd = x.ndim - 2
    padding, output_padding = _full(padding, nd), _full(output_padding, nd)
    out = tuple((n - 1) * s - 2 * p + d * (k - 1) + o + 1 for n, s, p, d, k, o in
                zip(x.shape[2:], stride, padding, dilation, w.shape[2:], output_padding))
    return _backward_input(x, (x.shape[0], w.shape[1] * groups) + out, w, stride, padding,
                           dilation, groups)


def _crop(y, shape):
    """``y`` cut to ``shape``'s spatial sizes (an output padding of a transposed convolution
    at least its stride leaves rows its adjoint does not reach)."""
    return y[(Ellipsis,) + tuple(slice(0, n) for n in shape[2:])]


def _adjoint_input(g, x, w, stride, padding, dilation, transposed, output_padding, groups):
    """The gradient in the input: ``Bᵢ(g, w)``, or for a transposed convolution ``B(g, w)``."""
    if transposed:
        return _crop(_convolution(g, w, None, stride, padding, dilation, False, (0,), groups),
                     np.shape(x))
    return _backward_input(g, np.shape(x), w, stride, padding, dilation, groups)


def _adjoint_weight(g, x, w, stride, padding, dilation, transposed, output_padding, groups):
    """The gradient in the weight: ``Bᵥ(g, x)``, or for a transposed convolution
    ``Bᵥ(x, g)`` (the roles of input and output exchanged)."""
    if transposed:  # (windows of g as many as x has positions: an output padding unread)
        return _backward_weight(x, g, np.shape(w), stride, padding, dilation, groups)
    return _backward_weight(g, x, np.shape(w), stride, padding, dilation, groups)


def _backward_input(g, x_shape, w, stride, padding, dilation, groups):
    """``Bᵢ(g, w)``: the adjoint of the convolution in its input (a transposed
    convolution), ``x_shape`` the input's shape: per kernel offset, the products added
    back where that offset's windows read."""
    g, w = np.asarray(g), np.asarray(w)
    nd = w.ndim - 2
    padding = _full(padding, nd)
    kernel, out = tuple(w.shape[2:]), tuple(g.shape[2:])
    n, cg = g.shape[0], w.shape[1]
    # per group: (Og, K·Cg)ᵀ @ (Og, N·out) -> (*kernel, Cg, N, *out), each offset's block
    # contiguous
    gm = g.swapaxes(0, 1).reshape(g.shape[1], -1)
    order = (0,) + tuple(range(2, 2 + nd)) + (1,)
    cols = [(wk.transpose(order).reshape(wk.shape[0], -1).T @ gk).reshape(
        kernel + (cg, n) + out) for wk, gk in zip(_by_group(w, groups), _by_group(gm, groups))]
    cols = cols[0] if groups == 1 else np.concatenate(cols, axis=nd)
    padded = tuple(size + 2 * p for size, p in zip(x_shape[2:], padding))
    xp = np.zeros((x_shape[1], n) + padded, dtype=cols.dtype)
    for offset in itertools.product(*(range(k) for k in kernel)):
        where = tuple(slice(o * d, o * d + s * (m - 1) + 1, s)
                      for o, d, s, m in zip(offset, dilation, stride, out))
        xp[(slice(None), slice(None)) + where] += cols[offset]
    xp = xp[(slice(None), slice(None)) + tuple(slice(p, p + size) for p, size in
                                               zip(padding, x_shape[2:]))].swapaxes(0, 1)
    return np.ascontiguousarray(xp) if xp.dtype != object else xp


def _backward_weight(g, x, w_shape, stride, padding, dilation, groups):
    """``Bᵥ(g, x)``: the adjoint of the convolution in its weight, ``w_shape`` its shape."""
    g, x = np.asarray(g), np.asarray(x)
    nd = x.ndim - 2
    padding = _full(padding, nd)
    kernel, out = tuple(w_shape[2:]), tuple(g.shape[2:])
    cols = _columns(x, kernel, stride, padding, dilation, out, groups)
    gm = g.swapaxes(0, 1).reshape(g.shape[1], -1)
    parts = [gk @ ck.T for gk, ck in zip(_by_group(gm, groups), cols)]
    return (parts[0] if groups == 1 else np.concatenate(parts)).reshape(tuple(w_shape))


def _backward_bias(g):
    g = np.asarray(g)
    return np.sum(g, axis=(0,) + tuple(range(2, g.ndim)))


# -- the rules ---------------------------------------------------------------------------------
# (each rule reads both saved tensors, as PyTorch's one formula for the three inputs does:
# both are kept whichever inputs require grad)
_ATTRS = ("stride", "padding", "dilation", "transposed", "output_padding", "groups")
_SAVES = ("dilation", "groups", "input", "output_padding", "padding", "stride", "transposed",
          "weight")


def _conv_grad(which):
    """The rule of input ``which``: output ``which`` of ``convolution_backward`` (one node
    for the three under ``create_graph``, see symgrad.ops.joint)."""
    def rule(m, grad, bias_sym_sizes_opt, dilation, groups, input, output_padding, padding,
             stride, transposed, weight):
        mask = (_wanted(input), _wanted(weight), tuple(bias_sym_sizes_opt) != (0,))
        return gradient(m, CONVOLUTION_BACKWARD, which, (grad, input, weight),
                        (stride, padding, dilation, transposed, output_padding, groups), mask)
    rule.__name__ = ("grad_input", "grad_weight", "grad_bias")[which]
    return rule


def _wanted(saved) -> bool:
    """Whether a saved operand can want a gradient (a recorded tensor that requires none
    cannot)."""
    return bool(getattr(saved, "requires_grad", True))


def _double_grad_output(m, grad, dilation, grad_output, groups, input, output_padding,
                        padding, stride, transposed, weight, *, wrt_weight):
    """The gradient of ``Bᵢ(g, w)`` (``wrt_weight``: of ``Bᵥ(g, x)``) in ``g``: the
    convolution of ``grad`` with the weight (of the input with ``grad``)."""
    if wrt_weight:
        return m.call(CONVOLUTION, input, grad, None, stride, padding, dilation, transposed,
                      output_padding, groups)
    return m.call(CONVOLUTION, grad, weight, None, stride, padding, dilation, transposed,
                  output_padding, groups)


def _bi_grad_weight(m, grad, dilation, grad_output, groups, input, output_padding, padding,
                    stride, transposed, weight):
    return m.call(CONVOLUTION_BACKWARD_WEIGHT, grad_output, grad, weight, stride, padding,
                  dilation, transposed, output_padding, groups)


def _bw_grad_input(m, grad, dilation, grad_output, groups, input, output_padding, padding,
                   stride, transposed, weight):
    return m.call(CONVOLUTION_BACKWARD_INPUT, grad_output, input, grad, stride, padding,
                  dilation, transposed, output_padding, groups)


def _bb_grad_output(m, grad, dilation, grad_output, groups, input, output_padding, padding,
                    stride, transposed, weight):
    shape = m.shape(grad_output)
    column = m.reshape(grad, (shape[1],) + (1,) * (len(shape) - 2))
    return m.broadcast_to(column, shape)


CONVOLUTION = Op(
    "convolution", inputs=("input", "weight", "bias"), attrs=_ATTRS,
    forward=_convolution,
    saves=("bias_sym_sizes_opt",) + _SAVES,
    derive={"bias_sym_sizes_opt": lambda arrays, attrs:
            (0,) if arrays[2] is None else tuple(np.shape(arrays[2]))},
    grads=(_conv_grad(0), _conv_grad(1), _conv_grad(2)),
    local=("{weight}ᵀ ⋆ (·)", "(·) ⋆ {input}", "Σ"), symbol="conv",
    doc="the correlation of input with weight (groups, stride, padding, dilation), plus bias")

_BACKWARD = dict(inputs=("grad_output", "input", "weight"), attrs=_ATTRS,
                 saves=_SAVES[:1] + ("grad_output",) + _SAVES[1:],
                 node="ConvolutionBackwardBackward0")

def _backward_part(part: str, forward, others: tuple, local: tuple, doc: str) -> Op:
    """convolution_backward's gradient in the input or in the weight as an op of its own:
    grad_output's rule is a convolution again (``_double_grad_output``), ``others`` the
    rules of input and weight."""
    wrt_weight = part == "weight"
    return Op("convolution_backward", key=f"convolution_backward_{part}", **_BACKWARD,
              forward=forward,
              grads=(lambda m, grad, *saved: _double_grad_output(m, grad, *saved,
                                                                 wrt_weight=wrt_weight),)
              + others, local=local, symbol=f"conv backward {part}", doc=doc)


CONVOLUTION_BACKWARD_INPUT = _backward_part(
    "input", _adjoint_input, (None, _bi_grad_weight),
    ("{weight} ⋆ (·)", None, "(·) ⋆ {grad_output}"),
    "the convolution's gradient in its input: a transposed convolution of grad_output")
CONVOLUTION_BACKWARD_WEIGHT = _backward_part(
    "weight", _adjoint_weight, (_bw_grad_input, None),
    ("{input} ⋆ (·)", "{grad_output}ᵀ ⋆ (·)", None), "the convolution's gradient in its weight")

CONVOLUTION_BACKWARD_BIAS = Op(
    "convolution_backward", key="convolution_backward_bias", **_BACKWARD,
    forward=lambda g, x, w, *attrs: _backward_bias(g),
    grads=(_bb_grad_output, None, None),
    local=("1", None, None), symbol="conv backward bias",
    doc="the convolution's gradient in its bias: grad_output summed but for the channels")


_PARTS = (CONVOLUTION_BACKWARD_INPUT, CONVOLUTION_BACKWARD_WEIGHT, CONVOLUTION_BACKWARD_BIAS)


def _convolution_backward(g, x, w, stride, padding, dilation, transposed, output_padding,
                          groups, output_mask):
    """The gradients in input, weight and bias that ``output_mask`` asks for (else None)."""
    return tuple(part.forward(g, x, w, stride, padding, dilation, transposed, output_padding,
                              groups) if wanted else None
                 for part, wanted in zip(_PARTS, output_mask))


def _joint_grad(j):
    """The rule of input ``j`` of ``convolution_backward``: the sum over its outputs of
    the rule of that output's op (the gradients of outputs not computed are None)."""
    def rule(m, grads, dilation, grad_output, groups, input, output_padding, padding,
             stride, transposed, weight):
        total = None
        for part, gk in zip(_PARTS, grads):
            r = part.grads[j]
            if gk is not None and r is not None:
                term = r(m, gk, dilation, grad_output, groups, input, output_padding, padding,
                         stride, transposed, weight)
                total = term if total is None else total + term
        return total
    rule.__name__ = _BACKWARD["inputs"][j]
    return rule


CONVOLUTION_BACKWARD = Op(
    "convolution_backward", **dict(_BACKWARD, attrs=_ATTRS + ("output_mask",)),
    outputs=("grad_input", "grad_weight", "grad_bias"), forward=_convolution_backward,
    grads=tuple(_joint_grad(j) for j in range(3)),
    local=("{weight} ⋆ (·) + (·) ⋆ {input} + (·)", "(·) ⋆ {grad_output}",
           "{grad_output}ᵀ ⋆ (·)"), symbol="conv backward",
    doc="the convolution's gradients in input, weight and bias (those output_mask asks "
        "for): one node with three outputs")
EVERY_OUTPUT.register(True, CONVOLUTION_BACKWARD)


# -- the padding modes of the convolution modules (F.pad's reflect and replicate) -------------
def pad_index(n: int, lo: int, hi: int, mode: str) -> np.ndarray:
    """For each position of a padded dim of length ``n`` (``lo`` before, ``hi`` after;
    negative: cut), the position of the input it copies: ``"reflect"`` mirrors about the
    edge elements, ``"replicate"`` repeats them, ``"circular"`` wraps around."""
    i = np.arange(-lo, n + hi)
    if mode == "reflect":
        i = np.abs(i)
        return np.where(i >= n, 2 * (n - 1) - i, i)
    if mode == "replicate":
        return np.clip(i, 0, n - 1)
    return i % n if n else i


def _padded(mode: str, nd: int):
    def forward(x, padding):
        x = np.asarray(x)
        for k in range(nd):
            axis = x.ndim - 1 - k
            x = np.take(x, pad_index(x.shape[axis], padding[2 * k], padding[2 * k + 1], mode),
                        axis=axis)
        return x
    return forward


def _pad_adjoint(mode: str, nd: int):
    """The adjoint of the padding: each input position gets the sum of the gradients of
    the positions that copy it (one matrix product per padded dim)."""
    def forward(g, x, padding):
        g = np.asarray(g)
        for k in range(nd):
            axis = g.ndim - 1 - k
            n = np.shape(x)[axis]
            index = pad_index(n, padding[2 * k], padding[2 * k + 1], mode)
            picks = np.zeros((len(index), n), dtype=int if g.dtype == object else g.dtype)
            picks[np.arange(len(index)), index] = 1
            g = np.moveaxis(np.tensordot(g, picks, axes=([axis], [0])), -1, axis)
        return np.ascontiguousarray(g) if g.dtype != object else g
    return forward


def _pad_ops(mode: str, word: str, nd: int) -> tuple:
    """``reflection_pad{nd}d`` (``ReflectionPad{nd}DBackward0``) and its gradient,
    ``reflection_pad{nd}d_backward`` (``ReflectionPad{nd}DBackwardBackward0``): the
    padding's adjoint, whose own gradient pads again (in ``self``, read only for its
    shape, zeros: an edge, as in PyTorch)."""
    node = f"{word.capitalize()}Pad{nd}D"
    backward = Op(
        f"{word}_pad{nd}d_backward", inputs=("grad_output", "self"), attrs=("padding",),
        forward=_pad_adjoint(mode, nd), saves=("padding", "_self_shape"),
        derive={"self_shape": lambda arrays, attrs: tuple(np.shape(arrays[1]))},
        grads=(lambda m, grad, padding, shape: m.call(pad, grad, padding),
               lambda m, grad, padding, shape: m.new_zeros(grad, shape)),
        node=f"{node}BackwardBackward0", local=(f"{mode} pad", None),
        symbol=f"{mode} pad backward",
        doc=f"the {mode} padding's gradient: each input element gets the gradients of "
            "its copies")
    pad = Op(
        f"{word}_pad{nd}d", attrs=("padding",), forward=_padded(mode, nd),
        saves=("padding", "self"),
        grads=(lambda m, grad, padding, self: m.call(backward, grad, self, padding),),
        node=f"{node}Backward0", local=("Σ copies",), symbol=f"{mode} pad",
        doc=f"the last {nd} dims padded by {mode}ing their edges")
    return pad, backward


(REFLECTION_PAD1D, REFLECTION_PAD1D_BACKWARD), (REFLECTION_PAD2D, REFLECTION_PAD2D_BACKWARD), \
    (REFLECTION_PAD3D, REFLECTION_PAD3D_BACKWARD) = (
        _pad_ops("reflect", "reflection", nd) for nd in (1, 2, 3))
(REPLICATION_PAD1D, REPLICATION_PAD1D_BACKWARD), \
    (REPLICATION_PAD2D, REPLICATION_PAD2D_BACKWARD), \
    (REPLICATION_PAD3D, REPLICATION_PAD3D_BACKWARD) = (
        _pad_ops("replicate", "replication", nd) for nd in (1, 2, 3))
#: F.pad's non-constant modes: (mode, number of padded dims) -> op
PADS = {("reflect", 1): REFLECTION_PAD1D, ("reflect", 2): REFLECTION_PAD2D,
        ("reflect", 3): REFLECTION_PAD3D, ("replicate", 1): REPLICATION_PAD1D,
        ("replicate", 2): REPLICATION_PAD2D, ("replicate", 3): REPLICATION_PAD3D}


# -- forward mode: the JVPs (symgrad.ops.jvp) ---------------------------------------------------
from . import jvp as _fwd  # noqa: E402
from .tables import JVP as _JVP  # noqa: E402


def _conv_jvp(m, tangents, args, attrs, result, saved):
    """Bilinear in (input, weight), affine in bias: B(ẋ, w) + B(x, ẇ) + ḃ."""
    (tx, tw, tb), (x, w, _) = tangents, args
    total = None
    for a, b in ((tx, w), (x, tw)):
        if a is not None and b is not None:
            term = m.call(CONVOLUTION, a, b, None, *attrs)
            total = term if total is None else total + term
    if tb is not None:
        shape = m.shape(result)
        term = m.broadcast_to(m.reshape(tb, (shape[1],) + (1,) * (len(shape) - 2)), shape)
        total = term if total is None else total + term
    return total


_JVP.register(_conv_jvp, CONVOLUTION)


def _convolution_backward_jvp(m, tangents, args, attrs, result, saved):
    """The tangent of the one output the mask asks for: that output's op's."""
    k = attrs[-1].index(True)
    return _fwd.jvp_of(_PARTS[k])(m, tangents, args, attrs[:-1], result, saved)


_JVP.register(_convolution_backward_jvp, CONVOLUTION_BACKWARD)
# the adjoints: bilinear in (grad_output, weight) and in (grad_output, input); linear in
# grad_output (the input or weight they read only for its shape has no rule: kept)
_JVP.register(_fwd.MULTILINEAR, CONVOLUTION_BACKWARD_INPUT, CONVOLUTION_BACKWARD_WEIGHT)
_JVP.register(_fwd.LINEAR, CONVOLUTION_BACKWARD_BIAS)
# the paddings and their adjoints are linear (the adjoint reads self for its shape only)
_JVP.register(_fwd.LINEAR, *PADS.values())
_JVP.register(_fwd.LINEAR, REFLECTION_PAD1D_BACKWARD, REFLECTION_PAD2D_BACKWARD,
              REFLECTION_PAD3D_BACKWARD, REPLICATION_PAD1D_BACKWARD,
              REPLICATION_PAD2D_BACKWARD, REPLICATION_PAD3D_BACKWARD)


# -- vmap (symgrad.ops.batching): a convolution once on a batch -------------------------------
from . import batching as _vmap  # noqa: E402
from .indexing import SELECT as _SELECT  # noqa: E402
from .shapes import PERMUTE as _PERMUTE, UNSQUEEZE as _UNSQUEEZE  # noqa: E402
from .tables import BATCHING as _BATCHING  # noqa: E402


def _swap01(m, a):
    """``a`` with its first two dimensions swapped (``movedim(0, 1)``)."""
    return m.call(_PERMUTE, a, (1, 0) + tuple(range(2, len(m.shape(a)))))


def _convolution_batched(m, args, batched):
    """A convolution of a batch: the batch folded into the images' dimension when the
    weight and bias are shared, else into the channels with one group per sample."""
    x, w, b, stride, padding, dilation, transposed, output_padding, groups = args
    r = _vmap.rank(m, x)
    if transposed or not batched[0] or r < 3:
        return None
    size = m.shape(x)[0]
    lone = r == len(m.shape(w)) - batched[1] - 1  # (C, *spatial): one image per sample
    data = m.call(_UNSQUEEZE, x, 1) if lone else x
    shape = tuple(m.shape(data))
    n = shape[1]
    attrs = (stride, padding, dilation, transposed, output_padding, groups)
    if not batched[1] and not batched[2]:
        out = m.call(CONVOLUTION, m.reshape(data, (size * n,) + shape[2:]), w, b, *attrs)
        out = m.reshape(out, (size, n) + tuple(m.shape(out))[1:])
    else:
        w = _vmap.rows(m, w, batched[1], size)
        ws = tuple(m.shape(w))
        w = m.reshape(w, (size * ws[1],) + ws[2:])
        b = None if b is None else m.reshape(_vmap.rows(m, b, batched[2], size), (-1,))
        xs = m.reshape(_swap01(m, data), (n, size * shape[2]) + shape[3:])
        out = m.call(CONVOLUTION, xs, w, b, *attrs[:-1], groups * size)
        out = _swap01(m, m.reshape(out, (n, size, -1) + tuple(m.shape(out))[2:]))
    return m.call(_SELECT, out, 1, 0) if lone else out


_BATCHING.register(_convolution_batched, CONVOLUTION)
