package controllers_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/c5c3/reconciler-sdk/testenv"
)

// assetsWith returns a fresh assets directory holding symlinks to the real binaries,
// with the binaries in replace swapped for the given shell scripts. Every process the
// kit starts from it has the directory in its command line, which lets a test find
// leftovers without mistaking another package's control plane for one.
func assetsWith(t *testing.T, replace map[string]string) string {
	t.Helper()
	real, err := testenv.AssetsDir("")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, name := range []string{"kube-apiserver", "etcd", "kube-controller-manager", "kube-scheduler", "kwok"} {
		if script, ok := replace[name]; ok {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.Symlink(filepath.Join(real, name), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// canListProcesses reports whether processesUnder can look at the running processes:
// it reads /proc, which only Linux has. Every check on processesUnder is guarded by it,
// so that elsewhere the check is visibly not made rather than passing on an empty list.
const canListProcesses = runtime.GOOS == "linux"

// processesUnder returns the command lines of the running processes whose command
// line mentions dir. It needs /proc: call it only when canListProcesses holds.
func processesUnder(t *testing.T, dir string) []string {
	t.Helper()
	if !canListProcesses {
		t.Fatalf("processesUnder needs /proc, which %s does not have: guard the check with canListProcesses", runtime.GOOS)
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte(dir)) {
			continue
		}
		found = append(found, e.Name()+": "+string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))
	}
	return found
}

// rssKiB reads a process's resident set size from /proc (Linux only).
func rssKiB(pid int) (int, bool) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0, false
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			return n, err == nil
		}
	}
	return 0, false
}

func TestControllerProcessesRun(t *testing.T) {
	procs := env.Processes()
	var names []string
	total := 0
	for _, p := range procs {
		names = append(names, p.Name)
		if p.PID <= 0 {
			t.Errorf("%s: PID %d", p.Name, p.PID)
		}
		if fi, err := os.Stat(p.LogFile); err != nil || fi.Size() == 0 {
			t.Errorf("%s: log file %s: %v (size %v), want a non-empty log", p.Name, p.LogFile, err, fi)
		}
		if kib, ok := rssKiB(p.PID); ok {
			total += kib
			t.Logf("%s (pid %d): VmRSS %d MiB", p.Name, p.PID, kib/1024)
		} else if runtime.GOOS == "linux" {
			t.Errorf("%s (pid %d) is not running", p.Name, p.PID)
		}
	}
	if got, want := strings.Join(names, ","), "kube-controller-manager,kube-scheduler,kwok"; got != want {
		t.Errorf("processes = %s, want %s", got, want)
	}
	t.Logf("controller processes: VmRSS %d MiB in total", total/1024)
}

func TestStopEndsEveryProcessAndIsIdempotent(t *testing.T) {
	assets := assetsWith(t, nil)
	e, err := testenv.Start(testenv.Options{AssetsDir: assets, CRDSources: []testenv.CRDSource{}, Controllers: true})
	if err != nil {
		t.Fatal(err)
	}
	procs := e.Processes()
	if !canListProcesses {
		t.Logf("%s has no /proc: the processes started from and left behind in %s are not checked", runtime.GOOS, assets)
	} else if running := processesUnder(t, assets); len(running) != 5 {
		t.Errorf("running from %s: %q, want etcd, kube-apiserver and the 3 controller processes", assets, running)
	}
	for i := range 2 {
		if err := e.Stop(); err != nil {
			t.Fatalf("Stop call %d: %v", i+1, err)
		}
	}
	if canListProcesses {
		if left := processesUnder(t, assets); len(left) > 0 {
			t.Errorf("processes left after Stop: %q", left)
		}
	}
	for _, p := range procs {
		if _, err := os.Stat(p.LogFile); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s log %s after Stop: %v, want it removed", p.Name, p.LogFile, err)
		}
	}
}

func TestFailedStartLeavesNoProcessAndQuotesTheLog(t *testing.T) {
	assets := assetsWith(t, map[string]string{
		"kwok": "#!/bin/sh\necho 'kwok: cannot load stages: boom' >&2\nexit 3\n",
	})
	e, err := testenv.Start(testenv.Options{AssetsDir: assets, CRDSources: []testenv.CRDSource{}, Controllers: true})
	if err == nil {
		_ = e.Stop()
		t.Fatal("Start succeeded with a kwok that exits at once")
	}
	t.Logf("Start error, as expected:\n%v", err)
	for _, want := range []string{"kwok", "exit status 3", "cannot load stages: boom"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q:\n%v", want, err)
		}
	}
	if !canListProcesses {
		t.Logf("%s has no /proc: the processes left behind in %s are not checked", runtime.GOOS, assets)
	} else if left := processesUnder(t, assets); len(left) > 0 {
		t.Errorf("processes left after a failed Start: %q", left)
	}
}
