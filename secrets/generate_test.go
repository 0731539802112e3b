package secrets_test

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/secrets"
	"github.com/c5c3/reconciler-sdk/testenv"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

var alphanumeric = regexp.MustCompile(`^[A-Za-z0-9]+$`)

// readValue returns the value under dataKey of the Secret at key, and its
// resourceVersion.
func readValue(t testing.TB, key client.ObjectKey, dataKey string) (string, string) {
	t.Helper()
	s := &corev1.Secret{}
	if err := env.Client.Get(context.Background(), key, s); err != nil {
		t.Fatal(err)
	}
	return string(s.Data[dataKey]), s.ResourceVersion
}

func TestEnsureGeneratedSecretGeneratesOnceAndKeeps(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	gs := secrets.DefaultGeneratedSecret(client.ObjectKey{Namespace: ns, Name: "identity-admin-source"}, "password")
	gs.Labels = map[string]string{"app.kubernetes.io/name": "identity"}

	outcome, err := secrets.EnsureGeneratedSecret(ctx, env.Client, env.Scheme, owner, gs)
	if err != nil || outcome != secrets.SecretGenerated {
		t.Fatalf("first pass = %v, %v; want Generated", outcome, err)
	}
	created := &corev1.Secret{}
	if err := env.Client.Get(ctx, gs.Key, created); err != nil {
		t.Fatal(err)
	}
	value := string(created.Data["password"])
	if len(value) != secrets.DefaultGeneratedLength || !alphanumeric.MatchString(value) {
		t.Errorf("generated value has length %d and alphanumeric=%v; want %d alphanumeric characters",
			len(value), alphanumeric.MatchString(value), secrets.DefaultGeneratedLength)
	}
	if ref := metav1.GetControllerOf(created); ref == nil || ref.UID != owner.UID {
		t.Errorf("controller reference = %+v, want the owner", ref)
	}
	if created.Type != corev1.SecretTypeOpaque || created.Labels["app.kubernetes.io/name"] != "identity" {
		t.Errorf("type %q labels %v", created.Type, created.Labels)
	}

	// Every later pass keeps the value and writes nothing.
	c, counter, err := env.CountingClient()
	if err != nil {
		t.Fatal(err)
	}
	for pass := range 3 {
		outcome, err := secrets.EnsureGeneratedSecret(ctx, c, env.Scheme, owner, gs)
		if err != nil || outcome != secrets.SecretKept {
			t.Fatalf("pass %d = %v, %v; want Kept", pass+2, outcome, err)
		}
	}
	if counter.Writes() != 0 {
		t.Errorf("later passes wrote %d times, want 0", counter.Writes())
	}
	if got, rv := readValue(t, gs.Key, "password"); got != value || rv != created.ResourceVersion {
		t.Errorf("value or resourceVersion changed (rv %s -> %s)", created.ResourceVersion, rv)
	}

	// A controller restart: a new process, a new client, nothing in memory.
	restarted, err := client.New(env.Config, client.Options{Scheme: testenv.NewScheme()})
	if err != nil {
		t.Fatal(err)
	}
	if outcome, err := secrets.EnsureGeneratedSecret(ctx, restarted, restarted.Scheme(), owner, gs); err != nil || outcome != secrets.SecretKept {
		t.Fatalf("after restart = %v, %v; want Kept", outcome, err)
	}
	if got, _ := readValue(t, gs.Key, "password"); got != value {
		t.Error("value changed after a controller restart")
	}

	// Another Secret gets another value.
	other := gs
	other.Key.Name = "glance-admin-source"
	if _, err := secrets.EnsureGeneratedSecret(ctx, env.Client, env.Scheme, owner, other); err != nil {
		t.Fatal(err)
	}
	if got, _ := readValue(t, other.Key, "password"); got == value {
		t.Error("two generated Secrets share a value")
	}
}

