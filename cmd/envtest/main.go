package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/c5c3/reconciler-sdk/testenv/assets"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the command with its arguments and streams; it returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	opts, err := assets.DefaultOptions()
	if err != nil {
		fail(stderr, err)
		return 1
	}
	opts.Log = stderr
	fs := flag.NewFlagSet("envtest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&opts.Version, "kubernetes-version", opts.Version, "the Kubernetes release, e.g. "+assets.KubernetesVersion)
	fs.StringVar(&opts.KWOKVersion, "kwok-version", opts.KWOKVersion, "the kwok release to install")
	fs.StringVar(&opts.CacheRoot, "cache-dir", opts.CacheRoot, "the cache root holding one directory per Kubernetes version")
	noDownload := fs.Bool("no-download", false, "do not try setup-envtest")
	noBuild := fs.Bool("no-build", false, "fail instead of building when no other source has the binaries")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 0 {
		_, _ = fmt.Fprintf(stderr, "envtest: ERROR: unexpected arguments %q\n", fs.Args())
		return 2
	}
	if *noDownload {
		opts.SetupEnvtest = ""
	}
	var dir string
	if *noBuild {
		dir, _, err = assets.Find(ctx, opts)
	} else {
		dir, _, err = assets.Ensure(ctx, opts)
	}
	if err != nil {
		fail(stderr, err)
		return 1
	}
	_, _ = fmt.Fprintln(stdout, dir)
	return 0
}

// fail prints err to stderr as "envtest: ERROR: <reason>".
func fail(stderr io.Writer, err error) {
	_, _ = fmt.Fprintf(stderr, "envtest: ERROR: %s\n", strings.TrimPrefix(err.Error(), "envtest: "))
}
