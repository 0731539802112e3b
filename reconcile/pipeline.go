package reconcile

import (
	"context"
	"fmt"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	ctrl "sigs.k8s.io/controller-runtime"
)

// Pipeline runs a table of steps on a custom resource of type T. Build it once, at
// controller setup, with [NewPipeline]; it is safe for concurrent use by several
// reconciles.
type Pipeline[T Object] struct {
	nodes      []*node[T]
	conditions []string
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
	b := builder[T]{metrics: m, names: map[string]bool{}}
	p := &Pipeline[T]{}
	for i, s := range steps {
		n, err := b.build(s, fmt.Sprintf("step %d", i))
		if err != nil {
			return nil, err
		}
		p.nodes = append(p.nodes, n)
	}
	p.conditions = b.conditions
	return p, nil
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
	conditions []string
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