// TestEnsureGeneratedSecretSurvivesExternalSecretRestore runs the whole push/read-back
// loop: generated Secret -> PushSecret -> backend -> ExternalSecret -> synced Secret.
// Deleting the ExternalSecret (and, as the garbage collector would, the Secret it
// owns) and restoring it never changes the credential.
func TestEnsureGeneratedSecretSurvivesExternalSecretRestore(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	ref := secrets.EffectiveStoreRef(nil)
	synced := client.ObjectKey{Namespace: ns, Name: "identity-admin"}
	gs := secrets.DefaultGeneratedSecret(client.ObjectKey{Namespace: ns, Name: "identity-admin-source"}, "password")
	gs.RestoreFrom = &synced

	backend := map[string][]byte{} // what ESO pushed to OpenBao
	pass := func() secrets.GenerateOutcome {
		t.Helper()
		outcome, err := secrets.EnsureGeneratedSecret(ctx, env.Client, env.Scheme, owner, gs)
		if err != nil {
			t.Fatal(err)
		}
		if err := secrets.EnsurePushSecret(ctx, env.Client, env.Scheme, owner, desiredPushSecret(ns, gs.Key.Name, ref)); err != nil {
			t.Fatal(err)
		}
		// ESO pushes the source Secret's value to the backend.
		v, _ := readValue(t, gs.Key, "password")
		backend["password"] = []byte(v)
		return outcome
	}
	restoreES := func() {
		t.Helper()
		if err := env.Client.Create(ctx, desiredExternalSecret(ns, synced.Name, synced.Name, ref)); err != nil {
			t.Fatal(err)
		}
		if _, err := simulate.MarkExternalSecretSynced(ctx, env.Client, synced, backend); err != nil {
			t.Fatal(err)
		}
	}

	if got := pass(); got != secrets.SecretGenerated {
		t.Fatalf("first pass: %v", got)
	}
	value, _ := readValue(t, gs.Key, "password")
	restoreES()
	if got, err := secrets.GetSecretValue(ctx, env.Client, synced, "password"); err != nil || got != value {
		t.Fatalf("synced copy = %v; want the generated value", err)
	}

	// The ExternalSecret is deleted; the garbage collector (absent on envtest) would
	// take the synced Secret it controls with it.
	es := desiredExternalSecret(ns, synced.Name, synced.Name, ref)
	if err := env.Client.Delete(ctx, es); err != nil {
		t.Fatal(err)
	}
	syncedSecret := &corev1.Secret{}
	if err := env.Client.Get(ctx, synced, syncedSecret); err != nil {
		t.Fatal(err)
	}
	if ctl := metav1.GetControllerOf(syncedSecret); ctl == nil || ctl.Kind != "ExternalSecret" {
		t.Fatalf("synced Secret controller = %+v, want its ExternalSecret", ctl)
	}
	if err := env.Client.Delete(ctx, syncedSecret); err != nil {
		t.Fatal(err)
	}
	if got := pass(); got != secrets.SecretKept {
		t.Fatalf("pass without ExternalSecret: %v, want Kept", got)
	}

	restoreES()
	if got := pass(); got != secrets.SecretKept {
		t.Fatalf("pass after restore: %v, want Kept", got)
	}
	if got, _ := readValue(t, gs.Key, "password"); got != value {
		t.Error("generated value changed across the ExternalSecret's deletion and restore")
	}
	if got, err := secrets.GetSecretValue(ctx, env.Client, synced, "password"); err != nil || got != value {
		t.Errorf("restored synced copy differs from the generated value (err %v)", err)
	}
}

// TestEnsureGeneratedSecretRestoresFromSyncedCopy loses the generated Secret while the
// backend still holds the credential: it is restored, not regenerated.
func TestEnsureGeneratedSecretRestoresFromSyncedCopy(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	synced := client.ObjectKey{Namespace: ns, Name: "identity-admin"}
	createSecret(t, ns, synced.Name, map[string][]byte{"password": []byte("Backend0Value0Held0In0OpenBao000")})
	gs := secrets.DefaultGeneratedSecret(client.ObjectKey{Namespace: ns, Name: "identity-admin-source"}, "password")
	gs.RestoreFrom = &synced

	c, counter, err := env.CountingClient()
	if err != nil {
		t.Fatal(err)
	}
	outcome, err := secrets.EnsureGeneratedSecret(ctx, c, env.Scheme, owner, gs)
	if err != nil || outcome != secrets.SecretRestored {
		t.Fatalf("= %v, %v; want Restored", outcome, err)
	}
	if got, _ := readValue(t, gs.Key, "password"); got != "Backend0Value0Held0In0OpenBao000" {
		t.Error("restored value differs from the synced copy")
	}
	if counter.Writes() != 1 || counter.Method("POST") != 1 {
		t.Errorf("writes = %d (POST %d), want one create", counter.Writes(), counter.Method("POST"))
	}

	// A synced copy without the key, or no synced copy: generate.
	createSecret(t, ns, "keyless", map[string][]byte{"username": []byte("admin")})
	for _, from := range []string{"keyless", "absent"} {
		gs := secrets.DefaultGeneratedSecret(client.ObjectKey{Namespace: ns, Name: "from-" + from}, "password")
		gs.RestoreFrom = &client.ObjectKey{Namespace: ns, Name: from}
		if outcome, err := secrets.EnsureGeneratedSecret(ctx, env.Client, env.Scheme, owner, gs); err != nil || outcome != secrets.SecretGenerated {
			t.Errorf("RestoreFrom %s: = %v, %v; want Generated", from, outcome, err)
		}
	}
}

