package faults_test

import (
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
	ctrl "sigs.k8s.io/controller-runtime"
)

// TestMainDiscardsLogsByDefault: this package's TestMain passes testenv.Main the zero
// Options.Logger, and Main has set controller-runtime's logger to it (a discarding one):
// controller-runtime keeps the first logger set in a process, so one set now receives
// nothing.
func TestMainDiscardsLogsByDefault(t *testing.T) {
	var got strings.Builder
	ctrl.SetLogger(funcr.New(func(prefix, args string) { got.WriteString(args) }, funcr.Options{}))
	ctrl.Log.WithName("faults-test").Info("after Main")
	if got.Len() != 0 {
		t.Errorf("a logger set after Main received %q: Main did not set controller-runtime's logger", got.String())
	}
}
