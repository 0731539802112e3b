package assets

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// wrapperModule is the module path of the throwaway module [Build] writes to require
// k8s.io/kubernetes.
const wrapperModule = "reconciler-sdk.local/envtest-wrapper"

// kubernetesPackages are the main packages [Build] compiles from the wrapper module;
// go names the etcd one "server", which Build renames to etcd.
var kubernetesPackages = []string{
	"k8s.io/kubernetes/cmd/kube-apiserver",
	"k8s.io/kubernetes/cmd/kubectl",
	"k8s.io/kubernetes/cmd/kube-controller-manager",
	"k8s.io/kubernetes/cmd/kube-scheduler",
	"go.etcd.io/etcd/server/v3",
}

// goEnv is what every go command of [Build] runs with, on top of the caller's
// environment: a writable module cache, no VCS stamping, the local toolchain only,
// static binaries and no workspace.
var goEnv = []string{"GOFLAGS=-modcacherw -buildvcs=false", "GOTOOLCHAIN=local", "CGO_ENABLED=0", "GOWORK=off"}

// commandWaitDelay is how long a go command gets to exit after an interrupt when
// the context of [Build] is done, before it is killed.
const commandWaitDelay = 30 * time.Second

// Build compiles [AllBinaries] for o.Version from the Go module proxy and returns the
// absolute [Options.CacheDir] holding them. It writes a throwaway module
// requiring k8s.io/kubernetes@v<Version>, with a replace of every
// staging module k8s.io/kubernetes requires at v0.0.0 by the same module at
// v0.<minor>.<patch>, builds kube-apiserver, kubectl, kube-controller-manager,
// kube-scheduler and etcd with their version stamped, and installs kwok at
// o.KWOKVersion; every go command runs with GOFLAGS="-modcacherw -buildvcs=false",
// GOTOOLCHAIN=local, CGO_ENABLED=0 and GOWORK=off. It builds inside a temporary
// directory under [Options.CacheRoot] that it always removes, and renames the result
// into the cache directory only when all binaries are there, so a failed or
// interrupted build never leaves a broken cache: an incomplete cache directory is
// replaced, a complete one (a concurrent build that finished first) is kept. Errors
// wrap [ErrVersion], [ErrNoGo], [ErrBuild] (naming the failed step) or
// [ErrIncomplete] (naming the missing binaries). When ctx is done the running go
// command is interrupted and the error also wraps ctx's error. A cold build takes
// several minutes.
func Build(ctx context.Context, o Options) (string, error) {
	if err := checkVersion(o.Version); err != nil {
		return "", err
	}
	if o.KWOKVersion == "" {
		return "", fmt.Errorf("envtest: %w: no kwok version", ErrBuild)
	}
	logf := logger(o.Log)
	goName := o.Go
	if goName == "" {
		goName = "go"
	}
	goPath, err := exec.LookPath(goName)
	if err != nil {
		return "", fmt.Errorf("envtest: %w (%w)", ErrNoGo, err)
	}
	if err := os.MkdirAll(o.CacheRoot, 0o755); err != nil {
		return "", fmt.Errorf("envtest: %w: cache root: %w", ErrBuild, err)
	}
	work, err := os.MkdirTemp(o.CacheRoot, ".build-"+o.Version+".")
	if err != nil {
		return "", fmt.Errorf("envtest: %w: build directory: %w", ErrBuild, err)
	}
	defer func() { _ = os.RemoveAll(work) }()
	mod := filepath.Join(work, "mod")
	out := filepath.Join(work, "bin")
	for _, d := range []string{mod, out} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return "", fmt.Errorf("envtest: %w: %w", ErrBuild, err)
		}
	}
	r := runner{ctx: ctx, goPath: goPath, log: o.Log}

	logf("building kube-apiserver, etcd, kubectl, kube-controller-manager, kube-scheduler %s from the Go module proxy (cold: several minutes)", o.Version)
	k8sMod := "k8s.io/kubernetes@v" + o.Version
	goModFile, err := r.downloadGoMod(work, k8sMod)
	if err != nil {
		return "", err
	}
	data, err := os.ReadFile(goModFile)
	if err != nil {
		return "", fmt.Errorf("envtest: %w: %w", ErrBuild, err)
	}
	staging := stagingModules(data)
	if len(staging) == 0 {
		return "", fmt.Errorf("envtest: %w: found no staging modules in %s", ErrBuild, goModFile)
	}
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), wrapperGoMod(o.Version, staging), 0o644); err != nil {
		return "", fmt.Errorf("envtest: %w: %w", ErrBuild, err)
	}
	if err := r.run(mod, nil, "mod", "tidy"); err != nil {
		return "", err
	}
	if err := r.run(mod, nil, buildArgs(o.Version, out)...); err != nil {
		return "", err
	}
	if err := os.Rename(filepath.Join(out, "server"), filepath.Join(out, "etcd")); err != nil {
		return "", fmt.Errorf("envtest: %w: etcd: %w", ErrBuild, err)
	}

	logf("building kwok %s", o.KWOKVersion)
	if err := r.run(work, []string{"GOBIN=" + out}, "install", KWOKModule+"/cmd/kwok@"+o.KWOKVersion); err != nil {
		return "", err
	}

	if m := Missing(out, AllBinaries); m != nil {
		return "", fmt.Errorf("envtest: %w: the build finished without %s in %s", ErrIncomplete, strings.Join(m, ", "), out)
	}
	if err := r.command(work, filepath.Join(out, "kube-apiserver"), "--version").Run(); err != nil {
		return "", fmt.Errorf("envtest: %w: kube-apiserver --version: %w", ErrBuild, err)
	}
	if err := publish(out, o.CacheDir(), filepath.Join(work, "stale")); err != nil {
		return "", err
	}
	return absDir(o.CacheDir())
}

