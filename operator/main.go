package operator

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2/textlogger"
	ctrl "sigs.k8s.io/controller-runtime"
)

// Main is an operator command's main function: it binds the logging flags -v and
// -vmodule (klog's textlogger, to stderr) and, through bind, the operator's own flags on
// flag.CommandLine, parses the command line, sets controller-runtime's logger, and calls
// run with a context that ends on SIGINT or SIGTERM and the config of --kubeconfig,
// $KUBECONFIG or the in-cluster one. It returns the exit code: 0 once run returned nil, 1
// after logging run's error (or the config's) as "<name> stopped", 2 for a command line
// the flags refuse. bind may be nil; run may not.
//
//	func main() { os.Exit(operator.Main("memo-operator", opts.BindFlags, func(ctx context.Context, cfg *rest.Config) error { ... })) }
func Main(name string, bind func(*flag.FlagSet), run func(ctx context.Context, cfg *rest.Config) error) int {
	return mainWith(ctrl.SetupSignalHandler(), command{flags: flag.CommandLine, args: os.Args[1:], stderr: os.Stderr,
		config: ctrl.GetConfig, setLogger: ctrl.SetLogger}, name, bind, run)
}

// command is what [Main] takes from the process, replaced in tests.
type command struct {
	flags     *flag.FlagSet
	args      []string
	stderr    io.Writer
	config    func() (*rest.Config, error)
	setLogger func(logr.Logger)
}

// mainWith is [Main] on the parts of c.
func mainWith(ctx context.Context, c command, name string, bind func(*flag.FlagSet), run func(context.Context, *rest.Config) error) int {
	if bind != nil {
		bind(c.flags)
	}
	logConfig := textlogger.NewConfig(textlogger.Output(c.stderr))
	logConfig.AddFlags(c.flags)
	if err := c.flags.Parse(c.args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2 // the flag set printed the error and the usage
	}
	logger := textlogger.NewLogger(logConfig)
	c.setLogger(logger)
	cfg, err := c.config()
	if err != nil {
		err = fmt.Errorf("kubeconfig: %w", err)
	} else {
		err = run(ctx, cfg)
	}
	if err != nil {
		logger.WithName("setup").Error(err, name+" stopped")
		return 1
	}
	return 0
}
