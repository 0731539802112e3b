package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestDemo runs the demo as `make katalog-demo KATALOG_DEMO_FLAGS=-exit-when-ready`
// does, against envtest with real controllers (the Deployments roll out on kwok's node):
// it must succeed, show each sample's Ready condition and phase as they reach Ready, print the inspector's URL and write
// the engine's log. Without the envtest binaries it fails (testenv.Start says how to
// get them).
func TestDemo(t *testing.T) {
	var out bytes.Buffer
	o := defaultOptions()
	o.Out = &out
	o.InspectorAddress = "127.0.0.1:0"
	o.ExitWhenReady = true
	o.Timeout = 2 * time.Minute
	o.LogDir = t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	if err := run(ctx, o); err != nil {
		t.Fatalf("demo failed: %v\noutput:\n%s", err, out.String())
	}
	got := out.String()
	for _, want := range []string{
		`Running Katalog platform \(platform\.yaml\): application`,
		`Running Katalog databases \(database\.yaml\): database`,
		`Running Katalog regional \(foreach\.yaml\): regionalapp`,
		`Inspector: http://127\.0\.0\.1:\d+/controlcenter/`,
		`Applied Application demo/shop`,
		`Applied RegionalApp demo/edge`,
		`Database +shop +phase Ready +Ready True Reconciled`,
		`Application +shop +phase Ready +Ready True Reconciled`,
		`RegionalApp +edge +phase Ready +Ready True Reconciled`,
		`✓ every sample is Ready after [\d.]+ s`,
		`Inspect them at http://127\.0\.0\.1:\d+/controlcenter/ \(the engine's log: ` + regexp.QuoteMeta(filepath.Join(o.LogDir, "katalog.log")) + `\)`,
	} {
		if !regexp.MustCompile(want).MatchString(got) {
			t.Errorf("the output lacks %q", want)
		}
	}
	logged, err := os.ReadFile(filepath.Join(o.LogDir, "katalog.log"))
	if err != nil {
		t.Fatal(err)
	}
	if len(logged) == 0 {
		t.Error("the engine's log is empty")
	}
	if t.Failed() {
		t.Logf("output:\n%s", got)
	}
}

// The timeout names the first sample that is not Ready, its condition and its phase.
func TestStuckErrorNamesTheSample(t *testing.T) {
	ready := &metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Reconciled", Message: "ok"}
	failed := &metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse, Reason: "ReconcileFailed",
		Message: "onCreate: external call failed: registry-check: unexpected status: expected 200"}
	states := []state{
		{kind: "Database", name: "shop", ready: ready, phase: "Ready"},
		{kind: "Application", name: "shop", ready: failed},
		{kind: "RegionalApp", name: "edge"},
	}
	err := stuckError(states, time.Minute)
	want := "timed out after 1m0s: Application demo/shop Ready is False, reason ReconcileFailed: " +
		"onCreate: external call failed: registry-check: unexpected status: expected 200; status.phase (none)"
	if !errors.Is(err, errTimeout) || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
	err = stuckError(states[2:], time.Minute)
	if want := "timed out after 1m0s: RegionalApp demo/edge has no Ready condition; status.phase (none)"; err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
	// Ready True without the phase is not done: the Application's Deployment may not have rolled out.
	states[1].ready = ready
	if s := firstPending(states[:2]); s == nil || s.kind != "Application" {
		t.Errorf("firstPending = %+v, want the Application without phase Ready", s)
	}
}
