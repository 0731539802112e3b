package main

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/horizon/controller"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// conditionOrder is the order of the table: the sub-conditions in pipeline order, then
// the aggregate Ready.
var conditionOrder = []string{
	controller.ConditionSecretsReady, controller.ConditionConfigReady, controller.ConditionDeploymentReady,
	controller.ConditionHTTPRouteReady, controller.ConditionHorizonAPIReady, controller.ConditionHPAReady,
	controller.ConditionVPAReady, controller.ConditionNetworkPolicyReady, reconcile.ConditionReady,
}

// messageWidth bounds the message column.
const messageWidth = 64

// row is one condition as the table shows it.
type row struct {
	Type, Status, Reason, Message string
	// Current is set when the condition was written for the object's generation.
	Current bool
}

// isTrue tells whether the row counts as True: True and written for the current
// generation.
func (r row) isTrue() bool { return r.Status == string(metav1.ConditionTrue) && r.Current }

// rowsOf returns the Horizon's conditions in conditionOrder; one it does not have yet
// reads "-".
func rowsOf(h *v1alpha1.Horizon) []row { return rowsIn(h, conditionOrder) }

// rowsIn returns obj's conditions in order; one it does not have yet reads "-".
func rowsIn(obj reconcile.Object, order []string) []row {
	rows := make([]row, 0, len(order))
	for _, t := range order {
		r := row{Type: t, Status: "-"}
		for _, c := range *obj.Conditions() {
			if c.Type == t {
				r = row{Type: t, Status: string(c.Status), Reason: c.Reason, Message: c.Message,
					Current: c.ObservedGeneration == obj.GetGeneration()}
			}
		}
		rows = append(rows, r)
	}
	return rows
}

// countTrue counts the rows that are True for the current generation.
func countTrue(rows []row) int {
	n := 0
	for _, r := range rows {
		if r.isTrue() {
			n++
		}
	}
	return n
}

// shorten cuts s to n runes, ending with an ellipsis when it was cut.
func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// display writes the demo's output. Lines (Linef) stay on screen; the condition table
// (Show) is redrawn in place when live (a terminal: ANSI cursor-up and erase), and is
// one line per changed condition otherwise.
type display struct {
	w     io.Writer
	live  bool
	width int // live: lines are cut to this many runes; 0 means no cut

	start  time.Time      // when the current table started, for its progress line
	last   map[string]row // the rows last shown, by type
	block  []string       // live: the block on screen
	height int            // live: its height in lines
	err    error          // the first write error
}

// printf writes to the output and keeps the first error (see Err).
func (d *display) printf(format string, args ...any) {
	if _, err := fmt.Fprintf(d.w, format, args...); err != nil && d.err == nil {
		d.err = fmt.Errorf("writing the demo's output: %w", err)
	}
}

// Err is the first error writing the output, if any.
func (d *display) Err() error { return d.err }

// newDisplay writes to w; live redraws the table in place, width cuts live lines.
func newDisplay(w io.Writer, live bool, width int) *display {
	return &display{w: w, live: live, width: width}
}

// Linef prints one line that stays on screen (above the live table, if one is shown).
func (d *display) Linef(format string, args ...any) {
	d.erase()
	d.printf(format+"\n", args...)
	d.draw()
}

// Begin starts a new table at now, for the progress line's clock. Without live
// output, only the conditions that changed since the previous table are printed.
func (d *display) Begin(now time.Time) {
	d.start, d.block = now, nil
	if d.last == nil {
		d.last = map[string]row{}
	}
}

// Reset forgets the rows last shown, so that the next table (of another object) prints
// every condition it has.
func (d *display) Reset() { d.last = nil }

// typeWidth is the width of the condition column: the longest type in rows, at least
// 19.
func typeWidth(rows []row) int {
	w := 19
	for _, r := range rows {
		w = max(w, utf8.RuneCountInString(r.Type))
	}
	return w
}

// Show shows rows at now: live, it redraws the table and the progress line; otherwise
// it prints one line per condition whose status, reason or message changed (a
// condition the object does not have yet is not printed), with the elapsed time and
// the count of True conditions.
func (d *display) Show(rows []row, now time.Time) {
	elapsed := now.Sub(d.start)
	progress := fmt.Sprintf("%d/%d conditions True · %d s", countTrue(rows), len(rows), int(elapsed.Seconds()))
	tw := typeWidth(rows)
	if !d.live {
		for _, r := range rows {
			prev, seen := d.last[r.Type]
			if r.Status == "-" || seen && prev.Status == r.Status && prev.Reason == r.Reason && prev.Message == r.Message {
				continue
			}
			d.last[r.Type] = r
			d.printf("  %5.1fs  %-*s %-7s %-27s %s  [%d/%d]\n", elapsed.Seconds(), tw, r.Type, r.Status,
				r.Reason, shorten(r.Message, messageWidth), countTrue(rows), len(rows))
		}
		return
	}
	block := []string{fmt.Sprintf("  %-*s %-7s %-27s %s", tw, "CONDITION", "STATUS", "REASON", "MESSAGE")}
	for _, r := range rows {
		block = append(block, fmt.Sprintf("  %-*s %-7s %-27s %s", tw, r.Type, r.Status, r.Reason, shorten(r.Message, messageWidth)))
	}
	block = append(block, "  "+progress)
	if strings.Join(block, "\n") == strings.Join(d.block, "\n") {
		return
	}
	d.erase()
	d.block = block
	d.draw()
}

// End leaves the live table on screen as it is; the next output goes below it.
func (d *display) End() {
	d.block, d.height = nil, 0
}

// Drop removes the live table from the screen.
func (d *display) Drop() {
	d.erase()
	d.block = nil
}

// erase moves the cursor to the first line of the live block and clears the screen
// from there.
func (d *display) erase() {
	if !d.live || d.height == 0 {
		return
	}
	d.printf("\x1b[%dA\r\x1b[J", d.height)
	d.height = 0
}

// draw writes the live block below the cursor.
func (d *display) draw() {
	if !d.live || len(d.block) == 0 {
		return
	}
	for _, l := range d.block {
		if d.width > 1 && utf8.RuneCountInString(l) >= d.width {
			l = string([]rune(l)[:d.width-1])
		}
		d.printf("%s\n", l)
	}
	d.height = len(d.block)
}
