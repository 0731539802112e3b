package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/debug"
	"strings"

	"github.com/c5c3/reconciler-sdk/internal/scaffold"
)

func init() {
	register(command{name: "init", summary: "write a new operator project (go.mod, cmd/main.go, Makefile, config/)", run: runInit})
	register(command{name: "create api", summary: "add a custom resource, its controller and tests to the project, then generate", run: runCreateAPI})
}

// projectDir parses args with fs, allowing flags after the positional argument
// (`init DIR --repo R` as well as `init --repo R DIR`), and returns the project
// directory: the one positional argument, "." without one. A bad flag, -h (flag.ErrHelp,
// which run treats as success) or a second directory is a usage error.
func projectDir(fs *flag.FlagSet, args []string) (string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return "", usageError{err}
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	switch len(pos) {
	case 0:
		return ".", nil
	case 1:
		return pos[0], nil
	}
	return "", usageError{fmt.Errorf("at most one directory, got %q", pos)}
}

func runInit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("init", "init --repo MODULE [--domain DOMAIN] [--sdk-version V] [--sdk-replace PATH] [DIR]",
		"Writes a new operator project into DIR (default the current directory) and runs go mod tidy there.", stderr)
	var opts scaffold.InitOptions
	fs.StringVar(&opts.Repo, "repo", "", "the Go module path of the new operator, e.g. example.com/memo-operator (required)")
	fs.StringVar(&opts.Domain, "domain", scaffold.DefaultDomain, "the domain of the API groups: group G is G.<domain>")
	fs.StringVar(&opts.SDKVersion, "sdk-version", "", "the SDK version go.mod requires (default: this binary's, as `go run ...@VERSION` records it)")
	fs.StringVar(&opts.SDKReplace, "sdk-replace", "", "a local checkout of the SDK for go.mod's replace directive")
	dir, err := projectDir(fs, args)
	if err != nil {
		return err
	}
	if opts.SDKVersion == "" {
		opts.SDKVersion = binarySDKVersion(opts.SDKReplace != "") // "" is refused, naming the flag
	}
	written, err := scaffold.Init(dir, opts)
	if err != nil {
		return scaffoldError(err)
	}
	report(stdout, dir, written)
	if err := tool(ctx, dir, stderr, "go", "mod", "tidy"); err != nil {
		return err
	}
	_, _ = fmt.Fprintf(stdout, "Next: reconciler-sdk create api --group GROUP --version v1alpha1 --kind KIND (in %s)\n", dir)
	return nil
}

func runCreateAPI(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("create api", "create api --group GROUP --version VERSION --kind KIND [DIR]",
		"Adds a custom resource to the project in DIR (default the current directory), then runs go mod tidy and make generate there.", stderr)
	var opts scaffold.APIOptions
	fs.StringVar(&opts.Group, "group", "", "the API group without the project's domain, e.g. memo (required)")
	fs.StringVar(&opts.Version, "version", "", "the API version, e.g. v1alpha1 (required)")
	fs.StringVar(&opts.Kind, "kind", "", "the kind, in UpperCamelCase, e.g. Memo (required)")
	dir, err := projectDir(fs, args)
	if err != nil {
		return err
	}
	written, err := scaffold.CreateAPI(dir, opts)
	if err != nil {
		return scaffoldError(err)
	}
	report(stdout, dir, written)
	if err := tool(ctx, dir, stderr, "go", "mod", "tidy"); err != nil {
		return err
	}
	// The deepcopy functions, the CRD and the ClusterRole, with the controller-gen the
	// Makefile pins (installed into bin/ unless CONTROLLER_GEN names one).
	if err := tool(ctx, dir, stderr, "make", "generate"); err != nil {
		return err
	}
	_, _ = fmt.Fprintf(stdout, "Next: make test (in %s)\n", dir)
	return nil
}

// scaffoldError marks the scaffold's option errors as usage errors.
func scaffoldError(err error) error {
	var oe *scaffold.OptionError
	if errors.As(err, &oe) {
		return usageError{err}
	}
	return err
}

// report prints the files the scaffold wrote.
func report(w io.Writer, dir string, written []string) {
	for _, p := range written {
		_, _ = fmt.Fprintf(w, "wrote %s\n", strings.TrimPrefix(dir+"/"+p, "./"))
	}
}

// tool runs name with args in dir, its output on stderr.
func tool(ctx context.Context, dir string, stderr io.Writer, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, stderr, stderr
	cmd.Env = os.Environ()
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s in %s: %w (the files are written; fix the cause and run it again there)",
			name, strings.Join(args, " "), dir, err)
	}
	return nil
}

// binarySDKVersion is the SDK version this binary was built at, as `go run
// module/cmd/reconciler-sdk@VERSION` records it, or "" when it records none usable in
// go.mod; with a replace directive any version serves, so v0.0.0 then.
func binarySDKVersion(replaced bool) string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Path == scaffold.SDKModule && scaffold.ValidSDKVersion(bi.Main.Version) {
		return bi.Main.Version
	}
	if replaced {
		return "v0.0.0"
	}
	return ""
}
