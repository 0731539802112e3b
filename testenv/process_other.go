//go:build !unix

package testenv

import (
	"os/exec"
	"syscall"
)

// sysProcAttr has nothing to add where process groups do not exist.
func sysProcAttr() *syscall.SysProcAttr { return nil }

// terminateGroup kills the process: there is no SIGTERM to send.
func terminateGroup(cmd *exec.Cmd) error { return killGroup(cmd) }

// killGroup kills the process.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return cmd.Process.Kill()
}
