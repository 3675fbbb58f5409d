"""Compare symgrad's tensor printing with torch's own ``repr`` (the oracle)."""

import zlib

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from conftest import calls_made  # noqa: E402
from symgrad.api.printing import (  # noqa: E402
    get_printoptions,
    printoptions,
    set_printoptions,
    tensor_repr,
)

DTYPES = ["float16", "float32", "float64", "int64", "int32", "bool"]
FLOAT_DTYPES = ["float16", "float32", "float64"]
NP = {
    "float16": np.float16, "float32": np.float32, "float64": np.float64,
    "int64": np.int64, "int32": np.int32, "bool": np.bool_,
}
SHAPES = [(), (1,), (3,), (2, 3), (4, 1, 3), (0,), (2, 0), (2000,), (40, 40), (1001,)]


def _reset_options():
    torch.set_printoptions(profile="default")
    set_printoptions(profile="default")


@pytest.fixture(autouse=True)
def _default_printoptions():
    _reset_options()
    yield
    _reset_options()


@pytest.fixture
def default_float64():
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield "float64"
    torch.set_default_dtype(old)


def _torch_tensor(arr):
    return torch.from_numpy(np.array(arr, copy=True))


def _check(values, dtype, default_dtype="float32"):
    arr = np.asarray(values).astype(NP[dtype])
    expected = repr(_torch_tensor(arr))
    assert str(_torch_tensor(arr)) == expected
    got = tensor_repr(arr, dtype, default_dtype=default_dtype)
    assert got == expected, f"\n{got}\n!=\n{expected}"


# ---------------------------------------------------------------- value sets
def _value_cases():
    rng = np.random.default_rng(1234)
    cases = []
    for exp in range(-10, 11):
        for shape in [(), (3,), (2, 3)]:
            mant = rng.uniform(1, 10, size=shape)
            cases.append((f"mag1e{exp}-{shape}", mant * 10.0 ** exp))
            signs = rng.choice([-1.0, 1.0], size=shape)
            cases.append((f"signed1e{exp}-{shape}", signs * mant * 10.0 ** exp))
    for lo, hi in [(-10, 10), (-5, 0), (-3, 3), (0, 3), (0, 8), (2, 9), (-4, -1), (4, 10)]:
        for i in range(3):
            shape = [(5,), (3, 4), (4, 1, 3)][i]
            vals = 10.0 ** rng.uniform(lo, hi, size=shape)
            vals *= rng.choice([-1.0, 1.0], size=shape)
            cases.append((f"logu{lo}_{hi}-{i}", vals))
    for scale in [1, 10, 1000, 10 ** 5, 10 ** 8, 10 ** 9, 10 ** 12]:
        for shape in [(), (4,), (3, 3)]:
            vals = rng.integers(-scale, scale + 1, size=shape).astype(np.float64)
            cases.append((f"ints{scale}-{shape}", vals))
    cases += [
        ("zeros", np.zeros(4)),
        ("negzero", np.array([-0.0, 0.0, -0.0])),
        ("negzero0d", np.array(-0.0)),
        ("zero0d", np.array(0.0)),
        ("nan0d", np.array(np.nan)),
        ("inf0d", np.array(np.inf)),
        ("ninf0d", np.array(-np.inf)),
        ("specials", np.array([np.nan, np.inf, -np.inf, 0.0, -0.0])),
        ("nan_int", np.array([np.nan, 1.0, -2.0])),
        ("nan_frac", np.array([np.nan, 1.5, -2.25])),
        ("inf_sci", np.array([np.inf, 1e-7, -3.0])),
        ("inf_big", np.array([-np.inf, 1e10, 2.0])),
        ("nan_2d", np.array([[np.nan, 0.1234], [100.5, -np.inf]])),
        ("round_up", np.array([9.99995, 99.99996, -0.99999])),
        ("round_sci", np.array([9.99996e-5, 1.0, 5.0])),
        ("ratio_1000", np.array([1.0, 1000.0])),
        ("ratio_1001", np.array([1.0, 1001.0])),
        ("ratio_1000_frac", np.array([0.5, 500.0])),
        ("max_1e8", np.array([1e8, 12345678.5])),
        ("max_above_1e8", np.array([1.5e8, 2e8])),
        ("min_1e-4", np.array([1e-4, 0.05])),
        ("min_below_1e-4", np.array([9e-5, 0.05])),
        ("example_vec", np.array([4.7754, 5.7304, 6.6855])),
        ("example_sci", np.array([102.4, 1024.0, 0.1024])),
        ("tiny", np.array([1e-30, 3e-38, -1e-45])),
        ("huge", np.array([1e30, -3e38])),
        ("huge64", np.array([1e300, 1e-300, -2.5])),
        ("halves", np.array([0.5, 1.5, -2.5, 3.5])),
        ("ints_neg", np.array([-1.0, -10.0, -100.0])),
        ("mixed_width", np.array([1.0, -123.25, 0.0625, 7.0])),
    ]
    return cases


