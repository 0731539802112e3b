package p

// Value is declared after its method (in file order: before.go sorts first).
func (Later) Value() string { return "" }
