package simulate_test

import (
	"context"
	"errors"
	"maps"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
	esov1alpha1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1alpha1"
	"github.com/c5c3/reconciler-sdk/testenv"
	"github.com/c5c3/reconciler-sdk/testenv/faults"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

// createSource creates the Secret "source" with data in ns.
func createSource(t *testing.T, ns string, data map[string][]byte) {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "source", Namespace: ns}, Data: data}
	if err := env.Client.Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
}

// createPushSecret creates the PushSecret "push" of the Secret "source" in ns.
func createPushSecret(t *testing.T, ns string, policy esov1alpha1.PushSecretUpdatePolicy, data ...esov1alpha1.PushSecretMatch) client.ObjectKey {
	t.Helper()
	ps := &esov1alpha1.PushSecret{
		ObjectMeta: metav1.ObjectMeta{Name: "push", Namespace: ns},
		Spec: esov1alpha1.PushSecretSpec{
			SecretStoreRefs: []esov1alpha1.PushSecretStoreRef{{Kind: "ClusterSecretStore", Name: "openbao"}},
			UpdatePolicy:    policy,
			Selector:        esov1alpha1.PushSecretSelector{Secret: &esov1alpha1.PushSecretSecret{Name: "source"}},
		},
	}
	for _, m := range data {
		ps.Spec.Data = append(ps.Spec.Data, esov1alpha1.PushSecretData{Match: m})
	}
	if err := env.Client.Create(context.Background(), ps); err != nil {
		t.Fatal(err)
	}
	return client.ObjectKeyFromObject(ps)
}

// prop is a PushSecret match of one source key to one property.
func prop(secretKey, remoteKey, property string) esov1alpha1.PushSecretMatch {
	return esov1alpha1.PushSecretMatch{SecretKey: secretKey,
		RemoteRef: esov1alpha1.PushSecretRemoteRef{RemoteKey: remoteKey, Property: property}}
}

// whole is a PushSecret match of the whole source Secret to remoteKey.
func whole(remoteKey string) esov1alpha1.PushSecretMatch {
	return esov1alpha1.PushSecretMatch{RemoteRef: esov1alpha1.PushSecretRemoteRef{RemoteKey: remoteKey}}
}

