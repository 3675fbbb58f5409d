"""``symgrad.save`` and ``symgrad.load`` (``torch.serialization``'s place): tensors,
state dicts and optimizer states in a safe file.

PyTorch pickles, and unpickling can run any code.  symgrad writes a zip archive instead:
``symgrad.json`` describes the object (dicts, lists, tuples, numbers, strings, ``None``,
dtypes and devices) and each tensor's numbers are a ``.npy`` file.  Nothing in a file is
ever executed; anything else is refused when saving, with a message saying what can be
saved.

``load`` only ever builds data, whatever the file holds: the manifest is checked against
a schema (known keys and types, dtypes from a closed list, each member referenced once and
present), every size is declared and checked before anything is read (the archive's
directory, the manifest, each ``.npy`` header against its member), and members are read in
pieces up to their declared size.  Anything else -- a FIFO or a device, a deflate bomb, a
structured or complex ``.npy`` -- is one :class:`~symgrad.errors.LoadError` naming the file
and the problem.  The limits are the module constants below (``MAX_BYTES`` ...), far above
what a model of a course holds.

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
import stat
import struct
import zipfile
from collections import OrderedDict
from typing import Any

import numpy as np

from ._util import write_atomic
from .api.core import Tensor, _make
from .api.device import device, resolve
from .errors import LoadError
from .nn.parameter import Parameter
from .ops import dtypes as _dt

__all__ = ["save", "load", "LoadError", "MAX_BYTES", "MAX_MEMBERS", "MAX_MANIFEST_BYTES",
           "MAX_DEPTH", "MAX_ITEMS", "MAX_RATIO"]

#: The most bytes of tensor data a file may declare (all members together).
MAX_BYTES = 2 ** 31
#: The most members (tensors) an archive may hold.
MAX_MEMBERS = 100_000
#: The largest manifest (``symgrad.json``).
MAX_MANIFEST_BYTES = 16 * 2 ** 20
#: The deepest nesting of containers, in ``save`` and ``load`` alike.
MAX_DEPTH = 64
#: The most values (containers, numbers, strings, tensors) a manifest may describe.
MAX_ITEMS = 1_000_000
#: How many times its compressed size a member may grow when inflated (symgrad stores its
#: members uncompressed; deflate of real numbers gains a few times, of zeros a thousand).
MAX_RATIO = 200
#: The dtypes a file may name: exactly those ``save`` writes.
DTYPES = {d.name: d for d in vars(_dt).values() if isinstance(d, _dt.dtype)}
#: The string a non-finite float is written as (JSON has no inf or nan).
_NONFINITE = {"inf", "-inf", "nan"}
_CHUNK = 2 ** 20

_MANIFEST = "symgrad.json"
_FORMAT = 1
_WHAT = ("tensors, numbers, strings, None, dtypes, devices and lists, tuples and dicts "
         "of them")


def _encode(obj: Any, arrays: list, depth: int = 0) -> Any:
    if depth >= MAX_DEPTH and isinstance(obj, (list, tuple, dict)):
        raise ValueError(f"save: containers nested deeper than {MAX_DEPTH} levels (the limit "
                         "symgrad.serialization.MAX_DEPTH, which load enforces too)")
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
        items = [_encode(v, arrays, depth + 1) for v in obj]
        return {"tuple": items} if isinstance(obj, tuple) else {"list": items}
    if isinstance(obj, dict):
        keys = list(obj)
        for k in keys:
            if not isinstance(k, (str, int, bool)) and k is not None:
                raise TypeError(f"save: a dict key must be a string or a number, not "
                                f"{type(k).__name__}")
        return {"dict": [[k, _encode(obj[k], arrays, depth + 1)] for k in keys],
                "ordered": isinstance(obj, OrderedDict)}
    if isinstance(obj, (np.floating, np.integer, np.bool_)):
        return _encode(obj.item(), arrays, depth)
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
    write_atomic(os.fspath(f), data)



class _Reader:
    """One archive being loaded: its name (for errors), its zip directory, the members
    referenced so far and the bytes they declare."""

    def __init__(self, name: str, z: zipfile.ZipFile, size: int) -> None:
        self.name, self.z, self.size = name, z, size
        self.members = {info.filename: info for info in z.infolist()}
        self.used: dict = {}
        self.total = 0
        self.items = 0

    def fail(self, problem: str) -> LoadError:
        return LoadError(f"load: {self.name}: {problem}")

    # ------------------------------------------------------------------ the schema
    def check(self, enc: Any, depth: int = 0) -> None:
        """Check ``enc`` against the schema, and every tensor's member against its
        ``.npy`` header, without reading any tensor's data."""
        self.items += 1
        if self.items > MAX_ITEMS:
            raise self.fail(f"the manifest describes more than {MAX_ITEMS:,} values (the "
                            "limit symgrad.serialization.MAX_ITEMS)")
        if depth >= MAX_DEPTH and isinstance(enc, dict) and (
                {"list", "tuple", "dict"} & set(enc)):
            raise self.fail(f"containers nested deeper than {MAX_DEPTH} levels (the limit "
                            "symgrad.serialization.MAX_DEPTH)")
        if enc is None or isinstance(enc, (bool, int, float, str)):
            return
        if not isinstance(enc, dict):
            raise self.fail(f"malformed manifest: a bare {_kind(enc)} where a value "
                            "belongs")
        keys = set(enc)
        for tag, required, optional in _SCHEMA:
            if tag in keys:
                if not required <= keys or not keys <= required | optional:
                    raise self.fail(f"malformed manifest: a {tag} entry needs the keys "
                                    f"{sorted(required)} (and may have {sorted(optional)}), "
                                    f"not {sorted(map(str, keys))}")
                getattr(self, f"_check_{tag}")(enc, depth)
                return
        raise self.fail(f"malformed manifest: unknown entry with keys "
                        f"{sorted(map(str, keys))[:5]}")

    def _check_tensor(self, enc: dict, depth: int) -> None:
        index, name = enc["tensor"], enc["dtype"]
        if type(index) is not int or not 0 <= index < MAX_MEMBERS:
            raise self.fail(f"a tensor's member index must be a whole number from 0 to "
                            f"{MAX_MEMBERS - 1}, not {_show(index)}")
        dt = self._dtype(name)
        for flag in ("requires_grad", "parameter"):
            if type(enc.get(flag, False)) is not bool:
                raise self.fail(f"a tensor's {flag} must be true or false, not "
                                f"{_show(enc[flag])}")
        if enc.get("requires_grad") and not dt.is_floating_point:
            raise self.fail(f"a tensor of dtype {name} cannot require grad")
        member = f"{index}.npy"
        if member not in self.members:
            raise self.fail(f"the manifest names member {member}, which the archive lacks")
        if member in self.used:
            raise self.fail(f"member {member} is referenced more than once (save writes "
                            "each tensor once)")
        self.used[member] = self._header(member, dt)

    def _check_float(self, enc: dict, depth: int) -> None:
        if not isinstance(enc["float"], str) or enc["float"] not in _NONFINITE:
            raise self.fail(f"a float written as text must be inf, -inf or nan, not "
                            f"{_show(enc['float'])}")

    def _check_dtype(self, enc: dict, depth: int) -> None:
        self._dtype(enc["dtype"])

    def _check_device(self, enc: dict, depth: int) -> None:
        text = enc["device"]
        try:
            if not isinstance(text, str) or len(text) > 32:
                raise ValueError
            device(text)
        except (ValueError, TypeError, RuntimeError, AssertionError):
            raise self.fail(f"not a device: {_show(text)}") from None

    def _check_list(self, enc: dict, depth: int, tag: str = "list") -> None:
        items = enc[tag]
        if not isinstance(items, list):
            raise self.fail(f"a {tag}'s items must be a JSON array, not {_kind(items)}")
        for v in items:
            self.check(v, depth + 1)

    def _check_tuple(self, enc: dict, depth: int) -> None:
        self._check_list(enc, depth, "tuple")

    def _check_dict(self, enc: dict, depth: int) -> None:
        pairs = enc["dict"]
        if type(enc.get("ordered", False)) is not bool:
            raise self.fail("a dict's ordered flag must be true or false")
        if not isinstance(pairs, list):
            raise self.fail(f"a dict's items must be a JSON array, not {_kind(pairs)}")
        for pair in pairs:
            if not (isinstance(pair, list) and len(pair) == 2):
                raise self.fail("a dict's item must be a [key, value] pair")
            key = pair[0]
            if not (key is None or isinstance(key, (str, int, bool))):
                raise self.fail(f"a dict key must be a string, a whole number, true, false "
                                f"or null, not {_kind(key)}")
            self.items += 1
            self.check(pair[1], depth + 1)

    def _dtype(self, name: Any):
        if not isinstance(name, str) or name not in DTYPES:
            raise self.fail(f"unknown dtype {_show(name)} (symgrad saves "
                            f"{', '.join(sorted(DTYPES))})")
        return DTYPES[name]

    # ------------------------------------------------------------------ the members
    def _header(self, member: str, dt) -> tuple:
        """``(shape, fortran_order, offset)`` of a member, checked against its declared
        size, the file's size and the limits before any of its data is read."""
        info = self.members[member]
        if info.flag_bits & 0x1:
            raise self.fail(f"member {member} is encrypted")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise self.fail(f"member {member} is compressed with method "
                            f"{info.compress_type} (symgrad stores or deflates)")
        self._declared(member, info)
        self.total += info.file_size
        if self.total > MAX_BYTES:
            raise self.fail(f"the tensors declare more than {MAX_BYTES:,} bytes (the limit "
                            "symgrad.serialization.MAX_BYTES)")
        try:
            with self.z.open(info) as fh:
                version = np.lib.format.read_magic(fh)
                if version == (1, 0):
                    shape, fortran, got = np.lib.format.read_array_header_1_0(fh)
                elif version == (2, 0):
                    shape, fortran, got = np.lib.format.read_array_header_2_0(fh)
                else:
                    raise ValueError(f".npy version {version[0]}.{version[1]}")
                offset = fh.tell()
        except Exception as err:  # noqa: BLE001 - numpy's header parser raises many types
            raise self.fail(f"member {member} is not a valid .npy file ({_line(err)})") \
                from None
        if got != dt.np or got.hasobject or got.names is not None:
            raise self.fail(f"member {member} holds {got} numbers, but the manifest says "
                            f"{dt.name}")
        if len(shape) > 64 or any(type(n) is not int or n < 0 for n in shape):
            raise self.fail(f"member {member} has an invalid shape {_show(shape)}")
        count = 1
        for n in shape:
            count *= n
        if count * got.itemsize != info.file_size - offset:
            need = count * got.itemsize  # (a 4,000-digit shape: its size, not its digits)
            raise self.fail(f"member {member}: shape {_show(shape)} of {got} needs "
                            + (f"{need:,}" if need < 10 ** 18 else
                               f"about 10^{len(str(need)) - 1}")
                            + f" bytes; the member holds {info.file_size - offset:,}")
        return shape, fortran, offset

    def _declared(self, member: str, info: zipfile.ZipInfo) -> None:
        """The member's declared sizes fit the file, and its inflated size is no bomb."""
        if info.header_offset + info.compress_size > self.size:
            raise self.fail(f"member {member} declares {info.compress_size:,} bytes past "
                            "the end of the file")
        if info.compress_type == zipfile.ZIP_STORED and info.compress_size != info.file_size:
            raise self.fail(f"member {member} is stored, but declares {info.file_size:,} "
                            f"bytes in {info.compress_size:,}")
        if info.file_size > info.compress_size * MAX_RATIO + _CHUNK:
            raise self.fail(f"member {member} would inflate {info.compress_size:,} bytes to "
                            f"{info.file_size:,}, more than {MAX_RATIO} times (the limit "
                            "symgrad.serialization.MAX_RATIO): a decompression bomb?")

    def read(self, member: str, limit: int) -> bytearray:
        """The member's bytes, read in pieces, never more than ``limit``."""
        out = bytearray()
        try:
            with self.z.open(self.members[member]) as fh:
                while True:
                    piece = fh.read(min(_CHUNK, limit + 1 - len(out)))
                    if not piece:
                        break
                    out += piece
                    if len(out) > limit:
                        raise self.fail(f"member {member} holds more than the {limit:,} "
                                        "bytes it declares")
        except (zipfile.BadZipFile, EOFError, OSError, ValueError, NotImplementedError,
                RuntimeError) as err:  # (a compression zipfile lacks, encryption: fuzz)
            raise self.fail(f"member {member} is damaged ({_line(err)})") from None
        if len(out) != limit:
            raise self.fail(f"member {member} holds {len(out):,} bytes, not the {limit:,} "
                            "it declares")
        return out

    # ------------------------------------------------------------------ building
    def build(self, enc: Any) -> Any:
        """The object of a manifest that :meth:`check` accepted."""
        if not isinstance(enc, dict):
            return enc
        if "tensor" in enc:
            return self._tensor(enc)
        if "float" in enc:
            return float(enc["float"])
        if "dtype" in enc:
            return DTYPES[enc["dtype"]]
        if "device" in enc:
            return device(enc["device"])
        if "tuple" in enc:
            return tuple(self.build(v) for v in enc["tuple"])
        if "list" in enc:
            return [self.build(v) for v in enc["list"]]
        pairs = [(k, self.build(v)) for k, v in enc["dict"]]
        return OrderedDict(pairs) if enc.get("ordered") else dict(pairs)

    def _tensor(self, enc: dict) -> Tensor:
        member = f"{enc['tensor']}.npy"
        dt = DTYPES[enc["dtype"]]
        shape, fortran, offset = self.used[member]
        data = self.read(member, self.members[member].file_size)
        a = np.frombuffer(data, dtype=dt.np, offset=offset)
        a = a.reshape(shape, order="F" if fortran else "C")
        t = _make(np.array(a, order="C") if fortran else a, dt)
        if enc.get("parameter"):
            return Parameter(t, requires_grad=enc.get("requires_grad", True))
        if enc.get("requires_grad"):
            t.requires_grad_(True)
        return t


