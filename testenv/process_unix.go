//go:build unix

package testenv

import (
	"errors"
	"os/exec"
	"syscall"
)

// terminateGroup sends SIGTERM to cmd's process group.
func terminateGroup(cmd *exec.Cmd) error { return signalGroup(cmd, syscall.SIGTERM) }

// killGroup sends SIGKILL to cmd's process group.
func killGroup(cmd *exec.Cmd) error { return signalGroup(cmd, syscall.SIGKILL) }

func signalGroup(cmd *exec.Cmd, sig syscall.Signal) error {
	if cmd.Process == nil {
		return nil
	}
	err := syscall.Kill(-cmd.Process.Pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}
