x = torch.ones(2,requires_grad=True)
z = x + 2
z.backward(torch.ones_like(z))
