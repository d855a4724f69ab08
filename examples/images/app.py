print("hello from the images example")
