package skip

// Skipped is in an _-prefixed directory.
func Skipped() {}
