package keystone_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keystone"
	"github.com/c5c3/reconciler-sdk/health"
	"github.com/c5c3/reconciler-sdk/outbound"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// The HealthCheck step judges the version document: a v3 document is healthy, another
// version or a body that is not one is unhealthy, and the transport's failures have the
// reasons of package health.
func TestReasonsHealthCheck(t *testing.T) {
	doc := testenv.NewStandIn(t, versionDocument)
	closed := testenv.NewStandIn(t, versionDocument)
	closed.Close()
	po := health.DefaultOptions()
	po.Validate = keystone.VersionDocumentValid
	po.Timeout = 300 * time.Millisecond
	po.Outbound = outbound.Policy{AllowCIDRs: outbound.LoopbackPrefixes} // the stand-ins listen on loopback
	opts := defaultOptions()
	opts.Prober = health.NewProber(po)
	url := map[string]string{}
	opts.ProbeURL = func(k *v1alpha1.Keystone) string { return url[string(k.UID)] }
	rec := newStepReconciler(t, opts)
	for _, tc := range []struct {
		name    string
		answer  testenv.Answer
		url     string
		status  metav1.ConditionStatus
		reason  string
		message string
	}{
		{"v3", versionDocument, doc.URL("/v3"), metav1.ConditionTrue, health.ReasonHealthy, "200"},
		{"v2 document", v2Document, doc.URL("/v3"), metav1.ConditionFalse, "APIUnhealthy", `version.id "v2.0"`},
		{"server error", testenv.StatusAnswer(http.StatusInternalServerError), doc.URL("/v3"), metav1.ConditionFalse, "HealthCheckFailed", "500"},
		{"no endpoint yet", versionDocument, "", metav1.ConditionFalse, "EndpointNotReady", ""},
		{"refused", versionDocument, closed.URL("/v3"), metav1.ConditionFalse, "ConnectionFailed", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc.Answer(tc.answer)
			k := newKeystone("ns", "keystone")
			k.UID = types.UID("uid-" + strings.ReplaceAll(tc.name, " ", "-"))
			url[string(k.UID)] = tc.url
			res, err := keystone.RunStep(context.Background(), rec, "HealthCheck", stepTarget(env.Client), k, "")
			if err != nil && !res.IsZero() {
				t.Fatalf("result %+v with error %v", res, err)
			}
			c := meta.FindStatusCondition(k.Status.Conditions, keystone.ConditionKeystoneAPIReady)
			if c == nil || c.Status != tc.status || c.Reason != tc.reason || !strings.Contains(c.Message, tc.message) {
				t.Fatalf("KeystoneAPIReady = %+v, want %s/%s with %q", c, tc.status, tc.reason, tc.message)
			}
		})
	}
}

// VersionDocumentValid accepts Keystone's v3 version document and nothing else.
func TestVersionDocumentValid(t *testing.T) {
	for body, ok := range map[string]bool{
		`{"version": {"id": "v3.14", "status": "stable"}}`: true,
		`{"version": {"id": "v2.0"}}`:                      false,
		`{"versions": {"values": []}}`:                     false,
		`<html>It works!</html>`:                           false,
	} {
		if err := keystone.VersionDocumentValid(200, nil, []byte(body)); (err == nil) != ok {
			t.Errorf("%s: err = %v, want ok %v", body, err, ok)
		}
	}
}
