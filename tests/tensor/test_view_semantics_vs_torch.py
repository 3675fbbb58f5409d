"""Views against PyTorch 2.13: what a view sees of its base and what PyTorch refuses.

* ``t[i] = v`` through a view of a 0-d base reaches the base (values, ``_version``, the
  base's ``CopySlices``, the gradient);
* 0-d views (``unbind``, ``select``, ``x[i]``, ``x[i, j]``) and views of a 0-d base see
  later writes to the base, and the base sees writes through them: values, ``_version``,
  ``_base``, the ``AsStridedBackward0`` a view becomes once its base changed in place, the
  gradient through it;
* a piece of ``split``/``chunk``/``unbind`` (and any view of one) changed in place, or used
  after its base (or another view of it) was: PyTorch's errors, word for word.
"""
from __future__ import annotations

import pytest

from conftest import same_outcome

pytest.importorskip("torch")


def _name(t):
    return None if t.grad_fn is None else t.grad_fn.name()


def _next(t):
    return [None if f is None else f.name() for f, _ in t.grad_fn.next_functions]


def _graph_input(L):
    x = L.arange(1.0, 7.0, dtype=L.float64).reshape(2, 3).requires_grad_()
    return x, x * 1


# ---------------------------------------------------------------- (a) a 0-d base, setitem
def _setitem_0d_base(L, how):
    x = L.tensor(3.0, dtype=L.float64, requires_grad=True)
    y = x * 2
    v = {"view": lambda: y.view(1), "view2": lambda: y.view(1, 1),
         "unsqueeze": lambda: y.unsqueeze(0), "none": lambda: y[None],
         "reshape": lambda: y.reshape(-1)}[how]()
    v[(0,) * v.ndim] = x * 5
    grads = L.autograd.grad(y * 3, x)
    return (y, y._version, v._version, _name(y), v, v._base is y, _name(v * 1), _next(v * 1),
            grads)


@pytest.mark.parametrize("how", ["view", "view2", "unsqueeze", "none", "reshape"])
def test_setitem_through_view_of_0d_base(how):
    same_outcome(lambda L: _setitem_0d_base(L, how), expect_error=False)


def test_setitem_through_view_of_0d_base_without_grad():
    def scenario(L):
        y = L.tensor(3.0)
        v = y.view(1)
        v[0] = 5
        w = y[None][0]  # a 0-d view of a view of a 0-d base
        w.fill_(9)
        return y, y._version, v, v._version, w._base is y, w
    same_outcome(scenario, expect_error=False)


@pytest.mark.parametrize("how", ["view", "unsqueeze", "expand", "expand2", "reshape", "none",
                                 "t", "squeeze"])
def test_views_of_a_0d_base_see_writes_to_it(how):
    def scenario(L):
        make = {"view": lambda t: t.view(1), "unsqueeze": lambda t: t.unsqueeze(0),
                "expand": lambda t: t.expand(3), "expand2": lambda t: t[None].expand(2, 2),
                "reshape": lambda t: t.reshape(1, 1), "none": lambda t: t[None, None],
                "t": lambda t: t.t(), "squeeze": lambda t: t.squeeze()}[how]
        x = L.tensor(2.0)
        y = L.tensor(3.0, requires_grad=True) * 1  # (a result: numpy's scalar underneath)
        v, w = make(x), make(y)
        x.add_(1)
        y.mul_(2)
        used = w * 1
        return v, v._version, v._base is x, w.tolist(), w._version, _next(used), used
    same_outcome(scenario, expect_error=False)


# ------------------------------------------------------------- (b) 0-d views see writes
_ZERO_D = {
    "unbind": lambda t: t.unbind()[1],
    "unbind1": lambda t: t.unbind(1)[2],
    "select": lambda t: t.select(0, 1),
    "select-neg": lambda t: t.select(-1, -2),
    "index": lambda t: t[1],
    "index2": lambda t: t[1, 2],
    "index-neg": lambda t: t[-1][-1],
    "view": lambda t: t[0, 1:2].view(()),
    "squeeze": lambda t: t[1:, :1].squeeze(),
}


def _flat(L, n):  # 1-d for the pieces that need it
    return L.arange(1.0, n + 1, dtype=L.float64)


@pytest.mark.parametrize("how", list(_ZERO_D))
def test_zero_d_views_see_writes_to_the_base(how):
    def scenario(L):
        x = L.arange(1.0, 7.0, dtype=L.float64).reshape(2, 3)
        if how in ("unbind", "select", "index"):
            x = _flat(L, 3)
        p = _ZERO_D[how](x)
        before = (p.item(), p._version, p._base is x)
        x.add_(10)
        after = (p.item(), p.tolist(), float(p), repr(p), p._version, p._base is x)
        p.mul_(2)  # and the base sees writes through the view
        return before, after, x, x._version, p._version
    same_outcome(scenario, expect_error=False)


