package identitybackend_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"

	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/identitybackend"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keystoneapi/keystonetest"
	"github.com/c5c3/reconciler-sdk/examples/keystone/names"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/outbound"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/testenv"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

// fieldManager is the Keystone operator's field manager.
const fieldManager = "keystone-operator"

// adminPassword is the admin password the stand-in accepts; bindPassword the LDAP
// bind password of the tests' backends. Neither may reach a log, an event, a condition
// or an error.
const (
	adminPassword = "Adm1n-pa$$word"
	bindPassword  = "B1nd-$ecret"
)

// poll is the backend controller's requeue interval in the tests.
const poll = 200 * time.Millisecond

// operator is the KeystoneIdentityBackend controller running against env, and the
// stand-in of the Keystone API it reaches.
type operator struct {
	resolver *multicluster.ClusterResolver
	keystone *keystonetest.Server
	// local is the management cluster's Applier, the step's client.
	local client.Client
	// opts are the options the controller runs with.
	opts identitybackend.Options
}

// startOperator runs the controller for namespace ns until the test ends; every
// Keystone's API is the stand-in.
func startOperator(t *testing.T, ns string) *operator {
	t.Helper()
	return startManager(t, ns, true)
}

// startManager runs the manager of the operator for namespace ns until the test ends,
// with the KeystoneIdentityBackend controller when withController is set.
func startManager(t *testing.T, ns string, withController bool) *operator {
	t.Helper()
	return startManagerWith(t, ns, "", withController, nil)
}

// startManagerWith is startManager with target clusters registered in clustersNS
// ("" none) and change applied to the options, after the tests' defaults: every
// Keystone of the management cluster is the stand-in (KeystoneURL), which listens on
// loopback (OutboundPolicy allows it).
func startManagerWith(t *testing.T, ns, clustersNS string, withController bool, change func(*identitybackend.Options, *keystonetest.Server)) *operator {
	t.Helper()
	ks := keystonetest.New("admin", adminPassword)
	t.Cleanup(ks.Close)
	opts := identitybackend.DefaultOptions()
	opts.PollInterval = poll
	opts.KeystoneURL = func(*v1alpha1.Keystone) string { return ks.URL }
	opts.OutboundPolicy = outbound.Policy{AllowCIDRs: outbound.LoopbackPrefixes}
	if change != nil {
		change(&opts, ks)
	}
	var operatorOpts testenv.OperatorOptions
	operatorOpts.FieldManager, operatorOpts.Namespace, operatorOpts.Manager.Logger = fieldManager, ns, ctrl.Log
	operatorOpts.ClustersNamespace = clustersNS
	op := env.StartOperator(t, operatorOpts, func(ctx context.Context, mgr mcmanager.Manager, resolver *multicluster.ClusterResolver) error {
		rec, err := identitybackend.NewReconciler(resolver, opts)
		if err != nil || !withController {
			return err
		}
		return rec.SetupWithManager(ctx, mgr)
	})
	return &operator{resolver: op.Resolver, keystone: ks, local: op.Resolver.Local().Client, opts: opts}
}

// newKeystone creates a Keystone in ns; a non-empty endpoint is written to its status.
func newKeystone(t *testing.T, ns, name, endpoint string) *v1alpha1.Keystone {
	t.Helper()
	k := &v1alpha1.Keystone{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.KeystoneSpec{
			Image:     "registry.example/keystone:2025.1",
			Database:  v1alpha1.DatabaseSpec{MariaDBRef: v1alpha1.MariaDBRef{Name: "mariadb"}},
			Bootstrap: v1alpha1.BootstrapSpec{AdminPassword: v1alpha1.RemoteKeySpec{RemoteKey: "openstack/keystone/admin"}},
		},
	}
	if err := env.Client.Create(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	if endpoint != "" {
		setEndpoint(t, k, endpoint)
	}
	return k
}

// setEndpoint writes status.endpoint, as the Keystone's Deployment row does.
func setEndpoint(t *testing.T, k *v1alpha1.Keystone, endpoint string) {
	t.Helper()
	k.Status.Endpoint = endpoint
	if err := env.Client.Status().Update(context.Background(), k); err != nil {
		t.Fatal(err)
	}
}

// newSecret creates a Secret with one key.
func newSecret(t *testing.T, ns, name, key, value string) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Data: map[string][]byte{key: []byte(value)}}
	if err := env.Client.Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	return s
}

