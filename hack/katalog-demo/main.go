package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	o := defaultOptions()
	flag.StringVar(&o.InspectorAddress, "inspector-bind-address", o.InspectorAddress, "address the inspector listens on")
	flag.BoolVar(&o.ExitWhenReady, "exit-when-ready", o.ExitWhenReady, "exit once every sample is Ready instead of running until interrupted")
	flag.DurationVar(&o.Timeout, "timeout", o.Timeout, "how long the samples may take to turn Ready")
	flag.Parse()
	o.Out = os.Stdout
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "katalog-demo failed:", err)
		stop()
		os.Exit(1)
	}
}
