"""Indexing errors in PyTorch's words (issue 20.5): "tensors" and ``[2]`` where numpy says
"arrays" and ``(2,)``, and the dimension PyTorch names (an integer's place in the index
tuple; a tensor index's place among the tensor indices), reading and writing."""
from __future__ import annotations

import pytest
from conftest import same_outcome

READS = ["z[2]", "z[-3]", "z[1, 5]", "z[None, 0, 9]", "z[0, :, 7]", "z[..., 5]", "z[0, ..., 5]",
         "z[None, None, 1, 5]", "z[L.tensor([0]), 9]", "z[True, 0, 9]",
         "z[:, L.tensor([True, False, True, True]), 5]", "z[L.tensor([5])]",
         "z[:, L.tensor([7])]", "z[L.tensor([0]), :, L.tensor([7])]",
         "z[L.tensor([0, 1]), L.tensor([0, 1, 2])]", "z[L.tensor([0, 5]), L.tensor([0, 1, 2])]",
         "z[L.tensor([[0, 1]]), L.tensor([0, 1, 2])]",
         "z[L.tensor([0, 1]), L.tensor([0, 1, 2]), L.tensor([0])]",
         "z[L.tensor([[True, False, True, True]]), L.tensor([0, 1, 2])]"]
WRITES = ["z[2] = 1", "z[1, 9] = 2", "z[1, 3, 5] = 0", "z[:, 4] = 1",
          "z[L.tensor([7])] = 1.0", "z[L.tensor([0, 1]), L.tensor([0, 1, 2])] = 1",
          "z[L.tensor([0, 1]), L.tensor([0, 1, 2])] += 1",
          "z[L.tensor([[0, 1]]), L.tensor([0, 1, 2])] = L.tensor(1.0)"]


def _run(code: str):
    def scenario(lib):
        z = lib.zeros(2, 4, 3)
        exec(code, {"z": z, "L": lib})
    return scenario


@pytest.mark.parametrize("code", READS + WRITES)
def test_index_errors_say_what_pytorch_says(code):
    same_outcome(_run(code))


def test_valid_indices_still_index():
    same_outcome(lambda lib: lib.arange(24.0).reshape(2, 4, 3)[
        lib.tensor([1, 0]), :, lib.tensor([[2], [0]])], expect_error=False)
