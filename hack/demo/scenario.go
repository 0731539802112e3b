package main

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/config"
	"github.com/c5c3/reconciler-sdk/deployment"
	"github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/horizon/controller"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/secrets"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

// namespace is where the demo applies the sample Horizon and the sample Keystone.
const namespace = "openstack"

// scenario is the story the demo tells about one Horizon.
type scenario struct {
	c    client.Client
	d    *display
	o    options
	root string
	key  client.ObjectKey
	// seen are the ConfigMaps of the Horizon the demo has listed, so that it can tell
	// which ones the prune deleted.
	seen []seenConfigMap
}

// seenConfigMap is a ConfigMap of the Horizon the demo has listed.
type seenConfigMap struct {
	name, timeZone string
}

// secretKeyRef is the ExternalSecret (and Secret) that holds the Horizon's SECRET_KEY.
func (s *scenario) secretKeyRef() client.ObjectKey {
	return client.ObjectKey{Namespace: s.key.Namespace, Name: s.key.Name + "-secret-key"}
}

// phase runs p for the scenario's Horizon.
func (s *scenario) phase(ctx context.Context, p phase[*v1alpha1.Horizon]) (*v1alpha1.Horizon, time.Duration, error) {
	sub := subject[*v1alpha1.Horizon]{kind: "Horizon", key: s.key, order: conditionOrder,
		newObj: func() *v1alpha1.Horizon { return &v1alpha1.Horizon{} }}
	return runPhase(ctx, s.c, s.d, sub, p, s.o.Pause, s.o.PhaseTimeout)
}

// readyNow tells whether Ready is True for the Horizon's current generation and the
// status was written for it.
func readyNow(h *v1alpha1.Horizon) bool {
	return h.Status.ObservedGeneration == h.Generation && reconcile.IsTrue(h, reconcile.ConditionReady) &&
		rowsOf(h)[len(conditionOrder)-1].Current
}

// showsReason is an action's precondition: the Horizon's condition condType has
// reason, so that the step the demo takes follows what the operator reported.
func (s *scenario) showsReason(condType, reason string) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		h := &v1alpha1.Horizon{}
		if err := s.c.Get(ctx, s.key, h); err != nil {
			return false, fmt.Errorf("reading Horizon %s: %w", s.key, err)
		}
		for _, r := range rowsOf(h) {
			if r.Type == condType {
				return r.Reason == reason && r.Current, nil
			}
		}
		return false, nil
	}
}

// syncKey plays ESO: a new SECRET_KEY is written into the ExternalSecret's Secret.
func (s *scenario) syncKey(ctx context.Context) error {
	value, err := s.o.NewKey()
	if err != nil {
		return err
	}
	_, err = simulate.MarkExternalSecretSynced(ctx, s.c, s.secretKeyRef(),
		map[string][]byte{controller.SecretKeyDataKey: []byte(value)})
	return err
}

// firstRollout applies the sample Horizon and plays the secret store and ESO until the
// Horizon is Ready.
func (s *scenario) firstRollout(ctx context.Context) error {
	h, err := loadSample(s.root, namespace)
	if err != nil {
		return err
	}
	s.key = client.ObjectKeyFromObject(h)
	if err := ensureNamespace(ctx, s.c, namespace); err != nil {
		return err
	}
	store := secrets.EffectiveStoreRef(h.Spec.SecretStoreRef).Name
	err = s.c.Create(ctx, &esov1.ClusterSecretStore{
		ObjectMeta: metav1.ObjectMeta{Name: store},
		Spec:       esov1.SecretStoreSpec{Provider: simulate.OpenBaoProvider()},
	})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating ClusterSecretStore %s: %w", store, err)
	}
	if err := s.c.Create(ctx, h); err != nil {
		return fmt.Errorf("applying Horizon %s: %w", s.key, err)
	}
	s.d.Linef("")
	s.d.Linef("1. Apply the minimal sample Horizon %s (%s)", s.key, samplePath)
	s.d.Linef("   The ClusterSecretStore %s exists but ESO has not validated it yet.", store)
	es := s.secretKeyRef()
	h, took, err := s.phase(ctx, phase[*v1alpha1.Horizon]{
		name:  "first rollout",
		table: true,
		actions: []action{{
			when: s.showsReason(controller.ConditionSecretsReady, secrets.ReasonSecretStoreNotReady),
			do: func(ctx context.Context) (string, error) {
				if _, err := simulate.MarkClusterSecretStoreReady(ctx, s.c, store); err != nil {
					return "", err
				}
				return fmt.Sprintf("ESO (played): ClusterSecretStore %s is Ready", store), nil
			},
		}, {
			when: func(ctx context.Context) (bool, error) {
				if ok, err := s.showsReason(controller.ConditionSecretsReady, controller.ReasonWaitingForSecretKey)(ctx); !ok || err != nil {
					return false, err
				}
				return exists(ctx, s.c, es, &esov1.ExternalSecret{})
			},
			do: func(ctx context.Context) (string, error) {
				if err := s.syncKey(ctx); err != nil {
					return "", err
				}
				return fmt.Sprintf("ESO (played): synced %q into Secret %s (a random SECRET_KEY, not shown)",
					h.Spec.SecretKey.RemoteKey, es), nil
			},
		}},
		done: s.rolledOut(func(h *v1alpha1.Horizon, _ *rollout) bool { return true }),
	})
	if err != nil {
		return err
	}
	r, err := readRollout(ctx, s.c, s.key)
	if err != nil {
		return err
	}
	s.d.Linef("   ✓ Ready=True after %.1f s: Deployment %s (ReplicaSet %s, %d/%d pods ready), Service port %d,",
		took.Seconds(), r.dep.Name, r.current.Name, r.current.Status.ReadyReplicas, *r.dep.Spec.Replicas, controller.ServicePort)
	s.d.Linef("     ConfigMap %s, endpoint %s", h.Status.ConfigMap, h.Status.Endpoint)
	return nil
}

