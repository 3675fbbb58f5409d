x = torch.tensor(3., requires_grad=True)
a = torch.tensor([4.,2.], requires_grad=True)
z = x + a

display(z)  # Broadcasting, see Ch. 02a
z.backward(torch.tensor([1000., 1000.])) # passing a gradient to backward.
