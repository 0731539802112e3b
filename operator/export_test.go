package operator

import (
	"context"
	"flag"
	"io"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
)

// MainWith is [Main] on the given flag set, arguments, standard error, config source
// and logger setter instead of the process's.
func MainWith(ctx context.Context, fs *flag.FlagSet, args []string, stderr io.Writer, config func() (*rest.Config, error),
	setLogger func(logr.Logger), name string, bind func(*flag.FlagSet), run func(context.Context, *rest.Config) error) int {
	return mainWith(ctx, command{flags: fs, args: args, stderr: stderr, config: config, setLogger: setLogger}, name, bind, run)
}