func TestSecretBackendPush(t *testing.T) {
	src := map[string][]byte{"password": []byte("new-pw"), "user": []byte("admin")}
	for name, tc := range map[string]struct {
		held       map[string]map[string][]byte // the backend before the push
		source     map[string][]byte            // nil: no source Secret
		policy     esov1alpha1.PushSecretUpdatePolicy
		data       []esov1alpha1.PushSecretMatch
		noPush     bool // no PushSecret at all
		want       map[string]map[string]string
		wantWrites int
	}{
		"secretKey writes one property": {
			source: src, data: []esov1alpha1.PushSecretMatch{prop("password", "identity/admin", "password")},
			want: map[string]map[string]string{"identity/admin": {"password": "new-pw"}}, wantWrites: 1,
		},
		"secretKey keeps the other properties of the remote key": {
			held:   map[string]map[string][]byte{"identity/admin": {"user": []byte("old")}},
			source: src, data: []esov1alpha1.PushSecretMatch{prop("password", "identity/admin", "password")},
			want: map[string]map[string]string{"identity/admin": {"user": "old", "password": "new-pw"}}, wantWrites: 1,
		},
		"Replace overwrites a property": {
			held:   map[string]map[string][]byte{"identity/admin": {"password": []byte("old")}},
			source: src, policy: esov1alpha1.PushSecretUpdatePolicyReplace,
			data: []esov1alpha1.PushSecretMatch{prop("password", "identity/admin", "password")},
			want: map[string]map[string]string{"identity/admin": {"password": "new-pw"}}, wantWrites: 1,
		},
		"IfNotExists never overwrites a property": {
			held:   map[string]map[string][]byte{"identity/admin": {"password": []byte("old")}},
			source: src, policy: esov1alpha1.PushSecretUpdatePolicyIfNotExists,
			data: []esov1alpha1.PushSecretMatch{prop("password", "identity/admin", "password")},
			want: map[string]map[string]string{"identity/admin": {"password": "old"}}, wantWrites: 0,
		},
		"IfNotExists writes a property the remote key lacks": {
			held:   map[string]map[string][]byte{"identity/admin": {"password": []byte("old")}},
			source: src, policy: esov1alpha1.PushSecretUpdatePolicyIfNotExists,
			data: []esov1alpha1.PushSecretMatch{prop("password", "identity/admin", "password"), prop("user", "identity/admin", "user")},
			want: map[string]map[string]string{"identity/admin": {"password": "old", "user": "admin"}}, wantWrites: 1,
		},
		"no secretKey writes the whole Secret": {
			source: src, data: []esov1alpha1.PushSecretMatch{whole("identity/db")},
			want: map[string]map[string]string{"identity/db": {"password": "new-pw", "user": "admin"}}, wantWrites: 1,
		},
		"no secretKey, Replace replaces the provider secret": {
			held:   map[string]map[string][]byte{"identity/db": {"stale": []byte("x")}},
			source: src, data: []esov1alpha1.PushSecretMatch{whole("identity/db")},
			want: map[string]map[string]string{"identity/db": {"password": "new-pw", "user": "admin"}}, wantWrites: 1,
		},
		"no secretKey, IfNotExists never overwrites the provider secret": {
			held:   map[string]map[string][]byte{"identity/db": {"stale": []byte("x")}},
			source: src, policy: esov1alpha1.PushSecretUpdatePolicyIfNotExists,
			data: []esov1alpha1.PushSecretMatch{whole("identity/db")},
			want: map[string]map[string]string{"identity/db": {"stale": "x"}}, wantWrites: 0,
		},
		"missing source Secret pushes nothing": {
			data: []esov1alpha1.PushSecretMatch{prop("password", "identity/admin", "password"), whole("identity/db")},
			want: map[string]map[string]string{},
		},
		"missing source key pushes nothing, not even the other entries": {
			source: src, data: []esov1alpha1.PushSecretMatch{prop("user", "identity/admin", "user"), prop("absent", "identity/admin", "password")},
			want: map[string]map[string]string{},
		},
		"missing PushSecret pushes nothing": {
			source: src, noPush: true, want: map[string]map[string]string{},
		},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			ns := env.Namespace(t)
			b := simulate.NewSecretBackend(env.Client)
			for k, v := range tc.held {
				b.Set(k, v)
			}
			if tc.source != nil {
				createSource(t, ns, tc.source)
			}
			key := client.ObjectKey{Namespace: ns, Name: "push"}
			if !tc.noPush {
				key = createPushSecret(t, ns, tc.policy, tc.data...)
			}
			if err := b.Push(ctx, key); err != nil {
				t.Fatal(err)
			}
			if got := b.Values(); !maps.EqualFunc(got, tc.want, maps.Equal) {
				t.Errorf("backend = %v, want %v", got, tc.want)
			}
			if got := b.Writes(); got != tc.wantWrites {
				t.Errorf("Writes() = %d, want %d", got, tc.wantWrites)
			}
		})
	}
}

// The API server refuses a PushSecret without spec.selector; a fake client stores one,
// which the backend refuses to push.
func TestSecretBackendPushWithoutSecretSelectorIsUnsupported(t *testing.T) {
	ctx := context.Background()
	ps := &esov1alpha1.PushSecret{
		ObjectMeta: metav1.ObjectMeta{Name: "push", Namespace: "ns"},
		Spec:       esov1alpha1.PushSecretSpec{Data: []esov1alpha1.PushSecretData{{Match: whole("identity/db")}}},
	}
	c := fake.NewClientBuilder().WithScheme(testenv.NewScheme()).WithObjects(ps).Build()
	b := simulate.NewSecretBackend(c)
	if err := b.Push(ctx, client.ObjectKeyFromObject(ps)); !errors.Is(err, simulate.ErrSecretBackendUnsupported) {
		t.Errorf("Push = %v, want ErrSecretBackendUnsupported", err)
	}
	if b.Writes() != 0 || len(b.Values()) != 0 {
		t.Errorf("the backend was written: %d writes", b.Writes())
	}
}

