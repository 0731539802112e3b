package faults

import (
	"context"
	"errors"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/c5c3/reconciler-sdk/apply"
)

// Verb names one kind of client call a fault can be injected into.
type Verb string

// The client calls an [Injector] counts and can fail.
const (
	VerbGet          Verb = "Get"
	VerbList         Verb = "List"
	VerbCreate       Verb = "Create"
	VerbUpdate       Verb = "Update"
	VerbPatch        Verb = "Patch"
	VerbApply        Verb = "Apply"
	VerbDelete       Verb = "Delete"
	VerbStatusUpdate Verb = "Status().Update"
	VerbStatusPatch  Verb = "Status().Patch"
)

// Verbs returns every Verb an [Injector] can fail, in a stable order.
func Verbs() []Verb {
	return []Verb{VerbGet, VerbList, VerbCreate, VerbUpdate, VerbPatch, VerbApply, VerbDelete,
		VerbStatusUpdate, VerbStatusPatch}
}

// IsWrite reports whether v changes state on the server (every verb but Get and List).
func (v Verb) IsWrite() bool {
	return v != VerbGet && v != VerbList
}

// ErrInjected marks every error an [Injector] returns; errors.Is tells an injected
// failure from a real one.
var ErrInjected = errors.New("injected fault")

// Fault is one way an API call can fail.
type Fault struct {
	// Name is a short, stable name used in subtest names ("conflict", "internal", ...).
	Name string
	// Err builds the error for a call of verb on the named object.
	Err func(verb Verb, what string) error
	// AfterWrite makes a write take effect on the server before the error is returned:
	// the request was served but the answer was lost, as after a client-side timeout.
	AfterWrite bool
}

// The faults of the standard matrix ([All]).
var (
	// Conflict is a 409 Conflict, as an optimistic-concurrency failure answers.
	Conflict = Fault{Name: "conflict", Err: func(v Verb, what string) error {
		return fmt.Errorf("%w: %w", ErrInjected, apierrors.NewConflict(schema.GroupResource{}, what,
			errors.New("the object has been modified")))
	}}
	// Internal is a 500 Internal Server Error.
	Internal = Fault{Name: "internal", Err: func(v Verb, what string) error {
		return fmt.Errorf("%w: %w", ErrInjected, apierrors.NewInternalError(fmt.Errorf("%s %s failed", v, what)))
	}}
	// Timeout is a client-side timeout. A write is served before the timeout hits, so
	// the caller does not know whether it took effect.
	Timeout = Fault{Name: "timeout", AfterWrite: true, Err: func(v Verb, what string) error {
		return fmt.Errorf("%w: %s %s: %w", ErrInjected, v, what, context.DeadlineExceeded)
	}}
	// Canceled is a call made with a cancelled context (a shutting-down manager).
	Canceled = Fault{Name: "canceled", Err: func(v Verb, what string) error {
		return fmt.Errorf("%w: %s %s: %w", ErrInjected, v, what, context.Canceled)
	}}
)

// All returns the faults of the standard matrix: 409, 500, a timeout (after the write
// was served) and a cancelled context.
func All() []Fault {
	return []Fault{Conflict, Internal, Timeout, Canceled}
}

// Reads returns the faults a read can meet that no other covers: 500 and a cancelled
// context. A read never answers 409, and a timed-out read has no effect on the server,
// so for a read the timeout is the cancelled context's case.
func Reads() []Fault {
	return []Fault{Internal, Canceled}
}

// Injector wraps a client, counts its calls per Verb and fails exactly one chosen call:
// the nth call of one verb, counted from the last Arm. It is safe for concurrent use.
type Injector struct {
	mu     sync.Mutex
	calls  map[Verb]int
	target Verb
	nth    int
	fault  Fault
	fired  bool
}

// NewInjector returns an injector that fails nothing until Arm is called.
func NewInjector() *Injector {
	return &Injector{calls: map[Verb]int{}}
}

// Arm resets the call counts and makes the nth (1-based) call of verb fail with fault.
func (f *Injector) Arm(verb Verb, nth int, fault Fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = map[Verb]int{}
	f.target, f.nth, f.fault, f.fired = verb, nth, fault, false
}

// Disarm resets the call counts and fails nothing from now on.
func (f *Injector) Disarm() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = map[Verb]int{}
	f.target, f.nth, f.fired = "", 0, false
}

// Calls returns how many calls of verb were made since the last Arm or Disarm.
func (f *Injector) Calls(verb Verb) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[verb]
}

// Fired reports whether the armed fault has been returned.
func (f *Injector) Fired() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fired
}

// next counts a call and returns the fault to inject, if this call is the armed one.
func (f *Injector) next(verb Verb) (Fault, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[verb]++
	if f.fired || f.target != verb || f.calls[verb] != f.nth {
		return Fault{}, false
	}
	f.fired = true
	return f.fault, true
}

// do runs call, or fails it when it is the armed one.
func (f *Injector) do(verb Verb, what string, call func() error) error {
	fault, inject := f.next(verb)
	if !inject {
		return call()
	}
	if fault.AfterWrite && verb.IsWrite() {
		if err := call(); err != nil {
			return err
		}
	}
	return fault.Err(verb, what)
}

// Client wraps c so that its calls are counted and the armed call fails. When c is or
// carries an apply.Applier (apply.ApplierOf), so does the result (apply.Wrap): the SDK's
// helpers keep its field manager, skip and ownership mode, and their calls still go
// through the injector.
func (f *Injector) Client(c client.Client) client.Client {
	ww, ok := c.(client.WithWatch)
	if !ok {
		ww = noWatch{c}
	}
	return apply.Wrap(f.intercept(ww), c)
}

// intercept returns c with every call counted and the armed one failed.
func (f *Injector) intercept(c client.WithWatch) client.WithWatch {
	return interceptor.NewClient(c, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			return f.do(VerbGet, key.String(), func() error { return c.Get(ctx, key, obj, opts...) })
		},
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			return f.do(VerbList, fmt.Sprintf("%T", list), func() error { return c.List(ctx, list, opts...) })
		},
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			return f.do(VerbCreate, key(obj), func() error { return c.Create(ctx, obj, opts...) })
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			return f.do(VerbUpdate, key(obj), func() error { return c.Update(ctx, obj, opts...) })
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			return f.do(VerbPatch, key(obj), func() error { return c.Patch(ctx, obj, patch, opts...) })
		},
		Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			return f.do(VerbApply, fmt.Sprintf("%T", obj), func() error { return c.Apply(ctx, obj, opts...) })
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			return f.do(VerbDelete, key(obj), func() error { return c.Delete(ctx, obj, opts...) })
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			call := func() error { return c.SubResource(sub).Update(ctx, obj, opts...) }
			if sub != "status" {
				return call()
			}
			return f.do(VerbStatusUpdate, key(obj), call)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			call := func() error { return c.SubResource(sub).Patch(ctx, obj, patch, opts...) }
			if sub != "status" {
				return call()
			}
			return f.do(VerbStatusPatch, key(obj), call)
		},
	})
}

func key(obj client.Object) string {
	return client.ObjectKeyFromObject(obj).String()
}

// noWatch lets a client without Watch be wrapped by interceptor.NewClient.
type noWatch struct{ client.Client }

func (noWatch) Watch(context.Context, client.ObjectList, ...client.ListOption) (watch.Interface, error) {
	return nil, errors.New("faults: the wrapped client does not support Watch")
}
