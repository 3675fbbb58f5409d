"""Devices and small plumbing against PyTorch 2.13 (a CPU build, as symgrad is):
``torch.device``, ``device=`` arguments, ``.to``/``.cpu``/``.cuda``, the accelerator
queries course code asks, ``equal``/``isclose``/``allclose``."""
from __future__ import annotations

import pytest

from conftest import same_outcome

torch = pytest.importorskip("torch")

OK = [
    lambda L: [repr(L.device("cpu")), str(L.device("cpu")), L.device("cpu").type,
               L.device("cpu").index],
    lambda L: [repr(L.device("cpu", 0)), str(L.device("cuda:1")), L.device("cuda").index,
               repr(L.device(L.device("cpu"))), repr(L.device("mps"))],
    lambda L: [L.device("cpu") == L.device("cpu"), L.device("cpu") == "cpu",
               L.device("cpu") == L.device("cpu", 0),
               hash(L.device("cpu")) == hash(L.device("cpu")), len({L.device("cpu"),
                                                                     L.device("cpu")})],
    lambda L: repr(L.device("cuda" if L.cuda.is_available() else "cpu")),
    lambda L: [L.cuda.is_available(), L.cuda.device_count(), L.cuda.is_initialized(),
               L.backends.mps.is_available(), L.backends.mps.is_built(),
               L.backends.cudnn.is_available(), L.accelerator.is_available(),
               L.accelerator.current_accelerator(), L.accelerator.device_count()],
    lambda L: [L.cuda.manual_seed(0), L.cuda.manual_seed_all(1), L.cuda.empty_cache()],
    lambda L: [repr(L.ones(2).device), L.ones(2).is_cuda, L.ones(2).is_cpu,
               L.ones(2).get_device(), str(L.get_default_device())],
    lambda L: [L.ones(2, device="cpu"), L.zeros(2, device=L.device("cpu")),
               L.tensor([1.0], device="cpu:0"), L.arange(3, device="cpu"),
               L.randn(2, device="cpu").shape, L.full((2,), 3.0, device="cpu"),
               L.eye(2, device="cpu"), L.ones(2).new_zeros(2, device="cpu")],
    lambda L: (lambda x: [x.to("cpu") is x, x.cpu() is x, x.to(L.device("cpu")) is x,
                          x.to("cpu", L.float64), x.to(L.ones(1, dtype=L.float64)),
                          x.to(device="cpu", dtype=L.float16), x.to("cpu", copy=True) is x,
                          x.to(L.float32, copy=True), x.to(L.float64).grad_fn.name()])(
        L.ones(2, requires_grad=True)),
    lambda L: (L.set_default_device("cpu"), repr(L.get_default_device()),
               L.set_default_device(None))[1],
    lambda L: [L.equal(L.ones(2), L.ones(2)), L.ones(2).equal(L.ones(3)),
               L.equal(L.ones(2), L.ones(2, dtype=L.float64)),
               L.equal(L.tensor([1, 2]), L.tensor([1.0, 2.0])), L.equal(L.ones(1), L.ones(1, 1))],
    lambda L: [L.allclose(L.tensor([1., 2.]), L.tensor([1., 2.0000001])),
               L.tensor([1., 2.]).allclose(L.tensor([1.1, 2.]), atol=0.2),
               L.isclose(L.tensor([1., float("nan"), float("inf")]),
                         L.tensor([1., float("nan"), float("inf")])),
               L.isclose(L.tensor([1., float("nan")]), L.tensor([1., float("nan")]),
                         equal_nan=True),
               L.isclose(L.ones(2), L.ones(1)), L.isclose(L.tensor([1, 2]), L.tensor([1, 3])),
               L.isclose(L.tensor(1.), L.tensor(1.01), 0.1, 0),
               L.tensor([1e-9, 1.0]).isclose(L.tensor([0.0, 1.0 + 1e-6])),
               L.allclose(L.tensor([1., float("nan")]), L.tensor([1., float("nan")]))],
]

ERRORS = [
    lambda L: L.device("gpu"), lambda L: L.device("cuda:x"), lambda L: L.device("cpu:-1"),
    lambda L: L.device(""), lambda L: L.device(0),
    lambda L: L.ones(2).cuda(), lambda L: L.ones(2).to("cuda"),
    lambda L: L.ones(2, device="cuda"), lambda L: L.tensor([1.0], device="cuda:0"),
    lambda L: L.ones(2).to(L.device("cuda:0")), lambda L: L.cuda.current_device(),
    lambda L: L.cuda.synchronize(),
    lambda L: L.allclose(L.ones(2), L.ones(2, dtype=L.float64)),
    lambda L: L.allclose(L.ones(2), L.ones(3)),
    lambda L: L.isclose(L.tensor(1.), L.tensor(1.01), -0.1),
    lambda L: L.isclose(L.tensor(1.), L.tensor(1.01), atol=-1.0),
    lambda L: L.allclose(L.tensor(1.), 1.0), lambda L: L.equal(L.ones(1), [1.0]),
    lambda L: L.isclose(L.tensor([1, 2]), L.tensor([1., 2.])),
]


@pytest.mark.parametrize("scenario", OK)
def test_same_result(scenario):
    same_outcome(scenario, expect_error=False)


@pytest.mark.parametrize("scenario", ERRORS)
def test_same_error(scenario):
    same_outcome(scenario)
