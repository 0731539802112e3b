package t

// InTestdata is in a testdata directory.
func InTestdata() {}
