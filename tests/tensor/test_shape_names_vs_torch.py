"""Shape names course notebooks call, against PyTorch 2.13: ``narrow``, ``split``,
``chunk``, ``unbind`` (one node of several outputs), ``tril``/``triu``, ``diagonal``,
``movedim``, ``swapaxes``, ``broadcast_to``/``broadcast_tensors``, ``type_as``, ``repeat``,
``tile``, ``repeat_interleave``, ``roll``, ``rot90``, the stacks, ``meshgrid``, ``atleast_*d``,
``ravel``, ``cartesian_prod``, ``block_diag``, ``diag_embed``.

Each scenario runs in both libraries on the same float64 input: values, dtypes, each
output's grad_fn name, output_nr and next_functions, the saved attributes PyTorch shows,
the gradient of a weighted sum of the outputs and (create_graph) a second-order gradient
with the name of the node the first one records; views: memory shared with the base,
writes through, ``_version``; bad arguments: PyTorch's error and message.
"""
from __future__ import annotations

import numpy as np
import pytest

import symgrad
from conftest import same_outcome

torch = pytest.importorskip("torch")


def _flat(out) -> list:
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(o)]
    return [out]


def _node(fn):
    if fn is None:
        return None
    return (fn.name(), tuple((None if f is None else f.name(), nr)
                             for f, nr in fn.next_functions))


def _picture(L, scenario, shape):
    x = L.arange(float(np.prod(shape)), dtype=L.float64).reshape(shape).sin()
    x.requires_grad_()
    outs = _flat(scenario(L, x))
    seen = [(o.tolist(), str(o.dtype), tuple(o.shape), _node(o.grad_fn), o.output_nr)
            for o in outs]
    saved = []
    for o in outs:
        fn = o.grad_fn
        saved.append(None if fn is None else sorted(
            (k, repr(getattr(fn, k))) for k in dir(fn)
            if k.startswith("_saved_") and not hasattr(getattr(fn, k), "shape")))
    diff = [o for o in outs if o.requires_grad]
    if not diff:
        return seen, saved
    total = sum(((o * L.arange(1.0, o.numel() + 1, dtype=o.dtype).reshape(o.shape)) ** 2)
                .sum() for o in diff)
    g, = L.autograd.grad(total, x, create_graph=True)
    h, = L.autograd.grad((g * g.detach().cos()).sum(), x)
    return seen, saved, g.tolist(), _node(g.grad_fn), h.tolist()


def _same(scenario, shape=(3, 4)) -> None:
    want = _picture(torch, scenario, shape)
    got = _picture(symgrad, scenario, shape)
    _close(got, want)


def _close(got, want) -> bool:
    if isinstance(want, (list, tuple)):
        assert isinstance(got, (list, tuple)) and len(got) == len(want), (got, want)
        for g, w in zip(got, want):
            _close(g, w)
    elif isinstance(want, float):
        assert got == pytest.approx(want, rel=1e-9, abs=1e-12), (got, want)
    else:
        assert got == want, (got, want)
    return True


SPLITTING = {
    "narrow": (lambda L, x: x.narrow(1, 1, 2), (3, 4)),
    "narrow-neg-start": (lambda L, x: L.narrow(x, 0, -2, 2), (3, 4)),
    "narrow-tensor-start": (lambda L, x: x.narrow(-1, L.tensor(2), 2), (3, 4)),
    "narrow-empty": (lambda L, x: x.narrow(0, 3, 0), (3, 4)),
    "split-int": (lambda L, x: x.split(2), (5, 2)),
    "split-int-dim": (lambda L, x: L.split(x, 3, dim=1), (2, 4)),
    "split-one-piece": (lambda L, x: x.split(4), (3, 2)),
    "split-sizes": (lambda L, x: L.split(x, [1, 0, 1], 1), (2, 2)),
    "split-some-pieces": (lambda L, x: x.split(1)[::2], (3, 2)),
    "split_with_sizes": (lambda L, x: x.split_with_sizes([2, 1]), (3, 2)),
    "chunk": (lambda L, x: x.chunk(3), (5, 2)),
    "chunk-dim": (lambda L, x: L.chunk(x, 2, -1), (2, 4)),
    "chunk-fewer": (lambda L, x: x.chunk(4), (6,)),
    "unbind": (lambda L, x: x.unbind(), (3, 2)),
    "unbind-dim": (lambda L, x: L.unbind(x, dim=1), (2, 3)),
    "unbind-one-used": (lambda L, x: x.unbind(1)[1], (2, 3)),
}