// newES creates the ExternalSecret "restore" (target Secret "restored") in ns.
func newES(t *testing.T, ns string, deletion esov1.ExternalSecretDeletionPolicy, creation esov1.ExternalSecretCreationPolicy,
	data []esov1.ExternalSecretData, extract ...string) *esov1.ExternalSecret {
	t.Helper()
	es := &esov1.ExternalSecret{
		ObjectMeta: metav1.ObjectMeta{Name: "restore", Namespace: ns, Labels: map[string]string{"app": "identity"}},
		Spec: esov1.ExternalSecretSpec{
			SecretStoreRef: esov1.SecretStoreRef{Kind: "ClusterSecretStore", Name: "openbao"},
			Target:         esov1.ExternalSecretTarget{Name: "restored", DeletionPolicy: deletion, CreationPolicy: creation},
			Data:           data,
		},
	}
	for _, k := range extract {
		es.Spec.DataFrom = append(es.Spec.DataFrom, esov1.ExternalSecretDataFromRemoteRef{Extract: &esov1.ExternalSecretDataRemoteRef{Key: k}})
	}
	if err := env.Client.Create(context.Background(), es); err != nil {
		t.Fatal(err)
	}
	return es
}

// esData maps one target key to the property of a remote key.
func esData(secretKey, key, property string) esov1.ExternalSecretData {
	return esov1.ExternalSecretData{SecretKey: secretKey, RemoteRef: esov1.ExternalSecretDataRemoteRef{Key: key, Property: property}}
}

