package testenv_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/c5c3/reconciler-sdk/testenv"
)

// ExampleStart starts a control plane without TestMain, e.g. for a demo or a tool.
// In tests prefer testenv.Main from TestMain so the package shares one control plane.
func ExampleStart() {
	e, err := testenv.Start(testenv.Options{
		CRDSources: []testenv.CRDSource{}, // no upstream CRDs: faster start
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = e.Stop() }()

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: "default"}}
	if err := e.Client.Create(context.Background(), cm); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("created", cm.Namespace+"/"+cm.Name, "uid set:", cm.UID != "")
	// Output: created default/hello uid set: true
}
