package conformance

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/c5c3/reconciler-sdk/testenv"
)

// The names of the checks, in the order [Run] runs them. Each is the name of its
// subtest, so `go test -run 'TestConformance/Quiescence'` runs one check.
const (
	CheckConvergence    = "Convergence"
	CheckQuiescence     = "Quiescence"
	CheckOwnership      = "Ownership"
	CheckConditions     = "Conditions"
	CheckErrors         = "Errors"
	CheckDrift          = "Drift"
	CheckDeletion       = "Deletion"
	CheckValidation     = "Validation"
	CheckSecrets        = "Secrets"
	CheckLeastPrivilege = "LeastPrivilege"
	CheckTwoReplicas    = "TwoReplicas"
	CheckSharded        = "Sharded"
)

// Checks returns the names of every check, in the order Run runs them.
func Checks() []string {
	return []string{CheckConvergence, CheckQuiescence, CheckOwnership, CheckConditions, CheckErrors,
		CheckDrift, CheckDeletion, CheckValidation, CheckSecrets, CheckLeastPrivilege, CheckTwoReplicas, CheckSharded}
}

// Default bounds of [Options].
const (
	// DefaultMaxPasses bounds the passes a sample may take to become Ready, and the
	// passes the suite runs while it waits for a quiet pass or a repair.
	DefaultMaxPasses = 30
	// DefaultTimeout bounds each wait of a check.
	DefaultTimeout = 2 * time.Minute
)

// MaxVerbosity is the highest log verbosity (logr's V level, klog's -v) the suite
// captures and holds to the Secrets check. client-go's dumps of request and response
// bodies, at V(8) and above, are left out (package documentation, "What the suite sees").
const MaxVerbosity = 7

// MinSecretLength is the shortest Secret value the Secrets check looks for: shorter
// values ("true", a port) match by chance in any log.
const MinSecretLength = 8

// Sentinel errors of the package. Test for them with errors.Is.
var (
	// ErrViolation is wrapped by every finding of a check: the operator broke one of
	// its promises. Each finding is a *[Violation].
	ErrViolation = errors.New("conformance violation")
	// ErrInvalidOptions reports Options the suite cannot run with: no Env, no Start,
	// no FieldManager, no samples, a sample of a kind the Env's scheme does not know,
	// or a Skip entry without a reason or for an unknown check.
	ErrInvalidOptions = errors.New("invalid conformance options")
	// ErrUnknownCheck reports a check name that [Checks] does not list.
	ErrUnknownCheck = errors.New("unknown conformance check")
	// ErrStart reports an operator that could not be run: Start returned before its
	// context ended, or never wrapped its reconciler with RunOptions.Wrap.
	ErrStart = errors.New("operator did not start")
)

// Options describe the operator under test. Env, FieldManager, Start and Samples are
// required.
type Options struct {
	// Env is the control plane, with the operator's CRDs installed
	// (testenv.Options.CRDPaths). The Deletion check needs real controllers
	// (testenv.Options{Controllers: true}) for the garbage collector.
	Env *testenv.Env
	// FieldManager is the field manager the operator writes under. The suite finds the
	// operator's children by it: every object of the CR's namespace whose managedFields
	// name it (Events excluded).
	FieldManager string
	// Start runs the operator on cfg until ctx ends, and returns then (nil, or the
	// error the manager's Start returned). It must register its reconciler through
	// run.Wrap, hand run.Logger and run.Registerer to its manager and metrics, and may
	// restrict its cache to run.Namespace. Each check starts the operator afresh (two
	// instances at once for TwoReplicas). An operator on multicluster.RunOperator gets
	// all but the Wrap from run.OperatorOptions and run.Metrics.
	Start func(ctx context.Context, cfg *rest.Config, run RunOptions) error
	// Samples are valid CRs. Each check creates them in a fresh namespace (the sample's
	// namespace is replaced; name, labels, annotations and spec are kept).
	Samples []client.Object
	// Invalid are CRs admission must reject, each with the field its rejection names.
	Invalid []InvalidSample
	// MakeReady plays the controllers the operator depends on and envtest does not run
	// (External Secrets, Gateway API, ...; see the testenv simulators). The suite calls
	// it for each sample on every poll while it waits for Ready, with c the Env's
	// cluster-admin client and cr the sample as stored (of the scheme's Go type); it
	// must be idempotent. An error is retried until the wait ends, and then reported.
	MakeReady func(ctx context.Context, c client.Client, cr client.Object) error
	// SubConditions are the condition types Ready aggregates. Empty means every
	// condition type other than Ready.
	SubConditions []string
	// ClusterRolePaths are the YAML files of the operator's generated ClusterRoles
	// (testenv.LoadClusterRoles reads them); the LeastPrivilege check runs the
	// operator as a user bound to these alone.
	ClusterRolePaths []string
	// OtherNamespaces declares that the operator creates objects outside the CR's
	// namespace; otherwise the Ownership check reports each one.
	OtherNamespaces bool
	// ExpectNoRequests declares that a converged pass sends no request at all (an
	// operator whose reads are served by its cache and whose writes go through
	// apply.Applier); otherwise a converged pass may read, but never write.
	ExpectNoRequests bool
	// WriteOnce reports the write-once children the suite does not recognise by their
	// mark (package documentation, "What the suite sees"), typically a credential Secret
	// of secrets.EnsureGeneratedSecret. It is called with each child as stored (an
	// *unstructured.Unstructured with its kind set); nil declares none.
	WriteOnce func(obj client.Object) bool
	// MaxPasses bounds the passes of each wait; zero means DefaultMaxPasses.
	MaxPasses int
	// Timeout bounds each wait; zero means DefaultTimeout.
	Timeout time.Duration
	// Skip opts out of checks: check name to the reason, which Run reports with the
	// skip. An empty reason or an unknown name is an error.
	Skip map[string]string
}