// newAdminSecret creates the Keystone's admin password Secret, as ESO syncs it.
func newAdminSecret(t *testing.T, k *v1alpha1.Keystone, password string) *corev1.Secret {
	t.Helper()
	return newSecret(t, k.Namespace, names.AdminPasswordSecretName(k), "password", password)
}

// newBackend creates an LDAP backend of k for domain; a non-empty secret sets
// passwordSecretRef to its key "password".
func newBackend(t *testing.T, k *v1alpha1.Keystone, name, domain, secret string) *v1alpha1.KeystoneIdentityBackend {
	t.Helper()
	b := &v1alpha1.KeystoneIdentityBackend{
		ObjectMeta: metav1.ObjectMeta{Namespace: k.Namespace, Name: name},
		Spec: v1alpha1.KeystoneIdentityBackendSpec{
			KeystoneRef: v1alpha1.LocalObjectReference{Name: k.Name},
			Domain:      domain,
			Description: "users of " + domain,
			Config: map[string]map[string]string{"ldap": {
				"url": "ldaps://ldap." + domain + ".example", "user": "cn=keystone,dc=" + domain, "suffix": "dc=" + domain}},
		},
	}
	if secret != "" {
		b.Spec.PasswordSecretRef = &v1alpha1.SecretKeyRef{Name: secret, Key: "password"}
	}
	if err := env.Client.Create(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	return b
}

// expectReason waits until obj's condType has status and reason for its current
// generation, and returns the condition.
func expectReason(t *testing.T, obj client.Object, condType string, status metav1.ConditionStatus, reason string) metav1.Condition {
	t.Helper()
	var got metav1.Condition
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 20*time.Second, true,
		func(ctx context.Context) (bool, error) {
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
				return false, nil
			}
			c := meta.FindStatusCondition(*conditionsOf(obj), condType)
			if c == nil || c.ObservedGeneration != obj.GetGeneration() {
				return false, nil
			}
			got = *c
			return c.Status == status && c.Reason == reason, nil
		})
	if err != nil {
		t.Fatalf("%s %s: want %s=%s/%s, have %s", obj.GetObjectKind().GroupVersionKind().Kind, client.ObjectKeyFromObject(obj),
			condType, status, reason, testenv.DescribeConditions(obj.GetGeneration(), *conditionsOf(obj)))
	}
	noSecretIn(t, got.Message)
	return got
}

func conditionsOf(obj client.Object) *[]metav1.Condition {
	return obj.(reconcile.Object).Conditions()
}

// noSecretIn fails when text carries the admin or the bind password.
func noSecretIn(t *testing.T, text string) {
	t.Helper()
	for _, s := range []string{adminPassword, bindPassword, strings.ReplaceAll(bindPassword, "$", "$$")} {
		if strings.Contains(text, s) {
			t.Fatalf("%q carries a password", text)
		}
	}
}

// newDeployment creates the Keystone's Deployment mounting secret on the domains
// volume, as the Keystone's Deployment row does; with secret "" it mounts none.
func newDeployment(t *testing.T, k *v1alpha1.Keystone, secret string) *appsv1.Deployment {
	t.Helper()
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: k.Namespace, Name: k.Name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": k.Name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": k.Name}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "keystone", Image: k.Spec.Image}}},
			},
		},
	}
	mountDomains(d, secret)
	if err := env.Client.Create(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	return d
}

// mountDomains points d's domains volume at secret ("" removes it).
func mountDomains(d *appsv1.Deployment, secret string) {
	d.Spec.Template.Spec.Volumes = nil
	if secret != "" {
		d.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: identitybackend.DomainsVolumeName,
			VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret}}}}
	}
}

// remount moves the Deployment to secret, as a new pod template.
func remount(t *testing.T, d *appsv1.Deployment, secret string) {
	t.Helper()
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(d), d); err != nil {
		t.Fatal(err)
	}
	mountDomains(d, secret)
	if err := env.Client.Update(context.Background(), d); err != nil {
		t.Fatal(err)
	}
}