func TestSecretBackendSync(t *testing.T) {
	held := map[string]map[string][]byte{
		"identity/admin": {"password": []byte("pw")},
		"identity/db":    {"user": []byte("identity"), "password": []byte("db-pw")},
	}
	adminPW := esData("password", "identity/admin", "password")
	absent := esData("missing", "identity/absent", "password")
	absentProp := esData("missing", "identity/admin", "absent")
	for name, tc := range map[string]struct {
		deletion esov1.ExternalSecretDeletionPolicy
		creation esov1.ExternalSecretCreationPolicy
		data     []esov1.ExternalSecretData
		extract  []string
		// previous: the target Secret before the sync, "ours" (written by an earlier
		// sync of the ExternalSecret), "theirs" (no owner) or "" (none).
		previous   string
		wantStatus corev1.ConditionStatus
		wantReason string
		wantTarget map[string][]byte // nil: no target Secret
	}{
		"data entries: synced": {
			data:       []esov1.ExternalSecretData{adminPW, esData("user", "identity/db", "user")},
			wantStatus: corev1.ConditionTrue, wantReason: esov1.ConditionReasonSecretSynced,
			wantTarget: map[string][]byte{"password": []byte("pw"), "user": []byte("identity")},
		},
		"data entry without property: the provider secret as JSON": {
			data:       []esov1.ExternalSecretData{esData("db", "identity/db", "")},
			wantStatus: corev1.ConditionTrue, wantReason: esov1.ConditionReasonSecretSynced,
			wantTarget: map[string][]byte{"db": []byte(`{"password":"db-pw","user":"identity"}`)},
		},
		"dataFrom extract: every property": {
			extract:    []string{"identity/db"},
			wantStatus: corev1.ConditionTrue, wantReason: esov1.ConditionReasonSecretSynced,
			wantTarget: map[string][]byte{"password": []byte("db-pw"), "user": []byte("identity")},
		},
		"missing remote key under Retain (default): SecretSyncedError, target kept": {
			data: []esov1.ExternalSecretData{adminPW, absent}, previous: "ours",
			wantStatus: corev1.ConditionFalse, wantReason: esov1.ConditionReasonSecretSyncedError,
			wantTarget: map[string][]byte{"old": []byte("old")},
		},
		"missing property under Retain: SecretSyncedError": {
			deletion: esov1.DeletionPolicyRetain, data: []esov1.ExternalSecretData{absentProp},
			wantStatus: corev1.ConditionFalse, wantReason: esov1.ConditionReasonSecretSyncedError,
		},
		"missing extract under Retain: SecretSyncedError": {
			extract:    []string{"identity/absent"},
			wantStatus: corev1.ConditionFalse, wantReason: esov1.ConditionReasonSecretSyncedError,
		},
		"missing under Delete, no data left: our target deleted, SecretDeleted": {
			deletion: esov1.DeletionPolicyDelete, extract: []string{"identity/absent"}, previous: "ours",
			wantStatus: corev1.ConditionTrue, wantReason: esov1.ConditionReasonSecretDeleted,
		},
		"missing under Delete, no target: SecretDeleted": {
			deletion: esov1.DeletionPolicyDelete, data: []esov1.ExternalSecretData{absent},
			wantStatus: corev1.ConditionTrue, wantReason: esov1.ConditionReasonSecretDeleted,
		},
		"missing under Delete, someone else's target: left alone, SecretSyncedError": {
			deletion: esov1.DeletionPolicyDelete, data: []esov1.ExternalSecretData{absent}, previous: "theirs",
			wantStatus: corev1.ConditionFalse, wantReason: esov1.ConditionReasonSecretSyncedError,
			wantTarget: map[string][]byte{"old": []byte("old")},
		},
		"missing under Delete, creationPolicy Orphan: left alone, SecretSyncedError": {
			deletion: esov1.DeletionPolicyDelete, creation: esov1.CreatePolicyOrphan,
			data: []esov1.ExternalSecretData{absent}, previous: "theirs",
			wantStatus: corev1.ConditionFalse, wantReason: esov1.ConditionReasonSecretSyncedError,
			wantTarget: map[string][]byte{"old": []byte("old")},
		},
		"missing under Delete, data left: written with what remains": {
			deletion: esov1.DeletionPolicyDelete, data: []esov1.ExternalSecretData{adminPW, absent},
			wantStatus: corev1.ConditionTrue, wantReason: esov1.ConditionReasonSecretSynced,
			wantTarget: map[string][]byte{"password": []byte("pw")},
		},
		"missing under Merge: written with what remains": {
			deletion: esov1.DeletionPolicyMerge, data: []esov1.ExternalSecretData{adminPW, absent}, previous: "ours",
			wantStatus: corev1.ConditionTrue, wantReason: esov1.ConditionReasonSecretSynced,
			wantTarget: map[string][]byte{"password": []byte("pw")},
		},
		"missing under Merge, nothing left: an empty target": {
			deletion: esov1.DeletionPolicyMerge, extract: []string{"identity/absent"},
			wantStatus: corev1.ConditionTrue, wantReason: esov1.ConditionReasonSecretSynced,
			wantTarget: map[string][]byte{},
		},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			ns := env.Namespace(t)
			b := simulate.NewSecretBackend(env.Client)
			for k, v := range held {
				b.Set(k, v)
			}
			es := newES(t, ns, tc.deletion, tc.creation, tc.data, tc.extract...)
			key := client.ObjectKeyFromObject(es)
			targetKey := client.ObjectKey{Namespace: ns, Name: "restored"}
			switch tc.previous {
			case "ours":
				if _, err := simulate.MarkExternalSecretSynced(ctx, env.Client, key, map[string][]byte{"old": []byte("old")}); err != nil {
					t.Fatal(err)
				}
			case "theirs":
				s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: targetKey.Name, Namespace: ns}, Data: map[string][]byte{"old": []byte("old")}}
				if err := env.Client.Create(ctx, s); err != nil {
					t.Fatal(err)
				}
			}
			if synced, err := b.Synced(ctx, key); err != nil || synced {
				t.Errorf("Synced before Sync = %v, %v; want false", synced, err)
			}
			if err := b.Sync(ctx, key); err != nil {
				t.Fatal(err)
			}
			if synced, err := b.Synced(ctx, key); err != nil || !synced {
				t.Errorf("Synced after Sync = %v, %v; want true", synced, err)
			}
			got := &esov1.ExternalSecret{}
			if err := env.Client.Get(ctx, key, got); err != nil {
				t.Fatal(err)
			}
			if len(got.Status.Conditions) != 1 || got.Status.Conditions[0].Type != esov1.ExternalSecretReady {
				t.Fatalf("conditions = %+v, want one Ready", got.Status.Conditions)
			}
			c := got.Status.Conditions[0]
			if c.Status != tc.wantStatus || c.Reason != tc.wantReason {
				t.Errorf("Ready = %s/%s (%s), want %s/%s", c.Status, c.Reason, c.Message, tc.wantStatus, tc.wantReason)
			}
			if tc.wantStatus == corev1.ConditionTrue {
				if want := simulate.ESOResourceVersion(got.ObjectMeta); got.Status.SyncedResourceVersion != want {
					t.Errorf("syncedResourceVersion = %q, want ESO's %q", got.Status.SyncedResourceVersion, want)
				}
				if got.Status.RefreshTime.IsZero() || got.Status.Binding.Name != targetKey.Name {
					t.Errorf("refreshTime %v, binding %q; want set, %q", got.Status.RefreshTime, got.Status.Binding.Name, targetKey.Name)
				}
			}
			s := &corev1.Secret{}
			err := env.Client.Get(ctx, targetKey, s)
			switch {
			case tc.wantTarget == nil && !apierrors.IsNotFound(err):
				t.Errorf("target Secret: get = %v, want NotFound", err)
			case tc.wantTarget != nil && err != nil:
				t.Errorf("target Secret: %v", err)
			case tc.wantTarget != nil && !maps.EqualFunc(s.Data, tc.wantTarget, func(a, b []byte) bool { return string(a) == string(b) }):
				t.Errorf("target data = %q, want %q", s.Data, tc.wantTarget)
			}
			if b.Writes() != 0 {
				t.Errorf("Sync counted %d writes", b.Writes())
			}
		})
	}
}