ARRANGING = {
    "tril": (lambda L, x: x.tril(), (3, 4)),
    "tril-diagonal": (lambda L, x: L.tril(x, diagonal=1), (2, 3, 4)),
    "triu": (lambda L, x: x.triu(-1), (4, 3)),
    "triu-function": (lambda L, x: L.triu(x, 2), (3, 4)),
    "tril_": (lambda L, x: (x * 1).tril_(-1), (3, 3)),
    "triu_": (lambda L, x: (x * 1).triu_(diagonal=1), (3, 4)),
    "diagonal": (lambda L, x: x.diagonal(), (3, 4)),
    "diagonal-offset": (lambda L, x: L.diagonal(x, 1), (3, 4)),
    "diagonal-negative": (lambda L, x: x.diagonal(offset=-1), (3, 4)),
    "diagonal-dims": (lambda L, x: x.diagonal(0, -1, 0), (2, 3, 4)),
    "diagonal-empty": (lambda L, x: x.diagonal(5), (3, 4)),
    "movedim": (lambda L, x: L.movedim(x, 0, -1), (2, 3, 4)),
    "moveaxis": (lambda L, x: x.moveaxis((0, 1), (2, 0)), (2, 3, 4)),
    "swapaxes": (lambda L, x: x.swapaxes(0, -1), (2, 3, 4)),
    "swapdims": (lambda L, x: L.swapdims(x, 1, 0), (3, 4)),
    "broadcast_to": (lambda L, x: x.broadcast_to((2, 3, 4)), (3, 1)),
    "broadcast_to-function": (lambda L, x: L.broadcast_to(x, (2, -1)), (3,)),
    "broadcast_tensors": (lambda L, x: L.broadcast_tensors(x, L.ones(2, 1, 1), x[0]), (3, 4)),
    "broadcast_tensors-same": (lambda L, x: L.broadcast_tensors(x, L.ones(4)), (3, 4)),
    "type_as": (lambda L, x: x.type_as(L.ones(1, dtype=L.float32)), (3, 2)),
    "type_as-same": (lambda L, x: x.type_as(x), (3, 2)),
    "type_as-int": (lambda L, x: (x * 5).type_as(L.ones(1, dtype=L.int64)), (3, 2)),
}


TILING = {
    "repeat": (lambda L, x: x.repeat(2, 1, 2), (2, 3)),
    "repeat-list": (lambda L, x: x.repeat([1, 3]), (2, 2)),
    "repeat-ones": (lambda L, x: x.repeat(1, 1), (2, 2)),
    "repeat-0d": (lambda L, x: x.sum().repeat(3), (2,)),
    "tile": (lambda L, x: x.tile(2), (2, 3)),
    "tile-more": (lambda L, x: L.tile(x, (2, 1, 1)), (2, 2)),
    "repeat_interleave": (lambda L, x: x.repeat_interleave(2), (2, 2)),
    "repeat_interleave-dim": (lambda L, x: L.repeat_interleave(x, 3, dim=1), (2, 2)),
    "repeat_interleave-tensor": (lambda L, x: x.repeat_interleave(L.tensor([1, 0, 2]), dim=0),
                                 (3, 2)),
    "roll": (lambda L, x: x.roll(1, 1), (2, 3)),
    "roll-flat": (lambda L, x: L.roll(x, -2), (2, 3)),
    "roll-dims": (lambda L, x: x.roll((1, -1), (0, 1)), (2, 3)),
    "rot90": (lambda L, x: x.rot90(), (2, 3)),
    "rot90-k": (lambda L, x: L.rot90(x, -1, (1, 0)), (2, 3)),
    "rot90-2": (lambda L, x: x.rot90(2, [0, 2]), (2, 2, 3)),
    "hstack": (lambda L, x: L.hstack([x, x[:, :1]]), (2, 3)),
    "hstack-vectors": (lambda L, x: L.hstack((x[0], x[1, :2], x[0, 0])), (2, 3)),
    "vstack": (lambda L, x: L.vstack([x[0], x]), (2, 3)),
    "dstack": (lambda L, x: L.dstack([x, x[0]]), (1, 3)),
    "column_stack": (lambda L, x: L.column_stack([x[:, 0], x, x[0, 0].expand(2)]), (2, 3)),
    "meshgrid-ij": (lambda L, x: L.meshgrid(x[0], x[1, :2], indexing="ij"), (2, 3)),
    "meshgrid-xy": (lambda L, x: L.meshgrid([x[0], x[1, :2], x[0, 0]], indexing="xy"),
                    (2, 3)),
    "atleast_1d": (lambda L, x: L.atleast_1d(x.sum(), x), (2,)),
    "atleast_2d": (lambda L, x: L.atleast_2d([x.sum(), x[0], x]), (2, 2)),
    "atleast_3d": (lambda L, x: L.atleast_3d(x.sum(), x[0], x), (2, 2)),
    "atleast_one": (lambda L, x: L.atleast_2d(x[0]), (2, 2)),
    "ravel": (lambda L, x: x.ravel(), (2, 3)),
    "ravel-transposed": (lambda L, x: L.ravel(x.t()), (2, 3)),
    "cartesian_prod": (lambda L, x: L.cartesian_prod(x[0], x[1, :2]), (2, 3)),
    "cartesian_prod-one": (lambda L, x: L.cartesian_prod(x[0]), (2, 3)),
    "block_diag": (lambda L, x: L.block_diag(x, x[0], x[1, 1], x.t()), (2, 3)),
    "block_diag-mixed": (lambda L, x: L.block_diag(L.tensor([[1, 2]]), x), (2, 2)),
    "block_diag-none": (lambda L, x: L.block_diag(), (2, 2)),
    "diag_embed": (lambda L, x: L.diag_embed(x), (3,)),
    "diag_embed-batch": (lambda L, x: x.diag_embed(1), (2, 3)),
    "diag_embed-dims": (lambda L, x: L.diag_embed(x, offset=-1, dim1=2, dim2=0), (2, 3)),
    "diag": (lambda L, x: L.diag(x, 1), (3,)),
}


