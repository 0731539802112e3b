package satellite_test

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/satellite"
)

// ExampleCollect shows the aggregation step of a parent: the satellites that name it
// come from an indexed List (here built by hand), and only those whose gate condition
// is True are rendered, in name order.
func ExampleCollect() {
	backend := func(name string, credentialsReady, isDefault bool) corev1.ConfigMap {
		cm := corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "openstack"}}
		cm.Data = map[string]string{"default": fmt.Sprint(isDefault)}
		if credentialsReady {
			cm.Annotations = map[string]string{"CredentialsReady": "True"}
		}
		return cm
	}
	// The List result of the satellites naming the parent, in the order the API
	// server returned them.
	list := corev1.ConfigMapList{Items: []corev1.ConfigMap{
		backend("swift", true, false),
		backend("ceph", true, true),
		backend("s3", false, false), // credentials Secret not there yet
	}}
	items := make([]*corev1.ConfigMap, 0, len(list.Items))
	for i := range list.Items {
		items = append(items, &list.Items[i])
	}

	c := satellite.Collect(satellite.CollectParams[corev1.ConfigMap, *corev1.ConfigMap]{
		Items:     items,
		Gate:      func(cm *corev1.ConfigMap) bool { return cm.Annotations["CredentialsReady"] == "True" },
		IsDefault: func(cm *corev1.ConfigMap) bool { return cm.Data["default"] == "true" },
	})
	for _, b := range c.Gated {
		fmt.Printf("[%s]\n", b.Name)
	}
	fmt.Println("attached:", len(c.Attached), "default:", c.DefaultCandidates[0].Name, "valid:", c.Valid)
	// Output:
	// [ceph]
	// [swift]
	// attached: 3 default: ceph valid: true
}

// ExampleSectionPresent shows the whole-line rule: a header inside an option value, or
// a longer section name, does not count.
func ExampleSectionPresent() {
	rendered := []byte("[DEFAULT]\r\nenabled_backends = ceph:rbd, [swift]\r\n[ceph2]\r\n[ceph]\r\nrbd_pool = images\r\n")
	fmt.Println(satellite.SectionPresent(rendered, "[ceph]"))
	fmt.Println(satellite.SectionPresent(rendered, "[swift]"))
	fmt.Println(satellite.SectionPresent(rendered, "[ceph2"))
	// Output:
	// true
	// false
	// false
}

// ExampleSecretNameForVolume shows how a satellite controller finds the Secret the
// parent's pods mount, for example to compare its name with the one it expects.
func ExampleSecretNameForVolume() {
	spec := &corev1.PodSpec{Volumes: []corev1.Volume{
		{Name: "policy", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "cinder-policy"}}}},
		{Name: "backup-config", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: "cinder-backup-swift"}}},
	}}
	fmt.Printf("%q\n", satellite.SecretNameForVolume(spec, "backup-config"))
	fmt.Printf("%q\n", satellite.SecretNameForVolume(spec, "policy"))
	// Output:
	// "cinder-backup-swift"
	// ""
}

// ExampleResolveParentChildren shows the first step of a satellite controller's pass:
// while the parent does not exist the gate is False and the pass requeues; once it
// does, the children client comes back and the controller goes on with its checks.
// The parent here is a ConfigMap; an operator passes its own kind.
func ExampleResolveParentChildren() {
	// env is the package's test control plane (a *testenv.Env), started in main_test.go by testenv.Main.
	ctx := context.Background()
	c := env.Client
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "example-"}}
	if err := c.Create(ctx, ns); err != nil {
		panic(err)
	}
	// The satellite's status.conditions and metadata.generation.
	var conditions []metav1.Condition
	params := func() satellite.ResolveParams {
		return satellite.ResolveParams{
			Client:                  c,
			Parent:                  &corev1.ConfigMap{},
			ParentKey:               client.ObjectKey{Namespace: ns.Name, Name: "glance"},
			ParentKind:              "Glance",
			Conditions:              &conditions,
			Generation:              1,
			GateConditionType:       "CredentialsReady",
			WaitingForParentReason:  "WaitingForParent",
			WaitingForParentMessage: `Glance "glance" does not exist`,
			RequeueAfter:            15 * time.Second,
		}
	}

	children, result, err := satellite.ResolveParentChildren(ctx, params())
	gate := meta.FindStatusCondition(conditions, "CredentialsReady")
	fmt.Println("children:", children != nil, "requeue:", result.RequeueAfter, "error:", err)
	fmt.Println(gate.Type, gate.Status, gate.Reason)

	if err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "glance", Namespace: ns.Name}}); err != nil {
		panic(err)
	}
	children, result, err = satellite.ResolveParentChildren(ctx, params())
	fmt.Println("children:", children != nil, "requeue:", result.RequeueAfter, "error:", err)
	// Output:
	// children: false requeue: 15s error: <nil>
	// CredentialsReady False WaitingForParent
	// children: true requeue: 0s error: <nil>
}

// ExampleSectionProjected shows the evidence a BarbicanSecretStore's controller sets
// ConfigProjected on: its section in the Secret the parent's Deployment mounts.
func ExampleSectionProjected() {
	// env is the package's test control plane (a *testenv.Env), started in main_test.go by testenv.Main.
	ctx := context.Background()
	c := env.Client
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "example-"}}
	if err := c.Create(ctx, ns); err != nil {
		panic(err)
	}
	labels := map[string]string{"app": "barbican"}
	objs := []client.Object{
		&corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "barbican-config-5f2c", Namespace: ns.Name},
			Data:       map[string][]byte{"barbican.conf": []byte("[DEFAULT]\n\n[secretstore:openbao]\nsecret_store_plugin = vault\n")},
		},
		&appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "barbican", Namespace: ns.Name},
			Spec: appsv1.DeploymentSpec{
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{
						Containers: []corev1.Container{{Name: "api", Image: "registry.example/barbican:1"}},
						Volumes: []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{
							Secret: &corev1.SecretVolumeSource{SecretName: "barbican-config-5f2c"}}}},
					},
				},
			},
		},
	}
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil {
			panic(err)
		}
	}

	for _, store := range []string{"openbao", "hsm"} {
		projected, err := satellite.SectionProjected(ctx, satellite.ObserveParams{
			Children:      c, // the children client ResolveParentChildren returned
			DeploymentKey: client.ObjectKey{Namespace: ns.Name, Name: "barbican"},
			VolumeName:    "config",
			SectionHeader: "[secretstore:" + store + "]",
			DataKey:       "barbican.conf",
		})
		fmt.Println(store, projected, err)
	}
	// Output:
	// openbao true <nil>
	// hsm false <nil>
}
