package main

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	mariadbv1alpha1 "github.com/mariadb-operator/mariadb-operator/v25/api/v1alpha1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"

	"github.com/c5c3/reconciler-sdk/database"
	ksv1alpha1 "github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/identitybackend"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keys"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keystone"
	"github.com/c5c3/reconciler-sdk/examples/keystone/names"
	"github.com/c5c3/reconciler-sdk/examples/keystone/rotation"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/outbound"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/secrets"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
	"github.com/c5c3/reconciler-sdk/testenv"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

// keystoneConditionOrder is the order of the Keystone's table: the sub-conditions in
// pipeline order, then the aggregate Ready.
var keystoneConditionOrder = []string{
	keystone.ConditionSecretsReady, keystone.ConditionDatabaseTLSReady,
	keystone.ConditionIdentityBackendsReady, keystone.ConditionConfigReady,
	keystone.ConditionFernetKeysReady, keystone.ConditionCredentialKeysReady,
	keystone.ConditionDatabaseReady, keystone.ConditionPolicyValid, keystone.ConditionDeploymentReady,
	keystone.ConditionHTTPRouteReady, keystone.ConditionKeystoneAPIReady, keystone.ConditionHPAReady,
	keystone.ConditionBootstrapReady, keystone.ConditionTrustFlushReady, keystone.ConditionPasswordRotationReady,
	reconcile.ConditionReady,
}

// demoOperatorImage is the image the in-process operator names as its own: the
// rotation CronJobs name it, and nothing pulls it (kwok's fake node runs no container).
const demoOperatorImage = "registry.example/keystone-operator:demo"

// demoBackendPollInterval is how often the KeystoneIdentityBackend controller looks
// again at a backend waiting for a Secret (whose changes raise no event) in the demo;
// the shipped command uses identitybackend.DefaultPollInterval (15 s).
const demoBackendPollInterval = 2 * time.Second

// startKeystoneOperator runs the Keystone operator in-process on env, wired as
// examples/keystone/cmd's run wires it (the Keystone reconciler and the
// KeystoneIdentityBackend reconciler), with the health check pointed at api once the
// Keystone publishes its endpoint, and the KeystoneIdentityBackend controller sending
// its Keystone API calls to api (it polls every demoBackendPollInterval). stop ends
// the manager and waits for it.
func startKeystoneOperator(ctx context.Context, env *testenv.Env, api *identityAPI) (stop func() error, err error) {
	return startManager(ctx, env, keystone.FieldManager, func(ctx context.Context, mgr mcmanager.Manager, resolver *multicluster.ClusterResolver) error {
		opts := keystone.DefaultOptions()
		opts.OperatorImage = demoOperatorImage
		opts.Recorder = mgr.GetLocalManager().GetEventRecorder(keystone.FieldManager)
		opts.Outbound = outbound.Policy{AllowCIDRs: outbound.LoopbackPrefixes} // the identity API stand-in listens on loopback
		opts.ProbeURL = func(k *ksv1alpha1.Keystone) string {
			if k.Status.Endpoint == "" {
				return ""
			}
			return api.URL() + keystone.VersionPath
		}
		r, err := keystone.NewReconciler(resolver, opts)
		if err != nil {
			return err
		}
		if err := r.SetupWithManager(ctx, mgr); err != nil {
			return err
		}
		bopts := identitybackend.DefaultOptions()
		bopts.KeystoneURL = func(*ksv1alpha1.Keystone) string { return api.URL() }
		bopts.OutboundPolicy = outbound.Policy{AllowCIDRs: outbound.LoopbackPrefixes} // the stand-in listens on loopback
		bopts.PollInterval = demoBackendPollInterval
		backends, err := identitybackend.NewReconciler(resolver, bopts)
		if err != nil {
			return err
		}
		return backends.SetupWithManager(ctx, mgr)
	})
}