// rolledOut is a phase's end: Ready is True for the current generation, the
// Deployment has rolled out the template the operator wrote for it (it mounts
// status.configMap) and also holds.
func (s *scenario) rolledOut(also func(*v1alpha1.Horizon, *rollout) bool) func(context.Context, *v1alpha1.Horizon) (bool, string, error) {
	return func(ctx context.Context, h *v1alpha1.Horizon) (bool, string, error) {
		if !readyNow(h) {
			return false, "Ready=True", nil
		}
		r, err := readRollout(ctx, s.c, s.key)
		if err != nil || r == nil {
			return false, "the Deployment", err
		}
		if !r.complete() || mountedConfigMap(&r.current.Spec.Template) != h.Status.ConfigMap {
			return false, fmt.Sprintf("Deployment %s to roll out", s.key), nil
		}
		return also(h, r), "the rollout of the change", nil
	}
}

// rotateKey plays a key rotation at the secret backend and shows the rollout it
// causes.
func (s *scenario) rotateKey(ctx context.Context) error {
	before, err := readRollout(ctx, s.c, s.key)
	if err != nil {
		return err
	}
	oldHash, oldRS := before.keyHash(), before.current.Name
	s.d.Linef("")
	s.d.Linef("2. Rotate the SECRET_KEY in the secret backend")
	_, took, err := s.phase(ctx, phase[*v1alpha1.Horizon]{
		name:  "key rotation",
		table: true,
		actions: []action{{do: func(ctx context.Context) (string, error) {
			if err := s.syncKey(ctx); err != nil {
				return "", err
			}
			return fmt.Sprintf("ESO (played): synced the rotated key into Secret %s (not shown)", s.secretKeyRef()), nil
		}}},
		done: s.rolledOut(func(_ *v1alpha1.Horizon, r *rollout) bool {
			return r.keyHash() != oldHash && r.current.Name != oldRS
		}),
	})
	if err != nil {
		return err
	}
	after, err := readRollout(ctx, s.c, s.key)
	if err != nil {
		return err
	}
	var old *appsv1.ReplicaSet
	for i := range after.all {
		if after.all[i].Name == oldRS {
			old = &after.all[i]
		}
	}
	s.d.Linef("   ✓ pod-template annotation %s: %s → %s", controller.SecretKeyHashAnnotation, oldHash, after.keyHash())
	scaled := "deleted"
	if old != nil {
		scaled = fmt.Sprintf("scaled to %d", *old.Spec.Replicas)
	}
	s.d.Linef("   ✓ new ReplicaSet %s rolled out (%d/%d pods ready); %s %s",
		after.current.Name, after.current.Status.ReadyReplicas, *after.dep.Spec.Replicas, oldRS, scaled)
	s.d.Linef("   ✓ Ready=True again after %.1f s", took.Seconds())
	return nil
}