@pytest.mark.parametrize("how", [h for h in _ZERO_D if not h.startswith("unbind")])
def test_zero_d_views_after_the_base_changed_in_place(how):
    def scenario(L):
        x, y = _graph_input(L)
        if how in ("select", "index"):
            x = _flat(L, 3).requires_grad_()
            y = x * 1
        p = _ZERO_D[how](y)
        first = (_name(p), p.item())
        y.mul_(2)
        used = p * 3
        # the view becomes AsStridedBackward0 of the base's CopySlices-free new history
        return (first, p.item(), p._version, p._base is y, _name(used), _next(used),
                _name(p), _next(p), L.autograd.grad(used, x))
    same_outcome(scenario, expect_error=False)


def test_zero_d_view_written_in_place_reaches_a_graph():
    def scenario(L):
        x = _flat(L, 3).requires_grad_()
        y = x * 1
        p = y[1]
        p.mul_(x[0])  # CopySlices on y, the view regenerated
        q = y.unbind()[2]
        return (y, _name(y), _name(p), p, y._version, q.item(),
                L.autograd.grad((y * y).sum(), x))
    same_outcome(scenario, expect_error=False)


# ------------------------------------------ (c) pieces of functions returning several views
_PIECE = {
    "split": lambda t: t.split(2)[1],
    "split_sizes": lambda t: t.split([1, 3])[0],
    "chunk": lambda t: t.chunk(2)[0],
    "unbind": lambda t: t.unbind()[2],
    "unbind2d": lambda t: t.view(2, 2).unbind(1)[1],
}


def _base_changed_then_used(L, how, use, no_grad=False):
    y = L.arange(4.0, requires_grad=True) * 1
    p = _PIECE[how](y)
    if no_grad:
        with L.no_grad():
            y.add_(1)
    else:
        y.add_(1)
    return use(L, p)


_USES = {
    "mul": lambda L, p: p * 2,
    "view": lambda L, p: p.view(-1),
    "in-place": lambda L, p: p.add_(1),
    "backward": lambda L, p: L.autograd.grad(p.sum(), p),
}


@pytest.mark.parametrize("how", list(_PIECE))
@pytest.mark.parametrize("use", list(_USES))
def test_piece_used_after_its_base_changed_in_place(how, use):
    same_outcome(lambda L: _base_changed_then_used(L, how, _USES[use]))


@pytest.mark.parametrize("how", ["split", "unbind"])
def test_piece_used_after_its_base_changed_in_no_grad(how):
    same_outcome(lambda L: _base_changed_then_used(L, how, _USES["mul"], no_grad=True))


def _quietly(L, f):
    """``f()`` in no_grad mode."""
    with L.no_grad():
        return f()


def _with_pieces(L, grad=True):
    y = L.arange(4.0, requires_grad=grad) * 1
    return y, y.split(2)


PIECE_ERRORS = [
    # another piece (or another view of the base) written, then this one used
    lambda L: (lambda y, ps: (ps[0].mul_(2), ps[1] * 1))(*_with_pieces(L)),
    lambda L: (lambda y, ps: (_quietly(L, lambda: ps[0].mul_(2)), ps[0] * 1))(
        *_with_pieces(L)),
    lambda L: (lambda y: (lambda q: (y.view(2, 2)[1].add_(1), q * 1))(
        y.view(2, 2).unbind()[0]))(L.arange(4.0, requires_grad=True) * 1),
    # views of a piece written in place: the view's own node is named
    lambda L: _with_pieces(L)[1][1].view(-1).add_(1),
    lambda L: _with_pieces(L)[1][1].split(1)[0].add_(1),
    lambda L: _with_pieces(L)[1][1].unbind()[0].add_(1),
    lambda L: _with_pieces(L)[1][1].narrow(0, 0, 1).add_(1),
    lambda L: _with_pieces(L)[1][0].t().mul_(3),
    # a base that needs no grad, written with a value that does
    lambda L: _with_pieces(L, grad=False)[1][1].mul_(L.ones(2, requires_grad=True)),
    lambda L: L.arange(4.0).unbind()[1].mul_(L.ones((), requires_grad=True)),
    # of a leaf
    lambda L: L.arange(4.0, requires_grad=True).chunk(2)[1].zero_(),
]


@pytest.mark.parametrize("k", range(len(PIECE_ERRORS)))
def test_piece_errors_as_torch(k):
    same_outcome(PIECE_ERRORS[k])


def _made_in_no_grad(L, then):
    y = L.arange(4.0, requires_grad=True) * 1
    with L.no_grad():
        p = y.split(2)[0]
    return then(L, y, p)


@pytest.mark.parametrize("then", [
    lambda L, y, p: p.add_(1),
    lambda L, y, p: (y.add_(1), p * 1),
])
def test_piece_made_in_no_grad_as_torch(then):
    same_outcome(lambda L: _made_in_no_grad(L, then))


