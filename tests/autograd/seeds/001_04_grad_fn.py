print(y.grad_fn)
