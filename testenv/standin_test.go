package testenv_test

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/c5c3/reconciler-sdk/testenv"
)

// got is what a GET of url answered.
type got struct {
	Status      int
	ContentType string
	Body        string
}

func get(t *testing.T, url string) got {
	t.Helper()
	resp, err := http.Get(url) //nolint:gosec,noctx // the test's own loopback server
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return got{resp.StatusCode, resp.Header.Get("Content-Type"), string(body)}
}

// A StandIn answers every path with its current answer, switches on Answer, returns to
// its first answer on Reset and refuses connections once closed.
func TestStandIn(t *testing.T) {
	page := testenv.Answer{ContentType: "text/html", Body: "<form></form>"}
	s := testenv.NewStandIn(t, page)
	if d := cmp.Diff(got{200, "text/html", "<form></form>"}, get(t, s.URL("/auth/login/"))); d != "" {
		t.Errorf("first answer (-want +got):\n%s", d)
	}
	s.Answer(testenv.StatusAnswer(http.StatusInternalServerError))
	if d := cmp.Diff(got{500, "", ""}, get(t, s.URL("/other"))); d != "" {
		t.Errorf("status answer (-want +got):\n%s", d)
	}
	s.Reset()
	if d := cmp.Diff(got{200, "text/html", "<form></form>"}, get(t, s.URL("/"))); d != "" {
		t.Errorf("after Reset (-want +got):\n%s", d)
	}
	if u := s.ProbeURL("", "/v3"); u != "" {
		t.Errorf("ProbeURL without an endpoint = %q, want none", u)
	}
	if u := s.ProbeURL("http://svc:5000", "/v3"); u != s.URL("/v3") || !strings.HasPrefix(u, "http://127.0.0.1:") {
		t.Errorf("ProbeURL = %q, want %q on loopback", u, s.URL("/v3"))
	}
	s.Close()
	if resp, err := http.Get(s.URL("/")); err == nil { //nolint:gosec,noctx // the test's own loopback server
		_ = resp.Body.Close()
		t.Error("a closed StandIn still answers")
	}
}

// ReadSample reads a manifest strictly: a field the type does not know is an error
// naming the file.
func TestReadSample(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(good, []byte("metadata: {name: app}\nspec: {type: ClusterIP}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("metadata: {name: app}\nspec: {tpye: ClusterIP}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	svc := testenv.ReadSample(t, good, &corev1.Service{})
	if svc.Name != "app" || svc.Spec.Type != corev1.ServiceTypeClusterIP {
		t.Errorf("ReadSample = %+v, want app of type ClusterIP", svc)
	}
	missing := filepath.Join(dir, "missing.yaml")
	for path, want := range map[string][]string{
		bad:     {"sample " + bad + ": ", `unknown field "tpye"`},
		missing: {"reading sample: open " + missing},
	} {
		err := testenv.ReadSampleError(path, &corev1.Service{})
		for _, w := range want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: err = %v, want it to say %q", filepath.Base(path), err, w)
			}
		}
	}
}
