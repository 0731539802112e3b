//go:build !linux

package testenv

// crashAPIServer is Linux-only; elsewhere the caller stops kube-apiserver gracefully.
func crashAPIServer(string) (bool, error) { return false, nil }
