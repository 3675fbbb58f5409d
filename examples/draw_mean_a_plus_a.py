"""B = 5 (A + A), C = mean(B): the "under the hood" graph whose next_functions the
tutorial walks by hand: MeanBackward0 -> MulBackward0 -> AddBackward0 -> AccumulateGrad
(twice: both inputs of A + A are A).
"""
import pathlib

import symgrad as torch

OUT = pathlib.Path(__file__).parent / "gallery"

A = torch.Tensor([[1, 2], [3, 4]])
A.requires_grad_()

B = 5 * (A + A)
C = B.mean()
C.backward(retain_graph=True)

title = "B = 5 (A + A),   C = mean(B)"
drawings = {
    "forward": torch.draw(C, kind="forward", title=title),
    "backward": torch.draw(C, show_local=True, show_edge_grads=True, title=title),
    "torchviz": torch.make_dot(C, params={"A": A}),
}
for kind, diagram in drawings.items():
    for suffix in (".png", ".svg"):
        print("wrote", diagram.render(OUT / f"mean_a_plus_a_{kind}{suffix}"))
