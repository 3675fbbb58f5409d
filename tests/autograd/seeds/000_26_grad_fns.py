print(A.grad_fn)
print(B.grad_fn)
print(C.grad_fn)