// Synced turns false on every change Sync would answer (a new value in the backend, a
// lost or edited target, new metadata on the ExternalSecret) and true again after it.
func TestSecretBackendSynced(t *testing.T) {
	for name, tc := range map[string]struct {
		reason string
		change func(t *testing.T, b *simulate.SecretBackend, es *esov1.ExternalSecret)
	}{
		"backend value": {
			reason: "a rotated value is synced again",
			change: func(_ *testing.T, b *simulate.SecretBackend, _ *esov1.ExternalSecret) {
				b.Set("app/admin", map[string][]byte{"password": []byte("rotated")})
			},
		},
		"target deleted": {
			reason: "ESO writes a lost target again",
			change: func(t *testing.T, _ *simulate.SecretBackend, es *esov1.ExternalSecret) {
				s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "restored", Namespace: es.Namespace}}
				if err := env.Client.Delete(context.Background(), s); err != nil {
					t.Fatal(err)
				}
			},
		},
		"target edited": {
			reason: "a drifted value is written again",
			change: func(t *testing.T, _ *simulate.SecretBackend, es *esov1.ExternalSecret) {
				s := &corev1.Secret{}
				if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: es.Namespace, Name: "restored"}, s); err != nil {
					t.Fatal(err)
				}
				s.Data["password"] = []byte("edited")
				if err := env.Client.Update(context.Background(), s); err != nil {
					t.Fatal(err)
				}
			},
		},
		"ExternalSecret labelled": {
			reason: "syncedResourceVersion covers the labels",
			change: func(t *testing.T, _ *simulate.SecretBackend, es *esov1.ExternalSecret) {
				es.Labels["rollout"] = "2"
				if err := env.Client.Update(context.Background(), es); err != nil {
					t.Fatal(err)
				}
			},
		},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			ns := env.Namespace(t)
			b := simulate.NewSecretBackend(env.Client)
			b.Set("app/admin", map[string][]byte{"password": []byte("pw")})
			es := newES(t, ns, "", "", []esov1.ExternalSecretData{esData("password", "app/admin", "password")})
			key := client.ObjectKeyFromObject(es)
			if err := b.Sync(ctx, key); err != nil {
				t.Fatal(err)
			}
			if err := env.Client.Get(ctx, key, es); err != nil {
				t.Fatal(err)
			}
			tc.change(t, b, es)
			if synced, err := b.Synced(ctx, key); err != nil || synced {
				t.Fatalf("%s: Synced after the change = %v, %v; want false", tc.reason, synced, err)
			}
			if err := b.Sync(ctx, key); err != nil {
				t.Fatal(err)
			}
			if synced, err := b.Synced(ctx, key); err != nil || !synced {
				t.Errorf("%s: Synced after Sync = %v, %v; want true", tc.reason, synced, err)
			}
		})
	}
}