func TestEnsureGeneratedSecretAddsMissingKeyOnly(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	// The owner's Secret, with other keys (and an empty password) put there by someone.
	createOwnedSecret(t, owner, "creds", map[string][]byte{"username": []byte("admin"), "password": {}})

	for _, dataKey := range []string{"token", "password"} {
		gs := secrets.DefaultGeneratedSecret(client.ObjectKey{Namespace: ns, Name: "creds"}, dataKey)
		gs.Length = 48
		outcome, err := secrets.EnsureGeneratedSecret(ctx, env.Client, env.Scheme, owner, gs)
		if err != nil || outcome != secrets.SecretGenerated {
			t.Fatalf("%s: = %v, %v; want Generated", dataKey, outcome, err)
		}
	}
	s := &corev1.Secret{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "creds"}, s); err != nil {
		t.Fatal(err)
	}
	if string(s.Data["username"]) != "admin" {
		t.Errorf("existing key lost: %q", s.Data["username"])
	}
	if len(s.Data["token"]) != 48 || len(s.Data["password"]) != 48 {
		t.Errorf("token %d bytes, password %d bytes; want 48 each", len(s.Data["token"]), len(s.Data["password"]))
	}
	if len(s.OwnerReferences) != 1 || !metav1.IsControlledBy(s, owner) {
		t.Errorf("owner references changed: %v", s.OwnerReferences)
	}
}

// TestEnsureGeneratedSecretConcurrentFirstPasses releases four first passes together.
// They may well run one after another, so this does not force the lost-create path;
// TestEnsureGeneratedSecretLosesCreateRace does.
func TestEnsureGeneratedSecretConcurrentFirstPasses(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	gs := secrets.DefaultGeneratedSecret(client.ObjectKey{Namespace: ns, Name: "raced"}, "password")

	const workers = 4
	var wg sync.WaitGroup
	outcomes := make([]secrets.GenerateOutcome, workers)
	errs := make([]error, workers)
	start := make(chan struct{})
	for i := range workers {
		wg.Go(func() {
			c, err := client.New(env.Config, client.Options{Scheme: env.Scheme})
			if err != nil {
				errs[i] = err
				return
			}
			<-start
			outcomes[i], errs[i] = secrets.EnsureGeneratedSecret(ctx, c, env.Scheme, owner, gs)
		})
	}
	close(start)
	wg.Wait()
	generated := 0
	for i := range workers {
		if errs[i] != nil {
			t.Fatalf("worker %d: %v", i, errs[i])
		}
		if outcomes[i] == secrets.SecretGenerated {
			generated++
		}
	}
	if generated != 1 {
		t.Errorf("%d workers generated a value, want exactly 1: %v", generated, outcomes)
	}
}

