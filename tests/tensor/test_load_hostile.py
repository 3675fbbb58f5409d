"""``symgrad.load`` of hostile files (issue 23): whatever a file holds, ``load`` builds
data or raises one ``LoadError`` naming the file and the problem, never reads a FIFO or a
device, and its memory is bounded by the data the file declares (measured with
``tracemalloc``: no wall-time assertion).  Each attack is built here, small."""
from __future__ import annotations

import io
import json
import os
import pickle
import struct
import threading
import tracemalloc
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import symgrad
from symgrad import serialization as ser
from symgrad.errors import LoadError, SymgradError

MIB = 2 ** 20


def npy(a: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, a, allow_pickle=False)
    return buf.getvalue()


def npy_header(descr: str, shape: tuple, fortran: bool = False) -> bytes:
    """A version 1.0 .npy header (the data is up to the caller)."""
    text = repr({"descr": descr, "fortran_order": fortran, "shape": shape})
    pad = 64 - (10 + len(text) + 1) % 64
    text = text + " " * pad + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text.encode("latin1")


def archive(manifest, members: dict | None = None, raw_manifest: bytes | None = None,
            method=zipfile.ZIP_STORED) -> io.BytesIO:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as z:
        z.writestr("symgrad.json", raw_manifest if raw_manifest is not None
                   else json.dumps(manifest))
        for name, data in (members or {}).items():
            z.writestr(name, data)
    buf.seek(0)
    return buf


def tensor_manifest(dtype="float32", index=0, **extra) -> dict:
    return {"format": 1, "object": {"tensor": index, "dtype": dtype, **extra}}


def refused(f, *words: str, peak_mib: float = 16) -> LoadError:
    """``load(f)`` raises one LoadError whose message has ``words``, allocating at most
    ``peak_mib`` MiB on the way."""
    tracemalloc.start()
    try:
        with pytest.raises(LoadError) as info:
            symgrad.load(f)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    err = info.value
    assert isinstance(err, SymgradError) and isinstance(err, pickle.UnpicklingError)
    assert isinstance(err, ValueError)  # (what load raised before it had a type)
    text = str(err)
    assert text.startswith("load: ") and "\n" not in text, text
    for w in words:
        assert w in text, (w, text)
    assert peak < peak_mib * MIB, (peak, text)
    return err


# ------------------------------------------------------------------------- objects
@pytest.mark.parametrize("name", ["np", "__builtins__", "__class__", "__loader__",
                                  "__dict__", "dtype", "half", "float", "complex64"])
def test_a_dtype_attribute_never_becomes_an_object(name):
    refused(archive({"format": 1, "object": {"dtype": name}}), "unknown dtype", repr(name))
    refused(archive(tensor_manifest(name), {"0.npy": npy(np.zeros(2, np.float32))}),
            "unknown dtype")


@pytest.mark.parametrize("fmt", [99, 0, True, "1", 1.0, None])
def test_only_format_1(fmt):
    refused(archive({"format": fmt, "object": 1}), "format")


@pytest.mark.parametrize("manifest, words", [
    ({"format": 1}, ["keys format and object"]),
    ({"object": 1}, ["keys format and object"]),
    ({"format": 1, "object": 1, "code": "import os"}, ["keys format and object"]),
    ([1, {"object": 1}], ["keys format and object"]),
    ({"format": 1, "object": [1, 2]}, ["bare array"]),
    ({"format": 1, "object": {"tensor": 0}}, ["tensor entry needs the keys"]),
    ({"format": 1, "object": {"dtype": "float32", "requires_grad": True}},
     ["dtype entry needs the keys"]),
    ({"format": 1, "object": {"tensor": -1, "dtype": "float32"}}, ["member index", "-1"]),
    ({"format": 1, "object": {"tensor": "0", "dtype": "float32"}}, ["member index"]),
    ({"format": 1, "object": {"tensor": True, "dtype": "float32"}}, ["member index"]),
    ({"format": 1, "object": {"tensor": 10 ** 30, "dtype": "float32"}}, ["member index"]),
    ({"format": 1, "object": {"tensor": 5, "dtype": "float32"}}, ["5.npy", "lacks"]),
    ({"format": 1, "object": {"tensor": 0, "dtype": "float32", "parameter": "yes"}},
     ["parameter must be true or false"]),
    ({"format": 1, "object": {"tensor": 0, "dtype": "int64", "requires_grad": True}},
     ["cannot require grad"]),
    ({"format": 1, "object": {"float": "1e5"}}, ["inf, -inf or nan"]),
    ({"format": 1, "object": {"float": ["nan"]}}, ["inf, -inf or nan"]),
    ({"format": 1, "object": {"device": "__import__('os')"}}, ["not a device"]),
    ({"format": 1, "object": {"device": 3}}, ["not a device"]),
    ({"format": 1, "object": {"list": {"a": 1}}}, ["must be a JSON array"]),
    ({"format": 1, "object": {"dict": [[1.5, 2]]}}, ["dict key"]),
    ({"format": 1, "object": {"dict": [[1, 2, 3]]}}, ["[key, value] pair"]),
    ({"format": 1, "object": {"dict": [], "ordered": 1}}, ["ordered flag"]),
    ({"format": 1, "object": {"__class__": "os.system"}}, ["unknown entry"]),
])
def test_malformed_manifests(manifest, words):
    refused(archive(manifest, {"0.npy": npy(np.zeros(2, np.float32))}), *words)


