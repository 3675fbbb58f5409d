x = torch.Tensor([4])
x.requires_grad_()
y = torch.Tensor([1])
y.requires_grad_()

f = 5 * x**2 * y 

df_dx = autograd.grad(f, x, create_graph=True)[0]
print("∂f/∂x| x=4 :", df_dx.item())
d2f_dx2 = autograd.grad(df_dx, x)[0]
print("∂2f/∂x2| x=4 :", d2f_dx2.item())

df_dy = autograd.grad(f, y, create_graph=True)[0]
print("∂f/∂y| y=1 :", df_dy.item())

# allow_unused=True
d2f_dy2 = autograd.grad(df_dy, y, allow_unused=True)[0]
# print("∂2f/∂y2| y=1 :", d2f_dy2.item()) # Error
print("∂2f/∂y2| y=1 :", d2f_dy2)