// TestEnsureGeneratedSecretLosesCreateRace forces the create race on a real API
// server: between the pass's read (NotFound) and its create, a competing writer
// creates the Secret. The pass's create then fails with AlreadyExists from the API
// server; the pass reads again and ends with the competitor's Secret, never
// overwriting its value.
func TestEnsureGeneratedSecretLosesCreateRace(t *testing.T) {
	const theirs = "Competitor0Value0Written0First00"
	cases := map[string]struct {
		// competitor is the data the competing writer creates the Secret with.
		competitor map[string][]byte
		// unowned makes the competitor a writer other than the owner's controller
		// (kubectl, Helm): its Secret has no controller reference.
		unowned     bool
		wantOutcome secrets.GenerateOutcome
		wantPatches int
	}{
		"the winner wrote the key: keep it": {
			competitor:  map[string][]byte{"password": []byte(theirs)},
			wantOutcome: secrets.SecretKept,
		},
		"the winner's Secret lacks the key: add it, keep the rest": {
			competitor:  map[string][]byte{"username": []byte("admin")},
			wantOutcome: secrets.SecretGenerated, wantPatches: 1,
		},
		"the winner is not the owner's: refused, untouched": {
			competitor: map[string][]byte{"username": []byte("admin")}, unowned: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			ns := env.Namespace(t)
			owner := newOwner(t, ns)
			gs := secrets.DefaultGeneratedSecret(client.ObjectKey{Namespace: ns, Name: "raced"}, "password")

			base, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
			if err != nil {
				t.Fatal(err)
			}
			var creates, patches int
			var competitorRV string
			c := interceptor.NewClient(base, interceptor.Funcs{
				Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
					creates++
					if creates == 1 {
						// The competing writer gets there first.
						winner := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: gs.Key.Name}, Data: tc.competitor}
						if !tc.unowned {
							// Another manager of the same CR: the owner's controller reference.
							if err := controllerutil.SetControllerReference(owner, winner, env.Scheme); err != nil {
								t.Error(err)
							}
						}
						if err := env.Client.Create(ctx, winner); err != nil {
							t.Errorf("competing create: %v", err)
						}
						competitorRV = winner.ResourceVersion
					}
					return c.Create(ctx, obj, opts...) // the API server answers AlreadyExists
				},
				Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
					patches++
					return c.Patch(ctx, obj, patch, opts...)
				},
			})

			outcome, err := secrets.EnsureGeneratedSecret(ctx, c, env.Scheme, owner, gs)
			if tc.unowned {
				if !errors.Is(err, apply.ErrNotControlled) {
					t.Fatalf("= %v, %v; want apply.ErrNotControlled", outcome, err)
				}
			} else if err != nil || outcome != tc.wantOutcome {
				t.Fatalf("= %v, %v; want %v", outcome, err, tc.wantOutcome)
			}
			if creates != 1 {
				t.Errorf("%d creates, want 1 (the lost race is not retried as a create)", creates)
			}
			if patches != tc.wantPatches {
				t.Errorf("%d patches, want %d", patches, tc.wantPatches)
			}
			stored := &corev1.Secret{}
			if err := env.Client.Get(ctx, gs.Key, stored); err != nil {
				t.Fatal(err)
			}
			if want := string(tc.competitor["password"]); want != "" || tc.unowned {
				if got := string(stored.Data["password"]); got != want {
					t.Error("the competitor's value was overwritten")
				}
				if stored.ResourceVersion != competitorRV {
					t.Errorf("resourceVersion %s -> %s: the competitor's Secret was written", competitorRV, stored.ResourceVersion)
				}
			} else if got := stored.Data["password"]; len(got) != secrets.DefaultGeneratedLength || !alphanumeric.Match(got) {
				t.Errorf("added value has %d bytes, want %d alphanumeric characters", len(got), secrets.DefaultGeneratedLength)
			}
			if string(stored.Data["username"]) != string(tc.competitor["username"]) {
				t.Errorf("username = %q, want the competitor's %q", stored.Data["username"], tc.competitor["username"])
			}
			if tc.unowned && len(stored.OwnerReferences) != 0 {
				t.Errorf("the competitor's Secret gained owner references %v", stored.OwnerReferences)
			}
			if !tc.unowned && (len(stored.OwnerReferences) != 1 || !metav1.IsControlledBy(stored, owner)) {
				t.Errorf("owner references changed: %v", stored.OwnerReferences)
			}
		})
	}
}

func TestEnsureGeneratedSecretNilOwner(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	gs := secrets.DefaultGeneratedSecret(client.ObjectKey{Namespace: ns, Name: "unowned"}, "password")
	if outcome, err := secrets.EnsureGeneratedSecret(ctx, env.Client, env.Scheme, nil, gs); err != nil || outcome != secrets.SecretGenerated {
		t.Fatalf("= %v, %v", outcome, err)
	}
	s := &corev1.Secret{}
	if err := env.Client.Get(ctx, gs.Key, s); err != nil {
		t.Fatal(err)
	}
	if len(s.OwnerReferences) != 0 {
		t.Errorf("owner references %v, want none", s.OwnerReferences)
	}
}

