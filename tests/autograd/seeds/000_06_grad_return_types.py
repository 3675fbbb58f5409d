f = 5 * x**2 + 3*torch.sin(y)
print(type(autograd.grad(f, x)))
f = 5 * x**2 + 3*torch.sin(y)
print(autograd.grad(f, x))

f = 5 * x**2 + 3*torch.sin(y)
print(type(autograd.grad(f, x)[0]))
f = 5 * x**2 + 3*torch.sin(y)
print(autograd.grad(f, x)[0])
