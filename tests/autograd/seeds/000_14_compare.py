print(df_dx)
print(df_dx_man)