func TestEnsureGeneratedSecretInvalidInput(t *testing.T) {
	key := client.ObjectKey{Namespace: "identity", Name: "creds"}
	with := func(mutate func(*secrets.GeneratedSecret)) secrets.GeneratedSecret {
		gs := secrets.DefaultGeneratedSecret(key, "password")
		mutate(&gs)
		return gs
	}
	cases := map[string]struct {
		gs        secrets.GeneratedSecret
		wantField string
	}{
		"no name":             {gs: with(func(g *secrets.GeneratedSecret) { g.Key.Name = "" }), wantField: "Key.Name"},
		"no namespace":        {gs: with(func(g *secrets.GeneratedSecret) { g.Key.Namespace = "" }), wantField: "Key.Namespace"},
		"no data key":         {gs: with(func(g *secrets.GeneratedSecret) { g.DataKey = "" }), wantField: "DataKey"},
		"invalid data key":    {gs: with(func(g *secrets.GeneratedSecret) { g.DataKey = "pass/word" }), wantField: `DataKey: invalid generated secret: "pass/word"`},
		"too short":           {gs: with(func(g *secrets.GeneratedSecret) { g.Length = 8 }), wantField: "Length: invalid generated secret: 8 is outside [16, 4096]"},
		"too long":            {gs: with(func(g *secrets.GeneratedSecret) { g.Length = 4097 }), wantField: "Length"},
		"negative":            {gs: with(func(g *secrets.GeneratedSecret) { g.Length = -1 }), wantField: "Length"},
		"restore without key": {gs: with(func(g *secrets.GeneratedSecret) { g.RestoreFrom = &client.ObjectKey{Name: "x"} }), wantField: "RestoreFrom"},
	}
	c, counter, err := env.CountingClient()
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := secrets.EnsureGeneratedSecret(context.Background(), c, env.Scheme, nil, tc.gs)
			if !errors.Is(err, secrets.ErrInvalidGeneratedSecret) {
				t.Fatalf("err = %v, want ErrInvalidGeneratedSecret", err)
			}
			if !strings.Contains(err.Error(), tc.wantField) || !strings.Contains(err.Error(), "generated Secret ") {
				t.Errorf("error %q does not name the Secret and %q", err, tc.wantField)
			}
		})
	}
	if counter.Total() != 0 {
		t.Errorf("invalid input made %d API requests, want 0", counter.Total())
	}
}

// TestEnsureGeneratedSecretAPIErrorsNeverGenerate injects API failures: an uncertain
// read never leads to a new credential.
func TestEnsureGeneratedSecretAPIErrorsNeverGenerate(t *testing.T) {
	ctx := context.Background()
	key := client.ObjectKey{Namespace: "identity", Name: "creds"}
	restore := client.ObjectKey{Namespace: "identity", Name: "synced"}
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "x", errors.New("denied"))
	cases := map[string]struct {
		getFails   client.ObjectKey
		listFails  bool
		createFail bool
		wantText   string
		check      func(error) bool
	}{
		"reading the Secret fails": {
			getFails: key, wantText: "get Secret identity/creds", check: apierrors.IsForbidden,
		},
		"reading the synced copy fails": {
			getFails: restore, wantText: "restore Secret identity/creds: read synced copy Secret identity/synced", check: apierrors.IsForbidden,
		},
		"listing the ExternalSecrets that may restore it fails": {
			listFails: true, wantText: "restore Secret identity/creds: list ExternalSecrets in namespace identity that may restore Secret identity/synced",
			check: apierrors.IsForbidden,
		},
		"creating the Secret fails": {
			createFail: true, wantText: "create Secret identity/creds", check: apierrors.IsForbidden,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			creates := 0
			c := interceptor.NewClient(fakeBase(t), interceptor.Funcs{
				Get: func(ctx context.Context, c client.WithWatch, k client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					if k == tc.getFails {
						return forbidden
					}
					return c.Get(ctx, k, obj, opts...)
				},
				List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
					if tc.listFails {
						return forbidden
					}
					return c.List(ctx, list, opts...)
				},
				Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
					creates++
					if tc.createFail {
						return forbidden
					}
					return c.Create(ctx, obj, opts...)
				},
			})
			gs := secrets.DefaultGeneratedSecret(key, "password")
			gs.RestoreFrom = &restore
			outcome, err := secrets.EnsureGeneratedSecret(ctx, c, env.Scheme, nil, gs)
			if !tc.check(err) || outcome != secrets.SecretKept {
				t.Fatalf("= %v, %v", outcome, err)
			}
			if !strings.Contains(err.Error(), tc.wantText) {
				t.Errorf("error %q does not contain %q", err, tc.wantText)
			}
			if !tc.createFail && creates != 0 {
				t.Errorf("%d creates after a failed read, want 0", creates)
			}
		})
	}
}

