"""Second derivatives: f = 5x²y, df/dx = autograd.grad(f, x, create_graph=True).

The graph of df/dx is itself a backward graph: nodes created by the first backward pass
(order 1) are outlined in their own colour, nodes of f's graph (order 0) in grey.
"""
import pathlib

import symgrad as torch
from symgrad import autograd

OUT = pathlib.Path(__file__).parent / "gallery"

x = torch.Tensor([4])
x.requires_grad_()
y = torch.Tensor([1])
y.requires_grad_()

f = 5 * x ** 2 * y
df_dx = autograd.grad(f, x, create_graph=True)[0]
d2f_dx2 = autograd.grad(df_dx, x, retain_graph=True)[0]
print("df/dx =", df_dx.item(), " d2f/dx2 =", d2f_dx2.item())

orders = {"f (order 0)": f, "df/dx (order 1)": df_dx}
title = "f = 5x²y,   df/dx = 10xy   (create_graph=True)"
drawings = {
    "backward": torch.draw(orders, names={"x": x, "y": y, "f": f, "df/dx": df_dx},
                           title=title),
    "both": torch.draw(orders, kind="both", names={"x": x, "y": y, "f": f, "df/dx": df_dx},
                       title=title),
}
for kind, diagram in drawings.items():
    for suffix in (".png", ".svg"):
        print("wrote", diagram.render(OUT / f"double_backward_{kind}{suffix}"))
