"""Datasets, ``random_split``, samplers, ``randperm`` and ``default_collate`` against
PyTorch 2.13: the same samples, lengths, orders (seeded alike), collated batches (values,
dtypes, container types) and errors."""
from __future__ import annotations

import collections

import numpy as np
import pytest
from conftest import same_outcome

Point = collections.namedtuple("Point", "x y")


def _tensors(lib):
    return lib.arange(12.0).reshape(6, 2), lib.tensor([0, 1, 0, 1, 1, 0])


# --------------------------------------------------------------------------- datasets
DATASETS = {
    "tensor dataset item": lambda lib: lib.utils.data.TensorDataset(*_tensors(lib))[2],
    "tensor dataset slice": lambda lib: lib.utils.data.TensorDataset(*_tensors(lib))[1:3],
    "tensor dataset len": lambda lib: len(lib.utils.data.TensorDataset(*_tensors(lib))),
    "concat": lambda lib: [(lib.utils.data.TensorDataset(*_tensors(lib))
                            + lib.utils.data.TensorDataset(*_tensors(lib)))[i]
                           for i in (0, 7, -1, -12)],
    "concat sizes": lambda lib: lib.utils.data.ConcatDataset(
        [list(range(3)), list(range(4))]).cumulative_sizes,
    "subset": lambda lib: [lib.utils.data.Subset(list("abcdef"), [4, 0, 2])[i]
                           for i in range(3)],
    "subset list index": lambda lib: lib.utils.data.Subset(
        lib.utils.data.TensorDataset(*_tensors(lib)), [5, 1])[[1, 0]],
    "stack tuple": lambda lib: lib.utils.data.StackDataset(list("ab"), [1, 2])[1],
    "stack dict": lambda lib: lib.utils.data.StackDataset(a=list("ab"), b=[1, 2])[0],
}
DATASET_ERRORS = {
    "tensor size mismatch": lambda lib: lib.utils.data.TensorDataset(lib.zeros(2),
                                                                     lib.ones(3)),
    "tensor dataset out of range": lambda lib: lib.utils.data.TensorDataset(
        *_tensors(lib))[6],
    "base getitem": lambda lib: lib.utils.data.Dataset()[0],
    "concat empty": lambda lib: lib.utils.data.ConcatDataset([]),
    "concat iterable": lambda lib: lib.utils.data.ConcatDataset(
        [lib.utils.data.IterableDataset()]),
    "concat index": lambda lib: lib.utils.data.ConcatDataset([[1, 2], [3]])[-4],
    "stack mismatch": lambda lib: lib.utils.data.StackDataset([1], [1, 2]),
    "stack both": lambda lib: lib.utils.data.StackDataset([1], a=[1]),
    "stack none": lambda lib: lib.utils.data.StackDataset(),
    "split sum": lambda lib: lib.utils.data.random_split(range(5), [2, 2]),
    "split fraction": lambda lib: lib.utils.data.random_split(range(5), [1.5, -0.5]),
}


@pytest.mark.parametrize("name", list(DATASETS))
def test_datasets(name):
    same_outcome(DATASETS[name], expect_error=False)


@pytest.mark.parametrize("name", list(DATASET_ERRORS))
def test_dataset_errors(name):
    same_outcome(DATASET_ERRORS[name])


def test_iterable_datasets_chain(torch):
    def scenario(lib):
        class Count(lib.utils.data.IterableDataset):
            def __init__(self, n):
                self.n = n

            def __iter__(self):
                return iter(range(self.n))

            def __len__(self):
                return self.n
        both = Count(2) + Count(3)
        return type(both).__name__, list(both), len(both)
    same_outcome(scenario, expect_error=False)


def test_subset_subclass_must_override_getitems(torch):
    def scenario(lib):
        class Mine(lib.utils.data.Subset):
            def __getitem__(self, i):
                return 0
        return Mine([1, 2], [0])
    same_outcome(scenario)


# --------------------------------------------------------------------------- random_split
@pytest.mark.parametrize("lengths", [[3, 7], [0.3, 0.3, 0.4], [0.5, 0.5], [1 / 3] * 3,
                                     [0.95, 0.05], [10, 0]])