// On shares the provider secrets and the write count, and reads and writes through
// its own client.
func TestSecretBackendOn(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	b := simulate.NewSecretBackend(env.Client)
	inj := faults.NewInjector()
	view := b.On(inj.Client(env.Client))
	b.Set("app/admin", map[string][]byte{"password": []byte("pw")})
	if v, ok := view.Property("app/admin", "password"); !ok || v != "pw" {
		t.Errorf("view.Property = %q, %v; want the backend's value", v, ok)
	}
	createSource(t, ns, map[string][]byte{"password": []byte("pushed")})
	ps := createPushSecret(t, ns, esov1alpha1.PushSecretUpdatePolicyReplace, prop("password", "app/pushed", "password"))
	if err := view.Push(ctx, ps); err != nil {
		t.Fatal(err)
	}
	if v, _ := b.Property("app/pushed", "password"); v != "pushed" || b.Writes() != 1 {
		t.Errorf("backend after the view's push: %q, %d writes; want pushed, 1", v, b.Writes())
	}
	es := newES(t, ns, "", "", []esov1.ExternalSecretData{esData("password", "app/admin", "password")})
	inj.Arm(faults.VerbGet, 1, faults.Internal)
	if err := view.Sync(ctx, client.ObjectKeyFromObject(es)); !errors.Is(err, faults.ErrInjected) {
		t.Errorf("view.Sync = %v, want the fault of the view's client", err)
	}
	if inj.Calls(faults.VerbGet) != 1 {
		t.Errorf("the view read %d times through its client, want 1", inj.Calls(faults.VerbGet))
	}
}

func TestSecretBackendSyncErrors(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	b := simulate.NewSecretBackend(env.Client)
	if err := b.Sync(ctx, client.ObjectKey{Namespace: ns, Name: "absent"}); !apierrors.IsNotFound(err) {
		t.Errorf("Sync of a missing ExternalSecret = %v, want NotFound", err)
	}
	es := &esov1.ExternalSecret{
		ObjectMeta: metav1.ObjectMeta{Name: "find", Namespace: ns},
		Spec: esov1.ExternalSecretSpec{
			SecretStoreRef: esov1.SecretStoreRef{Kind: "ClusterSecretStore", Name: "openbao"},
			DataFrom:       []esov1.ExternalSecretDataFromRemoteRef{{}},
		},
	}
	if err := env.Client.Create(ctx, es); err != nil {
		t.Fatal(err)
	}
	if err := b.Sync(ctx, client.ObjectKeyFromObject(es)); !errors.Is(err, simulate.ErrSecretBackendUnsupported) {
		t.Errorf("Sync of dataFrom without extract = %v, want ErrSecretBackendUnsupported", err)
	}
}