// publish renames the complete build out to cache. When cache exists and is complete
// (a concurrent build won the race), it is kept; when it exists but is incomplete, it
// is moved to stale and out takes its place.
func publish(out, cache, stale string) error {
	if os.Rename(out, cache) == nil {
		return nil
	}
	if Missing(cache, AllBinaries) == nil {
		return nil
	}
	if err := os.Rename(cache, stale); err != nil {
		return fmt.Errorf("envtest: %w: could not move the build into %s: %w", ErrBuild, cache, err)
	}
	if err := os.Rename(out, cache); err != nil {
		return fmt.Errorf("envtest: %w: could not move the build into %s: %w", ErrBuild, cache, err)
	}
	return nil
}

// stagingModules returns, sorted, the modules that the k8s.io/kubernetes go.mod in
// data both requires at v0.0.0 and replaces by a ./staging/ directory: the modules a
// wrapper module must replace by their published versions.
func stagingModules(data []byte) []string {
	var staging, required []string
	for line := range strings.Lines(string(data)) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if strings.Contains(line, "=> ./staging/") {
			staging = append(staging, f[0])
		}
		if len(f) >= 2 && f[1] == "v0.0.0" {
			required = append(required, f[0])
		}
	}
	var both []string
	for _, m := range staging {
		if slices.Contains(required, m) && !slices.Contains(both, m) {
			both = append(both, m)
		}
	}
	slices.Sort(both)
	return both
}

// wrapperGoMod returns the go.mod of wrapperModule for version: it requires
// k8s.io/kubernetes@v<version>, replaces each of staging by itself at
// v0.<minor>.<patch> and declares the five Kubernetes and etcd main packages as tools.
func wrapperGoMod(version string, staging []string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "module %s\n\ngo 1.26.0\n\nrequire k8s.io/kubernetes v%s\n", wrapperModule, version)
	if len(staging) > 0 {
		b.WriteString("\nreplace (\n")
		for _, m := range staging {
			fmt.Fprintf(&b, "\t%s => %s %s\n", m, m, stagingVersion(version))
		}
		b.WriteString(")\n")
	}
	b.WriteString("\ntool (\n")
	for _, p := range kubernetesPackages {
		fmt.Fprintf(&b, "\t%s\n", p)
	}
	b.WriteString(")\n")
	return b.Bytes()
}

