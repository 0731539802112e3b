package q

// Internal is in an internal package.
func Internal() {}
