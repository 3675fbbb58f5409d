# Reconstructed from the tutorial's prose (its code is shown only as images).
x = torch.tensor(2.0, requires_grad=True)
y = torch.tensor(3.0, requires_grad=True)
f = 3*x**2 + 2*y
f.backward()
print(x.grad)
print(y.grad)