// buildArgs returns the arguments of the go build [Build] runs in the wrapper module:
// stripped, trimmed binaries of the five main packages into dir, with the
// gitVersion, gitMajor, gitMinor and gitTreeState of k8s.io/component-base/version and
// k8s.io/client-go/pkg/version set for version.
func buildArgs(version, dir string) []string {
	minor, _, _ := strings.Cut(strings.TrimPrefix(version, "1."), ".")
	ld := "-s -w"
	for _, p := range []string{"k8s.io/component-base/version", "k8s.io/client-go/pkg/version"} {
		ld += fmt.Sprintf(" -X %[1]s.gitVersion=v%[2]s -X %[1]s.gitMajor=1 -X %[1]s.gitMinor=%[3]s -X %[1]s.gitTreeState=clean", p, version, minor)
	}
	args := []string{"build", "-trimpath", "-ldflags", ld, "-o", dir + string(filepath.Separator)}
	return append(args, kubernetesPackages...)
}

// stagingVersion is the version of the staging modules that belong to Kubernetes
// version: 1.37.2 gives v0.37.2.
func stagingVersion(version string) string { return "v0." + strings.TrimPrefix(version, "1.") }

// runner runs the go commands of one [Build].
type runner struct {
	ctx    context.Context
	goPath string
	log    io.Writer
}

// command returns name with args in dir, with [goEnv] and extra added to the
// environment and both output streams going to the log. When the context is done it
// is interrupted, and killed after [commandWaitDelay].
func (r runner) command(dir, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(r.ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), goEnv...)
	log := r.log
	if log == nil {
		log = io.Discard
	}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = commandWaitDelay
	return cmd
}

// run runs go with args in dir, extra added to the environment; the error wraps
// [ErrBuild], names the command and, when the context is done, wraps its error too.
func (r runner) run(dir string, extra []string, args ...string) error {
	cmd := r.command(dir, r.goPath, args...)
	cmd.Env = append(cmd.Env, extra...)
	if err := cmd.Run(); err != nil {
		if ctxErr := r.ctx.Err(); ctxErr != nil {
			err = fmt.Errorf("%w (%w)", err, ctxErr)
		}
		return fmt.Errorf("envtest: %w: go %s: %w", ErrBuild, strings.Join(args, " "), err)
	}
	return nil
}

// downloadGoMod runs `go mod download -json mod` in dir and returns the path of the
// module's go.mod in the module cache.
func (r runner) downloadGoMod(dir, mod string) (string, error) {
	cmd := r.command(dir, r.goPath, "mod", "download", "-json", mod)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	runErr := cmd.Run()
	var info struct{ GoMod, Error string }
	jsonErr := json.Unmarshal(stdout.Bytes(), &info)
	switch {
	case info.Error != "":
		return "", fmt.Errorf("envtest: %w: cannot download %s from the Go module proxy: %s", ErrBuild, mod, info.Error)
	case runErr != nil || jsonErr != nil:
		return "", fmt.Errorf("envtest: %w: cannot download %s from the Go module proxy: %w", ErrBuild, mod, errors.Join(runErr, jsonErr))
	case info.GoMod == "":
		return "", fmt.Errorf("envtest: %w: cannot download %s from the Go module proxy: no go.mod reported", ErrBuild, mod)
	}
	if _, err := os.Stat(info.GoMod); err != nil {
		return "", fmt.Errorf("envtest: %w: cannot download %s from the Go module proxy: %w", ErrBuild, mod, err)
	}
	return info.GoMod, nil
}