// changeConfig changes spec.timeZone several times and shows the ConfigMaps the prune
// keeps, then changes it once more and shows them again: the ConfigMaps past the
// retention that no ReplicaSet mounts any more are gone.
func (s *scenario) changeConfig(ctx context.Context) error {
	s.d.Linef("")
	s.d.Linef("3. Change the configuration (spec.timeZone): every change is a new immutable ConfigMap and a rollout")
	for _, tz := range s.o.TimeZones {
		if err := s.setTimeZone(ctx, tz); err != nil {
			return err
		}
	}
	if err := s.showConfigMaps(ctx); err != nil {
		return err
	}
	if s.o.FinalTimeZone == "" {
		return nil
	}
	if err := s.setTimeZone(ctx, s.o.FinalTimeZone); err != nil {
		return err
	}
	return s.showConfigMaps(ctx)
}

// setTimeZone sets spec.timeZone to tz and waits for the new ConfigMap's rollout.
func (s *scenario) setTimeZone(ctx context.Context, tz string) error {
	prev := &v1alpha1.Horizon{}
	if err := s.c.Get(ctx, s.key, prev); err != nil {
		return fmt.Errorf("reading Horizon %s: %w", s.key, err)
	}
	h, took, err := s.phase(ctx, phase[*v1alpha1.Horizon]{
		name:      "spec.timeZone " + tz,
		table:     s.o.Live,
		dropTable: true,
		actions: []action{{do: func(ctx context.Context) (string, error) {
			patch := client.RawPatch("application/merge-patch+json", fmt.Appendf(nil, `{"spec":{"timeZone":%q}}`, tz))
			if err := s.c.Patch(ctx, &v1alpha1.Horizon{ObjectMeta: metav1.ObjectMeta{Name: s.key.Name, Namespace: s.key.Namespace}}, patch); err != nil {
				return "", fmt.Errorf("setting spec.timeZone of Horizon %s: %w", s.key, err)
			}
			return fmt.Sprintf("spec.timeZone = %s", tz), nil
		}}},
		done: s.rolledOut(func(h *v1alpha1.Horizon, _ *rollout) bool {
			return h.Status.ConfigMap != prev.Status.ConfigMap
		}),
	})
	if err != nil {
		return err
	}
	r, err := readRollout(ctx, s.c, s.key)
	if err != nil {
		return err
	}
	cms, err := configMaps(ctx, s.c, s.key.Namespace, controller.ConfigBaseName(h))
	if err != nil {
		return err
	}
	s.note(cms)
	s.d.Linef("    → ConfigMap %s, ReplicaSet %s rolled out, Ready after %.1f s; %d ConfigMaps of %s exist",
		h.Status.ConfigMap, r.current.Name, took.Seconds(), len(cms), controller.ConfigBaseName(h))
	return nil
}

// timeZoneRE finds TIME_ZONE in a rendered local_settings.py.
var timeZoneRE = regexp.MustCompile(`(?m)^TIME_ZONE = ['"]([^'"]*)['"]`)

// timeZoneOf is the TIME_ZONE a settings ConfigMap renders.
func timeZoneOf(cm *corev1.ConfigMap) string {
	if m := timeZoneRE.FindStringSubmatch(cm.Data[controller.SettingsFile]); m != nil {
		return m[1]
	}
	return "?"
}

// note remembers the names of cms.
func (s *scenario) note(cms []corev1.ConfigMap) {
	for i := range cms {
		if !slices.ContainsFunc(s.seen, func(c seenConfigMap) bool { return c.name == cms[i].Name }) {
			s.seen = append(s.seen, seenConfigMap{name: cms[i].Name, timeZone: timeZoneOf(&cms[i])})
		}
	}
}

// exists tells whether the object at key exists.
func exists(ctx context.Context, c client.Client, key client.ObjectKey, obj client.Object) (bool, error) {
	err := c.Get(ctx, key, obj)
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("reading %T %s: %w", obj, key, err)
	}
	return true, nil
}

// pinning returns, by ConfigMap name, the ReplicaSets of r whose pod template mounts it.
func pinning(r *rollout) map[string][]*appsv1.ReplicaSet {
	out := map[string][]*appsv1.ReplicaSet{}
	for i := range r.all {
		name := mountedConfigMap(&r.all[i].Spec.Template)
		out[name] = append(out[name], &r.all[i])
	}
	return out
}

// verdict is why a ConfigMap is kept, or that it is gone.
type verdict struct {
	name, timeZone, why string
}

