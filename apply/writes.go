package apply

import (
	"context"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Action is what a write of the SDK did to one object.
type Action string

// The actions a Write reports.
const (
	// ActionCreated: the object did not exist and was created.
	ActionCreated Action = "Created"
	// ActionConfigured: the object existed and the write changed it.
	ActionConfigured Action = "Configured"
	// ActionUnchanged: the write was sent and changed nothing (a converged apply).
	ActionUnchanged Action = "Unchanged"
	// ActionSkipped: nothing was sent: the Applier knew the object converged.
	ActionSkipped Action = "Skipped"
	// ActionDeleted: the object was deleted (or its deletion started).
	ActionDeleted Action = "Deleted"
)

// Write reports what one write of the SDK did, so a caller can log, count and emit
// events without reading the object again.
type Write struct {
	// Action is what happened.
	Action Action
	// GVK is the object's kind.
	GVK schema.GroupVersionKind
	// Key is the object's namespace and name.
	Key client.ObjectKey
	// Fields lists, for ActionConfigured, the paths of the applied fields whose value
	// changed (e.g. "spec.template.spec.containers"), when the server's answer tells;
	// a list is reported as one path.
	Fields []string
}

// String renders the write as "Deployment ns/name configured", followed by the
// changed fields when Fields lists any: "Deployment ns/name configured
// spec.replicas,spec.template.spec.containers".
func (w Write) String() string {
	s := w.GVK.Kind + " " + w.Key.String() + " " + string(lower(w.Action))
	if len(w.Fields) > 0 {
		s += " " + strings.Join(w.Fields, ",")
	}
	return s
}

func lower(a Action) Action {
	b := []byte(a)
	if len(b) > 0 && b[0] >= 'A' && b[0] <= 'Z' {
		b[0] += 'a' - 'A'
	}
	return Action(b)
}

// Writes collects the writes made with one context. It is safe for concurrent use (a
// Parallel group's members share it).
type Writes struct {
	mu   sync.Mutex
	list []Write
}

// All returns the writes collected so far, in the order they were made.
func (w *Writes) All() []Write {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Write(nil), w.list...)
}

// Changed returns the writes that changed something (created, configured, deleted).
func (w *Writes) Changed() []Write {
	var out []Write
	for _, x := range w.All() {
		if x.Action == ActionCreated || x.Action == ActionConfigured || x.Action == ActionDeleted {
			out = append(out, x)
		}
	}
	return out
}

type writesKey struct{}

// WithWrites returns a context that collects the writes every SDK helper makes with it,
// and the collection. The one way the SDK hands back what it wrote: helpers keep their
// signatures, and the caller (typically once per reconcile pass) reads the collection.
func WithWrites(ctx context.Context) (context.Context, *Writes) {
	w := &Writes{}
	return context.WithValue(ctx, writesKey{}, w), w
}

// Record adds a write to the collection of ctx, if it has one. Helpers that write
// without EnsureObject call it so their writes are reported like every other.
func Record(ctx context.Context, w Write) {
	if ws, ok := ctx.Value(writesKey{}).(*Writes); ok && ws != nil {
		ws.mu.Lock()
		ws.list = append(ws.list, w)
		ws.mu.Unlock()
	}
}

type noSkipKey struct{}

// WithoutSkip returns a context whose EnsureObject calls always send their apply, even
// through an Applier that knows the object converged: the per-call opt-out.
func WithoutSkip(ctx context.Context) context.Context {
	return context.WithValue(ctx, noSkipKey{}, true)
}

func skipDisabled(ctx context.Context) bool {
	v, _ := ctx.Value(noSkipKey{}).(bool)
	return v
}