// runKeystone is the Keystone scene: the Keystone operator runs while the phases of
// keystoneScenario do; it is stopped on every path.
func runKeystone(ctx context.Context, env *testenv.Env, d *display, o options, root string) (err error) {
	sample, err := loadKeystoneSample(root, namespace)
	if err != nil {
		return err
	}
	api, err := newIdentityAPI(keystoneAdminUser(sample))
	if err != nil {
		return err
	}
	defer api.Close()
	stopOperator, err := startKeystoneOperator(ctx, env, api)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, stopOperator()) }()
	d.Linef("")
	d.Linef("Keystone. The Keystone operator runs in-process (field manager %s) with its KeystoneIdentityBackend controller;",
		keystone.FieldManager)
	d.Linef("Jobs complete through the real Job controller on kwok's fake node (nothing runs in them). A local stand-in plays")
	d.Linef("the identity API at %s: the health check's GET %s, and (package keystonetest) the tokens, domains and", api.URL(), keystone.VersionPath)
	d.Linef("OS-FEDERATION calls of the KeystoneIdentityBackend controller, which polls every %s here (15 s in the command).",
		demoBackendPollInterval)
	s := &keystoneScenario{c: env.Client, d: d, o: o, root: root, api: api}
	for _, step := range []func(context.Context) error{s.firstRollout, s.rotateFernetKeys, s.addIdentityProviders} {
		if err := step(ctx); err != nil {
			return err
		}
	}
	s.epilogue()
	return nil
}

// keystoneScenario is the story the demo tells about one Keystone.
type keystoneScenario struct {
	c    client.Client
	d    *display
	o    options
	root string
	k    *ksv1alpha1.Keystone // as applied: its name, namespace and settings
	key  client.ObjectKey
	api  *identityAPI
	// backend is the KeystoneIdentityBackend the demo applies (K3).
	backend client.ObjectKey
	// adminPassword is the admin password ESO synced (never printed): the demo signs
	// in with it to read back what the controller registered in the identity API.
	adminPassword string
}

// phase runs p for the scenario's Keystone.
func (s *keystoneScenario) phase(ctx context.Context, p phase[*ksv1alpha1.Keystone]) (*ksv1alpha1.Keystone, time.Duration, error) {
	sub := subject[*ksv1alpha1.Keystone]{kind: "Keystone", key: s.key, order: keystoneConditionOrder,
		newObj: func() *ksv1alpha1.Keystone { return &ksv1alpha1.Keystone{} }}
	return runPhase(ctx, s.c, s.d, sub, p, s.o.Pause, s.o.PhaseTimeout)
}

// keystoneReadyNow tells whether Ready is True for the Keystone's current generation.
func keystoneReadyNow(k *ksv1alpha1.Keystone) bool {
	rows := rowsIn(k, keystoneConditionOrder)
	return k.Status.ObservedGeneration == k.Generation && rows[len(rows)-1].isTrue()
}

// showsReason is an action's precondition: the Keystone's condition condType has
// reason for its current generation.
func (s *keystoneScenario) showsReason(condType, reason string) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		k := &ksv1alpha1.Keystone{}
		if err := s.c.Get(ctx, s.key, k); err != nil {
			return false, fmt.Errorf("reading Keystone %s: %w", s.key, err)
		}
		for _, r := range rowsIn(k, keystoneConditionOrder) {
			if r.Type == condType {
				return r.Reason == reason && r.Current, nil
			}
		}
		return false, nil
	}
}

// showsReasonAndExists is showsReason, and the object at key exists.
func (s *keystoneScenario) showsReasonAndExists(condType, reason string, key client.ObjectKey, obj client.Object) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		if ok, err := s.showsReason(condType, reason)(ctx); !ok || err != nil {
			return false, err
		}
		return exists(ctx, s.c, key, obj)
	}
}