func TestGenerateOutcomeString(t *testing.T) {
	for outcome, want := range map[secrets.GenerateOutcome]string{
		secrets.SecretKept: "Kept", secrets.SecretGenerated: "Generated", secrets.SecretRestored: "Restored",
		secrets.SecretRestorePending: "RestorePending", secrets.GenerateOutcome(9): "GenerateOutcome(9)",
	} {
		if got := outcome.String(); got != want {
			t.Errorf("%d: %q, want %q", int(outcome), got, want)
		}
		if ready := outcome.Ready(); ready != (outcome != secrets.SecretRestorePending) {
			t.Errorf("%v.Ready() = %v", outcome, ready)
		}
	}
}

// TestEnsureGeneratedSecretAddKeyRace makes the optimistic-lock patch lose a race once:
// the pass reads again and, finding the key written by the winner, keeps it.
func TestEnsureGeneratedSecretAddKeyRace(t *testing.T) {
	ctx := context.Background()
	key := client.ObjectKey{Namespace: "identity", Name: "creds"}
	cases := map[string]struct {
		patchErr    error
		winnerValue string // written by a concurrent writer when the patch is refused
		wantOutcome secrets.GenerateOutcome
		wantErr     func(error) bool
		wantPatches int
	}{
		"conflict, the winner wrote the key: keep it": {
			patchErr:    apierrors.NewConflict(schema.GroupResource{Resource: "secrets"}, "creds", errors.New("modified")),
			winnerValue: "Winner0Value0000", wantOutcome: secrets.SecretKept, wantPatches: 1,
		},
		"conflict, the key is still missing: patch again": {
			patchErr:    apierrors.NewConflict(schema.GroupResource{Resource: "secrets"}, "creds", errors.New("modified")),
			wantOutcome: secrets.SecretGenerated, wantPatches: 2,
		},
		"refused: error naming the key and the Secret": {
			patchErr: apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "creds", errors.New("denied")),
			wantErr: func(err error) bool {
				return apierrors.IsForbidden(err) && strings.Contains(err.Error(), `add key "password" to Secret identity/creds`)
			},
			wantPatches: 1,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			base := fakeBase(t)
			if err := base.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
				Data: map[string][]byte{"username": []byte("admin")}}); err != nil {
				t.Fatal(err)
			}
			patches := 0
			c := interceptor.NewClient(base, interceptor.Funcs{
				Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
					patches++
					if patches > 1 {
						return c.Patch(ctx, obj, patch, opts...)
					}
					if tc.winnerValue != "" {
						s := &corev1.Secret{}
						if err := c.Get(ctx, key, s); err != nil {
							return err
						}
						s.Data["password"] = []byte(tc.winnerValue)
						if err := c.Update(ctx, s); err != nil {
							return err
						}
					}
					return tc.patchErr
				},
			})
			outcome, err := secrets.EnsureGeneratedSecret(ctx, c, env.Scheme, nil, secrets.DefaultGeneratedSecret(key, "password"))
			if tc.wantErr != nil {
				if !tc.wantErr(err) {
					t.Fatalf("err = %v", err)
				}
			} else if err != nil || outcome != tc.wantOutcome {
				t.Fatalf("= %v, %v; want %v", outcome, err, tc.wantOutcome)
			}
			if patches != tc.wantPatches {
				t.Errorf("%d patches, want %d", patches, tc.wantPatches)
			}
			s := &corev1.Secret{}
			if err := base.Get(ctx, key, s); err != nil {
				t.Fatal(err)
			}
			if tc.winnerValue != "" && string(s.Data["password"]) != tc.winnerValue {
				t.Error("the winner's value was overwritten")
			}
			if string(s.Data["username"]) != "admin" {
				t.Error("existing key lost")
			}
		})
	}
}
