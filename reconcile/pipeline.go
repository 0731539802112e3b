package reconcile

import (
	"context"
	"fmt"
	"reflect"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// Pipeline runs a table of steps on a custom resource of type T. Build it once, at
// controller setup, with [NewPipeline]; it is safe for concurrent use by several
// reconciles.
type Pipeline[T Object] struct {
	nodes      []*node[T]
	conditions []string
	owned      []client.Object
	named      map[string]*node[T]
}

// node is a validated Step with its metric children resolved once, so that the hot path
// does no label lookup.
type node[T Object] struct {
	name      string
	condition string
	run       StepFunc[T]
	kind      groupKind
	members   []*node[T]
	observer  prometheus.Observer // nil: uninstrumented
	errors    prometheus.Counter
}

// NewPipeline validates steps and returns the pipeline that runs them in table order,
// recording into m (nil records nothing). The table is refused, with an error wrapping
// [ErrInvalidPipeline] that names the offending row, when a step has no function, a
// group has no members or a function of its own, two steps share a name, or a Parallel
// member is a group or lacks a condition type of its own.
func NewPipeline[T Object](m *Metrics, steps ...Step[T]) (*Pipeline[T], error) {
	b := builder[T]{metrics: m, names: map[string]bool{}, named: map[string]*node[T]{}, ownedTypes: map[reflect.Type]bool{}}
	p := &Pipeline[T]{}
	for i, s := range steps {
		n, err := b.build(s, fmt.Sprintf("step %d", i))
		if err != nil {
			return nil, err
		}
		p.nodes = append(p.nodes, n)
	}
	p.conditions = b.conditions
	p.owned = b.owned
	p.named = b.named
	return p, nil
}

// Owned returns one empty object of each kind the pipeline's steps declare in
// [Step].Owns, in table order and without duplicates (one per Go type). A controller
// watches them (ctrl.Builder.Owns), lists them as its children and checks them in tests
// from this one list.
func (p *Pipeline[T]) Owned() []client.Object {
	out := make([]client.Object, 0, len(p.owned))
	for _, o := range p.owned {
		out = append(out, o.DeepCopyObject().(client.Object))
	}
	return out
}

// OwnedLists returns, for each kind of [Pipeline.Owned], an empty list of that kind
// (a Deployment's is *appsv1.DeploymentList), built from scheme: what a sweep of the
// children or a test listing them takes. A kind whose list type scheme does not know
// is an error naming it.
func (p *Pipeline[T]) OwnedLists(scheme *runtime.Scheme) ([]client.ObjectList, error) {
	out := make([]client.ObjectList, 0, len(p.owned))
	for _, o := range p.owned {
		gvk, err := apiutil.GVKForObject(o, scheme)
		if err != nil {
			return nil, fmt.Errorf("owned kind %T: %w", o, err)
		}
		gvk.Kind += "List"
		obj, err := scheme.New(gvk)
		if err != nil {
			return nil, fmt.Errorf("list of owned kind %s: %w", gvk, err)
		}
		list, ok := obj.(client.ObjectList)
		if !ok {
			return nil, fmt.Errorf("list of owned kind %s: %T is not a client.ObjectList", gvk, obj)
		}
		out = append(out, list)
	}
	return out, nil
}

// Steps returns the names of the pipeline's named steps (groups and their members), in
// table order.
func (p *Pipeline[T]) Steps() []string {
	var names []string
	var walk func([]*node[T])
	walk = func(ns []*node[T]) {
		for _, n := range ns {
			if n.name != "" {
				names = append(names, n.name)
			}
			walk(n.members)
		}
	}
	walk(p.nodes)
	return names
}

// RunStep runs the one step (or group) named name on obj, instrumented as in [Run], and
// returns its result: a test drives one row of the table without the rows before it. A
// name the table does not have is an error wrapping [ErrUnknownStep].
func (p *Pipeline[T]) RunStep(ctx context.Context, name string, obj T) (ctrl.Result, error) {
	n, ok := p.named[name]
	if !ok {
		return ctrl.Result{}, fmt.Errorf("%w: %q (the pipeline has %v)", ErrUnknownStep, name, p.Steps())
	}
	res, err := n.call(ctx, obj)
	if err != nil {
		return ctrl.Result{}, err
	}
	return res, nil
}

// Conditions returns the condition types the pipeline's steps own, in table order and
// without duplicates: the usual sub-conditions of the aggregate Ready (see
// [DefaultPassOptions]).
func (p *Pipeline[T]) Conditions() []string { return slices.Clone(p.conditions) }

// Run runs the steps in order on obj and returns at the first step that returns a
// non-zero result or an error, with that result or error; it returns a zero result and
// nil when every step let the pass go on.
//
// A step never yields a result together with an error: controller-runtime ignores the
// result when Reconcile returns an error, so the runner makes that explicit — when a
// step returns both, the error wins and the result is dropped. A panicking step is
// recovered: its metrics are recorded, the stack is logged through the context's logger
// and the step returns an error wrapping [ErrPanic] instead, so the pass ends like any
// failed step and its status is still persisted. controller-runtime would recover the
// panic too (RecoverPanic defaults to true), but only after the status write was lost.
func (p *Pipeline[T]) Run(ctx context.Context, obj T) (ctrl.Result, error) {
	for _, n := range p.nodes {
		res, err := n.call(ctx, obj)
		if err != nil {
			return ctrl.Result{}, err
		}
		if !res.IsZero() {
			return res, nil
		}
	}
	return ctrl.Result{}, nil
}

// builder validates and compiles a step table.
type builder[T Object] struct {
	metrics    *Metrics
	names      map[string]bool
	named      map[string]*node[T]
	conditions []string
	owned      []client.Object
	ownedTypes map[reflect.Type]bool
}

func (b *builder[T]) build(s Step[T], where string) (*node[T], error) {
	if s.Name != "" {
		where += fmt.Sprintf(" (%q)", s.Name)
		if b.names[s.Name] {
			return nil, fmt.Errorf("%w: %s: duplicate step name", ErrInvalidPipeline, where)
		}
		b.names[s.Name] = true
	}
	n := &node[T]{name: s.Name, condition: s.Condition, run: s.Run, kind: s.kind}
	switch s.kind {
	case single:
		if s.Run == nil {
			return nil, fmt.Errorf("%w: %s: Run is nil", ErrInvalidPipeline, where)
		}
	default:
		if s.Run != nil {
			return nil, fmt.Errorf("%w: %s: a %s has no Run of its own", ErrInvalidPipeline, where, s.kind)
		}
		if len(s.members) == 0 {
			return nil, fmt.Errorf("%w: %s: %s without members", ErrInvalidPipeline, where, s.kind)
		}
	}
	for i, o := range s.Owns {
		if o == nil || reflect.ValueOf(o).IsNil() {
			return nil, fmt.Errorf("%w: %s: Owns[%d] is nil", ErrInvalidPipeline, where, i)
		}
		if t := reflect.TypeOf(o); !b.ownedTypes[t] {
			b.ownedTypes[t] = true
			b.owned = append(b.owned, o.DeepCopyObject().(client.Object))
		}
	}
	if s.Name != "" {
		b.named[s.Name] = n
	}
	if s.Condition != "" && !slices.Contains(b.conditions, s.Condition) {
		b.conditions = append(b.conditions, s.Condition)
	}
	owned := map[string]bool{}
	for i, m := range s.members {
		mwhere := fmt.Sprintf("%s member %d", where, i)
		if s.kind == parallel {
			switch {
			case m.kind != single:
				return nil, fmt.Errorf("%w: %s: a Parallel member must be a single step, not a %s", ErrInvalidPipeline, mwhere, m.kind)
			case m.Condition == "":
				return nil, fmt.Errorf("%w: %s: a Parallel member must own a condition type (Condition is empty)", ErrInvalidPipeline, mwhere)
			case owned[m.Condition]:
				return nil, fmt.Errorf("%w: %s: condition type %q is owned by another member of the Parallel group", ErrInvalidPipeline, mwhere, m.Condition)
			}
			owned[m.Condition] = true
		}
		mn, err := b.build(m, mwhere)
		if err != nil {
			return nil, err
		}
		n.members = append(n.members, mn)
	}
	if s.Name != "" && b.metrics != nil {
		obs, err := b.metrics.duration.GetMetricWithLabelValues(s.Name)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: name is not a valid label value: %w", ErrInvalidPipeline, where, err)
		}
		cnt, err := b.metrics.errors.GetMetricWithLabelValues(s.Name, s.Condition)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: condition is not a valid label value: %w", ErrInvalidPipeline, where, err)
		}
		n.observer, n.errors = obs, cnt
	}
	return n, nil
}
