//go:build unix && !linux

package testenv

import "syscall"

// sysProcAttr puts a controller process into its own process group.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
