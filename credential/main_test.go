package credential_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/c5c3/reconciler-sdk/testenv"
)

// env is the package's control plane: Secrets and ConfigMaps only, no CRDs.
var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{CRDSources: []testenv.CRDSource{}}, &env))
}

// newOwner creates the ConfigMap that stands in for the operator's CR.
func newOwner(t testing.TB, ns string) *corev1.ConfigMap {
	t.Helper()
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns}}
	if err := env.Client.Create(context.Background(), owner); err != nil {
		t.Fatal(err)
	}
	return owner
}

// event is one Event an eventLog recorded.
type event struct {
	Regarding, Related string // "Kind name"
	Type, Reason, Note string
}

// eventLog is an events.EventRecorder that keeps what it is given.
type eventLog struct {
	mu     sync.Mutex
	events []event
}

func (l *eventLog) Eventf(regarding, related runtime.Object, eventtype, reason, _ /* action */, note string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, event{Regarding: describe(regarding), Related: describe(related),
		Type: eventtype, Reason: reason, Note: fmt.Sprintf(note, args...)})
}

func (l *eventLog) all() []event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]event(nil), l.events...)
}

// describe names an object as "Kind name"; a typed object without TypeMeta by its Go
// type.
func describe(o runtime.Object) string {
	if o == nil {
		return ""
	}
	kind := o.GetObjectKind().GroupVersionKind().Kind
	if kind == "" {
		kind = strings.TrimPrefix(fmt.Sprintf("%T", o), "*v1.")
	}
	if m, ok := o.(metav1.Object); ok {
		return kind + " " + m.GetName()
	}
	return kind
}

// logBuffer captures log lines at every verbosity.
type logBuffer struct {
	mu    sync.Mutex
	lines []string
}

func (b *logBuffer) context(ctx context.Context) context.Context {
	return logr.NewContext(ctx, funcr.New(func(prefix, args string) {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.lines = append(b.lines, prefix+" "+args)
	}, funcr.Options{Verbosity: 10}))
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.lines, "\n")
}
