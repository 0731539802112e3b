package main

// Main is in a main package.
func Main() {}

func main() {}
