package operator_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"

	"github.com/c5c3/reconciler-sdk/operator"
)

// Main parses the operator's flags and the logging flags, sets the logger, runs with
// the config and answers the exit code; an error of the config or of run is logged
// under the operator's name.
func TestMainCommand(t *testing.T) {
	boom := errors.New("boom")
	cfg := &rest.Config{Host: "https://example.test"}
	cases := map[string]struct {
		reason    string
		args      []string
		configErr error
		runErr    error
		code      int
		ran       bool
		logs      string // in standard error; "" for nothing
		namespace string
	}{
		"Runs": {reason: "The operator's flags are parsed before run, which gets the config.",
			args: []string{"--namespace", "team-a"}, code: 0, ran: true, namespace: "team-a"},
		"RunFails": {reason: "run's error is logged as <name> stopped, exit code 1.",
			runErr: boom, code: 1, ran: true, logs: `"memo-operator stopped" err="boom"`},
		"NoConfig": {reason: "Without a config run does not run; the error names the kubeconfig.",
			configErr: boom, code: 1, logs: `"memo-operator stopped" err="kubeconfig: boom"`},
		"Verbosity": {reason: "-v is a flag of Main: V(2) logs with -v=2.",
			args: []string{"-v=2"}, code: 0, ran: true, logs: "verbose"},
		"Quiet": {reason: "Without -v, V(2) logs nothing.", code: 0, ran: true},
		"BadFlag": {reason: "A flag the command does not know is refused with exit code 2.",
			args: []string{"--no-such-flag"}, code: 2, logs: "flag provided but not defined: -no-such-flag"},
		"Help": {reason: "-h prints the usage and exits 0.", args: []string{"-h"}, code: 0, logs: "-webhook-cert-path"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			opts := operator.DefaultOptions()
			fs := flag.NewFlagSet("memo-operator", flag.ContinueOnError)
			var stderr bytes.Buffer
			fs.SetOutput(&stderr)
			var logger logr.Logger
			ran := false
			code := operator.MainWith(context.Background(), fs, tc.args, &stderr,
				func() (*rest.Config, error) { return cfg, tc.configErr },
				func(l logr.Logger) { logger = l },
				"memo-operator", opts.BindFlags,
				func(_ context.Context, got *rest.Config) error {
					ran = true
					if got != cfg {
						t.Errorf("run got config %p, want %p", got, cfg)
					}
					logger.V(2).Info("verbose")
					return tc.runErr
				})
			if code != tc.code || ran != tc.ran {
				t.Errorf("\n%s\nexit code %d, ran %v; want %d, %v", tc.reason, code, ran, tc.code, tc.ran)
			}
			if tc.logs == "" && stderr.Len() != 0 || !strings.Contains(stderr.String(), tc.logs) {
				t.Errorf("\n%s\nstandard error %q, want %q", tc.reason, stderr.String(), tc.logs)
			}
			if tc.ran && opts.Namespace != tc.namespace {
				t.Errorf("\n%s\n--namespace = %q, want %q", tc.reason, opts.Namespace, tc.namespace)
			}
		})
	}
}
