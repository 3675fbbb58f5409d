# The line the tutorial comments out: "This won't work since B has no history."
B.backward()
