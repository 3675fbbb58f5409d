x = torch.Tensor([4])
x.requires_grad_()

f = 5 * x ** 2 + 3

f.backward()
print("∂f/∂x| x=4 :", x.grad.item())
