"""Machine instructions per call of the engine's hot paths, counted by callgrind.

The load of a shared machine does not move these counts (wall time it does by tens of
percent), so they compare two builds reliably: the tree on ``PYTHONPATH`` is measured.

    python bench/bench_instructions.py              # every case (about 3 minutes)
    python bench/bench_instructions.py add bwd      # some cases
    PYTHONPATH=/other/tree python bench/bench_instructions.py

Each case runs its statement 1,000 times inside ``itertools.starmap`` after a warm-up;
callgrind counts only inside ``starmap_next`` (``--toggle-collect``), and the count is
divided by 1,000.  ``bwd`` is one ``backward()`` of a chain of 1,000 ``tanh`` nodes, per
node; ``mlp`` and ``mlp-micrograd`` one step of ``bench_engine.py``'s scalar workload
(micrograd's demo MLP), in symgrad and in micrograd.  Needs valgrind (``apt-get install valgrind``).
"""
from __future__ import annotations

import gc
import itertools
import operator
import os
import re
import subprocess
import sys
import tempfile

CASES = {"mul": "y * 1.01 (0-d float32 requiring grad, times a number)",
         "tanh": "y.tanh()",
         "ww": "w * v (0-d float64 leaves)",
         "add": "w + 0.5",
         "bwd": "backward, per node of a tanh chain",
         "mlp": "micrograd's demo MLP step (bench_engine's scalar), symgrad, per step",
         "mlp-micrograd": "the same step in micrograd, per step"}
N = 1000


def _run_mlp(engine: str) -> int:
    """One step of bench_engine's scalar workload (micrograd's demo MLP) inside starmap,
    after a warm-up step; returns the number of calls (1)."""
    if engine != "micrograd":
        # why: the tree on PYTHONPATH, imported before bench_engine puts its own first
        import symgrad as T
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import bench_engine as B  # why: the workload is bench_engine's, loaded in the child only
    X, Y = B.moons()
    weights = B.mlp_weights()
    if engine == "micrograd":
        mg = B.load_engines(("micrograd",), True)[0]["micrograd"]
        step = B.scalar_micrograd(mg, X, Y, weights).step
    else:
        step = B.scalar_tensor(T, X, Y, weights).step
    step()
    gc.collect()
    gc.disable()
    list(itertools.starmap(step, [()]))
    return 1


def _run_case(case: str) -> None:
    """The measured process: the statement N times inside starmap."""
    if case.startswith("mlp"):
        _run_mlp("micrograd" if case == "mlp-micrograd" else "symgrad")
        return
    import symgrad as T  # why: only the measured child imports symgrad
    y = T.tensor(0.5, dtype=T.float32, requires_grad=True)
    w = T.tensor(0.3, dtype=T.float64, requires_grad=True)
    v = T.tensor(0.7, dtype=T.float64, requires_grad=True)
    gc.disable()
    if case == "bwd":
        for rep in range(2):
            z = y
            for _ in range(N):
                z = z.tanh()
            if rep == 0:
                z.backward()  # (the warm-up)
        jobs, f = [(z,)], T.Tensor.backward
    else:
        f, args = {"mul": (operator.mul, (y, 1.01)), "tanh": (T.Tensor.tanh, (y,)),
                   "ww": (operator.mul, (w, v)), "add": (operator.add, (w, 0.5))}[case]
        for _ in range(50):
            f(*args)
        jobs = [args] * N
    list(itertools.starmap(f, jobs))


def count(case: str) -> int:
    """Instructions per call of ``case`` (callgrind in a child process)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        subprocess.run(["valgrind", "--tool=callgrind", "--toggle-collect=starmap_next",
                        f"--callgrind-out-file={out}", os.path.realpath(sys.executable),
                        __file__, "--child", case],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(out) as f:
            total = int(re.search(r"^summary: (\d+)", f.read(), re.M).group(1))
    return total if case.startswith("mlp") else total // N


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        _run_case(sys.argv[2])
        return
    for case in sys.argv[1:] or list(CASES):
        print(f"{count(case):>8,}  {case:5} {CASES[case]}", flush=True)


if __name__ == "__main__":
    main()