def test_manifest_that_is_not_json_or_not_utf8():
    refused(archive(None, raw_manifest=b"{'format': 1}"), "not JSON")
    refused(archive(None, raw_manifest=b'{"format": 1, "object": "\xff"}'), "not JSON")
    refused(archive(None, raw_manifest=b'{"format": 1, "object": ' + b"9" * 5000 + b"}"),
            "not JSON")


def test_nesting_is_limited_in_save_and_load():
    deep = [1]  # 64 lists, one inside the other
    for _ in range(ser.MAX_DEPTH - 1):
        deep = [deep]
    buf = io.BytesIO()
    symgrad.save(deep, buf)  # as deep as the limit: written and read back
    buf.seek(0)
    assert symgrad.load(buf) == deep
    with pytest.raises(ValueError, match="nested deeper than 64"):
        symgrad.save([deep], io.BytesIO())
    obj: dict = {"list": [1]}
    for _ in range(ser.MAX_DEPTH + 1):
        obj = {"list": [obj]}
    refused(archive({"format": 1, "object": obj}), "nested deeper than 64")
    text = '{"format": 1, "object": ' + '{"list": [' * 100_000 + "1" + "]}" * 100_000 + "}"
    refused(archive(None, raw_manifest=text.encode()), "nested")


def test_the_number_of_values_is_limited(monkeypatch):
    monkeypatch.setattr(ser, "MAX_ITEMS", 1000)
    refused(archive({"format": 1, "object": {"list": list(range(2000))}}),
            "more than 1,000 values", "MAX_ITEMS")


def test_many_references_to_one_member():
    member = npy(np.zeros(4 * MIB, np.float32))  # 16 MB
    ref = {"tensor": 0, "dtype": "float32"}
    f = archive({"format": 1, "object": {"list": [ref] * 400}}, {"0.npy": member})
    refused(f, "0.npy is referenced more than once", peak_mib=4)


# ------------------------------------------------------------------------- members
@pytest.mark.parametrize("array, saying", [
    (np.zeros(3, np.complex64), "complex64"),
    (np.zeros(3, "datetime64[s]"), "datetime64"),
    (np.zeros(3, np.float64), "float64"),
    (np.zeros(3, ">f4"), ">f4"),
    (np.zeros(3, [("a", "<f4")]), "holds"),
    (np.zeros(3, np.uint8), "uint8"),
])
def test_a_member_of_another_dtype_is_refused(array, saying):
    refused(archive(tensor_manifest("float32"), {"0.npy": npy(array)}), "0.npy", saying,
            "float32")


def test_object_and_unparsable_headers():
    obj = npy_header("|O", (3,)) + b"\x00" * 24
    refused(archive(tensor_manifest(), {"0.npy": obj}), "0.npy")
    code = npy_header("<f4", (1,)).replace(b"(1,)", b"(__import__('os').getpid(),)"[:4])
    refused(archive(tensor_manifest(), {"0.npy": code + b"\0" * 4}), "0.npy")
    refused(archive(tensor_manifest(), {"0.npy": b"PK not numpy"}), "not a valid .npy")
    refused(archive(tensor_manifest(), {"0.npy": b"\x93NUMPY\x09\x00"}), "not a valid .npy")


@pytest.mark.parametrize("shape", [(10 ** 12,), (10 ** 6, 10 ** 6), (2, -1), (3,), (1,) * 65])
def test_a_shape_that_disagrees_with_the_member_is_refused_before_allocating(shape):
    member = npy_header("<f4", shape) + b"\0" * 8  # two floats
    refused(archive(tensor_manifest(), {"0.npy": member}), "0.npy", "shape", peak_mib=2)


