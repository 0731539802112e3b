package config_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/config"
	"github.com/c5c3/reconciler-sdk/testenv/faults"
)

// configWorld is a namespace with an owner, a stale object of base that nothing uses
// (the pass prunes it), and one that an old ReplicaSet still mounts (the pass keeps
// it).
type configWorld struct {
	k             kindUnderTest
	ns            string
	owner         *corev1.ConfigMap
	stale, inUse  string
	data          map[string]string
	current       string
	currentExists bool
}

func newConfigWorld(t *testing.T, k kindUnderTest) *configWorld {
	t.Helper()
	w := &configWorld{k: k, ns: env.Namespace(t), data: map[string]string{"identity.conf": "[DEFAULT]\ndebug = true\n"}}
	w.owner = newOwner(t, w.ns, "identity")
	w.current = base + "-" + config.ContentHash(w.data)
	w.stale = k.seed(t, w.ns, base+"-00000001", label, controllerRef(w.owner)).GetName()
	w.inUse = k.seed(t, w.ns, base+"-00000002", label, controllerRef(w.owner)).GetName()
	newReplicaSet(t, w.ns, "app-old", podSpec(mountVolume(w.source(w.inUse))))
	return w
}

// source is a volume source mounting the object name of the world's kind.
func (w *configWorld) source(name string) corev1.VolumeSource {
	if w.k.name == "Secret" {
		return corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: name}}
	}
	return corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}}
}

// pass is what a reconciler does with the package: create the current object, then
// prune the history, sparing what is in use.
func (w *configWorld) pass(ctx context.Context, c client.Client) (ctrl.Result, error) {
	name, err := w.k.create(ctx, c, w.owner, base, w.ns, w.data)
	if err != nil {
		return ctrl.Result{}, err
	}
	opts := config.DefaultPruneOptions()
	opts.Retain = 0
	return ctrl.Result{}, w.k.pruneWith(ctx, c, w.owner, base, w.ns, name, opts)
}

// check asserts what must hold after every pass, failed or not: the object in use is
// there, and the current one, once created, is never deleted and keeps its data.
func (w *configWorld) check(t *testing.T) {
	t.Helper()
	if w.k.get(t, w.ns, w.inUse) == nil {
		t.Errorf("%s %s, still mounted by a ReplicaSet, was deleted", w.k.name, w.inUse)
	}
	now := w.k.get(t, w.ns, w.current)
	switch {
	case now == nil && w.currentExists:
		t.Errorf("current %s %s was deleted", w.k.name, w.current)
	case now != nil:
		w.currentExists = true
		if !slices.Equal(sortedKeys(w.k.read(now)), sortedKeys(w.data)) || w.k.read(now)["identity.conf"] != w.data["identity.conf"] {
			t.Errorf("current %s holds %v, want %v", w.current, w.k.read(now), w.data)
		}
	}
}

