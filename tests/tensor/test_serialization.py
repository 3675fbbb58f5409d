"""``save``/``load``: tensors, parameters, state dicts and optimizer states round-trip
(values, dtypes, flags, key order), files are never pickles, and bad input is refused."""
from __future__ import annotations

import io
import zipfile

import numpy as np
import pytest

import symgrad

torch = pytest.importorskip("torch")


def roundtrip(obj):
    buf = io.BytesIO()
    symgrad.save(obj, buf)
    buf.seek(0)
    return symgrad.load(buf)


@pytest.mark.parametrize("make", [
    lambda L: L.tensor([1.0, 2.0]), lambda L: L.tensor([[1, 2]], dtype=L.int64),
    lambda L: L.tensor(3.5, dtype=L.float64, requires_grad=True),
    lambda L: L.tensor([True, False]), lambda L: L.tensor([1.0, float("inf")], dtype=L.float16),
    lambda L: L.nn.Parameter(L.ones(2)), lambda L: L.zeros(0, 3),
])
def test_tensors(make):
    t = make(symgrad)
    back = roundtrip(t)
    assert repr(back) == repr(t) and type(back) is type(t) and back.dtype is t.dtype
    assert back.requires_grad == t.requires_grad and back is not t


def test_state_dicts_and_optimizers(tmp_path):
    model = symgrad.nn.Sequential(symgrad.nn.Linear(3, 4), symgrad.nn.ReLU(),
                                  symgrad.nn.Linear(4, 1))
    opt = symgrad.optim.Adam(model.parameters(), lr=0.01)
    model(symgrad.ones(2, 3)).sum().backward()
    opt.step()
    path = tmp_path / "ckpt.pt"
    symgrad.save({"model": model.state_dict(), "optim": opt.state_dict(), "epoch": 3,
                  "loss": float("nan"), "best": float("inf"), "dtype": symgrad.float64,
                  "dev": symgrad.device("cpu"), "shape": (2, 3)}, path)
    ck = symgrad.load(path, map_location="cpu")
    assert list(ck["model"]) == list(model.state_dict())
    assert type(ck["model"]).__name__ == "OrderedDict"
    for k, v in model.state_dict().items():
        np.testing.assert_array_equal(ck["model"][k].numpy(), v.numpy())
    fresh = symgrad.nn.Sequential(symgrad.nn.Linear(3, 4), symgrad.nn.ReLU(),
                                  symgrad.nn.Linear(4, 1))
    assert repr(fresh.load_state_dict(ck["model"])) == "<All keys matched successfully>"
    opt2 = symgrad.optim.Adam(fresh.parameters(), lr=0.5)
    opt2.load_state_dict(ck["optim"])
    assert opt2.param_groups[0]["lr"] == 0.01 and opt2.param_groups[0]["betas"] == (0.9, 0.999)
    assert set(ck["optim"]["state"]) == {0, 1, 2, 3}
    assert ck["epoch"] == 3 and np.isnan(ck["loss"]) and ck["best"] == float("inf")
    assert ck["dtype"] is symgrad.float64 and ck["dev"] == symgrad.device("cpu")
    assert ck["shape"] == (2, 3)
    with zipfile.ZipFile(path) as z:  # a zip of JSON and .npy files: no pickle inside
        assert all(n == "symgrad.json" or n.endswith(".npy") for n in z.namelist())


def test_refusals(tmp_path):
    with pytest.raises(TypeError, match="cannot store an object of type object"):
        symgrad.save({"x": object()}, tmp_path / "a.pt")
    assert not (tmp_path / "a.pt").exists()
    p = tmp_path / "torch.pt"
    torch.save({"w": torch.ones(2)}, p)
    with pytest.raises(ValueError, match="not written by symgrad.save"):
        symgrad.load(p)
    (tmp_path / "junk.pt").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not written by symgrad.save"):
        symgrad.load(tmp_path / "junk.pt")
    with pytest.raises(AssertionError, match="CUDA"):
        symgrad.load(tmp_path / "junk.pt", map_location="cuda")
