package katalog

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const externalCallsKatalog = `
apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: calls}
spec:
  crds:
    gadget:
      apiTypes: {group: platform.io, version: v1alpha1, kind: Gadget, plural: gadgets}
      operatorBox:
        onReconcile:
          external:
            - name: skipped
              url: "{{ .spec.url }}/skipped"
              when: [{field: spec.enabled, equals: "true"}]
            - name: first
              url: "{{ .spec.url }}/first"
              method: POST
              headers: {X-Owner: "{{ .metadata.name }}"}
              body: '{"image": "{{ .spec.image }}"}'
            - name: second
              url: "{{ .spec.url }}/second/{{ .external.first.body }}"
              anyOf:
                - {field: external.first.status, equals: "201"}
                - {field: external.skipped.called, equals: "true"}
            - name: missing
              url: "{{ .spec.url }}/missing"
              expectedStatus: 200
              continueOnError: true
            - name: never
              url: "{{ .spec.url }}/never"
              when: [{field: external.missing.status, equals: "200"}]
`

// TestExternalCalls: calls run in order, each seeing the results of those before it
// (.external.<name>.status, body, error, called); a call whose when or anyOf conditions
// do not hold is not made and records called "false"; method, headers and body are
// rendered; an unexpected status with continueOnError is recorded and the group goes on.
func TestExternalCalls(t *testing.T) {
	var (
		mu   sync.Mutex
		seen []string
	)
	requests := func() []string { mu.Lock(); defer mu.Unlock(); return seen }
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Path+" "+r.Header.Get("X-Owner")+" "+string(b))
		mu.Unlock()
		switch {
		case r.URL.Path == "/first":
			w.WriteHeader(http.StatusCreated)
			_, _ = io.WriteString(w, "ticket-7")
		case strings.HasPrefix(r.URL.Path, "/second/"):
			_, _ = io.WriteString(w, "ok")
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	t.Cleanup(srv.Close)
	k := mustParse(t, "calls.yaml", externalCallsKatalog)
	e := &Engine{opts: testOptions()}
	cr := newObject("Gadget", "ns", "shop", map[string]any{"url": srv.URL, "image": "nginx", "enabled": false})
	d := newPassData(cr)
	if err := e.runExternal(context.Background(), k.Spec.CRDs["gadget"].OperatorBox.OnReconcile.External, d); err != nil {
		t.Fatalf("runExternal: %v", err)
	}
	wantSeen := []string{`POST /first shop {"image": "nginx"}`, "GET /second/ticket-7  ", "GET /missing  "}
	if diff := cmp.Diff(wantSeen, requests()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	got := d["external"].(map[string]any)
	missing, _ := got["missing"].(map[string]any)
	if missing["error"] != "unexpected status: expected 200" {
		t.Errorf(".external.missing.error = %q, want it to say the status was not the expected 200", missing["error"])
	}
	missing["error"] = "(checked)"
	want := map[string]any{
		"skipped": map[string]any{"called": "false"},
		"first":   map[string]any{"called": "true", "status": "201", "body": "ticket-7", "error": ""},
		"second":  map[string]any{"called": "true", "status": "200", "body": "ok", "error": ""},
		"missing": map[string]any{"called": "true", "status": "404", "body": "", "error": "(checked)"},
		"never":   map[string]any{"called": "false"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf(".external (-want +got):\n%s", diff)
	}

	// Without continueOnError the first unexpected answer ends the group.
	k.Spec.CRDs["gadget"].OperatorBox.OnReconcile.External[3].ContinueOnError = false
	d = newPassData(cr)
	err := e.runExternal(context.Background(), k.Spec.CRDs["gadget"].OperatorBox.OnReconcile.External, d)
	if !errors.Is(err, ErrExternalCall) || !strings.Contains(err.Error(), "missing") {
		t.Errorf("runExternal = %v, want ErrExternalCall naming the call missing", err)
	}
	if _, made := d["external"].(map[string]any)["never"]; made {
		t.Error("a call after the failed one was evaluated")
	}
}