// storeIsReady tells whether the ClusterSecretStore name exists and is Ready (the
// Horizon scene may have left it so).
func storeIsReady(ctx context.Context, c client.Client, name string) (bool, error) {
	store := &esov1.ClusterSecretStore{}
	if ok, err := exists(ctx, c, client.ObjectKey{Name: name}, store); !ok || err != nil {
		return false, err
	}
	for _, cond := range store.Status.Conditions {
		if cond.Type == esov1.SecretStoreReady {
			return cond.Status == corev1.ConditionTrue, nil
		}
	}
	return false, nil
}

// keySteps are the two key repository steps as the operator builds them, for their
// children's names.
func keySteps() (fernet, credential *keystone.KeyRepositoryStep) {
	opts := keystone.KeyStepOptions{FieldManager: keystone.FieldManager, OperatorImage: demoOperatorImage}
	return keystone.NewFernetKeysStep(opts), keystone.NewCredentialKeysStep(opts)
}

// firstRollout applies the sample Keystone and plays the secret store, ESO and
// mariadb-operator until the Keystone is Ready.
func (s *keystoneScenario) firstRollout(ctx context.Context) error {
	k, err := loadKeystoneSample(s.root, namespace)
	if err != nil {
		return err
	}
	s.k, s.key = k, client.ObjectKeyFromObject(k)
	if err := ensureNamespace(ctx, s.c, namespace); err != nil {
		return err
	}
	store := secrets.EffectiveStoreRef(k.Spec.SecretStoreRef).Name
	storeReady, err := storeIsReady(ctx, s.c, store)
	if err != nil {
		return err
	}
	if !storeReady {
		err = s.c.Create(ctx, &esov1.ClusterSecretStore{
			ObjectMeta: metav1.ObjectMeta{Name: store},
			Spec:       esov1.SecretStoreSpec{Provider: simulate.OpenBaoProvider()},
		})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating ClusterSecretStore %s: %w", store, err)
		}
	}
	mariadb := client.ObjectKey{Namespace: namespace, Name: k.Spec.Database.MariaDBRef.Name}
	err = s.c.Create(ctx, &mariadbv1alpha1.MariaDB{ObjectMeta: metav1.ObjectMeta{Name: mariadb.Name, Namespace: mariadb.Namespace}})
	if err != nil {
		return fmt.Errorf("creating MariaDB %s: %w", mariadb, err)
	}
	if err := s.c.Create(ctx, k); err != nil {
		return fmt.Errorf("applying Keystone %s: %w", s.key, err)
	}
	s.d.Linef("")
	s.d.Linef("K1. Apply the minimal sample Keystone %s (%s)", s.key, keystoneSamplePath)
	if storeReady {
		s.d.Linef("    The ClusterSecretStore %s is Ready already (the Horizon scene); the MariaDB %s exists,", store, mariadb)
	} else {
		s.d.Linef("    The ClusterSecretStore %s exists but ESO has not validated it yet; the MariaDB %s exists,", store, mariadb)
	}
	s.d.Linef("    but mariadb-operator has not reported it Ready yet.")

	admin := client.ObjectKey{Namespace: namespace, Name: names.AdminPasswordSecretName(k)}
	var actions []action
	if !storeReady {
		actions = append(actions, action{
			when: s.showsReason(keystone.ConditionSecretsReady, secrets.ReasonSecretStoreNotReady),
			do: func(ctx context.Context) (string, error) {
				if _, err := simulate.MarkClusterSecretStoreReady(ctx, s.c, store); err != nil {
					return "", err
				}
				return fmt.Sprintf("ESO (played): ClusterSecretStore %s is Ready", store), nil
			},
		})
	}
	actions = append(actions, action{
		when: s.showsReasonAndExists(keystone.ConditionSecretsReady, keystone.ReasonWaitingForAdminPassword,
			admin, &esov1.ExternalSecret{}),
		do: func(ctx context.Context) (string, error) {
			password, err := s.o.NewPassword()
			if err != nil {
				return "", err
			}
			if _, err := simulate.MarkExternalSecretSynced(ctx, s.c, admin,
				map[string][]byte{names.AdminPasswordDataKey: []byte(password)}); err != nil {
				return "", err
			}
			// The bootstrap Job sets the admin password the identity API accepts; no
			// container runs it here, so the stand-in learns it now.
			s.api.setAdminPassword(password)
			s.adminPassword = password
			return fmt.Sprintf("ESO (played): synced %q into Secret %s (a random admin password, not shown)",
				k.Spec.Bootstrap.AdminPassword.RemoteKey, admin), nil
		},
	})
	pwRestore := client.ObjectKey{Namespace: namespace, Name: keystone.PasswordRestoreName(k)}
	actions = append(actions, action{
		when: s.showsReasonAndExists(keystone.ConditionConfigReady, secrets.ReasonRestorePending, pwRestore, &esov1.ExternalSecret{}),
		do: func(ctx context.Context) (string, error) {
			if _, err := simulate.MarkExternalSecretEmpty(ctx, s.c, pwRestore); err != nil {
				return "", err
			}
			return fmt.Sprintf("ESO (played): ExternalSecret %s finds no backup at %q: a first install, the database password is generated",
				pwRestore, keystone.PasswordRemoteKey(k)), nil
		},
	})
	fernet, credential := keySteps()
	for _, step := range []*keystone.KeyRepositoryStep{fernet, credential} {
		restore := client.ObjectKey{Namespace: namespace, Name: step.RestoreName(k)}
		actions = append(actions, action{
			when: s.showsReasonAndExists(step.Condition(), keystone.ReasonWaitingForKeyRestore, restore, &esov1.ExternalSecret{}),
			do: func(ctx context.Context) (string, error) {
				if _, err := simulate.MarkExternalSecretEmpty(ctx, s.c, restore); err != nil {
					return "", err
				}
				return fmt.Sprintf("ESO (played): ExternalSecret %s finds no backup at %q: a first install, the keys are generated",
					restore, step.RemoteKey(k)), nil
			},
		})
	}
	actions = append(actions, action{
		when: s.showsReason(keystone.ConditionDatabaseReady, database.ReasonMariaDBNotReady),
		do: func(ctx context.Context) (string, error) {
			if _, err := simulate.MarkMariaDBReady(ctx, s.c, mariadb); err != nil {
				return "", err
			}
			return fmt.Sprintf("mariadb-operator (played): MariaDB %s is Ready", mariadb), nil
		},
	})
	db := client.ObjectKey{Namespace: namespace, Name: k.Name}
	for _, m := range []struct {
		kind, reason string
		obj          client.Object
		mark         func(context.Context, client.Client, client.ObjectKey) error
	}{
		{"Database", database.ReasonDatabaseNotReady, &mariadbv1alpha1.Database{}, func(ctx context.Context, c client.Client, key client.ObjectKey) error {
			_, err := simulate.MarkDatabaseReady(ctx, c, key)
			return err
		}},
		{"User", database.ReasonUserNotReady, &mariadbv1alpha1.User{}, func(ctx context.Context, c client.Client, key client.ObjectKey) error {
			_, err := simulate.MarkUserReady(ctx, c, key)
			return err
		}},
		{"Grant", database.ReasonGrantNotReady, &mariadbv1alpha1.Grant{}, func(ctx context.Context, c client.Client, key client.ObjectKey) error {
			_, err := simulate.MarkGrantReady(ctx, c, key)
			return err
		}},
	} {
		actions = append(actions, action{
			when: s.showsReasonAndExists(keystone.ConditionDatabaseReady, m.reason, db, m.obj),
			do: func(ctx context.Context) (string, error) {
				if err := m.mark(ctx, s.c, db); err != nil {
					return "", err
				}
				return fmt.Sprintf("mariadb-operator (played): %s %s is Ready", m.kind, db), nil
			},
		})
	}
	k, took, err := s.phase(ctx, phase[*ksv1alpha1.Keystone]{
		name:    "first rollout of the Keystone",
		table:   true,
		actions: actions,
		done: func(_ context.Context, k *ksv1alpha1.Keystone) (bool, string, error) {
			return keystoneReadyNow(k), "Ready=True", nil
		},
	})
	if err != nil {
		return err
	}
	var jobs []string
	for _, name := range []string{keystone.DBSyncJobName(k), keystone.BootstrapJobName(k)} {
		j := &batchv1.Job{}
		if err := s.c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, j); err != nil {
			return fmt.Errorf("reading Job %s/%s: %w", namespace, name, err)
		}
		jobs = append(jobs, fmt.Sprintf("%s (%d succeeded)", name, j.Status.Succeeded))
	}
	s.d.Linef("    ✓ Ready=True after %.1f s: ConfigMap %s, endpoint %s, synced image %s,",
		took.Seconds(), k.Status.ConfigMap, k.Status.Endpoint, k.Status.SyncedImage)
	s.d.Linef("      Jobs %s", strings.Join(jobs, ", "))
	return nil
}

