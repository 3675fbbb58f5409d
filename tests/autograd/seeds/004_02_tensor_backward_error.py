x = torch.ones(2,requires_grad=True)
z = x + 2
z.backward()

# raise RuntimeError: grad can be implicitly created only for scalar outputs
