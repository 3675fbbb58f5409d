"""f(X, Y) = sin(⟨X, Y⟩) for X = [1, 2, 3], Y = [5, 6, 7].

The backward graph shows DotBackward0 sending cos(⟨X, Y⟩)·Y to X and cos(⟨X, Y⟩)·X to Y;
the saved-tensors drawing shows what each node keeps for the backward pass.
"""
import pathlib

import symgrad as torch

OUT = pathlib.Path(__file__).parent / "gallery"

X = torch.Tensor([1, 2, 3]).requires_grad_(True)
Y = torch.Tensor([5, 6, 7]).requires_grad_(True)

f = torch.sin(torch.dot(X, Y))
f.backward(retain_graph=True)

title = "f(X, Y) = sin(⟨X, Y⟩)"
drawings = {
    "forward": torch.draw(f, kind="forward", title=title),
    "backward": torch.draw(f, show_local=True, show_edge_grads=True, title=title),
    "saved": torch.draw(f, show_saved=True, title=title + ": tensors saved for backward"),
}
for kind, diagram in drawings.items():
    for suffix in (".png", ".svg"):
        print("wrote", diagram.render(OUT / f"sin_dot_{kind}{suffix}"))
