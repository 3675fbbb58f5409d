"""Devices: ``torch.device`` and the checks every ``device=`` argument goes through.

symgrad computes on the CPU only.  A device names where a tensor lives, as in PyTorch:
``device("cpu")``, ``device("cuda:0")`` and ``device("mps")`` can all be *named* (course
code writes ``torch.device("cuda" if torch.cuda.is_available() else "cpu")``), but a tensor
can only be put on the CPU: asking for CUDA gives PyTorch's error on a machine without it.

May import: ``symgrad.ops`` (nothing of ``api``: the tensor modules import this one).
"""
from __future__ import annotations

import re

__all__ = ["device", "CPU", "resolve", "get_default_device", "set_default_device",
           "DEVICE_TYPES", "NO_CUDA"]

# PyTorch's list, in its order (its error message names them all).
DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve",
                "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
                "privateuseone")
_SPEC = re.compile(r"([a-z]+)(?::(\d+))?")
NO_CUDA = "Torch not compiled with CUDA enabled"


class device:
    """Where a tensor lives: ``device(type='cpu')``.

    Parameters
    ----------
    type : str, int or device
        ``"cpu"``, ``"cuda"``, ``"cuda:1"`` ... (an ``int`` asks for the current
        accelerator, which this machine does not have).
    index : int, optional
        The device's ordinal.

    Examples
    --------
    >>> import symgrad as torch
    >>> torch.device("cpu"), torch.device("cuda:1").index
    (device(type='cpu'), 1)
    >>> torch.device("cuda" if torch.cuda.is_available() else "cpu")
    device(type='cpu')
    """

    __slots__ = ("_type", "_index")

    def __init__(self, type, index: int | None = None) -> None:
        if isinstance(type, device):
            type, index = type.type, type.index
        elif isinstance(type, int) and not isinstance(type, bool):
            raise RuntimeError("Cannot access accelerator device when none is available.")
        elif not isinstance(type, str):
            raise TypeError(f"device() received an invalid combination of arguments - got "
                            f"({_type_name(type)})")
        else:
            type, index = _parse(type, index)
        self._type, self._index = type, index

    @property
    def type(self) -> str:
        return self._type

    @property
    def index(self) -> int | None:
        return self._index

    def __repr__(self) -> str:
        idx = "" if self._index is None else f", index={self._index}"
        return f"device(type='{self._type}'{idx})"

    def __str__(self) -> str:
        return self._type if self._index is None else f"{self._type}:{self._index}"

    def __eq__(self, other) -> bool:
        return (isinstance(other, device) and other._type == self._type
                and other._index == self._index)

    def __hash__(self) -> int:
        return hash((self._type, self._index))

    def __reduce__(self):
        return device, (self._type, self._index)


def _type_name(x) -> str:
    return type(x).__name__


def _parse(text: str, index):
    if not text:
        raise RuntimeError("Device string must not be empty")
    m = _SPEC.fullmatch(text)
    if m is None or m.group(1) not in DEVICE_TYPES:
        head = re.match(r"[a-z]*", text).group(0)
        if head in DEVICE_TYPES:
            raise RuntimeError(f"Invalid device string: '{text}'")
        raise RuntimeError(f"Expected one of {', '.join(DEVICE_TYPES)} device type at start "
                           f"of device string: {text}")
    if m.group(2) is not None:
        if index is not None:
            raise RuntimeError("type (string) must not include an index because index was "
                               f"passed explicitly: {text}")
        index = int(m.group(2))
    return m.group(1), index


CPU = device("cpu")
_DEFAULT = [CPU]


def resolve(where) -> device:
    """The device a ``device=`` argument (``None``, a string, an index or a device) names,
    which must be the CPU: CUDA gives PyTorch's error on a machine without it.

    >>> resolve(None), resolve("cpu:0")
    (device(type='cpu'), device(type='cpu', index=0))
    """
    if where is None:
        return _DEFAULT[0]
    d = where if isinstance(where, device) else device(where)
    if d.type == "cpu":
        return d
    if d.type == "cuda":
        raise AssertionError(NO_CUDA)
    if d.type == "meta":
        raise NotImplementedError("symgrad has no meta tensors: every tensor holds its values")
    raise RuntimeError(f"PyTorch is not linked with support for {d.type} devices")


def get_default_device() -> device:
    """``torch.get_default_device()``: ``device(type='cpu')``."""
    return _DEFAULT[0]


def set_default_device(where) -> None:
    """``torch.set_default_device``: the CPU is the only device there is to choose."""
    _DEFAULT[0] = CPU if where is None else device(resolve(where).type)