#: Each entry of a manifest: its tag, its required keys and its optional ones.
_SCHEMA = (("tensor", {"tensor", "dtype"}, {"requires_grad", "parameter"}),
           ("float", {"float"}, set()), ("device", {"device"}, set()),
           ("tuple", {"tuple"}, set()), ("list", {"list"}, set()),
           ("dict", {"dict"}, {"ordered"}), ("dtype", {"dtype"}, set()))


def _kind(v: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean",
            type(None): "null"}.get(type(v), type(v).__name__)


def _show(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


def _line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return (text[0][:120] if text else type(err).__name__)


def _regular(name: str, fd: int) -> int:
    """The size of the open file ``fd``, which must be a regular file."""
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        raise LoadError(f"load: {name}: not a regular file (a FIFO, a device or a socket "
                        "is never read)")
    return st.st_size


def _open(path: str):
    """A regular file opened for reading: a FIFO or a device is refused before it is
    opened (``/dev/zero`` never ends, a FIFO would wait for a writer), and again after
    (it could have been swapped in between)."""
    st = os.stat(path)
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(21, "Is a directory", path)
    if not stat.S_ISREG(st.st_mode):
        raise LoadError(f"load: {path}: not a regular file (a FIFO, a device or a socket "
                        "is never read)")
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        size = _regular(path, fd)
        return os.fdopen(fd, "rb"), size
    except BaseException:
        os.close(fd)
        raise


def _directory(name: str, fh, size: int) -> None:
    """The zip's end record: its directory must fit the limits before zipfile reads it."""
    tail = min(size, 22 + 65535)
    fh.seek(size - tail)
    data = fh.read(tail)
    at = data.rfind(b"PK\x05\x06")
    if at < 0 or at + 22 > len(data):
        raise LoadError(f"load: {name} was not written by symgrad.save (not a zip archive)")
    entries, cd_size = struct.unpack("<HL", data[at + 10:at + 16])
    if entries == 0xFFFF or cd_size == 0xFFFFFFFF:  # zip64: the counts are elsewhere
        loc = data.rfind(b"PK\x06\x07", 0, at)
        if loc < 0:
            raise LoadError(f"load: {name}: a damaged zip64 archive")
        (offset,) = struct.unpack("<Q", data[loc + 8:loc + 16])
        if offset + 56 > size:
            raise LoadError(f"load: {name}: a damaged zip64 archive")
        fh.seek(offset)
        rec = fh.read(56)
        if rec[:4] != b"PK\x06\x06":
            raise LoadError(f"load: {name}: a damaged zip64 archive")
        entries, cd_size = struct.unpack("<QQ", rec[32:48])
    if entries > MAX_MEMBERS + 1:
        raise LoadError(f"load: {name}: {entries:,} members, more than the limit of "
                        f"{MAX_MEMBERS:,} (symgrad.serialization.MAX_MEMBERS)")
    if cd_size > (MAX_MEMBERS + 1) * 1024 or cd_size > size:
        raise LoadError(f"load: {name}: the zip directory declares {cd_size:,} bytes, more "
                        "than its members need or the file holds")
    fh.seek(0)


def load(f, map_location=None, pickle_module=None, *, weights_only: bool | None = None,
         mmap: bool | None = None, **pickle_load_args) -> Any:
    """Read what :func:`save` wrote, from a path or a binary file.

    Only data is ever built: tensors, parameters, numbers, strings, ``None``, dtypes,
    devices and lists, tuples and dicts of them.  Anything else is refused with one
    :class:`~symgrad.errors.LoadError` (a ``pickle.UnpicklingError``, as in PyTorch, and a
    ``ValueError``) naming the file and the problem: files that are not symgrad's
    (PyTorch's pickles: reading them could run code), FIFOs and devices, malformed
    manifests, members whose header disagrees with the manifest, and files past the limits
    (``MAX_BYTES``, ``MAX_MEMBERS``, ``MAX_MANIFEST_BYTES``, ``MAX_DEPTH``, ``MAX_ITEMS``,
    ``MAX_RATIO``), which are checked before anything large is read.  ``map_location``
    may name the CPU only.

    Examples
    --------
    >>> import io, json, zipfile, symgrad
    >>> buf = io.BytesIO()
    >>> with zipfile.ZipFile(buf, "w") as z:
    ...     z.writestr("symgrad.json", json.dumps({"format": 1, "object": {"dtype": "np"}}))
    >>> try:
    ...     symgrad.load(buf)
    ... except symgrad.errors.LoadError as err:
    ...     print(err)
    load: the file: unknown dtype 'np' (symgrad saves bool, float16, float32, float64, int32, int64)
    """
    if map_location is not None and not callable(map_location) and not isinstance(
            map_location, dict):
        resolve(map_location)
    if hasattr(f, "read"):
        name = str(getattr(f, "name", "the file"))
        try:
            size = _regular(name, f.fileno())
        except (AttributeError, OSError, io.UnsupportedOperation):
            f.seek(0, io.SEEK_END)
            size = f.tell()
        fh, own = f, False
        fh.seek(0)
    else:
        name = os.fspath(f)
        fh, size = _open(name)
        own = True
    try:
        return _load(name, fh, size)
    finally:
        if own:
            fh.close()


def _load(name: str, fh, size: int) -> Any:
    _directory(name, fh, size)
    try:
        z = zipfile.ZipFile(fh)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError, OSError,
            NotImplementedError):  # (a zip version zipfile lacks: found by fuzz)
        raise LoadError(f"load: {name} was not written by symgrad.save") from None
    with z:
        reader = _Reader(name, z, size)
        info = reader.members.get(_MANIFEST)
        if info is None:
            raise LoadError(f"load: {name} was not written by symgrad.save (a PyTorch "
                            "file is a pickle, which symgrad does not read: it can run "
                            "code)")
        if info.file_size > MAX_MANIFEST_BYTES:
            raise reader.fail(f"the manifest declares {info.file_size:,} bytes, more than "
                              f"the limit of {MAX_MANIFEST_BYTES:,} "
                              "(symgrad.serialization.MAX_MANIFEST_BYTES)")
        reader._declared(_MANIFEST, info)
        raw = reader.read(_MANIFEST, info.file_size)
        try:
            manifest = json.loads(raw.decode("utf-8"))
        except RecursionError:
            raise reader.fail(f"the manifest is nested too deeply (the limit is "
                              f"{MAX_DEPTH} levels)") from None
        except (ValueError, UnicodeDecodeError) as err:
            raise reader.fail(f"the manifest is not JSON ({_line(err)})") from None
        del raw
        if not isinstance(manifest, dict) or set(manifest) != {"format", "object"}:
            keys = sorted(map(str, manifest)) if isinstance(manifest, dict) else \
                _kind(manifest)
            raise reader.fail(f"the manifest must be an object with the keys format and "
                              f"object, not {keys}")
        if type(manifest["format"]) is not int or manifest["format"] != _FORMAT:
            raise reader.fail(f"format {_show(manifest['format'])} is not one this symgrad "
                              f"reads (format {_FORMAT})")
        reader.check(manifest["object"])
        return reader.build(manifest["object"])