// primaryRE finds the primary index in a KeysReady message ("staged 0, primary 2, ...").
var primaryRE = regexp.MustCompile(`primary (\d+)`)

// reportedPrimary is the primary index the Keystone's FernetKeysReady condition names
// for its current generation; -1 when it names none.
func reportedPrimary(k *ksv1alpha1.Keystone) int {
	for _, r := range rowsIn(k, keystoneConditionOrder) {
		if r.Type != keystone.ConditionFernetKeysReady || !r.isTrue() {
			continue
		}
		if m := primaryRE.FindStringSubmatch(r.Message); m != nil {
			n, err := strconv.Atoi(m[1])
			if err == nil {
				return n
			}
		}
	}
	return -1
}

// fernetRepository reads the fernet key repository from its Secret. Printed, a
// Repository names its indices and their roles only, never a key.
func (s *keystoneScenario) fernetRepository(ctx context.Context) (keys.Repository, error) {
	key := client.ObjectKey{Namespace: namespace, Name: names.FernetKeysSecretName(s.k)}
	secret := &corev1.Secret{}
	if err := s.c.Get(ctx, key, secret); err != nil {
		return nil, fmt.Errorf("reading Secret %s: %w", key, err)
	}
	repo, err := keys.FromSecretData(secret.Data)
	if err != nil {
		return nil, fmt.Errorf("reading the fernet keys of Secret %s: %w", key, err)
	}
	return repo, nil
}

