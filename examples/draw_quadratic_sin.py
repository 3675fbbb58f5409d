"""f(x, y) = 5x² + 3 sin(y) at x = 4, y = 0: the first graph of the autograd tutorial.

Draws the forward pass, the backward graph (PyTorch's grad_fn nodes, the local derivative
and the gradient on every edge, .grad at the leaves) and both side by side, into
examples/gallery/quadratic_sin_*.png and .svg.
"""
import pathlib

import symgrad as torch

OUT = pathlib.Path(__file__).parent / "gallery"

x = torch.Tensor([4])
x.requires_grad_()
y = torch.Tensor([0])
y.requires_grad_()

f = 5 * x ** 2 + 3 * torch.sin(y)
f.backward(retain_graph=True)  # keep the graph: the edge gradients are recorded below

title = "f(x, y) = 5x² + 3 sin(y)   at x = 4, y = 0"
drawings = {
    "forward": torch.draw(f, kind="forward", title=title),
    "backward": torch.draw(f, show_local=True, show_edge_grads=True, title=title),
    "both": torch.draw(f, kind="both", title=title),
}
for kind, diagram in drawings.items():
    for suffix in (".png", ".svg"):
        print("wrote", diagram.render(OUT / f"quadratic_sin_{kind}{suffix}"))