def _view_in_no_grad(L, make, then, grad=True):
    y = L.arange(4.0, requires_grad=grad) * 1 if grad else L.arange(4.0)
    with L.no_grad():
        v = make(y)
    return then(L, y, v)


# (Not compared: a view made in no_grad mode of a base that requires grad requires grad in
# PyTorch, with no grad_fn and no edge to its base; symgrad's does not require grad.)
NO_GRAD_VIEWS = [
    # written in place with grad mode on (the view, or a view of it)
    (lambda y: y[1:], lambda L, y, v: v.add_(1)),
    (lambda y: y.view(2, 2).unbind()[0], lambda L, y, v: v.add_(1)),
    (lambda y: y.split(2)[1].view(-1), lambda L, y, v: v.add_(1)),  # the later mark wins
    # used once its base changed in place
    (lambda y: y[1:], lambda L, y, v: (y.mul_(2), v * 1)),
    (lambda y: y.t(), lambda L, y, v: (_quietly(L, lambda: y.mul_(2).sum()), v.sum())),
]


@pytest.mark.parametrize("k", range(len(NO_GRAD_VIEWS)))
def test_view_made_in_no_grad_as_torch(k):
    make, then = NO_GRAD_VIEWS[k]
    same_outcome(lambda L: _view_in_no_grad(L, make, then))


@pytest.mark.parametrize("then, fails", [
    (lambda L, y, v: (v.mul_(L.ones(3, requires_grad=True)), y), True),  # needs grad
    (lambda L, y, v: (_quietly(L, lambda: v.add_(1).sum()), y), False),  # in no_grad mode
    (lambda L, y, v: (v.add_(1), y), False),  # nothing needs grad
])
def test_view_made_in_no_grad_of_a_constant_as_torch(then, fails):
    same_outcome(lambda L: _view_in_no_grad(L, lambda y: y[1:], then, grad=False),
                 expect_error=fails)


ALLOWED_NO_GRAD = [
    lambda L: _view_in_no_grad(L, lambda y: y[1:], lambda L, y, v: (
        _quietly(L, lambda: v.add_(1).sum()), y)),
    lambda L: _view_in_no_grad(L, lambda y: y[1:], lambda L, y, v: (v.tolist(), v._version),
                               grad=False),
]


@pytest.mark.parametrize("k", range(len(ALLOWED_NO_GRAD)))
def test_views_made_in_no_grad_allowed_as_torch(k):
    same_outcome(ALLOWED_NO_GRAD[k], expect_error=False)


_INDEXES = [0, (0, 1), slice(0, 1), Ellipsis, None, (None, 0), [0], (slice(None), 1),
            (0, Ellipsis), ()]


@pytest.mark.parametrize("index", _INDEXES, ids=repr)
@pytest.mark.parametrize("value", ["number", "tensor", "grad value, base without grad"])
def test_setitem_into_a_piece_as_torch(index, value):
    def scenario(L):
        base = L.arange(8.0, requires_grad=value != "grad value, base without grad")
        p = (base * 1 if base.requires_grad else base).view(2, 4).split(1)[1]
        p[index] = {"number": lambda: 5.0, "tensor": lambda: L.ones(()),
                    "grad value, base without grad": lambda: L.ones((), requires_grad=True)
                    }[value]()
    same_outcome(scenario)


ALLOWED = [
    # no grad recorded: pieces may be written, also through a view
    lambda L: (lambda y: (y.split(2)[1].mul_(2), y.unbind()[0].add_(5), y, y._version))(
        L.arange(4.0)),
    lambda L: (lambda y: (_quietly(L, lambda: y.split(2)[1].view(-1).mul_(2).sum()), y))(
        L.arange(4.0, requires_grad=True) * 1),
    # the base changed, the piece read without autograd
    lambda L: (lambda y, p: (y.add_(1), p.tolist(), p._version, p.detach() * 2))(
        *(lambda y: (y, y.chunk(2)[1]))(L.arange(4.0, requires_grad=True) * 1)),
    lambda L: (lambda y, p: (y.add_(1), _quietly(L, lambda: p * 2)))(
        *(lambda y: (y, y.unbind()[3]))(L.arange(4.0, requires_grad=True) * 1)),
    # a plain view written in no_grad mode: regenerated (AsStridedBackward0) when next used
    lambda L: (lambda y: (lambda p: (_quietly(L, lambda: p.mul_(2).sum()), _next(p * 1),
                                     _name(p), y))(y[1:]))(L.arange(4.0, requires_grad=True) * 1),
    # the base itself may change; the pieces' gradients before that still flow
    lambda L: (lambda x: (lambda y: (lambda ps: (L.autograd.grad(
        (ps[0] * ps[1]).sum(), x, retain_graph=True), y.mul_(2), _name(y)))(y.split(2)))(
        x * 1))(L.arange(4.0, requires_grad=True)),
]


