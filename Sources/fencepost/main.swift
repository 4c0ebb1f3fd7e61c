print("fencepost")
