package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/reconcile"
)

// errTimeout is wrapped by the error of a phase that did not finish in time.
var errTimeout = errors.New("timed out")

// pollInterval is how often a phase reads its object.
const pollInterval = 100 * time.Millisecond

// action is what the demo does in place of an operator that does not run here.
type action struct {
	// when tells whether the action can run; nil means at once.
	when func(ctx context.Context) (bool, error)
	// do runs it and returns the line that tells what happened.
	do func(ctx context.Context) (string, error)
}

// phase is one part of the demo: actions taken in order, each after a pause, while
// the conditions of its object (a Horizon or a Keystone, T) are shown, until done
// holds.
type phase[T reconcile.Object] struct {
	name    string
	actions []action
	// table shows the conditions while the phase runs; without it only the actions'
	// lines are printed.
	table bool
	// dropTable removes the live table when the phase ends instead of leaving it.
	dropTable bool
	// done tells whether the phase is over; the string says what it still waits for.
	done func(ctx context.Context, obj T) (bool, string, error)
}

// subject is what a phase follows: the object at key, of kind (for messages), read
// into what newObj returns, its conditions shown in order.
type subject[T reconcile.Object] struct {
	kind   string
	key    client.ObjectKey
	newObj func() T
	order  []string
}

// runPhase runs p against the object of sub, bounded by timeout; each action waits
// pause after the previous one (or the phase's start). It returns the object as it
// was when the phase ended and how long the phase took.
func runPhase[T reconcile.Object](ctx context.Context, c client.Client, d *display, sub subject[T], p phase[T],
	pause, timeout time.Duration) (T, time.Duration, error) {
	var zero T
	start := time.Now()
	deadline := start.Add(timeout)
	lastAction := start
	d.Begin(start)
	next := 0
	ticker := time.NewTicker(pollInterval)
	defer ticker.Stop()
	for {
		h := sub.newObj()
		if err := c.Get(ctx, sub.key, h); err != nil {
			return zero, 0, fmt.Errorf("%s: reading %s %s: %w", p.name, sub.kind, sub.key, err)
		}
		now := time.Now()
		rows := rowsIn(h, sub.order)
		if p.table {
			d.Show(rows, now)
		}
		if next < len(p.actions) && now.Sub(lastAction) >= pause {
			a := p.actions[next]
			ok := a.when == nil
			if !ok {
				var err error
				if ok, err = a.when(ctx); err != nil {
					return zero, 0, fmt.Errorf("%s: %w", p.name, err)
				}
			}
			if ok && a.when != nil && p.table {
				// when may have read a newer object than the table shows: show that
				// state first, so that the action's line follows what it answers.
				fresh := sub.newObj()
				if err := c.Get(ctx, sub.key, fresh); err != nil {
					return zero, 0, fmt.Errorf("%s: reading %s %s: %w", p.name, sub.kind, sub.key, err)
				}
				d.Show(rowsIn(fresh, sub.order), time.Now())
			}
			if ok {
				line, err := a.do(ctx)
				if err != nil {
					return zero, 0, fmt.Errorf("%s: %w", p.name, err)
				}
				d.Linef("  ▸ %s", line)
				next++
				lastAction = time.Now()
				continue
			}
		}
		waiting := "the demo's own step " + fmt.Sprint(next+1)
		if next == len(p.actions) {
			done, what, err := p.done(ctx, h)
			if err != nil {
				return zero, 0, fmt.Errorf("%s: %w", p.name, err)
			}
			if done {
				if p.table {
					d.Show(rows, time.Now())
					if p.dropTable {
						d.Drop()
					} else {
						d.End()
					}
				}
				return h, time.Since(start), nil
			}
			waiting = what
		}
		if now.After(deadline) {
			if p.table {
				d.End()
			}
			return zero, 0, stuckError(p.name, sub.kind, sub.key, rows, timeout, waiting)
		}
		if err := d.Err(); err != nil {
			return zero, 0, err
		}
		select {
		case <-ctx.Done():
			return zero, 0, fmt.Errorf("%s: %w", p.name, ctx.Err())
		case <-ticker.C:
		}
	}
}

// stuckError names what kept a phase from finishing: the first of rows (the
// conditions of the kind object at key, in table order) that is not True for the
// object's generation, with its reason and message; when every condition is True,
// what the phase still waited for.
func stuckError(name, kind string, key client.ObjectKey, rows []row, timeout time.Duration, waiting string) error {
	for _, r := range rows {
		if r.isTrue() {
			continue
		}
		stale := ""
		if r.Status != "-" && !r.Current {
			stale = " (written for an older generation)"
		}
		return fmt.Errorf("%s: %w after %s: %s %s: condition %s is %s%s, reason %s: %s",
			name, errTimeout, timeout, kind, key, r.Type, r.Status, stale, orNone(r.Reason), orNone(r.Message))
	}
	return fmt.Errorf("%s: %w after %s: %s %s: every condition is True, but the demo still waits for %s",
		name, errTimeout, timeout, kind, key, waiting)
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
