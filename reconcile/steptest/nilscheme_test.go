package steptest_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/reconcile/steptest"
)

// nilSchemeEnv makes TestNilScheme's child process run one of the kit's testing.T
// entry points with a nil scheme; the parent checks that it fails the test cleanly.
const nilSchemeEnv = "STEPTEST_NIL_SCHEME"

func nilSchemeCase() steptest.Case[*Gadget] {
	return steptest.Case[*Gadget]{Object: gadget(), GivenObjects: []client.Object{keySecret()}}
}

// TestNilScheme: every exported function of the kit that takes a *runtime.Scheme
// reports a nil one as an error wrapping apply.ErrNilScheme that names the object, and
// never panics.
func TestNilScheme(t *testing.T) {
	if which := os.Getenv(nilSchemeEnv); which != "" {
		switch which {
		case "Case.Run":
			nilSchemeCase().Run(t, nil, configStep)
		case "Suite.Run":
			steptest.Suite[*Gadget]{"nil scheme": nilSchemeCase()}.Run(t, nil, configStep)
		}
		return
	}
	t.Run("Case.Evaluate", func(t *testing.T) {
		r := nilSchemeCase().Evaluate(context.Background(), nil, configStep)
		if !errors.Is(r.SetupErr, apply.ErrNilScheme) {
			t.Fatalf("SetupErr = %v, want ErrNilScheme", r.SetupErr)
		}
		if len(r.Problems) != 1 || !strings.Contains(r.Problems[0], "ns/g") || !strings.Contains(r.SetupErr.Error(), "ns/g") {
			t.Errorf("problems %q / error %v do not name the object", r.Problems, r.SetupErr)
		}
		if r.Client != nil {
			t.Error("the case ran without a scheme")
		}
	})
	for _, which := range []string{"Case.Run", "Suite.Run"} {
		t.Run(which, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestNilScheme$", "-test.count=1")
			cmd.Env = append(os.Environ(), nilSchemeEnv+"="+which)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Fatalf("child exited with %v, want a failed test (exit 1):\n%s", err, out)
			}
			if strings.Contains(string(out), "panic") || !strings.Contains(string(out), apply.ErrNilScheme.Error()) ||
				!strings.Contains(string(out), "ns/g") {
				t.Errorf("child output does not report the nil scheme naming the object, or panicked:\n%s", out)
			}
		})
	}
}