VALUE_CASES = _value_cases()


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("name,values", VALUE_CASES, ids=[c[0] for c in VALUE_CASES])
def test_float_values(name, values, dtype):
    with np.errstate(over="ignore"):
        _check(values, dtype)


def _shape_values(shape, kind, rng):
    if kind == "normal":
        return rng.normal(size=shape) * 3
    if kind == "ints":
        return rng.integers(-50, 50, size=shape).astype(np.float64)
    if kind == "wide":
        return 10.0 ** rng.uniform(-6, 6, size=shape) * rng.choice([-1, 1], size=shape)
    if kind == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    if kind == "bigint":
        return rng.integers(-10 ** 9, 10 ** 9, size=shape)
    raise AssertionError(kind)


KINDS = {
    "float16": ["normal", "ints", "wide"],
    "float32": ["normal", "ints", "wide"],
    "float64": ["normal", "ints", "wide"],
    "int64": ["ints", "bigint"],
    "int32": ["ints", "bigint"],
    "bool": ["bool"],
}
SHAPE_CASES = [(d, k, s) for d in DTYPES for k in KINDS[d] for s in SHAPES]


@pytest.mark.parametrize("dtype,kind,shape", SHAPE_CASES,
                         ids=[f"{d}-{k}-{s}" for d, k, s in SHAPE_CASES])
def test_shapes(dtype, kind, shape):
    rng = np.random.default_rng(zlib.crc32(f"{dtype}{kind}{shape}".encode()))
    with np.errstate(over="ignore"):
        _check(_shape_values(shape, kind, rng), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(0,), (2, 0), (0, 3), (1, 0, 2), (0, 0)])
def test_empty(shape, dtype):
    _check(np.zeros(shape), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(3, 4, 5, 6), (10, 200), (1000,), (1001,), (2, 3, 200),
                                   (7, 7, 7, 7), (1, 1001)])
def test_summarise(shape, dtype):
    rng = np.random.default_rng(len(shape) * 100 + shape[-1])
    kind = KINDS[dtype][0]
    _check(_shape_values(shape, kind, rng), dtype)


@pytest.mark.parametrize("n", range(1, 30))
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32"])
def test_wrapping(n, dtype):
    rng = np.random.default_rng(n)
    _check(rng.normal(size=n) * 10 ** rng.integers(0, 6), dtype)
    _check(rng.normal(size=(2, n)) * 100, dtype)


# --------------------------------------------------------------- int / bool
INT_CASES = [
    np.array(0), np.array(-5), np.array(123456789012), np.array([1, -2, 3]),
    np.array([[1, 22], [333, -4444]]), np.arange(12).reshape(3, 4),
    np.array([2 ** 31 - 1, -2 ** 31]), np.array([2 ** 62, -7]),
]


