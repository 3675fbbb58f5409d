"""Drawings of vector expressions without values show their sizes by name (n×m)."""
from __future__ import annotations

from click.testing import CliRunner

from symgrad_cli.main import cli


def _dot(*args) -> str:
    r = CliRunner().invoke(cli, ["draw", *args, "-o", "-", "--format", "dot"])
    assert r.exit_code == 0, r.output
    return r.output


def test_named_sizes_label_every_tensor():
    src = _dot("sum((A @ x - b)**2)", "--shape", "A=n,m", "--shape", "b=n")
    assert "shape n×m" in src and "shape m" in src and "shape n" in src
    assert "shape (" not in src


def test_sizes_get_names_of_their_own_when_none_is_given():
    src = _dot("x.T @ A @ x")
    assert "shape n×n" in src and "shape n" in src  # x and A share their size


def test_values_are_drawn_with_numbers():
    src = _dot("x.T @ A @ x", "--at", "x=[1,2]", "--at", "A=[[1,2],[3,4]]")
    assert "shape (2, 2)" in src and "×" not in src.split("Legend")[0]


def test_a_mean_over_named_sizes_divides_by_their_product():
    # MeanBackward0's local derivative is 1/numel: named, not the traced count.
    src = _dot("mean(X)", "--shape", "X=n,d")
    assert "1/(n·d)" in src
    src = _dot("mean(x**2)", "--shape", "x=n")
    assert "1/n" in src
    src = _dot("mean(x**2)", "--at", "x=[1,2,3]")
    assert "1/3" in src
