f = torch.sin(torch.dot(X,Y))

df_dx = autograd.grad(f, X, create_graph=True)[0]
print("∂f/∂x :", df_dx)

df_dy = autograd.grad(f, Y)[0]
print("∂f/∂y:", df_dy)