// rotateFernetKeys plays the fernet rotation CronJob's pod: one rotate-keys run at a
// time past the rotation interval. The primary index moves while Ready stays True.
func (s *keystoneScenario) rotateFernetKeys(ctx context.Context) error {
	k := &ksv1alpha1.Keystone{}
	if err := s.c.Get(ctx, s.key, k); err != nil {
		return fmt.Errorf("reading Keystone %s: %w", s.key, err)
	}
	maxActive, interval := keystone.DefaultMaxActiveKeys, keystone.DefaultRotationInterval
	if k.Spec.Fernet.MaxActiveKeys > 0 {
		maxActive = int(k.Spec.Fernet.MaxActiveKeys)
	}
	if k.Spec.Fernet.RotationInterval != nil && k.Spec.Fernet.RotationInterval.Duration > 0 {
		interval = k.Spec.Fernet.RotationInterval.Duration
	}
	before, err := s.fernetRepository(ctx)
	if err != nil {
		return err
	}
	fernet, _ := keySteps()
	secret := client.ObjectKey{Namespace: namespace, Name: names.FernetKeysSecretName(k)}
	s.d.Linef("")
	s.d.Linef("K2. Rotate the fernet keys, as the pod of CronJob %s does once the interval (%s) has passed", fernet.CronJobName(k), interval)
	s.d.Linef("    before: %s", before)
	readyDropped := false
	_, took, err := s.phase(ctx, phase[*ksv1alpha1.Keystone]{
		name:  "fernet key rotation",
		table: true,
		actions: []action{{do: func(ctx context.Context) (string, error) {
			at := time.Now().Add(interval + time.Minute)
			rotated, err := rotation.RotateKeys(ctx, s.c, secret, maxActive, interval, at)
			if err != nil {
				return "", err
			}
			if !rotated {
				return "", fmt.Errorf("rotating the keys of Secret %s at %s: not rotated although the interval %s has passed",
					secret, at.UTC().Format(time.RFC3339), interval)
			}
			return fmt.Sprintf("CronJob %s's pod (played): %s, its clock at %s: rotated",
				fernet.CronJobName(k), strings.Join(rotation.RotateKeysArgs(secret, maxActive, interval), " "),
				at.UTC().Format(time.RFC3339)), nil
		}}},
		done: func(_ context.Context, k *ksv1alpha1.Keystone) (bool, string, error) {
			if !keystoneReadyNow(k) {
				readyDropped = true
				return false, "Ready=True", nil
			}
			return reportedPrimary(k) > before.Primary(), "FernetKeysReady to report the new primary key", nil
		},
	})
	if err != nil {
		return err
	}
	after, err := s.fernetRepository(ctx)
	if err != nil {
		return err
	}
	if s.o.afterRotation != nil {
		s.o.afterRotation(after.SecretData())
	}
	s.d.Linef("    after:  %s", after)
	s.d.Linef("    ✓ primary key index %d → %d (the staged key 0 became the primary, a new key is staged at 0); no key is shown",
		before.Primary(), after.Primary())
	if readyDropped {
		s.d.Linef("    ✗ Ready left True during the rotation; back to True after %.1f s", took.Seconds())
		return fmt.Errorf("fernet key rotation: Keystone %s was not Ready while the keys rotated", s.key)
	}
	s.d.Linef("    ✓ Ready stayed True; the operator reported the new repository after %.1f s", took.Seconds())
	return nil
}

