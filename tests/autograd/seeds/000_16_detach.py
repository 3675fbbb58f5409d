A = torch.Tensor([1, 2]).requires_grad_()
B = A.mean()

print("B : ", B)
print("B.grad_fn :", B.grad_fn)
print("B.is_leaf :", B.is_leaf)
B.backward()
