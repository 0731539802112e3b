package conformance

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// logCapture holds every log line the operator wrote through RunOptions.Logger.
type logCapture struct {
	mu    sync.Mutex
	lines []string
}

// add records one line.
func (c *logCapture) add(line string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lines = append(c.lines, line)
}

// all returns every line so far.
func (c *logCapture) all() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.lines...)
}

// logSink is a logr.LogSink that records every error and every message up to
// [MaxVerbosity], with its names, values and error rendered both with %v and as JSON
// (so that a Secret's []byte data logged as a value is caught in its base64 form too).
type logSink struct {
	c      *logCapture
	name   string
	values []any
}

// Init implements logr.LogSink.
func (s *logSink) Init(logr.RuntimeInfo) {}

// Enabled implements logr.LogSink: the levels up to MaxVerbosity are captured. Above
// it client-go's request and response body dumps begin; client-go asks its context's
// logger before it renders them, so they are never written.
func (s *logSink) Enabled(level int) bool { return level <= MaxVerbosity }

// Info implements logr.LogSink.
func (s *logSink) Info(_ int, msg string, kv ...any) { s.c.add(s.render(msg, nil, kv)) }

// Error implements logr.LogSink.
func (s *logSink) Error(err error, msg string, kv ...any) { s.c.add(s.render(msg, err, kv)) }

// WithValues implements logr.LogSink.
func (s *logSink) WithValues(kv ...any) logr.LogSink {
	return &logSink{c: s.c, name: s.name, values: append(append([]any(nil), s.values...), kv...)}
}

// WithName implements logr.LogSink.
func (s *logSink) WithName(name string) logr.LogSink {
	n := name
	if s.name != "" {
		n = s.name + "." + name
	}
	return &logSink{c: s.c, name: n, values: s.values}
}

// render writes one line.
func (s *logSink) render(msg string, err error, kv []any) string {
	var b strings.Builder
	b.WriteString(s.name + " " + msg)
	if err != nil {
		b.WriteString(" error=" + err.Error())
	}
	for _, v := range append(append([]any(nil), s.values...), kv...) {
		fmt.Fprintf(&b, " %v", v)
		if j, err := json.Marshal(v); err == nil {
			b.WriteString(" " + string(j))
		}
	}
	return b.String()
}

// secretValue is one value of a Secret of the world's namespace.
type secretValue struct {
	secret, key string
	forms       []string // the value as is and base64-encoded
}

// secretValues returns the values of the namespace's Secrets long enough to look for.
func (w *world) secretValues() ([]secretValue, error) {
	list := &corev1.SecretList{}
	if err := w.c.List(w.ctx, list, client.InNamespace(w.ns)); err != nil {
		return nil, fmt.Errorf("conformance: list Secrets of %s: %w", w.ns, err)
	}
	var out []secretValue
	for _, s := range list.Items {
		for k, v := range s.Data {
			if len(v) < MinSecretLength {
				continue
			}
			out = append(out, secretValue{secret: "Secret " + s.Namespace + "/" + s.Name, key: k,
				forms: []string{string(v), base64.StdEncoding.EncodeToString(v)}})
		}
	}
	return out, nil
}

// exposure is one text the operator showed to the world, and where.
type exposure struct {
	where, text string
}

// exposures collects what the operator logged, the Events of the namespace, the CRs'
// status and the operator's metrics.
func (w *world) exposures() ([]exposure, error) {
	var out []exposure
	for i, l := range w.logs.all() {
		out = append(out, exposure{where: fmt.Sprintf("logs (line %d: %.80q)", i+1, redactHint(l)), text: l})
	}
	core := &corev1.EventList{}
	if err := w.c.List(w.ctx, core, client.InNamespace(w.ns)); err != nil {
		return nil, fmt.Errorf("conformance: list Events of %s: %w", w.ns, err)
	}
	for _, e := range core.Items {
		out = append(out, exposure{where: fmt.Sprintf("events (Event %s/%s, reason %s)", e.Namespace, e.Name, e.Reason),
			text: e.Reason + " " + e.Message + " " + e.Action})
	}
	ev := &eventsv1.EventList{}
	if err := w.c.List(w.ctx, ev, client.InNamespace(w.ns)); err != nil {
		return nil, fmt.Errorf("conformance: list events.k8s.io Events of %s: %w", w.ns, err)
	}
	for _, e := range ev.Items {
		out = append(out, exposure{where: fmt.Sprintf("events (Event %s/%s, reason %s)", e.Namespace, e.Name, e.Reason),
			text: e.Reason + " " + e.Note + " " + e.Action + " " + e.DeprecatedSource.Component})
	}
	for _, cr := range w.crs {
		cur, err := w.read(cr)
		if err != nil {
			return nil, fmt.Errorf("conformance: read %s: %w", describe(cr), err)
		}
		j, _ := json.Marshal(cur.Object["status"])
		out = append(out, exposure{where: "the status of " + describe(cr) + " (conditions and other fields)", text: string(j)})
	}
	families, err := w.metrics.Gather()
	if err != nil {
		return nil, fmt.Errorf("conformance: gather metrics: %w", err)
	}
	for _, f := range families {
		var b strings.Builder
		b.WriteString(f.GetName() + " " + f.GetHelp())
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				b.WriteString(" " + l.GetName() + "=" + l.GetValue())
			}
		}
		out = append(out, exposure{where: "metrics (" + f.GetName() + ")", text: b.String()})
	}
	return out, nil
}

// redactHint returns the start of a log line for the report, up to its first '='
// or ':' after the message, so the report does not repeat the leaked value.
func redactHint(line string) string {
	if i := strings.IndexAny(line, "=:"); i >= 0 {
		return line[:i]
	}
	return line
}
