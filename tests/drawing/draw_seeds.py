"""The tutorials' graphs, built with either library, and the drawings kept as golden DOT.

Shared by ``tests/drawing/`` (which compares) and ``tools/regen_golden.py`` (which
writes).  Each seed takes the library (``symgrad`` or ``torch``) and returns the roots
to draw and the names of the tensors.
"""
from __future__ import annotations

import pathlib

import symgrad
from symgrad.drawing import draw_tangents

GOLDEN = pathlib.Path(__file__).parent / "golden" / "draw"


def seed_quadratic_sin(lib):
    x = lib.Tensor([4]).requires_grad_()
    y = lib.Tensor([0]).requires_grad_()
    f = 5 * x ** 2 + 3 * lib.sin(y)
    f.backward(retain_graph=True)
    return [f], {"x": x, "y": y, "f": f}


def seed_sin_dot(lib):
    X = lib.Tensor([1, 2, 3]).requires_grad_(True)
    Y = lib.Tensor([5, 6, 7]).requires_grad_(True)
    f = lib.sin(lib.dot(X, Y))
    f.backward(retain_graph=True)
    return [f], {"X": X, "Y": Y, "f": f}


def seed_mean_a_plus_a(lib):
    A = lib.Tensor([[1, 2], [3, 4]])
    A.requires_grad_()
    B = 5 * (A + A)
    C = B.mean()
    C.backward(retain_graph=True)
    return [C], {"A": A, "B": B, "C": C}


def seed_exp_ab_plus_e(lib):
    A = lib.tensor(2., requires_grad=True)
    B = lib.tensor(.5, requires_grad=True)
    E = lib.tensor(1., requires_grad=True)
    C = A * B
    D = C.exp()
    F = D + E
    F.backward(retain_graph=True)
    return [F], {"A": A, "B": B, "E": E, "C": C, "D": D, "F": F}


def seed_double_backward(lib):
    x = lib.Tensor([4]).requires_grad_()
    y = lib.Tensor([1]).requires_grad_()
    f = 5 * x ** 2 * y
    df_dx = lib.autograd.grad(f, x, create_graph=True)[0]
    return [f, df_dx], {"x": x, "y": y, "f": f, "df_dx": df_dx}


SEEDS = {"quadratic_sin": seed_quadratic_sin, "sin_dot": seed_sin_dot,
         "mean_a_plus_a": seed_mean_a_plus_a, "exp_ab_plus_e": seed_exp_ab_plus_e,
         "double_backward": seed_double_backward}


def draw_seed(seed: str, lib, kind: str = "backward", **kw):
    """``symgrad.draw`` of a seed built with ``lib``: (diagram, roots, names)."""
    roots, names = SEEDS[seed](lib)
    target = roots if len(roots) > 1 else roots[0]
    return symgrad.draw(target, kind=kind, names=names, **kw), roots, names


#: Golden file name -> (seed, kind, draw options).
GOLDEN_CASES = {f"{seed}.backward.dot": (seed, "backward", {"show_local": True})
                for seed in sorted(SEEDS)}
GOLDEN_CASES.update({f"{seed}.{kind}.dot": (seed, kind, {})
                     for seed in ("quadratic_sin", "exp_ab_plus_e", "mean_a_plus_a")
                     for kind in ("forward", "both")})
# Forward mode (symgrad.drawing.draw_tangents): tangents and local derivatives.
GOLDEN_CASES.update({"quadratic_sin.tangents.dot": ("quadratic_sin", "tangents",
                                                    {"direction": {"x": 1.0, "y": 1.0}}),
                     "exp_ab_plus_e.tangents.dot": ("exp_ab_plus_e", "tangents", {})})


def golden_diagram(name: str):
    """The drawing that the golden file ``name`` holds."""
    seed, kind, options = GOLDEN_CASES[name]
    if kind == "tangents":
        roots, names = SEEDS[seed](symgrad)
        return draw_tangents(roots[0], names=names, **options)
    return draw_seed(seed, symgrad, kind=kind, **options)[0]


def golden_source(name: str) -> str:
    """The DOT text that the golden file ``name`` holds when the drawings are right."""
    return golden_diagram(name).source