// InvalidSample is a CR that admission (the CRD's schema, a CEL rule or a validating
// webhook) must reject.
type InvalidSample struct {
	// Object is the CR; its namespace is replaced as a sample's is.
	Object client.Object
	// Field is the path the rejection must name, as the API server writes it
	// (e.g. "spec.replicas").
	Field string
}

// RunOptions are what the suite hands to Options.Start.
type RunOptions struct {
	// Namespace is the only namespace the check creates CRs in; the operator may
	// restrict its cache to it.
	Namespace string
	// Wrap must wrap the reconciler the operator registers for its CR (exactly one):
	// the suite observes each pass's result and error through it and runs passes of
	// its own with the reconciler it wrapped.
	Wrap func(crreconcile.Reconciler) crreconcile.Reconciler
	// Logger captures the operator's logs up to V(MaxVerbosity): set it as the
	// manager's logger (ctrl.Options.Logger). The passes the suite runs get it through
	// their context.
	Logger logr.Logger
	// Registerer captures the operator's metrics: pass it as
	// reconcile.MetricsOptions.Registerer.
	Registerer prometheus.Registerer
	// Name is unique per started instance: use it as the controller's name, or skip
	// controller name validation, when two instances run in one process.
	Name string
	// Sharded asks for the instance to run as a member of a shard ring (the Sharded
	// check): every instance active, each reconciling only its share of the CRs
	// (multicluster.OperatorOptions.Sharded, Name its identity, its Leases in
	// Namespace). [RunOptions.OperatorOptions] sets it up.
	Sharded bool
}

