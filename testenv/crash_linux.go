//go:build linux

package testenv

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// crashAPIServer kills the kube-apiserver serving port with SIGKILL, as a crash would,
// and waits until the process is reaped. It reports false when no such process is
// found (the caller then stops it gracefully).
func crashAPIServer(port string) (bool, error) {
	pid := findAPIServer(port)
	if pid == 0 {
		return false, nil
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return false, err
	}
	// envtest's own wait on the process reaps it; until then /proc still lists it.
	deadline := time.Now().Add(stopTimeout)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid))); os.IsNotExist(err) {
			// envtest marks the process exited right after its wait returns; leave it
			// that moment so that its Stop sees an exited process.
			time.Sleep(100 * time.Millisecond)
			return true, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true, errors.New("killed kube-apiserver was not reaped within " + stopTimeout.String())
}

// findAPIServer returns the PID of the kube-apiserver started with --secure-port=port,
// or 0.
func findAPIServer(port string) int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	want := []byte("--secure-port=" + port)
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := bytes.Split(cmdline, []byte{0})
		if len(args) == 0 || filepath.Base(string(args[0])) != "kube-apiserver" {
			continue
		}
		for _, a := range args[1:] {
			if bytes.Equal(a, want) {
				return pid
			}
		}
	}
	return 0
}
