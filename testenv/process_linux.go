//go:build linux

package testenv

import "syscall"

// sysProcAttr puts a controller process into its own process group and has the kernel
// kill it when the test binary dies without running Stop (a panic, a `go test`
// timeout, SIGKILL).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
