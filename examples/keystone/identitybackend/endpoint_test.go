package identitybackend_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/identitybackend"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keystoneapi/keystonetest"
	"github.com/c5c3/reconciler-sdk/examples/keystone/names"
)

// trap is a server whoever may write keystones/status points status.endpoint at: it
// records every request, and answers like Keystone would, so a client that reached it
// would go on sending.
type trap struct {
	*httptest.Server
	mu       sync.Mutex
	requests []string
}

func newTrap(t *testing.T) *trap {
	t.Helper()
	tr := &trap{}
	tr.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		tr.mu.Lock()
		tr.requests = append(tr.requests, fmt.Sprintf("%s %s %s", r.Method, r.URL.Path, body))
		tr.mu.Unlock()
		w.Header().Set("X-Subject-Token", "trapped")
		w.WriteHeader(http.StatusCreated)
	}))
	t.Cleanup(tr.Close)
	return tr
}

// expectUntouched fails when the trap got a request (the admin password, in the
// authentication's body).
func (tr *trap) expectUntouched(t *testing.T) {
	t.Helper()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if len(tr.requests) != 0 {
		t.Fatalf("status.endpoint was used as the Keystone API: it got %d requests (admin password sent: %v)",
			len(tr.requests), strings.Contains(strings.Join(tr.requests, "\n"), adminPassword))
	}
}

// newService creates the Service named like k in its namespace, controlled by k when
// owned is set (as the Keystone's Deployment row makes it), or someone else's.
func newService(t *testing.T, k *v1alpha1.Keystone, owned bool) {
	t.Helper()
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: k.Namespace, Name: k.Name},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "api", Port: names.ServicePort}}},
	}
	if owned {
		if err := apply.SetOwnership(env.Client, env.Scheme, k, svc); err != nil {
			t.Fatal(err)
		}
	}
	if err := env.Client.Create(context.Background(), svc); err != nil {
		t.Fatal(err)
	}
}

// The backend of a Keystone on the operator's cluster sends the admin password to the
// Keystone's own Service, whose URL it computes from the Keystone's name and
// namespace, never to status.endpoint, which whoever may write keystones/status
// controls; and not even there while the Service of that name is not controlled by the
// Keystone. (The Service name resolves nowhere in the test: the message names it.)
func TestStatusEndpointIsNeverTheAddress(t *testing.T) {
	ns := env.Namespace(t)
	tr := newTrap(t)
	startManagerWith(t, ns, "", true, func(o *identitybackend.Options, _ *keystonetest.Server) {
		o.KeystoneURL = nil // the operator's default
	})

	foreign := newKeystone(t, ns, "foreign", tr.URL)
	newAdminSecret(t, foreign, adminPassword)
	newService(t, foreign, false)
	fb := newBackend(t, foreign, "foreign-ldap", "foreign", "")
	c := expectReason(t, fb, condDomain, metav1.ConditionFalse, identitybackend.ReasonWaitingForKeystone)
	if !strings.Contains(c.Message, "Service "+ns+"/foreign is not controlled by Keystone") {
		t.Fatalf("DomainReady message %q does not say the Service is not the Keystone's", c.Message)
	}

	k := newKeystone(t, ns, "keystone", tr.URL)
	newAdminSecret(t, k, adminPassword)
	b := newBackend(t, k, "corp-ldap", "corp", "")
	c = expectReason(t, b, condDomain, metav1.ConditionFalse, identitybackend.ReasonWaitingForKeystone)
	if !strings.Contains(c.Message, "has no Service") {
		t.Fatalf("DomainReady message %q", c.Message)
	}
	newService(t, k, true)
	c = expectReason(t, b, condDomain, metav1.ConditionFalse, identitybackend.ReasonKeystoneUnreachable)
	if want := "Keystone API at http://keystone." + ns + ".svc:5000:"; !strings.Contains(c.Message, want) {
		t.Fatalf("DomainReady message %q does not name %s", c.Message, want)
	}
	tr.expectUntouched(t)
}