@pytest.mark.parametrize("name", TILING)
def test_tiling_as_torch(name):
    scenario, shape = TILING[name]
    _same(scenario, shape)


def test_meshgrid_warning_as_torch():
    same_outcome(lambda L: L.meshgrid(L.arange(2.0), L.arange(3.0))[1], expect_error=False)


@pytest.mark.parametrize("name", SPLITTING)
def test_splitting_as_torch(name):
    scenario, shape = SPLITTING[name]
    _same(scenario, shape)


@pytest.mark.parametrize("name", ARRANGING)
def test_arranging_as_torch(name):
    scenario, shape = ARRANGING[name]
    _same(scenario, shape)


def test_diagonal_is_a_view_as_torch():
    def scenario(L):
        x = L.zeros(3, 4)
        d = x.diagonal(1)
        d.add_(L.tensor([1.0, 2.0, 3.0]))
        y = L.arange(4.0).reshape(2, 2)
        e = y.diagonal()
        y.mul_(10)
        z = L.ones(3, 3)
        z.tril_()
        t = L.zeros(2, 2).swapaxes(0, 1)
        t[0, 1] = 5.0
        return [x.tolist(), x._version, d._base is x, e.tolist(), e._version, z.tolist(),
                z._version, t._base.tolist(), L.ones(2, 1).broadcast_to(2, 3)._is_view()]
    same_outcome(scenario, expect_error=False)


def test_pieces_share_one_node_and_memory():
    for L in (torch, symgrad):
        x = L.arange(6.0).requires_grad_()
        a, b, c = x.split(2)
        assert a.grad_fn is b.grad_fn is c.grad_fn
        assert [a.output_nr, b.output_nr, c.output_nr] == [0, 1, 2]
        y = L.arange(6.0)
        p, q = y.chunk(2)
        p.mul_(2)
        assert y.tolist() == [0.0, 2.0, 4.0, 3.0, 4.0, 5.0]
        assert (y._version, q._version, p._version) == (1, 1, 1)
        assert q._base is y and q._is_view()
        r = y.view(3, 2).unbind()[1]
        y.add_(1)
        assert r.tolist() == [5.0, 4.0] and r._version == 2
        with L.no_grad():  # (a piece of a graph changed in place: allowed without grad)
            w = L.arange(4.0, requires_grad=True) * 1
            w.split(2)[1].mul_(2)
            assert w.tolist() == [0.0, 1.0, 4.0, 6.0]
        n = y.narrow(0, 1, 2)
        n.zero_()
        assert y.tolist() == [1.0, 0.0, 0.0, 4.0, 5.0, 6.0] and n._base is y


