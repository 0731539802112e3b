package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/term"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	o := defaultOptions()
	flag.StringVar(&o.Scene, "scene", o.Scene, "what to show: horizon, keystone or all (Horizon, then Keystone)")
	flag.Parse()
	o.Out = os.Stdout
	if fd := int(os.Stdout.Fd()); term.IsTerminal(fd) {
		o.Live = true
		if w, _, err := term.GetSize(fd); err == nil {
			o.Width = w
		}
	}
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "demo failed:", err)
		stop()
		os.Exit(1)
	}
}