// The backend of a Keystone on a target cluster is refused (ExternalEndpointRequired)
// until the Keystone names spec.externalEndpoint: its Service URL would resolve on the
// operator's own cluster, and status.endpoint is not an address. Then the domain is
// created through the external endpoint, over TLS, and status.endpoint is still
// never used.
func TestTargetClusterNeedsExternalEndpoint(t *testing.T) {
	ns, clustersNS := env.Namespace(t), env.Namespace(t)
	tr := newTrap(t)
	remote := keystonetest.NewTLS("admin", adminPassword)
	t.Cleanup(remote.Close)
	startManagerWith(t, ns, clustersNS, true, func(o *identitybackend.Options, _ *keystonetest.Server) {
		o.Transport = remote.Client().Transport.(*http.Transport) // trusts the stand-in's certificate
	})
	env.RegisterTarget(t, env, clustersNS, "edge", ns) // this control plane is its own target, for ns

	k := &v1alpha1.Keystone{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "remote"},
		Spec: v1alpha1.KeystoneSpec{
			Image:            "registry.example/keystone:2025.1",
			Database:         v1alpha1.DatabaseSpec{MariaDBRef: v1alpha1.MariaDBRef{Name: "mariadb"}},
			Bootstrap:        v1alpha1.BootstrapSpec{AdminPassword: v1alpha1.RemoteKeySpec{RemoteKey: "openstack/keystone/admin"}},
			TargetClusterRef: &commonv1.TargetClusterRefSpec{Name: "edge"},
		},
	}
	ctx := context.Background()
	if err := env.Client.Create(ctx, k); err != nil {
		t.Fatal(err)
	}
	setEndpoint(t, k, tr.URL)
	newAdminSecret(t, k, adminPassword) // on the target cluster, which is this one
	b := newBackend(t, k, "corp-ldap", "corp", "")
	c := expectReason(t, b, condDomain, metav1.ConditionFalse, identitybackend.ReasonExternalEndpointRequired)
	for _, want := range []string{"Keystone " + ns + "/remote runs on target cluster edge", "spec.externalEndpoint"} {
		if !strings.Contains(c.Message, want) {
			t.Fatalf("DomainReady message %q does not say %q", c.Message, want)
		}
	}
	tr.expectUntouched(t)

	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(k), k); err != nil {
		t.Fatal(err)
	}
	k.Spec.ExternalEndpoint = remote.URL + "/v3"
	if err := env.Client.Update(ctx, k); err != nil {
		t.Fatal(err)
	}
	expectReason(t, b, condDomain, metav1.ConditionTrue, identitybackend.ReasonDomainCreated)
	if d, ok := remote.Domain("corp"); !ok || b.Status.DomainID != d.ID {
		t.Fatalf("domain %+v in the external Keystone, status.domainID %q", d, b.Status.DomainID)
	}
	tr.expectUntouched(t)
}

// The operator's default outbound policy refuses a Keystone API on loopback (the
// operator's own pod) before the admin password leaves: DomainReady says so.
func TestOutboundPolicyRefusesLoopback(t *testing.T) {
	ns := env.Namespace(t)
	op := startManagerWith(t, ns, "", true, func(o *identitybackend.Options, _ *keystonetest.Server) {
		o.OutboundPolicy = identitybackend.DefaultOptions().OutboundPolicy
	})
	k := newKeystone(t, ns, "keystone", "http://keystone:5000")
	newAdminSecret(t, k, adminPassword)
	b := newBackend(t, k, "corp-ldap", "corp", "")
	c := expectReason(t, b, condDomain, metav1.ConditionFalse, identitybackend.ReasonKeystoneUnreachable)
	if !strings.Contains(c.Message, "loopback addresses are not allowed by the outbound policy") {
		t.Fatalf("DomainReady message %q does not name the refusal", c.Message)
	}
	if n := op.keystone.Calls("POST /v3/auth/tokens"); n != 0 {
		t.Fatalf("the stand-in on loopback got %d authentications", n)
	}
}