// state lists the objects of base that exist.
func (w *configWorld) state(t *testing.T) any {
	return w.k.existing(t, w.ns, w.stale, w.inUse, w.current)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// TestCreateAndPruneFaultMatrix fails every API call of a create-and-prune pass, one at
// a time, with each fault: the pass reports it, the object in use and the current one
// are never deleted, and the next passes converge to what a pass without faults
// leaves (the current object and the one in use, the stale one pruned). The Secret
// variants share the code path; TestCreateAndPruneKilledMidPass and
// TestCreateAndPruneTwoManagers run them.
func TestCreateAndPruneFaultMatrix(t *testing.T) {
	scenarios := map[string]struct {
		kind string
		// rerun creates the current object before the first pass: the steady state
		// of a reconciler, where the read finds it and nothing is created.
		rerun bool
	}{
		"ConfigMap":        {kind: "ConfigMap"},
		"ConfigMap/re-run": {kind: "ConfigMap", rerun: true},
	}
	for name, sc := range scenarios {
		t.Run(name, func(t *testing.T) {
			faults.Matrix{Setup: func(t *testing.T) faults.Scenario {
				w := newConfigWorld(t, kinds[sc.kind])
				if sc.rerun {
					if _, err := w.k.create(context.Background(), env.Client, w.owner, base, w.ns, w.data); err != nil {
						t.Fatal(err)
					}
					w.currentExists = true
				}
				return faults.Scenario{Client: env.Client, Pass: w.pass, Check: w.check, State: w.state}
			}}.Run(t)
		})
	}
}

// TestCreateAndPruneTwoManagers runs the pass of two managers (separate clients, as in
// a leader-election overlap) on the same owner at the same time, round after round,
// each round with a new configuration that both roll out to a Deployment: the
// configuration the Deployment mounts and the one an old ReplicaSet mounts are never
// deleted, and each round's predecessor is pruned.
func TestCreateAndPruneTwoManagers(t *testing.T) {
	for kname, k := range kinds {
		t.Run(kname, func(t *testing.T) {
			ctx := context.Background()
			w := newConfigWorld(t, k)
			second, err := client.New(env.Config, client.Options{Scheme: env.Scheme})
			if err != nil {
				t.Fatal(err)
			}
			managers := []client.Client{env.Client, second}
			deploy := &appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: w.ns},
				Spec: appsv1.DeploymentSpec{
					Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "app"}},
					Template: corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "app"}},
						Spec:       podSpec(mountVolume(w.source(w.inUse))),
					},
				},
			}
			if err := env.Client.Create(ctx, deploy); err != nil {
				t.Fatal(err)
			}
			// rollOut is a manager's pass: create, point the Deployment at it, prune.
			rollOut := func(c client.Client, data map[string]string) error {
				name, err := k.create(ctx, c, w.owner, base, w.ns, data)
				if err != nil {
					return err
				}
				d := &appsv1.Deployment{}
				if err := c.Get(ctx, client.ObjectKeyFromObject(deploy), d); err != nil {
					return err
				}
				patch := client.MergeFrom(d.DeepCopy())
				d.Spec.Template.Spec.Volumes[0].VolumeSource = w.source(name)
				if err := c.Patch(ctx, d, patch); err != nil {
					return err
				}
				opts := config.DefaultPruneOptions()
				opts.Retain = 0
				return k.pruneWith(ctx, c, w.owner, base, w.ns, name, opts)
			}

			previous := w.inUse
			for round := range 4 {
				data := map[string]string{"identity.conf": "[DEFAULT]\nround = " + string(rune('0'+round)) + "\n"}
				current := base + "-" + config.ContentHash(data)
				errs := make([]error, len(managers))
				var wg sync.WaitGroup
				for i, c := range managers {
					wg.Go(func() { errs[i] = rollOut(c, data) })
				}
				wg.Wait()
				if err := errors.Join(errs...); err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
				if k.get(t, w.ns, current) == nil {
					t.Fatalf("round %d: the configuration both managers roll out, %s, was deleted", round, current)
				}
				if k.get(t, w.ns, w.inUse) == nil {
					t.Fatalf("round %d: %s, mounted by the old ReplicaSet, was deleted", round, w.inUse)
				}
				if previous != w.inUse && k.get(t, w.ns, previous) != nil {
					t.Errorf("round %d: the previous configuration %s, no longer mounted, survived", round, previous)
				}
				if k.get(t, w.ns, w.stale) != nil {
					t.Errorf("round %d: stale %s survived", round, w.stale)
				}
				previous = current
			}
		})
	}
}

// TestCreateAndPruneKilledMidPass stops a pass right after its create: once with the
// create served but its answer lost, once with the next call (the prune's list)
// cancelled, as when the manager shuts down. The object created is kept, nothing else
// is deleted, and the next pass converges.
func TestCreateAndPruneKilledMidPass(t *testing.T) {
	cases := map[string]struct {
		verb  faults.Verb
		fault faults.Fault
	}{
		"create served, answer lost": {verb: faults.VerbCreate, fault: faults.Timeout},
		"killed before the prune":    {verb: faults.VerbList, fault: faults.Canceled},
	}
	for kname, k := range kinds {
		for name, tc := range cases {
			t.Run(kname+"/"+name, func(t *testing.T) {
				ctx := context.Background()
				w := newConfigWorld(t, k)
				inj := faults.NewInjector()
				c := inj.Client(env.Client)
				inj.Arm(tc.verb, 1, tc.fault)
				if _, err := w.pass(ctx, c); !errors.Is(err, faults.ErrInjected) {
					t.Fatalf("killed pass returned %v, want the injected fault", err)
				}
				if !inj.Fired() {
					t.Fatal("the fault never fired")
				}
				w.check(t)
				if got := k.existing(t, w.ns, w.stale, w.inUse, w.current); !slices.Equal(got, []string{w.stale, w.inUse, w.current}) {
					t.Fatalf("after the killed pass: %v, want the create done and nothing deleted", got)
				}

				inj.Disarm()
				if _, err := w.pass(ctx, c); err != nil {
					t.Fatalf("next pass: %v", err)
				}
				w.check(t)
				if got := k.existing(t, w.ns, w.stale, w.inUse, w.current); !slices.Equal(got, []string{w.inUse, w.current}) {
					t.Errorf("after the next pass: %v, want %s and %s", got, w.inUse, w.current)
				}
			})
		}
	}
}