@pytest.mark.parametrize("dtype", ["int64", "int32"])
@pytest.mark.parametrize("idx", range(len(INT_CASES)))
def test_ints(idx, dtype):
    values = INT_CASES[idx]
    if dtype == "int32" and np.abs(values).max(initial=0) >= 2 ** 31:
        values = values % 1000
    _check(values, dtype)


@pytest.mark.parametrize("values", [True, False, [True], [False], [True, True],
                                    [True, False], [[True], [False]],
                                    [[False, False], [True, True]]])
def test_bools(values):
    _check(np.array(values), "bool")


# ------------------------------------------------------------ grad suffixes
OPS = {
    "mul": lambda x: x * 1,
    "clone": lambda x: x.clone(),
    "view": lambda x: x.view(x.shape),
    "neg": lambda x: -x,
    "mean": lambda x: x.mean(),
    "sum": lambda x: x.sum(),
    "unsqueeze": lambda x: x.unsqueeze(0),
    "double": lambda x: x * 2,
}
GRAD_SHAPES = [(), (1,), (3,), (2, 3), (4, 1, 3), (0,), (2, 0), (9,), (11,), (2000,),
               (40, 40)]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("shape", GRAD_SHAPES, ids=str)
def test_grad_fn(shape, op, dtype):
    if op in ("mean", "sum") and 0 in shape:
        pytest.skip("no elements")
    rng = np.random.default_rng(7)
    arr = (rng.normal(size=shape) * 5).astype(NP[dtype])
    x = _torch_tensor(arr).requires_grad_(True)
    assert tensor_repr(arr, dtype, requires_grad=True) == repr(x)
    y = OPS[op](x)
    got = tensor_repr(y.detach().numpy(), dtype, grad_fn=type(y.grad_fn).__name__)
    assert got == repr(y)


@pytest.mark.parametrize("n", range(1, 16))
def test_suffix_wrapping(n):
    # lengths chosen so the last line ends at various columns near linewidth
    for dtype in FLOAT_DTYPES:
        arr = np.linspace(-3.3, 7.7, n).astype(NP[dtype])
        x = _torch_tensor(arr).requires_grad_(True)
        y = x * 1
        assert tensor_repr(arr, dtype, requires_grad=True) == repr(x)
        got = tensor_repr(y.detach().numpy(), dtype, grad_fn="MulBackward0")
        assert got == repr(y)


def test_example_reprs():
    x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    got = tensor_repr(np.array([1.0, 2.0]), "float64", requires_grad=True)
    assert got == repr(x) == "tensor([1., 2.], dtype=torch.float64, requires_grad=True)"
    m = torch.tensor([1.0, 2.0], requires_grad=True).mean()
    got = tensor_repr(np.array(1.5, dtype=np.float32), "float32", grad_fn="MeanBackward0")
    assert got == repr(m) == "tensor(1.5000, grad_fn=<MeanBackward0>)"


def test_grad_fn_takes_precedence():
    arr = np.array([1.5], dtype=np.float32)
    got = tensor_repr(arr, "float32", requires_grad=True, grad_fn="AddBackward0")
    assert got == "tensor([1.5000], grad_fn=<AddBackward0>)"


# -------------------------------------------------------------- parameters
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (0,), (40, 40)], ids=str)
def test_parameter(shape, dtype):
    arr = np.random.default_rng(3).normal(size=shape).astype(NP[dtype])
    p = torch.nn.Parameter(_torch_tensor(arr))
    assert tensor_repr(arr, dtype, parameter=True) == repr(p) == str(p)


# ----------------------------------------------------------- default dtype
DEFAULT64_CASES = [(d, s) for d in DTYPES for s in [(), (3,), (2, 3), (0,), (2, 0), (2000,)]]


@pytest.mark.parametrize("dtype,shape", DEFAULT64_CASES,
                         ids=[f"{d}-{s}" for d, s in DEFAULT64_CASES])