@pytest.mark.parametrize("k", range(len(ALLOWED)))
def test_allowed_writes_as_torch(k):
    same_outcome(ALLOWED[k], expect_error=False)


@pytest.mark.parametrize("call", [
    lambda L: L.ones(2, 3).reshape(), lambda L: L.ones(2, 3).expand(),
    lambda L: L.ones(2, 3).permute(), lambda L: L.ones(2, 3).reshape(shape=(3, 2)).sum(1),
    lambda L: L.ones(1, 3).expand(size=(2, 3)).sum(0), lambda L: L.ones(2, 3).permute(dims=(1, 0))
])
def test_view_arguments_as_torch(call):
    same_outcome(call, expect_error=False)


@pytest.mark.parametrize("call, fails", [
    (lambda L, x: x.select(0, 2), True), (lambda L, x: x.select(1, -4), True),
    (lambda L, x: x.select(2, 0), True), (lambda L, x: L.tensor(1.0).select(0, 0), True),
    (lambda L, x: x.select(0, 1.5), True),
    (lambda L, x: (lambda s: (s, s._base is x, _next(s), s.grad_fn._saved_dim,
                              s.grad_fn._saved_index, s.grad_fn._saved_self_sym_sizes,
                              L.autograd.grad((s * s).sum(), x, create_graph=True)[0]
                              .grad_fn.name()))(x.select(-1, -2)), False),
    (lambda L, x: (L.select(x, 0, 1), x.select(0, L.tensor(1))), False),
])
def test_select_as_torch(call, fails):
    same_outcome(lambda L: call(L, L.arange(6.0, dtype=L.float64).view(2, 3)
                                .requires_grad_().mul(1)), expect_error=fails)


def _grid(L):
    return L.arange(12.0, dtype=L.float64, requires_grad=True).view(3, 4) * 1


def _slices(pieces):
    return [(tuple(p.shape), p.grad_fn.name(), p.grad_fn._saved_dim, p.grad_fn._saved_start,
             p.grad_fn._saved_end) for p in pieces]


TENSOR_SPLITS = [  # (call, fails): slices as PyTorch's, saved as given
    (lambda L: _slices(_grid(L).tensor_split(3, dim=1)), False),
    (lambda L: _slices(_grid(L).tensor_split(2, dim=-1)), False),
    (lambda L: _slices(L.tensor_split(_grid(L), [1, 3], 1)), False),
    (lambda L: _slices(_grid(L).tensor_split(L.tensor([1, 5]))), False),
    (lambda L: _slices(_grid(L).tensor_split([3, 1]) + _grid(L).tensor_split([-1])), False),
    (lambda L: _slices(_grid(L).tensor_split(L.tensor(2)) + _grid(L).tensor_split((1, 2), 1)),
     False),
    (lambda L: _slices(_grid(L).hsplit(2) + _grid(L).vsplit([1]) + _grid(L).hsplit([1, 2])
                       + L.dsplit(_grid(L).view(1, 2, 6), [2, 3])), False),
    (lambda L: (lambda x: (x.tensor_split(2)[0].add_(1), _name(x), x))(_grid(L)), False),
    (lambda L: (lambda x: L.autograd.grad(
        sum((p * (k + 1)).sum() for k, p in enumerate(x.tensor_split(3, 1))), x))(
        L.arange(12.0, requires_grad=True).view(3, 4)), False),
    (lambda L: (L.ones(2).hsplit(2), L.vsplit(L.zeros(0, 2), 2),
                [p._base is not None for p in L.arange(5.0).tensor_split(3)]), False),
    (lambda L: _grid(L).tensor_split(0), True),
    (lambda L: _grid(L).tensor_split(2, dim=5), True),
    (lambda L: L.tensor(1.0).tensor_split(2), True),
    (lambda L: _grid(L).tensor_split(L.tensor([[1]])), True),
    (lambda L: _grid(L).tensor_split(L.tensor([1.0])), True),
    (lambda L: _grid(L).tensor_split(2.5), True),
    (lambda L: _grid(L).tensor_split([True]), True),
    (lambda L: _grid(L).hsplit(3), True),
    (lambda L: _grid(L).hsplit(0), True),
    (lambda L: _grid(L).vsplit(2), True),
    (lambda L: _grid(L).dsplit(2), True),
    (lambda L: L.ones(2).vsplit(1), True),
    (lambda L: L.tensor(1.0).hsplit(1), True),
]


@pytest.mark.parametrize("k", range(len(TENSOR_SPLITS)))
def test_tensor_split_as_torch(k):
    call, fails = TENSOR_SPLITS[k]
    same_outcome(call, expect_error=fails)
