# The line the tutorial comments out with "# Error": d2f_dy2 is None.
print("∂2f/∂y2| y=1 :", d2f_dy2.item()) # Error
