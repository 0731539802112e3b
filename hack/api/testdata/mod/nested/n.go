package nested

// Nested is in a nested module.
func Nested() {}
