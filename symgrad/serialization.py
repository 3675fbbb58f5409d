"""``symgrad.save`` and ``symgrad.load`` (``torch.serialization``'s place): tensors,
state dicts and optimizer states in a safe file.

PyTorch pickles, and unpickling can run any code.  symgrad writes a zip archive instead:
``symgrad.json`` describes the object (dicts, lists, tuples, numbers, strings, ``None``,
dtypes and devices) and each tensor's numbers are a ``.npy`` file, read back with
``numpy.load(allow_pickle=False)``.  Nothing in a file is ever executed; anything else
is refused when saving, with a message saying what can be saved.

Examples
--------
>>> import io, symgrad as torch
>>> buf = io.BytesIO()
>>> torch.save({"w": torch.tensor([1.0, 2.0], requires_grad=True), "step": 3}, buf)
>>> _ = buf.seek(0)
>>> torch.load(buf)
{'w': tensor([1., 2.], requires_grad=True), 'step': 3}
"""
from __future__ import annotations

import io
import json
import os
import zipfile
from collections import OrderedDict
from typing import Any

import numpy as np

from .api.core import Tensor, _make
from .api.device import device, resolve
from .nn.parameter import Parameter
from .ops import dtypes as _dt

__all__ = ["save", "load"]

_MANIFEST = "symgrad.json"
_FORMAT = 1
_WHAT = ("tensors, numbers, strings, None, dtypes, devices and lists, tuples and dicts "
         "of them")


def _encode(obj: Any, arrays: list) -> Any:
    if isinstance(obj, Tensor):
        arrays.append(np.array(obj._data, order="C"))  # (ascontiguousarray makes 0-d 1-d)
        out = {"tensor": len(arrays) - 1, "dtype": obj.dtype.name,
               "requires_grad": bool(obj._requires_grad and obj.grad_fn is None)}
        if getattr(obj, "_prints_as_parameter", False):
            out["parameter"] = True
        return out
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, _dt.dtype):
        return {"dtype": obj.name}
    if isinstance(obj, device):
        return {"device": str(obj)}
    if isinstance(obj, (list, tuple)):
        items = [_encode(v, arrays) for v in obj]
        return {"tuple": items} if isinstance(obj, tuple) else {"list": items}
    if isinstance(obj, dict):
        keys = list(obj)
        for k in keys:
            if not isinstance(k, (str, int, bool)) and k is not None:
                raise TypeError(f"save: a dict key must be a string or a number, not "
                                f"{type(k).__name__}")
        return {"dict": [[k, _encode(obj[k], arrays)] for k in keys],
                "ordered": isinstance(obj, OrderedDict)}
    if isinstance(obj, (np.floating, np.integer, np.bool_)):
        return _encode(obj.item(), arrays)
    raise TypeError(f"save: cannot store an object of type {type(obj).__name__}; symgrad "
                    f"saves {_WHAT} (nothing that would need pickle)")


def _float(x: float) -> Any:
    return {"float": repr(x)} if not np.isfinite(x) else x


def _finite(enc: Any) -> Any:
    """JSON has no inf or nan: such floats are written as their text."""
    if isinstance(enc, float):
        return _float(enc)
    if isinstance(enc, list):
        return [_finite(v) for v in enc]
    if isinstance(enc, dict):
        return {k: _finite(v) for k, v in enc.items()}
    return enc


def save(obj: Any, f, pickle_module=None, pickle_protocol: int = 2,
         _use_new_zipfile_serialization: bool = True) -> None:
    """Write ``obj`` (a tensor, a state dict, an optimizer's state ...) to the path or
    binary file ``f``; a path is written whole or not at all."""
    arrays: list = []
    manifest = json.dumps({"format": _FORMAT, "object": _finite(_encode(obj, arrays))})
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        z.writestr(_MANIFEST, manifest)
        for i, a in enumerate(arrays):
            npy = io.BytesIO()
            np.save(npy, a, allow_pickle=False)
            z.writestr(f"{i}.npy", npy.getvalue())
    data = buf.getvalue()
    if hasattr(f, "write"):
        f.write(data)
        return
    path = os.fspath(f)
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _decode(enc: Any, z: zipfile.ZipFile) -> Any:
    if not isinstance(enc, dict):
        if isinstance(enc, list):
            raise ValueError("load: a malformed symgrad file")
        return enc
    if "tensor" in enc:
        with z.open(f"{int(enc['tensor'])}.npy") as fh:
            a = np.load(io.BytesIO(fh.read()), allow_pickle=False)
        dt = getattr(_dt, enc["dtype"])
        t = _make(a.astype(dt.np, copy=False), dt)
        if enc.get("parameter"):
            return Parameter(t, requires_grad=enc.get("requires_grad", True))
        if enc.get("requires_grad"):
            t.requires_grad_(True)
        return t
    if "float" in enc:
        return float(enc["float"])
    if "dtype" in enc:
        return getattr(_dt, enc["dtype"])
    if "device" in enc:
        return device(enc["device"])
    if "tuple" in enc:
        return tuple(_decode(v, z) for v in enc["tuple"])
    if "list" in enc:
        return [_decode(v, z) for v in enc["list"]]
    if "dict" in enc:
        pairs = [(k, _decode(v, z)) for k, v in enc["dict"]]
        return OrderedDict(pairs) if enc.get("ordered") else dict(pairs)
    raise ValueError("load: a malformed symgrad file")


def load(f, map_location=None, pickle_module=None, *, weights_only: bool | None = None,
         mmap: bool | None = None, **pickle_load_args) -> Any:
    """Read what :func:`save` wrote, from a path or a binary file.  ``map_location`` may
    name the CPU only.  Files that are not symgrad's (PyTorch's pickles) are refused:
    reading them could run code."""
    if map_location is not None and not callable(map_location) and not isinstance(
            map_location, dict):
        resolve(map_location)
    name = f if not hasattr(f, "read") else getattr(f, "name", "the file")
    try:
        z = zipfile.ZipFile(f if hasattr(f, "read") else os.fspath(f))
    except zipfile.BadZipFile:
        raise ValueError(f"load: {name} was not written by symgrad.save") from None
    with z:
        if _MANIFEST not in z.namelist():
            raise ValueError(f"load: {name} was not written by symgrad.save (a PyTorch "
                             "file is a pickle, which symgrad does not read: it can run "
                             "code)")
        manifest = json.loads(z.read(_MANIFEST).decode("utf-8"))
        return _decode(manifest["object"], z)
