package testenv_test

import (
	"context"
	"errors"
	"fmt"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/testenv"
)

// ExampleEnv_KubeconfigSecret builds the Secret that registers a control plane with
// the multicluster-runtime kubeconfig provider and reaches the control plane through
// the kubeconfig it carries, as the provider does. env is the package's *Env from
// TestMain; in a two-cluster test the Secret is the target's, created on the
// management env (Env.RegisterTarget does both and deletes the Secret when the test
// ends).
func ExampleEnv_KubeconfigSecret() {
	secret, err := env.KubeconfigSecret("multicluster-system", "east")
	if err != nil {
		panic(err)
	}
	fmt.Println("Secret:", secret.Namespace+"/"+secret.Name)
	fmt.Println("label:", testenv.KubeconfigSecretLabel+"="+secret.Labels[testenv.KubeconfigSecretLabel])

	cfg, err := clientcmd.RESTConfigFromKubeConfig(secret.Data[testenv.KubeconfigSecretKey])
	if err != nil {
		panic(err)
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		panic(err)
	}
	ns := &corev1.Namespace{}
	if err := c.Get(context.Background(), client.ObjectKey{Name: "default"}, ns); err != nil {
		panic(err)
	}
	fmt.Println("reached namespace:", ns.Name)
	// Output:
	// Secret: multicluster-system/east
	// label: sigs.k8s.io/multicluster-runtime-kubeconfig=true
	// reached namespace: default
}

// Example_targetCluster starts a target control plane next to the package's env (the
// management control plane from TestMain), registers it under the name "east" for a
// kubeconfig provider watching the namespace "multicluster-system", and simulates an
// outage of the target. Without the upstream CRDs (CRDSources empty) the target starts
// faster. In a test, targetEnv.RegisterTarget(t, env, "multicluster-system", "east")
// replaces the Namespace and Secret creation and deletes the Secret when the test ends.
func Example_targetCluster() {
	ctx := context.Background()
	targetEnv, err := testenv.Start(testenv.Options{CRDSources: []testenv.CRDSource{}})
	if err != nil {
		panic(err)
	}
	defer func() { _ = targetEnv.Stop() }()

	secret, err := targetEnv.KubeconfigSecret("multicluster-system", "east")
	if err != nil {
		panic(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: secret.Namespace}}
	if err := env.Client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		panic(err)
	}
	if err := env.Client.Create(ctx, secret); err != nil {
		panic(err)
	}
	defer func() { _ = env.Client.Delete(ctx, secret) }()
	// ... here the operator's multicluster manager runs on env.Config with
	// kubeconfig.New(kubeconfig.Options{Namespace: "multicluster-system"}) and writes
	// the children of a CR whose targetClusterRef names "east" to the target ...

	child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "child", Namespace: "default"}}
	if err := targetEnv.Client.Create(ctx, child); err != nil {
		panic(err)
	}
	if err := targetEnv.StopAPIServer(); err != nil { // "east" no longer answers
		panic(err)
	}
	err = targetEnv.Client.Get(ctx, client.ObjectKeyFromObject(child), &corev1.ConfigMap{})
	fmt.Println("during the outage, connection refused:", errors.Is(err, syscall.ECONNREFUSED))
	if err := targetEnv.RestartAPIServer(); err != nil { // same address, certificates, data
		panic(err)
	}
	got := &corev1.ConfigMap{}
	if err := targetEnv.Client.Get(ctx, client.ObjectKeyFromObject(child), got); err != nil {
		panic(err)
	}
	fmt.Println("after the restart, same child:", got.UID == child.UID)
	// Output:
	// during the outage, connection refused: true
	// after the restart, same child: true
}
