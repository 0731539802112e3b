package controller_test

import (
	"context"
	"testing"

	"github.com/c5c3/reconciler-sdk/examples/horizon/controller"
)

// A minimal Horizon reaches Ready once its store is ready and ESO synced the key, with
// every sub-condition True and status.endpoint and status.configMap published.
func TestHorizonReachesReady(t *testing.T) {
	ns := env.Namespace(t)
	startOperator(t, ns, operatorOptions{})
	storeReady(t)
	h := newHorizon(ns, "dashboard")
	if err := env.Client.Create(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	syncKey(t, h, "first-key")
	waitReady(t, h)
	if err := env.Client.Get(context.Background(), clientKey(h), h); err != nil {
		t.Fatal(err)
	}
	if h.Status.Endpoint != controller.Endpoint(h) || h.Status.ConfigMap == "" {
		t.Fatalf("status = %+v", h.Status)
	}
}
