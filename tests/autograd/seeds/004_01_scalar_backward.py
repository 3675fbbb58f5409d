x = torch.tensor(2.0, requires_grad=True)
y = torch.tensor(3.0, requires_grad=True)
z = x**2+y
z.backward()
print(z, x.grad, y.grad)

# tensor(7., grad_fn=<AddBackward0>) tensor(4.) tensor(1.)