def test_random_split_with_a_generator(lengths):
    same_outcome(lambda lib: [s.indices for s in lib.utils.data.random_split(
        range(10), lengths, generator=lib.Generator().manual_seed(42))], expect_error=False)


def test_random_split_draws_from_the_seeded_default_generator():
    def scenario(lib):
        lib.manual_seed(3)
        first = [s.indices for s in lib.utils.data.random_split(range(9), [0.5, 0.5])]
        return first, [s.indices for s in lib.utils.data.random_split(range(9), [4, 5])]
    same_outcome(scenario, expect_error=False)


# --------------------------------------------------------------------------- randperm
@pytest.mark.parametrize("seed", [0, 1, 2 ** 40 + 7, -1])
def test_randperm_is_pytorchs_permutation(seed):
    def scenario(lib):
        g = lib.Generator().manual_seed(seed)
        return (lib.randperm(1, generator=g), lib.randperm(50, generator=g),
                lib.randperm(6, generator=g, dtype=lib.float64),
                lib.randperm(5, generator=g, dtype=lib.int32))
    same_outcome(scenario, expect_error=False)


def test_randperm_of_the_default_generator_and_its_errors():
    def scenario(lib):
        lib.manual_seed(11)
        return lib.randperm(7), lib.randperm(0), lib.randperm(lib.tensor(4))
    same_outcome(scenario, expect_error=False)
    for bad in (lambda lib: lib.randperm(-1), lambda lib: lib.randperm(2.5),
                lambda lib: lib.randperm(True),
                lambda lib: lib.randperm(3, dtype=lib.bool),
                lambda lib: lib.randperm(3000, dtype=lib.float16),
                lambda lib: lib.randperm(3, requires_grad=True)):
        same_outcome(bad)


# --------------------------------------------------------------------------- samplers
SAMPLERS = {
    "sequential": lambda lib, g: list(lib.utils.data.SequentialSampler(range(4))),
    "random": lambda lib, g: list(lib.utils.data.RandomSampler(range(9), generator=g)),
    "random more samples": lambda lib, g: list(lib.utils.data.RandomSampler(
        range(4), num_samples=10, generator=g)),
    "random fewer samples": lambda lib, g: list(lib.utils.data.RandomSampler(
        range(9), num_samples=3, generator=g)),
    "random replacement": lambda lib, g: list(lib.utils.data.RandomSampler(
        range(5), replacement=True, num_samples=70, generator=g)),
    "random default generator": lambda lib, g: (lib.manual_seed(5), list(
        lib.utils.data.RandomSampler(range(8))), list(lib.utils.data.RandomSampler(
            range(8), replacement=True)))[1:],
    "subset random": lambda lib, g: list(lib.utils.data.SubsetRandomSampler(
        [10, 20, 30, 40], generator=g)),
    "batch": lambda lib, g: [list(lib.utils.data.BatchSampler(range(7), 3, d))
                             for d in (False, True)],
    "lengths": lambda lib, g: [len(lib.utils.data.BatchSampler(range(7), 3, d))
                               for d in (False, True)] + [
        len(lib.utils.data.RandomSampler(range(4), num_samples=9)),
        len(lib.utils.data.WeightedRandomSampler([1.0, 2.0], 5)),
        len(lib.utils.data.SubsetRandomSampler([3, 4]))],
}
SAMPLER_ERRORS = {
    "batch size zero": lambda lib: lib.utils.data.BatchSampler(range(3), 0, False),
    "batch size bool": lambda lib: lib.utils.data.BatchSampler(range(3), True, False),
    "drop_last not bool": lambda lib: lib.utils.data.BatchSampler(range(3), 2, 1),
    "replacement not bool": lambda lib: lib.utils.data.RandomSampler(range(3), 1),
    "num_samples": lambda lib: lib.utils.data.RandomSampler(range(3), num_samples=0),
    "empty data": lambda lib: lib.utils.data.RandomSampler([]),
    "weighted num_samples": lambda lib: lib.utils.data.WeightedRandomSampler([1.0], 0),
    "weighted replacement": lambda lib: lib.utils.data.WeightedRandomSampler([1.0], 1, 0),
    "weighted 2d": lambda lib: lib.utils.data.WeightedRandomSampler([[1.0]], 1),
    "base iter": lambda lib: iter(lib.utils.data.Sampler()),
}


