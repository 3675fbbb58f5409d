from torch import autograd
x = torch.Tensor([4])
x.requires_grad_()
y = torch.Tensor([0])
y.requires_grad_()

f = 5 * x**2 + 3*torch.sin(y)

df_dx = autograd.grad(f, x)[0]
print("∂f/∂x| x=4 :", df_dx.item())

df_dy = autograd.grad(f, y)[0]
print("∂f/∂y| y=0 :", df_dy.item())