ERRORS = [
    lambda L: L.arange(5.0).narrow(0, 4, 2),
    lambda L: L.zeros(5, 2).narrow(0, 6, 1),
    lambda L: L.zeros(5, 2).narrow(0, -6, 1),
    lambda L: L.zeros(5).narrow(0, 1, -1),
    lambda L: L.tensor(1.0).narrow(0, 0, 1),
    lambda L: L.zeros(5, 2).narrow(2, 0, 1),
    lambda L: L.zeros(5).narrow(0, L.tensor([1]), 2),
    lambda L: L.zeros(5).narrow(0, L.tensor(1.0), 2),
    lambda L: L.zeros(5).split(0),
    lambda L: L.zeros(5).split(-1),
    lambda L: L.zeros(5).split([1, 2]),
    lambda L: L.zeros(5).split([1, -1, 5]),
    lambda L: L.tensor(1.0).split(1),
    lambda L: L.zeros(5).split(2, dim=1),
    lambda L: L.zeros(5).chunk(0),
    lambda L: L.zeros(5).chunk(-1),
    lambda L: L.tensor(1.0).chunk(2),
    lambda L: L.tensor(1.0).unbind(),
    lambda L: L.zeros(2, 3).unbind(2),
    lambda L: L.zeros(3).tril(),
    lambda L: L.zeros(3).triu_(),
    lambda L: L.tensor(2.0).triu(),
    lambda L: L.zeros(3, 3).diagonal(0, 1, 1),
    lambda L: L.zeros(3, 3).diagonal(0, -1, 1),
    lambda L: L.zeros(3, 3).diagonal(0, 2, 1),
    lambda L: L.zeros(3, 4).swapaxes(0, 2),
    lambda L: L.zeros(3, 4).broadcast_to((2,)),
    lambda L: L.zeros(3, 4).broadcast_to((3, 5)),
    lambda L: L.broadcast_tensors(L.zeros(3, 4), L.ones(3)),
    lambda L: L.movedim(L.zeros(3, 4), (0, 1), (0,)),
    lambda L: L.ones(2, 2, requires_grad=True).tril_(),
    lambda L: L.zeros(2, 3).repeat(2),
    lambda L: L.zeros(2, 3).repeat(-1, 2),
    lambda L: L.zeros(2, 3).roll((1, 2), (0,)),
    lambda L: L.zeros(2, 3).roll(1, 2),
    lambda L: L.zeros(2, 3).roll([], []),
    lambda L: L.zeros(2, 3).rot90(1, (0,)),
    lambda L: L.zeros(3).rot90(),
    lambda L: L.zeros(2, 3).rot90(1, (0, 0)),
    lambda L: L.zeros(2, 3).rot90(1, (0, 2)),
    lambda L: L.zeros(2, 3).repeat_interleave(-1),
    lambda L: L.meshgrid(L.zeros(3), L.zeros(2, dtype=L.float64), indexing="ij"),
    lambda L: L.meshgrid(indexing="ij"),
    lambda L: L.meshgrid(L.zeros(3), indexing="zz"),
    lambda L: L.hstack([]),
    lambda L: L.vstack([]),
    lambda L: L.column_stack([]),
    lambda L: L.vstack([L.zeros(2, 3), L.zeros(2)]),
    lambda L: L.cartesian_prod(L.zeros(2, 3)),
    lambda L: L.block_diag(L.zeros(2), L.zeros(1, 1, 1)),
    lambda L: L.zeros(2, 3).diag_embed(0, 1, 1),
    lambda L: L.zeros(2, 3).diag_embed(0, 3, 1),
    lambda L: L.tensor(1.0).diag_embed(),
    lambda L: L.repeat_interleave(L.tensor([1.0, 2.0])),
    lambda L: L.repeat_interleave(L.tensor([[1, 2]])),
    lambda L: L.repeat_interleave(L.tensor([1, -2])),
    lambda L: L.tensor([2, 1]).repeat_interleave(),
    lambda L: (L.arange(6.0, requires_grad=True) * 1).split([2, 4])[1].mul_(2),
    lambda L: (L.arange(6.0, requires_grad=True) * 1).unbind()[2].add_(1),
    lambda L: (L.arange(6.0, requires_grad=True) * 1).chunk(2)[0].zero_(),
]


@pytest.mark.parametrize("k", range(len(ERRORS)))
def test_errors_as_torch(k):
    same_outcome(ERRORS[k])


def test_empty_dims_as_torch():
    for scenario in (lambda L: L.repeat_interleave(L.tensor([1, 0, 2])),
                     lambda L: L.repeat_interleave(L.tensor([], dtype=L.int64)),
                     lambda L: [t.shape for t in L.zeros(0, 3).split(2)],
                     lambda L: [t.shape for t in L.zeros(0, 3).chunk(2)],
                     lambda L: [t.grad_fn.name() for t in
                                L.zeros(0, 3, requires_grad=True).chunk(2)],
                     lambda L: L.zeros(0, 3).unbind()):
        same_outcome(scenario, expect_error=False)


def _tangents(L, scenario, shape):
    fw = L.autograd.forward_ad
    with fw.dual_level():
        x = L.arange(float(np.prod(shape)), dtype=L.float64).reshape(shape)
        x = fw.make_dual(x, x.cos())
        return [(None if t is None else t.tolist(), tuple(o.shape))
                for o in _flat(scenario(L, x)) for t in [fw.unpack_dual(o).tangent]]


@pytest.mark.parametrize("name", ["narrow", "split-sizes", "chunk-dim", "unbind-dim", "tril",
                                  "triu_", "diagonal-dims", "swapaxes", "broadcast_tensors",
                                  "repeat", "roll-dims", "rot90-k", "meshgrid-xy", "ravel",
                                  "block_diag", "diag_embed-dims"])
def test_forward_mode_as_torch(name):
    scenario, shape = {**SPLITTING, **ARRANGING, **TILING}[name]
    _close(_tangents(symgrad, scenario, shape), _tangents(torch, scenario, shape))
