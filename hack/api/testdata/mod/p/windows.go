//go:build windows

package p

// Windows is built on windows only.
func Windows() {}