def test_default_dtype_float64(default_float64, dtype, shape):
    rng = np.random.default_rng(11)
    values = _shape_values(shape, KINDS[dtype][0], rng)
    _check(values, dtype, default_dtype=default_float64)
    if dtype in FLOAT_DTYPES:
        arr = values.astype(NP[dtype])
        x = _torch_tensor(arr).requires_grad_(True)
        y = x * 1
        got = tensor_repr(arr, dtype, requires_grad=True, default_dtype="float64")
        assert got == repr(x)
        got = tensor_repr(y.detach().numpy(), dtype, grad_fn="MulBackward0",
                          default_dtype="float64")
        assert got == repr(y)
        p = torch.nn.Parameter(_torch_tensor(arr))
        assert tensor_repr(arr, dtype, parameter=True, default_dtype="float64") == repr(p)


def test_default_dtype_python_list(default_float64):
    t = torch.tensor([0.1, 0.2, 3.0])
    assert tensor_repr(np.array([0.1, 0.2, 3.0]), "float64", default_dtype="float64") == repr(t)
    t = torch.tensor([0.1, 0.2, 3.0], dtype=torch.float32)
    assert tensor_repr(np.array([0.1, 0.2, 3.0]), "float32", default_dtype="float64") == repr(t)


# ------------------------------------------------------------ print options
OPTION_SETS = [
    dict(precision=2),
    dict(precision=0),
    dict(precision=6),
    dict(precision=10),
    dict(threshold=5),
    dict(threshold=10, edgeitems=1),
    dict(threshold=5000),
    dict(edgeitems=0),
    dict(edgeitems=1),
    dict(edgeitems=2),
    dict(edgeitems=10),
    dict(linewidth=40),
    dict(linewidth=10),
    dict(linewidth=120),
    dict(linewidth=200, threshold=100000),
    dict(profile="short"),
    dict(profile="full"),
    dict(profile="full", precision=2),
    dict(sci_mode=True),
    dict(sci_mode=False),
    dict(sci_mode=True, precision=2),
    dict(sci_mode=False, precision=1, linewidth=60),
    dict(profile="short", sci_mode=True, threshold=20),
]
OPTION_ARRAYS = [
    ("scalar", np.array(3.14159265)),
    ("zero", np.array(0.0)),
    ("vec", np.array([1.23456789, -0.000123, 12.5])),
    ("ints", np.array([1.0, -2.0, 300.0])),
    ("wide", np.array([1e-8, 1.0, 1e9])),
    ("special", np.array([np.nan, -np.inf, -0.0, 2.5])),
    ("allzero", np.zeros(3)),
    ("mat", np.arange(30.0).reshape(5, 6) / 7),
    ("big1d", np.arange(2000.0) * 1.5 - 700),
    ("big2d", np.linspace(-5, 5, 1600).reshape(40, 40)),
    ("big3d", np.linspace(-1e5, 1e5, 1200).reshape(10, 12, 10)),
    ("mid1d", np.linspace(0.001, 1000, 30)),
    ("wide_big", 10.0 ** np.linspace(-7, 7, 1500)),
    ("empty", np.zeros((2, 0))),
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "bool"])
@pytest.mark.parametrize("name,values", OPTION_ARRAYS, ids=[a[0] for a in OPTION_ARRAYS])
@pytest.mark.parametrize("opts", OPTION_SETS,
                         ids=lambda o: "-".join(f"{k}={v}" for k, v in o.items()))
def test_printoptions(opts, name, values, dtype):
    torch.set_printoptions(**opts)
    set_printoptions(**opts)
    assert get_printoptions() == torch._tensor_str.get_printoptions()
    with np.errstate(over="ignore", invalid="ignore"):
        values = np.asarray(values).astype(NP[dtype])
    _check(values, dtype)
    if dtype.startswith("float") and values.size:
        x = _torch_tensor(values).requires_grad_(True)
        y = x * 1
        got = tensor_repr(y.detach().numpy(), dtype, grad_fn="MulBackward0")
        assert got == repr(y)