// withDefaults fills the zero bounds in.
func (o Options) withDefaults() Options {
	if o.MaxPasses <= 0 {
		o.MaxPasses = DefaultMaxPasses
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	return o
}

// validate reports what the suite cannot run with.
func (o Options) validate() error {
	var errs []error
	if o.Env == nil {
		errs = append(errs, fmt.Errorf("%w: Env is nil", ErrInvalidOptions))
	}
	if o.Start == nil {
		errs = append(errs, fmt.Errorf("%w: Start is nil", ErrInvalidOptions))
	}
	if o.FieldManager == "" {
		errs = append(errs, fmt.Errorf("%w: FieldManager is empty", ErrInvalidOptions))
	}
	if len(o.Samples) == 0 {
		errs = append(errs, fmt.Errorf("%w: Samples is empty: give at least one valid CR", ErrInvalidOptions))
	}
	if o.Env != nil {
		for i, s := range o.Samples {
			if s == nil || s.GetName() == "" {
				errs = append(errs, fmt.Errorf("%w: Samples[%d] has no metadata.name", ErrInvalidOptions, i))
				continue
			}
			if _, err := apiutil.GVKForObject(s, o.Env.Scheme); err != nil {
				errs = append(errs, fmt.Errorf("%w: Samples[%d] %s: %w", ErrInvalidOptions, i, s.GetName(), err))
			}
		}
		for i, s := range o.Invalid {
			if s.Object == nil || s.Field == "" {
				errs = append(errs, fmt.Errorf("%w: Invalid[%d] needs an Object and a Field", ErrInvalidOptions, i))
			}
		}
	}
	names := Checks()
	for _, name := range slices.Sorted(maps.Keys(o.Skip)) {
		switch {
		case !slices.Contains(names, name):
			errs = append(errs, fmt.Errorf("%w: Skip[%q]: %w (known: %v)", ErrInvalidOptions, name, ErrUnknownCheck, names))
		case o.Skip[name] == "":
			errs = append(errs, fmt.Errorf("%w: Skip[%q] has no reason: say why the operator opts out", ErrInvalidOptions, name))
		}
	}
	return errors.Join(errs...)
}

// Run runs every check of [Checks] as a subtest of t named after it, in that order.
// A check listed in Options.Skip is skipped with its reason; every other check fails
// its subtest with the error [RunCheck] returns. Invalid options fail t before any
// check runs.
func Run(t *testing.T, opts Options) {
	t.Helper()
	if err := opts.validate(); err != nil {
		t.Fatal(err)
	}
	for _, name := range Checks() {
		t.Run(name, func(t *testing.T) {
			if reason, ok := opts.Skip[name]; ok {
				t.Skipf("%s opted out: %s", name, reason)
			}
			if err := RunCheck(t, opts, name); err != nil {
				t.Error(err)
			}
		})
	}
}

// RunCheck runs the check called name against the operator of opts, Options.Skip
// notwithstanding, and returns what it found: nil when the operator keeps the check's
// promise, otherwise the findings joined, each a *[Violation] (errors.Is
// [ErrViolation]) that names the object, the field and the fix. An error that is not a
// violation means the check could not run (invalid options, [ErrStart], an API error of
// the suite's own). t provides the namespace and the cleanup: the operator is stopped
// and the namespace deleted when t ends.
func RunCheck(t testing.TB, opts Options, name string) error {
	t.Helper()
	if !slices.Contains(Checks(), name) {
		return fmt.Errorf("%w: %q (known: %v)", ErrUnknownCheck, name, Checks())
	}
	if err := opts.validate(); err != nil {
		return err
	}
	w := newWorld(t, opts.withDefaults(), name)
	return checks[name](w)
}

// checks maps each check's name to its body.
var checks = map[string]func(*world) error{
	CheckConvergence:    (*world).checkConvergence,
	CheckQuiescence:     (*world).checkQuiescence,
	CheckOwnership:      (*world).checkOwnership,
	CheckConditions:     (*world).checkConditions,
	CheckErrors:         (*world).checkErrors,
	CheckDrift:          (*world).checkDrift,
	CheckDeletion:       (*world).checkDeletion,
	CheckValidation:     (*world).checkValidation,
	CheckSecrets:        (*world).checkSecrets,
	CheckLeastPrivilege: (*world).checkLeastPrivilege,
	CheckTwoReplicas:    (*world).checkTwoReplicas,
	CheckSharded:        (*world).checkSharded,
}

// Violation is one broken promise: what a check found, on which object and field, and
// what to change. It wraps [ErrViolation].
type Violation struct {
	// Check is the name of the check that found it.
	Check string
	// Object is "Kind namespace/name" of the object at fault; empty when the finding
	// is about the operator as a whole.
	Object string
	// Field is the field at fault (e.g. "metadata.ownerReferences"); empty when none.
	Field string
	// Problem is what was found.
	Problem string
	// Fix is what the operator's author should change.
	Fix string
}

// Error renders the violation as "Check: Object field Field: Problem. Fix: Fix".
func (v *Violation) Error() string {
	s := v.Check + ": "
	if v.Object != "" {
		s += v.Object + " "
	}
	if v.Field != "" {
		s += "field " + v.Field + ": "
	} else if v.Object != "" {
		s = s[:len(s)-1] + ": "
	}
	s += v.Problem
	if v.Fix != "" {
		s += ". Fix: " + v.Fix
	}
	return s
}

// Is reports whether target is ErrViolation.
func (v *Violation) Is(target error) bool { return target == ErrViolation }