// epilogue prints the kubectl commands that show the same on a real cluster.
func (s *keystoneScenario) epilogue() {
	ns, name := s.key.Namespace, s.key.Name
	fernet, _ := keySteps()
	s.d.Linef("")
	s.d.Linef("Done. On a real cluster, the same with kubectl:")
	for _, cmd := range []string{
		"kubectl get keystones -n " + ns,
		fmt.Sprintf("kubectl get keystone %s -n %s -o jsonpath='{range .status.conditions[*]}{.type}{\"\\t\"}{.status}{\"\\t\"}{.reason}{\"\\n\"}{end}'", name, ns),
		fmt.Sprintf("kubectl get deploy,svc,pdb,job,cronjob,externalsecret,pushsecret -n %s", ns),
		fmt.Sprintf("kubectl get databases.k8s.mariadb.com,users.k8s.mariadb.com,grants.k8s.mariadb.com -n %s %s", ns, name),
		fmt.Sprintf("kubectl get secret %s -n %s -o jsonpath='{.metadata.annotations}'", names.FernetKeysSecretName(s.k), ns),
		fmt.Sprintf("kubectl create job -n %s --from=cronjob/%s %s-now", ns, fernet.CronJobName(s.k), fernet.CronJobName(s.k)),
		"kubectl get keystoneidentitybackends -n " + ns,
		fmt.Sprintf("kubectl get keystoneidentitybackend %s -n %s -o jsonpath='{.status.identityProviders}'", s.backend.Name, ns),
		fmt.Sprintf("kubectl get deploy %s -n %s -o jsonpath='{.spec.template.spec.volumes[?(@.name==\"%s\")].secret.secretName}'",
			name, ns, identitybackend.FederationVolumeName),
		"openstack identity provider list   # with the admin credentials, against the Keystone's endpoint",
	} {
		s.d.Linef("  %s", cmd)
	}
}
