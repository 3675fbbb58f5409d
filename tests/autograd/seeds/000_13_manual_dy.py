df_dy_man = torch.cos(torch.dot(X,Y)) * X
print("df / dy = ", df_dy_man)