def test_get_printoptions_matches_torch():
    assert get_printoptions() == torch._tensor_str.get_printoptions()
    for kwargs in OPTION_SETS + [dict(profile="default"), dict(precision=3)]:
        torch.set_printoptions(**kwargs)
        set_printoptions(**kwargs)
        assert get_printoptions() == torch._tensor_str.get_printoptions()
    torch.set_printoptions(sci_mode=True)
    set_printoptions(sci_mode=True)
    torch.set_printoptions(precision=3)  # sci_mode is reset to None
    set_printoptions(precision=3)
    assert get_printoptions() == torch._tensor_str.get_printoptions()
    assert get_printoptions()["sci_mode"] is None


def test_printoptions_context():
    arr = np.array([1.23456], dtype=np.float32)
    with printoptions(precision=2):
        assert tensor_repr(arr, "float32") == "tensor([1.23])"
    assert tensor_repr(arr, "float32") == "tensor([1.2346])"
    assert get_printoptions()["precision"] == 4


def test_get_printoptions_returns_copy():
    opts = get_printoptions()
    opts["precision"] = 99
    assert get_printoptions()["precision"] == 4


# ------------------------------------------------------------------- misc
def test_converts_data_to_dtype():
    values = [0.1, 1 / 3, 2.0 ** 0.5]
    t = torch.tensor(values, dtype=torch.float32)
    assert tensor_repr(np.array(values), "float32") == repr(t)
    t = torch.tensor(values, dtype=torch.float16)
    assert tensor_repr(values, "float16") == repr(t)


def test_non_contiguous_input():
    arr = np.arange(24.0, dtype=np.float32).reshape(4, 6)[::2, ::-3].T / 3
    assert tensor_repr(arr, "float32") == repr(torch.tensor(arr))


def test_float32_rounding_shown_via_double():
    arr = np.array([0.1, 1e-5, 16777217.0], dtype=np.float32)
    assert tensor_repr(arr, "float32") == repr(_torch_tensor(arr))
    torch.set_printoptions(precision=12)
    set_printoptions(precision=12)
    assert tensor_repr(arr, "float32") == repr(_torch_tensor(arr))


def test_bad_dtype():
    with pytest.raises(ValueError):
        tensor_repr(np.zeros(2), "complex64")


def test_random_fuzz():
    rng = np.random.default_rng(2024)
    for _ in range(400):
        ndim = int(rng.integers(0, 4))
        shape = tuple(int(n) for n in rng.integers(1, 6, size=ndim))
        dtype = DTYPES[int(rng.integers(0, len(DTYPES)))]
        lo = float(rng.uniform(-10, 10))
        hi = lo + float(rng.uniform(0, 8))
        vals = 10.0 ** rng.uniform(lo, hi, size=shape) * rng.choice([-1, 1], size=shape)
        if rng.random() < 0.3:
            vals = np.round(vals)
        if rng.random() < 0.1 and vals.size:
            vals.flat[0] = [np.nan, np.inf, -np.inf, 0.0, -0.0][int(rng.integers(0, 5))]
        if dtype in ("int64", "int32"):
            vals = np.nan_to_num(vals, posinf=0, neginf=0)
            vals = np.clip(vals, -2 ** 31 + 1, 2 ** 31 - 1)
        with np.errstate(over="ignore", invalid="ignore"):
            _check(vals, dtype)


def test_common_path_is_short():
    """A scalar and a short vector print with a bounded number of function calls (a
    measure of work that does not depend on the machine's load, not a wall time)."""
    arr0 = np.array(1.5, dtype=np.float32)
    arr1 = np.array([1.0, 2.5, -3.25], dtype=np.float32)
    for call in (lambda: tensor_repr(arr0, "float32", grad_fn="MeanBackward0"),
                 lambda: tensor_repr(arr1, "float32", requires_grad=True)):
        count = calls_made(call)
        assert 0 < count <= 150, count