// verdicts ranks the Horizon's ConfigMaps as the prune does and says why each one is
// kept; the ConfigMaps seen earlier and gone now are "deleted by the prune". The
// Deployment keeps as many old ReplicaSets as the prune retains ConfigMaps, but trims
// them after the pass that pruned: the first ConfigMap past the retention may wait for
// the next pass. It returns an error when the prune broke its promise: a later one
// past the retention that nothing mounts is still there, or one a ReplicaSet mounts
// is gone.
func (s *scenario) verdicts(ctx context.Context) ([]verdict, error) {
	h := &v1alpha1.Horizon{}
	if err := s.c.Get(ctx, s.key, h); err != nil {
		return nil, fmt.Errorf("reading Horizon %s: %w", s.key, err)
	}
	r, err := readRollout(ctx, s.c, s.key)
	if err != nil {
		return nil, err
	}
	cms, err := configMaps(ctx, s.c, s.key.Namespace, controller.ConfigBaseName(h))
	if err != nil {
		return nil, err
	}
	s.note(cms)
	pins := pinning(r)
	var out []verdict
	older := 0
	for i := range cms {
		v := verdict{name: cms[i].Name, timeZone: timeZoneOf(&cms[i])}
		switch {
		case v.name == h.Status.ConfigMap:
			v.why = "current: the Deployment mounts it"
		case older < controller.RetainConfigMaps:
			older++
			v.why = fmt.Sprintf("kept: newest older #%d (for a rollback)", older)
		case len(pins[v.name]) > 0:
			rs := pins[v.name][0]
			v.why = fmt.Sprintf("kept: ReplicaSet %s (revision %d, %d pods) still mounts it", rs.Name, revisionOf(rs), rs.Status.Replicas)
		case older == controller.RetainConfigMaps:
			older++
			v.why = "past the retention, its ReplicaSet trimmed since the last pass: the next pass prunes it"
		default:
			return nil, fmt.Errorf("the prune kept ConfigMap %s/%s although it is past the newest %d and no ReplicaSet mounts it",
				s.key.Namespace, v.name, controller.RetainConfigMaps)
		}
		out = append(out, v)
	}
	for i := len(s.seen) - 1; i >= 0; i-- {
		seen := s.seen[i]
		if slices.ContainsFunc(cms, func(cm corev1.ConfigMap) bool { return cm.Name == seen.name }) {
			continue
		}
		if len(pins[seen.name]) > 0 {
			return nil, fmt.Errorf("the prune deleted ConfigMap %s/%s although ReplicaSet %s mounts it",
				s.key.Namespace, seen.name, pins[seen.name][0].Name)
		}
		out = append(out, verdict{name: seen.name, timeZone: seen.timeZone, why: "deleted by the prune: past the newest older ones, nothing mounts it"})
	}
	return out, nil
}

// showConfigMaps prints the verdicts.
func (s *scenario) showConfigMaps(ctx context.Context) error {
	vs, err := s.verdicts(ctx)
	if err != nil {
		return err
	}
	s.d.Linef("   ConfigMaps %s-*, newest first: the prune keeps the current one, the %d newest older ones and",
		controller.ConfigBaseName(&v1alpha1.Horizon{ObjectMeta: metav1.ObjectMeta{Name: s.key.Name}}), controller.RetainConfigMaps)
	s.d.Linef("   every one a ReplicaSet still mounts; the Deployment keeps %d old ReplicaSets (revisionHistoryLimit),",
		deployment.DefaultRevisionHistoryLimit)
	s.d.Linef("   so kubectl rollout undo finds the ConfigMap of each:")
	for _, v := range vs {
		s.d.Linef("     %-26s TIME_ZONE %-18s %s", v.name, v.timeZone, v.why)
	}
	return nil
}

// epilogue prints the kubectl commands that show the same on a real cluster.
func (s *scenario) epilogue() {
	ns, name := s.key.Namespace, s.key.Name
	s.d.Linef("")
	s.d.Linef("Done. On a real cluster, the same with kubectl:")
	for _, cmd := range []string{
		"kubectl get horizons -n " + ns,
		fmt.Sprintf("kubectl describe horizon %s -n %s", name, ns),
		fmt.Sprintf("kubectl get horizon %s -n %s -o jsonpath='{range .status.conditions[*]}{.type}{\"\\t\"}{.status}{\"\\t\"}{.reason}{\"\\n\"}{end}'", name, ns),
		fmt.Sprintf("kubectl get deploy,rs,svc,pdb,externalsecret -n %s -l app.kubernetes.io/instance=%s", ns, name),
		fmt.Sprintf("kubectl get cm -n %s -l %s=%s-config", ns, config.ConfigBaseLabel, name),
		fmt.Sprintf("kubectl get deploy %s -n %s -o jsonpath='{.spec.template.metadata.annotations}'", name, ns),
		fmt.Sprintf("kubectl rollout history deploy/%s -n %s", name, ns),
	} {
		s.d.Linef("  %s", cmd)
	}
}