def test_a_member_that_holds_more_or_less_than_it_declares():
    good = npy(np.arange(4, dtype=np.float32))
    f = archive(tensor_manifest(), {"0.npy": good})
    data = bytearray(f.getvalue())
    # the central directory's uncompressed size of 0.npy, made larger than the member
    at = data.rfind(b"PK\x01\x02")
    assert data[at + 46:at + 51] == b"0.npy"
    struct.pack_into("<L", data, at + 24, len(good) + 1000)
    refused(io.BytesIO(bytes(data)), "0.npy")


def deflated_bomb(declared: int | None = None) -> io.BytesIO:
    """A member of 256 MiB of zeros behind a valid header, deflated to about 256 KB; with
    ``declared`` its directory entries claim that size instead."""
    size = 256 * MIB
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("symgrad.json", json.dumps(tensor_manifest()))
        with z.open("0.npy", "w") as out:
            out.write(npy_header("<f4", (size // 4,)))
            zeros = bytes(MIB)
            for _ in range(256):
                out.write(zeros)
    data = bytearray(buf.getvalue())
    assert len(data) < 2 * MIB
    if declared is not None:
        for sig, off in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
            at = data.find(sig)
            while at >= 0:
                name_at = at + (30 if sig == b"PK\x03\x04" else 46)
                if data[name_at:name_at + 5] == b"0.npy":
                    struct.pack_into("<L", data, at + off, declared)
                at = data.find(sig, at + 4)
    return io.BytesIO(bytes(data))


def test_a_deflate_bomb_is_refused_from_its_declared_size():
    refused(deflated_bomb(), "0.npy", "more than 200 times", "bomb", peak_mib=8)


def test_a_bomb_under_a_raised_ratio_meets_the_byte_limit(monkeypatch):
    monkeypatch.setattr(ser, "MAX_RATIO", 10 ** 6)
    monkeypatch.setattr(ser, "MAX_BYTES", 64 * MIB)
    refused(deflated_bomb(), "more than 67,108,864 bytes", "MAX_BYTES", peak_mib=8)


def test_a_bomb_that_lies_about_its_size_is_read_only_as_far_as_it_says():
    """Its directory says 4,096 bytes (a 1,024-float header would agree with 4,096 + 80):
    reading stops there and the member is damaged (its CRC is the 256 MiB one)."""
    refused(deflated_bomb(declared=4096 + 80), "0.npy", peak_mib=4)


def test_a_huge_manifest_is_refused_before_it_is_read():
    text = b'{"format": 1, "object": "' + b"a" * (64 * MIB) + b'"}'
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("symgrad.json", text)
    buf.seek(0)
    assert len(buf.getvalue()) < MIB
    refused(buf, "manifest declares 67,108,891 bytes", "MAX_MANIFEST_BYTES", peak_mib=4)


def test_a_directory_of_too_many_members_is_refused_before_zipfile_reads_it(monkeypatch):
    monkeypatch.setattr(ser, "MAX_MEMBERS", 10)
    members = {f"{i}.npy": b"" for i in range(50)}
    refused(archive({"format": 1, "object": 1}, members), "51 members", "MAX_MEMBERS")
    # and a directory that claims more bytes than the file holds
    data = bytearray(archive({"format": 1, "object": 1}).getvalue())
    at = data.rfind(b"PK\x05\x06")
    struct.pack_into("<L", data, at + 12, 10 ** 9)
    refused(io.BytesIO(bytes(data)), "zip directory declares")


def test_a_member_past_the_end_of_the_file():
    f = archive(tensor_manifest(), {"0.npy": npy(np.zeros(4, np.float32))})
    data = bytearray(f.getvalue())
    at = data.rfind(b"PK\x01\x02")
    struct.pack_into("<L", data, at + 20, 10 ** 8)  # compressed size
    struct.pack_into("<L", data, at + 24, 10 ** 8)
    refused(io.BytesIO(bytes(data)), "past the end of the file")


# ------------------------------------------------------------------------- files
def test_devices_are_never_read():
    refused("/dev/zero", "/dev/zero", "not a regular file", peak_mib=1)
    with open("/dev/zero", "rb") as fh:
        refused(fh, "not a regular file", peak_mib=1)
    refused("/dev/null", "not a regular file")


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path):
    fifo = tmp_path / "ckpt.pt"
    os.mkfifo(fifo)
    outcome: list = []

    def attempt() -> None:
        try:
            symgrad.load(fifo)
        except LoadError as err:
            outcome.append(str(err))
    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(120)  # (a guard against a hang, not a measure of speed)
    if worker.is_alive():  # unblock it before failing
        with open(fifo, "wb"):
            pass
        pytest.fail("load waited on a FIFO")
    assert len(outcome) == 1 and str(fifo) in outcome[0] and "not a regular file" in outcome[0]


def test_missing_files_and_directories_keep_their_os_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        symgrad.load(tmp_path / "none.pt")
    with pytest.raises(IsADirectoryError):
        symgrad.load(tmp_path)


def test_refusals_name_the_path(tmp_path):
    p = tmp_path / "evil.pt"
    p.write_bytes(archive({"format": 99, "object": 1}).getvalue())
    refused(p, str(p), "format 99")


# ------------------------------------------------------------------------- round trips
def each_saved_thing():
    L = symgrad
    yield L.tensor(2.5)
    for dt in sorted(ser.DTYPES.values(), key=lambda d: d.name):
        yield L.ones(2, 3, dtype=dt)
        yield L.zeros(0, 4, dtype=dt)
    yield L.tensor([1.0, float("nan"), float("-inf")], dtype=L.float64, requires_grad=True)
    yield L.nn.Parameter(L.ones(3))
    yield L.nn.Parameter(L.ones(3), requires_grad=False)
    yield {"a": [1, 2.5, "é\u202e", None, True], 3: (L.float16, L.device("cpu")),
           None: {"inner": L.arange(6).reshape(2, 3)}, False: float("inf")}
    yield OrderedDict([("z", 1), ("a", L.eye(3))])
    yield (np.float32(1.5), np.int64(7), np.bool_(True), 10 ** 18, -0.0, "")
    yield []


@pytest.mark.parametrize("obj", list(each_saved_thing()), ids=lambda o: type(o).__name__)
def test_everything_save_writes_loads_back(obj, tmp_path):
    path = tmp_path / ("x" * 249)  # any valid name: the temporary one fits too
    symgrad.save(obj, path)
    back = symgrad.load(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]
    assert same(back, obj), (back, obj)


def same(a, b) -> bool:
    if isinstance(b, symgrad.Tensor):
        return (type(a) is type(b) and a.dtype is b.dtype and a.shape == b.shape
                and a.requires_grad == b.requires_grad
                and np.array_equal(a.detach().numpy(), b.detach().numpy(), equal_nan=True))
    if isinstance(b, (list, tuple)):
        want = type(b) if not isinstance(b, tuple) or type(b) is tuple else tuple
        return type(a) is want and len(a) == len(b) and all(map(same, a, b))
    if isinstance(b, dict):
        return (type(a) is type(b) and list(a) == list(b)
                and all(same(a[k], b[k]) for k in b))
    if isinstance(b, (np.generic,)):
        return a == b.item() and type(a) is type(b.item())
    if isinstance(b, float) and np.isnan(b):
        return isinstance(a, float) and np.isnan(a)
    return a == b and type(a) is type(b)


def test_a_fortran_ordered_member_reads_as_written():
    a = np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    back = symgrad.load(archive(tensor_manifest(), {"0.npy": npy(a)}))
    np.testing.assert_array_equal(back.numpy(), a)


def test_a_deflated_file_of_ordinary_data_loads(tmp_path):
    """A symgrad file zipped again with deflate (by a user's tool) still loads."""
    x = symgrad.randn(100, 10)
    raw = io.BytesIO()
    symgrad.save({"x": x}, raw)
    buf = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(raw.getvalue())) as src, \
            zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as dst:
        for name in src.namelist():
            dst.writestr(name, src.read(name))
    buf.seek(0)
    np.testing.assert_array_equal(symgrad.load(buf)["x"].numpy(), x.numpy())


def test_loaded_tensors_own_writable_data():
    buf = io.BytesIO()
    symgrad.save(symgrad.ones(3), buf)
    buf.seek(0)
    t = symgrad.load(buf)
    t.add_(1)
    assert t.tolist() == [2.0, 2.0, 2.0]


def test_the_bomb_really_inflates():  # (the helper itself)
    f = deflated_bomb()
    with zipfile.ZipFile(f) as z:
        info = z.getinfo("0.npy")
        assert info.file_size > 256 * MIB and info.compress_size < MIB
        with z.open(info) as fh:
            assert len(fh.read(MIB)) == MIB