// markAvailable finishes d's rollout.
func markAvailable(t *testing.T, d *appsv1.Deployment) {
	t.Helper()
	if _, err := simulate.MarkDeploymentAvailable(context.Background(), env.Client, client.ObjectKeyFromObject(d)); err != nil {
		t.Fatal(err)
	}
}

// deleteSeen deletes obj and waits until the operator's cache no longer holds it, as
// the step would see it on the pass the deletion's watch event starts.
func (o *operator) deleteSeen(t *testing.T, obj client.Object) {
	t.Helper()
	ctx := context.Background()
	if err := env.Client.Delete(ctx, obj); err != nil {
		t.Fatal(err)
	}
	probe := obj.DeepCopyObject().(client.Object)
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 20*time.Second, true,
		func(ctx context.Context) (bool, error) {
			err := o.local.Get(ctx, client.ObjectKeyFromObject(obj), probe)
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			return false, client.IgnoreNotFound(err)
		})
	if err != nil {
		t.Fatalf("%T %s still in the operator's cache after its deletion: %v", obj, client.ObjectKeyFromObject(obj), err)
	}
}

// runStep runs the IdentityBackends row once for the Keystone at k's key, as a pass of
// the Keystone controller does (on the management cluster as its target), and returns
// the domains Secret it projected into ("" when none) and its error.
func (o *operator) runStep(t *testing.T, k *v1alpha1.Keystone) (string, error) {
	t.Helper()
	ctx := multicluster.WithTarget(context.Background(), o.resolver.Local())
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(k), k); err != nil {
		t.Fatal(err)
	}
	o.cacheCaughtUp(t, k)
	res, err := identitybackend.NewStep(o.local).Reconcile(ctx, k)
	if !res.IsZero() {
		t.Fatalf("the step returned %+v: it never ends the pass with a requeue", res)
	}
	c := meta.FindStatusCondition(k.Status.Conditions, identitybackend.ConditionIdentityBackendsReady)
	if c == nil {
		t.Fatal("the step set no IdentityBackendsReady")
	}
	noSecretIn(t, c.Message)
	if err != nil {
		noSecretIn(t, err.Error())
		return "", err
	}
	return domainsSecret(t, k), nil
}

// cacheCaughtUp waits until the step's reader (the manager's cache) holds every
// KeystoneIdentityBackend of k's namespace as the API server has it (same
// resourceVersion), so that a step run right after a status change a test waited for
// sees that change, not an older one.
func (o *operator) cacheCaughtUp(t *testing.T, k *v1alpha1.Keystone) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		var live, cached v1alpha1.KeystoneIdentityBackendList
		if err := env.Client.List(ctx, &live, client.InNamespace(k.Namespace)); err != nil {
			return false, err
		}
		if err := o.local.List(ctx, &cached, client.InNamespace(k.Namespace)); err != nil {
			return false, err
		}
		seen := map[string]string{}
		for _, b := range cached.Items {
			seen[b.Name] = b.ResourceVersion
		}
		for _, b := range live.Items {
			if seen[b.Name] != b.ResourceVersion {
				return false, nil
			}
		}
		return len(seen) == len(live.Items), nil
	})
	if err != nil {
		t.Fatalf("the cache did not catch up with the KeystoneIdentityBackends of %s: %v", k.Namespace, err)
	}
}

// domainsSecret returns the name of the newest domains Secret of k, or "".
func domainsSecret(t *testing.T, k *v1alpha1.Keystone) string {
	t.Helper()
	c := meta.FindStatusCondition(k.Status.Conditions, identitybackend.ConditionIdentityBackendsReady)
	if c == nil || c.Reason != identitybackend.ReasonIdentityBackendsProjected && c.Reason != identitybackend.ReasonIdentityBackendConflict {
		return ""
	}
	_, rest, ok := strings.Cut(c.Message, "projected into Secret ")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, ";")
	return name
}

// secretData reads the Secret ns/name.
func secretData(t *testing.T, ns, name string) map[string][]byte {
	t.Helper()
	var s corev1.Secret
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &s); err != nil {
		t.Fatal(err)
	}
	return s.Data
}

// keys lists a map's keys in order, for messages.
func keys(m map[string][]byte) string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return fmt.Sprint(out)
}
