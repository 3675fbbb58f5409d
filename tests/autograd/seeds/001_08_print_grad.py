print(x.grad)
