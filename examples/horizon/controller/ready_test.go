package controller_test

import (
	"context"
	"testing"

	"github.com/c5c3/reconciler-sdk/examples/horizon/controller"
)

// A minimal Horizon reaches Ready once its store is ready and ESO synced the key (both played by a
// testenv/world), with
// every sub-condition True and status.endpoint and status.configMap published.
func TestHorizonReachesReady(t *testing.T) {
	ns := env.Namespace(t)
	startOperator(t, ns, operatorOptions{})
	h := newHorizon(ns, "dashboard")
	if err := env.Client.Create(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	waitReady(t, h, newWorld(env.Client, "first-key"))
	if err := env.Client.Get(context.Background(), clientKey(h), h); err != nil {
		t.Fatal(err)
	}
	if h.Status.Endpoint != controller.Endpoint(h) || h.Status.ConfigMap == "" {
		t.Fatalf("status = %+v", h.Status)
	}
}
