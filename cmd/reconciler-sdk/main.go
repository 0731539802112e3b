package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
)

// command is one subcommand: its name as typed (one or two words, "create api"), a
// one-line summary for the usage text, and what it runs with the remaining arguments.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// commands holds every subcommand, registered by the file that implements it.
var commands = map[string]command{}

// register adds a subcommand; a name registered twice is a programming error.
func register(c command) {
	if _, dup := commands[c.name]; dup {
		panic("reconciler-sdk: subcommand registered twice: " + c.name)
	}
	commands[c.name] = c
}

// errUsage marks an error whose message is about how the command was called.
var errUsage = errors.New("usage")

// usageError is an error about how the command was called: it is errUsage (run exits 2
// for it) and reads as the error it wraps.
type usageError struct{ err error }

func (e usageError) Error() string   { return e.err.Error() }
func (e usageError) Unwrap() []error { return []error{e.err, errUsage} }

// newFlagSet returns the flag set of the subcommand name, writing to stderr and
// returning parse errors (ContinueOnError). Its usage text is "Usage: reconciler-sdk "
// followed by synopsis, a blank line, about and the flags with their defaults.
func newFlagSet(name, synopsis, about string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		_, _ = fmt.Fprintf(stderr, "Usage: reconciler-sdk %s\n\n%s\n", synopsis, about)
		fs.PrintDefaults()
	}
	return fs
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run dispatches args to the subcommand they name (the longest match of one or two words)
// and returns the process exit code: 0 on success or -h, 2 for a usage error, 1 otherwise.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	c, rest, ok := lookup(args)
	if !ok {
		_, _ = fmt.Fprintf(stderr, "reconciler-sdk: unknown command %q\n\n", strings.Join(args[:min(2, len(args))], " "))
		usage(stderr)
		return 2
	}
	err := c.run(ctx, rest, stdout, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0 // -h: the flag set has printed the command's usage
	}
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "reconciler-sdk %s: %v\n", c.name, err)
		if errors.Is(err, errUsage) {
			return 2
		}
		return 1
	}
	return 0
}

func lookup(args []string) (command, []string, bool) {
	if len(args) >= 2 {
		if c, ok := commands[args[0]+" "+args[1]]; ok {
			return c, args[2:], true
		}
	}
	c, ok := commands[args[0]]
	return c, args[1:], ok
}

func usage(w io.Writer) {
	_, _ = fmt.Fprintln(w, "reconciler-sdk: scaffold, build and deploy operators built on github.com/c5c3/reconciler-sdk")
	_, _ = fmt.Fprintln(w)
	_, _ = fmt.Fprintln(w, "Usage: reconciler-sdk <command> [flags]   (reconciler-sdk <command> -h for its flags)")
	_, _ = fmt.Fprintln(w)
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		_, _ = fmt.Fprintf(w, "  %-12s %s\n", n, commands[n].summary)
	}
}
