"""``default_collate`` and ``default_convert``: samples into batches, as PyTorch's.

A batch of tensors is stacked along a new first dimension; numpy arrays and numpy scalars
become tensors first; Python floats a float64 tensor, ints an int64 one (bools a bool one);
strings and bytes stay a list; dicts, namedtuples, tuples and lists are collated field by
field (tuples come back as lists, as in PyTorch).  ``collate_fn_map`` extends it by type.

Examples
--------
>>> import symgrad as torch
>>> from symgrad.utils.data import default_collate
>>> default_collate([(1, 0.5, "a"), (2, 1.5, "b")])
[tensor([1, 2]), tensor([0.5000, 1.5000], dtype=torch.float64), ('a', 'b')]
>>> default_collate([{"x": torch.zeros(2)}, {"x": torch.ones(2)}])
{'x': tensor([[0., 0.],
        [1., 1.]])}
"""
from __future__ import annotations

import collections.abc
import copy
import re
from typing import Callable

import numpy as np

from ...api.functional import stack
from ...api.tensor import Tensor, _make, as_tensor, tensor
from ...ops import dtypes as _dt

__all__ = ["default_collate", "default_convert", "collate", "default_collate_fn_map",
           "collate_tensor_fn", "collate_numpy_array_fn", "collate_numpy_scalar_fn",
           "collate_float_fn", "collate_int_fn", "collate_str_fn"]

np_str_obj_array_pattern = re.compile(r"[SaUO]")
default_collate_err_msg_format = ("default_collate: batch must contain tensors, numpy arrays, "
                                  "numbers, dicts or lists; found {}")


def _is_numpy(value) -> bool:
    name = type(value).__name__
    return type(value).__module__ == "numpy" and name not in ("str_", "string_")


def default_convert(data):
    """Numpy arrays and scalars in ``data`` (at any depth of mappings and sequences) as
    tensors; everything else unchanged (tuples come back as lists)."""
    if isinstance(data, Tensor):
        return data
    if _is_numpy(data):
        if (isinstance(data, np.ndarray)
                and np_str_obj_array_pattern.search(data.dtype.str) is not None):
            return data
        return as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        converted = {key: default_convert(data[key]) for key in data}
        return _rebuild_mapping(data, converted)
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild_sequence(data, [default_convert(d) for d in data])
    return data


def _rebuild_mapping(like, values: dict):
    """``values`` in a mapping of ``like``'s type (a plain dict if that type cannot)."""
    try:
        if isinstance(like, collections.abc.MutableMapping):
            clone = copy.copy(like)
            clone.update(values)
            return clone
        return type(like)(values)
    except TypeError:
        return values


def _rebuild_sequence(like, values: list):
    try:
        if isinstance(like, collections.abc.MutableSequence):
            clone = copy.copy(like)
            for i, v in enumerate(values):
                clone[i] = v
            return clone
        return type(like)(values)
    except TypeError:
        return values


def collate(batch, *, collate_fn_map: dict | None = None):
    """Collate ``batch`` (a list of samples), the function for a sample's type taken from
    ``collate_fn_map`` (its exact type first, then the first type it is an instance of)."""
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for kind in collate_fn_map:
            if isinstance(elem, kind):
                return collate_fn_map[kind](batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        values = {key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map)
                  for key in elem}
        return _rebuild_mapping(elem, values)
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return elem_type(*(collate(samples, collate_fn_map=collate_fn_map)
                           for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if not all(len(e) == size for e in batch[1:]):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [collate(samples, collate_fn_map=collate_fn_map)
                   for samples in zip(*batch)]
        return columns if isinstance(elem, tuple) else _rebuild_sequence(elem, columns)
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def collate_tensor_fn(batch, *, collate_fn_map: dict | None = None):
    """The tensors stacked along a new first dim (``stack``); samples that need no
    gradient, of one dtype and shape (a dataset's rows), by one numpy call."""
    first = batch[0]
    dt, shape = first._dtype, first._data.shape
    for b in batch:
        if (b.__class__ is not Tensor or b._dtype is not dt or b.grad_fn is not None
                or b._requires_grad or b._data.shape != shape
                or b._view_of is not None and b._vc[0] != b._view_version):
            return stack(batch, 0)
    data = [b._data for b in batch]
    # (0-d samples, a dataset's labels: one array of the numbers)
    return _make(np.array(data, dtype=dt.np) if not shape else np.stack(data), dt)


def collate_numpy_array_fn(batch, *, collate_fn_map: dict | None = None):
    if np_str_obj_array_pattern.search(batch[0].dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(batch[0].dtype))
    return collate([as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map: dict | None = None):
    return as_tensor(batch)


def collate_float_fn(batch, *, collate_fn_map: dict | None = None):
    return tensor(batch, dtype=_dt.float64)


def collate_int_fn(batch, *, collate_fn_map: dict | None = None):
    return tensor(batch)


def collate_str_fn(batch, *, collate_fn_map: dict | None = None):
    return batch


default_collate_fn_map: dict[type | tuple, Callable] = {
    Tensor: collate_tensor_fn, np.ndarray: collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn, float: collate_float_fn,
    int: collate_int_fn, str: collate_str_fn, bytes: collate_str_fn}


def default_collate(batch):
    """A list of samples as one batch (see the module's description)."""
    return collate(batch, collate_fn_map=default_collate_fn_map)
