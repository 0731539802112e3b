package testenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// stopGrace is how long a controller process may take to exit after SIGTERM before it
// is killed.
const stopGrace = 5 * time.Second

// logTailLines is how many lines of a process's log an error quotes.
const logTailLines = 30

// Process describes one of the processes that [Options.Controllers] starts next to the
// control plane.
type Process struct {
	// Name is the binary's name: kube-controller-manager, kube-scheduler or kwok.
	Name string
	// PID is the operating-system process id.
	PID int
	// LogFile holds the process's standard output and standard error while the
	// environment runs; [Env.Stop] removes it.
	LogFile string
}

// process is a running binary whose output goes to a log file. It runs in its own
// process group, so that stopping it never leaves a child behind.
type process struct {
	Process
	cmd    *exec.Cmd
	cancel context.CancelFunc
	done   chan struct{}
	// waitErr is cmd.Wait's result; read it only after done is closed.
	waitErr error
}

// startProcess starts bin with args, writing its output to logDir/name.log.
func startProcess(name, bin string, args []string, logDir string) (*process, error) {
	logPath := filepath.Join(logDir, name+".log")
	log, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("testenv: %s log: %w", name, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = sysProcAttr()
	cmd.Cancel = func() error { return terminateGroup(cmd) }
	cmd.WaitDelay = stopGrace
	if err := cmd.Start(); err != nil {
		cancel()
		_ = log.Close()
		return nil, fmt.Errorf("testenv: start %s: %w", bin, err)
	}
	p := &process{
		Process: Process{Name: name, PID: cmd.Process.Pid, LogFile: logPath},
		cmd:     cmd, cancel: cancel, done: make(chan struct{}),
	}
	go func() {
		p.waitErr = cmd.Wait()
		_ = log.Close()
		close(p.done)
	}()
	return p, nil
}

// exited returns an error describing the process's exit when it is no longer running,
// and nil while it runs.
func (p *process) exited() error {
	select {
	case <-p.done:
		return fmt.Errorf("testenv: %s (pid %d) exited: %w\n%s", p.Name, p.PID, p.waitErr, p.tail())
	default:
		return nil
	}
}

// stop ends the process: SIGTERM to its process group, SIGKILL after stopGrace. It
// returns an error when the process had already exited on its own.
func (p *process) stop() error {
	crashed := p.exited()
	p.cancel()
	<-p.done
	// The binaries start no children, but kill the group in case one did.
	_ = killGroup(p.cmd)
	return crashed
}

// tail returns the last logTailLines lines of the process's log, for error texts.
func (p *process) tail() string {
	data, err := os.ReadFile(p.LogFile)
	if err != nil {
		return fmt.Sprintf("(%s log unreadable: %v)", p.Name, err)
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > logTailLines {
		lines = lines[len(lines)-logTailLines:]
	}
	var b strings.Builder
	fmt.Fprintf(&b, "--- last %d lines of %s ---\n", len(lines), p.LogFile)
	b.Write(bytes.Join(lines, []byte("\n")))
	return b.String()
}

// processGroup is the set of controller processes of one environment.
type processGroup struct {
	procs  []*process
	logDir string
}

// stop stops every process and removes the log directory; it joins the errors of the
// processes that had exited on their own.
func (g *processGroup) stop() error {
	if g == nil {
		return nil
	}
	errs := make([]error, len(g.procs))
	done := make(chan struct{})
	for i, p := range g.procs {
		go func() {
			errs[i] = p.stop()
			done <- struct{}{}
		}()
	}
	for range g.procs {
		<-done
	}
	err := errors.Join(errs...)
	if rmErr := os.RemoveAll(g.logDir); rmErr != nil {
		err = errors.Join(err, fmt.Errorf("testenv: remove controller logs: %w", rmErr))
	}
	return err
}

// exited returns the exit of the first process that is no longer running, or nil.
func (g *processGroup) exited() error {
	for _, p := range g.procs {
		if err := p.exited(); err != nil {
			return err
		}
	}
	return nil
}

// tails returns the log tails of all processes, for start errors.
func (g *processGroup) tails() string {
	var parts []string
	for _, p := range g.procs {
		parts = append(parts, p.tail())
	}
	return strings.Join(parts, "\n")
}
