x = torch.Tensor([4])
x.requires_grad_()
y = torch.Tensor([0])
y.requires_grad_()

f = 5 * x**2 + 3*torch.sin(y)

f.backward()
print("∂f/∂x| x=4 :", x.grad.item())
print("∂f/∂y| y=0 :", y.grad.item())
