package testenv_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/c5c3/reconciler-sdk/testenv"
	"github.com/c5c3/reconciler-sdk/testenv/faults"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

// The deprecated names of package testenv are the subpackages' values, so callers not
// yet migrated behave the same. The explicit types are the point of the test.
//
//nolint:staticcheck // the deprecated names are what it tests
func TestDeprecatedNamesAreTheSubpackages(t *testing.T) {
	var inj *faults.Injector = testenv.NewFaultInjector()
	var matrix faults.Matrix = testenv.FaultMatrix{Setup: func(*testing.T) testenv.FaultRun { return faults.Scenario{} }}
	var backend *simulate.SecretBackend = testenv.NewSecretBackend(nil)
	if inj == nil || matrix.Setup == nil || backend == nil {
		t.Fatal("a deprecated constructor returned nil")
	}
	for name, tc := range map[string]struct {
		got, want any
	}{
		"ErrInjected":                 {testenv.ErrInjected, faults.ErrInjected},
		"Verbs":                       {testenv.Verbs(), faults.Verbs()},
		"Faults":                      {names(testenv.Faults()), names(faults.All())},
		"ReadFaults":                  {names(testenv.ReadFaults()), names(faults.Reads())},
		"FaultTimeout":                {testenv.FaultTimeout.Name + "/" + boolText(testenv.FaultTimeout.AfterWrite), "timeout/true"},
		"VerbStatusPatch":             {testenv.VerbStatusPatch, faults.VerbStatusPatch},
		"ErrSecretBackendUnsupported": {testenv.ErrSecretBackendUnsupported, simulate.ErrSecretBackendUnsupported},
		"SimulatedJobManager":         {testenv.SimulatedJobManager, simulate.SimulatedJobManager},
		"ESOManagedLabel":             {testenv.ESOManagedLabel, simulate.ESOManagedLabel},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.got, cmpopts.EquateErrors()); diff != "" {
				t.Errorf("%s (-want +got):\n%s", name, diff)
			}
		})
	}
}

func names(fs []faults.Fault) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Name
	}
	return out
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