// Every API call Push and Sync make that fails is returned, wrapped, and leaves the
// backend as it was.
func TestSecretBackendReturnsAPIFailures(t *testing.T) {
	for _, tc := range []struct {
		name string
		verb faults.Verb
		nth  int
		push bool // Push the PushSecret; else Sync the ExternalSecret
	}{
		{"Push: get PushSecret", faults.VerbGet, 1, true},
		{"Push: get source", faults.VerbGet, 2, true},
		{"Sync: get ExternalSecret", faults.VerbGet, 1, false},
		{"Sync: get target", faults.VerbGet, 2, false},
		{"Sync: delete target", faults.VerbDelete, 1, false},
		{"Sync: status update", faults.VerbStatusUpdate, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			ns := env.Namespace(t)
			createSource(t, ns, map[string][]byte{"password": []byte("pw")})
			ps := createPushSecret(t, ns, "", prop("password", "identity/admin", "password"))
			es := newES(t, ns, esov1.DeletionPolicyDelete, "", nil, "identity/absent")
			esKey := client.ObjectKeyFromObject(es)
			if _, err := simulate.MarkExternalSecretSynced(ctx, env.Client, esKey, map[string][]byte{"old": []byte("old")}); err != nil {
				t.Fatal(err)
			}
			inj := faults.NewInjector()
			b := simulate.NewSecretBackend(inj.Client(env.Client))
			inj.Arm(tc.verb, tc.nth, faults.Internal)
			var err error
			if tc.push {
				err = b.Push(ctx, ps)
			} else {
				err = b.Sync(ctx, esKey)
			}
			if !inj.Fired() || !errors.Is(err, faults.ErrInjected) {
				t.Errorf("fired %v, error %v; want the injected fault returned", inj.Fired(), err)
			}
			if b.Writes() != 0 || len(b.Values()) != 0 {
				t.Errorf("the backend was written (%d writes)", b.Writes())
			}
		})
	}
}

// Push, Sync and the readers run at once without a data race (go test -race).
func TestSecretBackendIsSafeForConcurrentUse(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	createSource(t, ns, map[string][]byte{"password": []byte("pw")})
	ps := createPushSecret(t, ns, "", prop("password", "identity/admin", "password"))
	es := client.ObjectKeyFromObject(newES(t, ns, esov1.DeletionPolicyMerge, "", []esov1.ExternalSecretData{esData("password", "identity/admin", "password")}))
	b := simulate.NewSecretBackend(env.Client)
	// The first sync creates the target Secret; concurrent creates would race.
	if err := b.Sync(ctx, es); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 4 {
		wg.Go(func() { errs <- b.Push(ctx, ps) })
		wg.Go(func() { errs <- b.Sync(ctx, es) })
		wg.Go(func() {
			b.Set("other", map[string][]byte{"k": []byte("v")})
			_ = b.Values()
			_, _ = b.Get("identity/admin")
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if v, ok := b.Property("identity/admin", "password"); !ok || v != "pw" || b.Writes() != 4 {
		t.Errorf("Property = %q, %v; Writes = %d; want pw, true, 4", v, ok, b.Writes())
	}
}

// Missing names every remote key and property an ExternalSecret reads that the backend
// lacks, and nothing it holds.
func TestSecretBackendMissing(t *testing.T) {
	b := simulate.NewSecretBackend(nil)
	b.Set("app/admin", map[string][]byte{"password": []byte("pw")})
	for name, tc := range map[string]struct {
		reason  string
		data    []esov1.ExternalSecretData
		extract []string
		want    []string
	}{
		"all held": {
			reason: "a property and a whole provider secret the backend holds",
			data:   []esov1.ExternalSecretData{esData("password", "app/admin", "password"), esData("all", "app/admin", "")},
		},
		"missing key and property": {
			reason:  "extract keys first, then data entries, each named",
			data:    []esov1.ExternalSecretData{esData("user", "app/admin", "user"), esData("x", "app/absent", "x")},
			extract: []string{"app/keys"},
			want:    []string{"app/keys", "app/admin property user", "app/absent"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			es := &esov1.ExternalSecret{Spec: esov1.ExternalSecretSpec{Data: tc.data}}
			for _, k := range tc.extract {
				es.Spec.DataFrom = append(es.Spec.DataFrom, esov1.ExternalSecretDataFromRemoteRef{Extract: &esov1.ExternalSecretDataRemoteRef{Key: k}})
			}
			if diff := cmp.Diff(tc.want, b.Missing(es)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}
