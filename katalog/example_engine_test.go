package katalog_test

import (
	"fmt"
	"time"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/c5c3/reconciler-sdk/katalog"
)

// Run Katalogs on a manager: CacheOptions scopes the cache of each CRD with one allowed
// namespace (none here), NewEngine registers one controller per enabled CRD, and
// mgr.Start(ctrl.SetupSignalHandler()) runs them (left out here: it needs a cluster). In
// an operator the rest.Config comes from ctrl.GetConfigOrDie().
func ExampleNewEngine() {
	// katalog.LoadAll("platform.yaml", "database.yaml") in an operator.
	k, err := katalog.Parse("platform.yaml", []byte(exampleKatalog))
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg := &rest.Config{Host: "https://127.0.0.1:6443"}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Cache:   katalog.CacheOptions(cache.Options{}, k),
		Metrics: metricsserver.Options{BindAddress: "0"},
		// Only because go test -count runs this example more than once in one process.
		Controller: config.Controller{SkipNameValidation: new(true)},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	opts := katalog.DefaultEngineOptions()
	opts.FieldManager = "platform-operator"
	opts.DeletionPoll = 10 * time.Second
	eng, err := katalog.NewEngine(mgr, []*katalog.Katalog{k}, opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(eng.CRDs(), eng.FieldManager())
	// Output: [application database] platform-operator
}