@pytest.mark.parametrize("name", list(SAMPLERS))
def test_samplers_draw_pytorchs_order(name):
    same_outcome(lambda lib: SAMPLERS[name](lib, lib.Generator().manual_seed(7)),
                 expect_error=False)


@pytest.mark.parametrize("name", list(SAMPLER_ERRORS))
def test_sampler_errors(name):
    same_outcome(SAMPLER_ERRORS[name])


def test_weighted_sampler_draws_only_weighted_indices():
    import symgrad
    sampler = symgrad.utils.data.WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 50)
    drawn = list(sampler)
    assert len(drawn) == 50 and set(drawn) <= {1, 3} and drawn.count(3) > drawn.count(1)
    once = list(symgrad.utils.data.WeightedRandomSampler([1.0] * 6, 6, replacement=False))
    assert sorted(once) == list(range(6))


# --------------------------------------------------------------------------- collation
COLLATE = {
    "tensors": lambda lib: [lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0])],
    "ints": lambda lib: [1, 2, 3],
    "floats": lambda lib: [0.5, 1.5],
    "bools": lambda lib: [True, False],
    "numpy arrays": lambda lib: [np.ones(2, np.float32), np.zeros(2, np.float32)],
    "numpy float64": lambda lib: [np.arange(3.0), np.arange(3.0)],
    "numpy scalars": lambda lib: [np.float32(1.5), np.float32(2.5)],
    "numpy ints": lambda lib: [np.int64(4), np.int64(5)],
    "strings": lambda lib: ["a", "b"],
    "bytes": lambda lib: [b"a", b"b"],
    "tuples": lambda lib: [(lib.zeros(2), 1, "x"), (lib.ones(2), 2, "y")],
    "lists": lambda lib: [[1, 2.0], [3, 4.0]],
    "dicts": lambda lib: [{"x": lib.zeros(1), "y": 0.5}, {"x": lib.ones(1), "y": 1.0}],
    "namedtuples": lambda lib: [Point(1, lib.zeros(2)), Point(2, lib.ones(2))],
    "nested": lambda lib: [{"a": (1, [2.0, lib.tensor(3)])}, {"a": (4, [5.0, lib.tensor(6)])}],
    "int64 tensors": lambda lib: [lib.tensor(1), lib.tensor(2)],
}
COLLATE_ERRORS = {
    "unequal lists": lambda lib: [[1, 2], [3]],
    "objects": lambda lib: [object(), object()],
    "string arrays": lambda lib: [np.array(["a"]), np.array(["b"])],
    "unequal tensors": lambda lib: [lib.zeros(2), lib.zeros(3)],
}


@pytest.mark.parametrize("name", list(COLLATE))
def test_default_collate(name):
    same_outcome(lambda lib: lib.utils.data.default_collate(COLLATE[name](lib)),
                 expect_error=False)


@pytest.mark.parametrize("name", list(COLLATE_ERRORS))
def test_default_collate_errors(name):
    same_outcome(lambda lib: lib.utils.data.default_collate(COLLATE_ERRORS[name](lib)))


@pytest.mark.parametrize("sample", [
    lambda lib: np.arange(3), lambda lib: (np.float64(2.0), "s", [np.int32(1)]),
    lambda lib: {"a": np.ones(2, np.float32)}, lambda lib: Point(np.arange(2), 1),
    lambda lib: np.array(["s"])])
def test_default_convert(sample):
    def scenario(lib):
        out = lib.utils.data.default_convert(sample(lib))
        return type(out).__name__, out if not isinstance(out, np.ndarray) else out.tolist()
    same_outcome(scenario, expect_error=False)
