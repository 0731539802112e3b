package world

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	certmanagerv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	mariadbv1alpha1 "github.com/mariadb-operator/mariadb-operator/v25/api/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
	esov1alpha1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1alpha1"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

// Kind is one kind of dependency a [World] plays.
type Kind string

// The kinds a World can play, in the order [World.Play] plays them.
const (
	// SecretStores: the World's ClusterSecretStores ([WithClusterSecretStores]) and the
	// SecretStores of the namespace Ready, as ESO leaves a validated store.
	SecretStores Kind = "SecretStores"
	// ExternalSecrets: synced from the World's backend ([simulate.SecretBackend.Sync]).
	ExternalSecrets Kind = "ExternalSecrets"
	// PushSecrets: pushed into the backend and Synced, once their source Secret exists.
	PushSecrets Kind = "PushSecrets"
	// MariaDBs: the MariaDB servers Ready (and the one of [WithMariaDB] created).
	MariaDBs Kind = "MariaDBs"
	// Databases: mariadb-operator Databases, Users and Grants Ready.
	Databases Kind = "Databases"
	// Certificates: cert-manager Certificates Ready, their TLS Secret issued.
	Certificates Kind = "Certificates"
	// HTTPRoutes: Accepted by every parentRef.
	HTTPRoutes Kind = "HTTPRoutes"
	// Deployments: Available with every replica ready (not by default).
	Deployments Kind = "Deployments"
	// Jobs: Complete, unless already Complete or Failed (not by default).
	Jobs Kind = "Jobs"
)

// DefaultClusterSecretStore is the ClusterSecretStore a World creates and makes Ready
// unless [WithClusterSecretStores] says otherwise: the SDK's shared store
// (secrets.OpenBaoClusterStoreName).
const DefaultClusterSecretStore = "openbao-cluster-store"

// ErrClusterScoped is returned by [World.Play] for a cluster-scoped custom resource: the
// World plays the namespace of the custom resource, and it has none.
var ErrClusterScoped = errors.New("cluster-scoped: the world plays the custom resource's namespace")

// ErrNoValue is returned by [World.Play] for an ExternalSecret (deletionPolicy Retain)
// that reads a value the World's backend lacks: ESO reports the sync failed, and the
// World names the remote keys to give it with [WithSecret].
var ErrNoValue = errors.New("the world's secret backend lacks a value the ExternalSecret reads")

// allKinds lists every Kind in the order Play plays them.
var allKinds = []Kind{SecretStores, ExternalSecrets, PushSecrets, MariaDBs, Databases, Certificates, HTTPRoutes, Deployments, Jobs}

// DefaultKinds returns what a World plays without [Playing]: every kind but Deployments
// and Jobs, which testenv's real controllers (Options.Controllers) play for real.
func DefaultKinds() []Kind {
	return []Kind{SecretStores, ExternalSecrets, PushSecrets, MariaDBs, Databases, Certificates, HTTPRoutes}
}

// World plays the controllers a custom resource depends on and envtest does not run, for
// every object of the kinds it plays in the custom resource's namespace. A World is
// safe for concurrent use as far as its backend is; build it with [New].
type World struct {
	c       client.Client
	backend *simulate.SecretBackend
	kinds   map[Kind]bool
	stores  []string
	mariadb string
	secrets map[string]map[string][]byte // WithSecret, stored once the options are applied
}

// Option configures a [World].
type Option func(*World)

// Playing makes the World play exactly kinds (replacing [DefaultKinds]).
func Playing(kinds ...Kind) Option {
	return func(w *World) {
		w.kinds = map[Kind]bool{}
		for _, k := range kinds {
			w.kinds[k] = true
		}
	}
}

// WithWorkloads adds Deployments and Jobs to what the World plays: for a control plane
// without real controllers, where nothing else makes a Deployment Available.
func WithWorkloads() Option {
	return func(w *World) { w.kinds[Deployments], w.kinds[Jobs] = true, true }
}

// WithSecret stores data as the provider secret at remoteKey in the World's backend:
// what the ExternalSecrets that read remoteKey are synced with (a property each key).
func WithSecret(remoteKey string, data map[string][]byte) Option {
	return func(w *World) { w.secrets[remoteKey] = data }
}

// WithBackend makes b the World's secret backend (by default a new, empty one), so a
// test reads what PushSecrets wrote and changes values (a rotation) between waits.
func WithBackend(b *simulate.SecretBackend) Option {
	return func(w *World) { w.backend = b }
}

// WithClusterSecretStores names the ClusterSecretStores the World creates when missing
// and makes Ready (by default [DefaultClusterSecretStore]); none names none.
func WithClusterSecretStores(names ...string) Option {
	return func(w *World) { w.stores = slices.Clone(names) }
}

// WithMariaDB makes the World create the MariaDB name in the custom resource's
// namespace when it is missing (a Database's mariaDbRef names it); by default it only
// makes the existing ones Ready.
func WithMariaDB(name string) Option {
	return func(w *World) { w.mariadb = name }
}

// New returns a World that plays [DefaultKinds] through c, with an empty backend and
// [DefaultClusterSecretStore]; opts change that.
func New(c client.Client, opts ...Option) *World {
	w := &World{c: c, backend: simulate.NewSecretBackend(c), stores: []string{DefaultClusterSecretStore},
		kinds: map[Kind]bool{}, secrets: map[string]map[string][]byte{}}
	for _, k := range DefaultKinds() {
		w.kinds[k] = true
	}
	for _, o := range opts {
		o(w)
	}
	for k, v := range w.secrets {
		w.backend.Set(k, v)
	}
	return w
}

// Backend returns the World's secret backend.
func (w *World) Backend() *simulate.SecretBackend { return w.backend }

// Kinds returns what the World plays, in the order Play plays it.
func (w *World) Kinds() []Kind {
	return slices.DeleteFunc(slices.Clone(allKinds), func(k Kind) bool { return !w.kinds[k] })
}

// Hook returns Play of cr through the World's client, for testenv.WaitForConditionWhile
// and ExpectConditionWhile.
func (w *World) Hook(cr client.Object) func(context.Context) error {
	return func(ctx context.Context) error { return w.Play(ctx, w.c, cr) }
}

// Play makes every object of the kinds the World plays in cr's namespace what its
// controller would make it, through c (nil: the World's client); it has the shape of
// conformance.Options.MakeReady. It is idempotent: an object already so is not written,
// so a converged world sees reads only. Objects being deleted are left alone, and a
// kind whose API is not installed is skipped. It plays every object and returns every
// error, joined.
func (w *World) Play(ctx context.Context, c client.Client, cr client.Object) error {
	if c == nil {
		c = w.c
	}
	if cr.GetNamespace() == "" {
		return fmt.Errorf("world: %s: %w", cr.GetName(), ErrClusterScoped)
	}
	p := &pass{ctx: ctx, c: c, ns: cr.GetNamespace(), backend: w.backend.On(c), w: w}
	var errs []error
	for _, k := range w.Kinds() {
		errs = append(errs, players[k](p))
	}
	return errors.Join(errs...)
}

// pass is one Play in one namespace.
type pass struct {
	ctx     context.Context
	c       client.Client
	ns      string
	backend *simulate.SecretBackend
	w       *World
}

// players play one Kind each.
var players = map[Kind]func(*pass) error{
	SecretStores:    (*pass).stores,
	ExternalSecrets: (*pass).externalSecrets,
	PushSecrets:     (*pass).pushSecrets,
	MariaDBs:        (*pass).mariaDBs,
	Databases:       (*pass).databases,
	Certificates:    (*pass).certificates,
	HTTPRoutes:      (*pass).httpRoutes,
	Deployments:     (*pass).deployments,
	Jobs:            (*pass).jobs,
}

// each lists list in the pass's namespace and plays every item not being deleted; a
// kind that is not installed has nothing to play.
func (p *pass) each(what string, list client.ObjectList, play func(obj client.Object) error) error {
	if err := p.c.List(p.ctx, list, client.InNamespace(p.ns)); err != nil {
		if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("world: list %s in namespace %s: %w", what, p.ns, err)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return fmt.Errorf("world: list %s in namespace %s: %w", what, p.ns, err)
	}
	var errs []error
	for _, item := range items {
		obj, ok := item.(client.Object)
		if !ok || obj.GetDeletionTimestamp() != nil {
			continue
		}
		errs = append(errs, play(obj))
	}
	return errors.Join(errs...)
}

// ensure creates obj when no object of its key exists (a Get first, so that a world
// where it exists sends no write); obj then holds the stored object.
func (p *pass) ensure(obj client.Object, what string) error {
	key := client.ObjectKeyFromObject(obj)
	err := p.c.Get(p.ctx, key, obj)
	if apierrors.IsNotFound(err) {
		err = client.IgnoreAlreadyExists(p.c.Create(p.ctx, obj))
	}
	if err != nil {
		return fmt.Errorf("world: ensure %s %s: %w", what, key, err)
	}
	return nil
}

func (p *pass) stores() error {
	var errs []error
	for _, name := range p.w.stores {
		store := &esov1.ClusterSecretStore{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       esov1.SecretStoreSpec{Provider: simulate.OpenBaoProvider()},
		}
		if err := p.ensure(store, "ClusterSecretStore"); err != nil {
			errs = append(errs, err)
			continue
		}
		if store.DeletionTimestamp == nil && !storeReady(store.Status) {
			_, err := simulate.MarkClusterSecretStoreReady(p.ctx, p.c, name)
			errs = append(errs, err)
		}
	}
	errs = append(errs, p.each("SecretStores", &esov1.SecretStoreList{}, func(obj client.Object) error {
		if storeReady(obj.(*esov1.SecretStore).Status) {
			return nil
		}
		_, err := simulate.MarkSecretStoreReady(p.ctx, p.c, client.ObjectKeyFromObject(obj))
		return err
	}))
	return errors.Join(errs...)
}

// storeReady reports whether a store's status is what MarkSecretStoreReady writes.
func storeReady(st esov1.SecretStoreStatus) bool {
	for _, c := range st.Conditions {
		if c.Type == esov1.SecretStoreReady {
			return c.Status == corev1.ConditionTrue && st.Capabilities == esov1.SecretStoreReadWrite
		}
	}
	return false
}

func (p *pass) externalSecrets() error {
	return p.each("ExternalSecrets", &esov1.ExternalSecretList{}, func(obj client.Object) error {
		es := obj.(*esov1.ExternalSecret)
		key := client.ObjectKeyFromObject(es)
		synced, err := p.backend.Synced(p.ctx, key)
		if err == nil && !synced {
			err = p.backend.Sync(p.ctx, key)
		}
		if err != nil {
			return err
		}
		if policy := es.Spec.Target.DeletionPolicy; policy == "" || policy == esov1.DeletionPolicyRetain {
			if missing := p.backend.Missing(es); len(missing) > 0 {
				return fmt.Errorf("world: ExternalSecret %s: %w: %s", key, ErrNoValue, strings.Join(missing, ", "))
			}
		}
		return nil
	})
}

func (p *pass) pushSecrets() error {
	return p.each("PushSecrets", &esov1alpha1.PushSecretList{}, func(obj client.Object) error {
		ps := obj.(*esov1alpha1.PushSecret)
		if simulate.PushSecretSynced(ps) {
			return nil
		}
		if sel := ps.Spec.Selector.Secret; sel != nil && sel.Name != "" {
			src := client.ObjectKey{Namespace: ps.Namespace, Name: sel.Name}
			if err := p.c.Get(p.ctx, src, &corev1.Secret{}); err != nil {
				if apierrors.IsNotFound(err) {
					return nil // ESO pushes once the source exists: a later Play
				}
				return fmt.Errorf("world: PushSecret %s: get source Secret %s: %w", client.ObjectKeyFromObject(ps), src, err)
			}
		}
		key := client.ObjectKeyFromObject(ps)
		if err := p.backend.Push(p.ctx, key); err != nil {
			return err
		}
		_, err := simulate.MarkPushSecretSynced(p.ctx, p.c, key)
		return err
	})
}

// readyCurrent reports whether conds hold Ready=True written for generation.
func readyCurrent(conds []metav1.Condition, generation int64) bool {
	c := meta.FindStatusCondition(conds, mariadbv1alpha1.ConditionTypeReady)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == generation
}

func (p *pass) mariaDBs() error {
	var errs []error
	if p.w.mariadb != "" {
		m := &mariadbv1alpha1.MariaDB{ObjectMeta: metav1.ObjectMeta{Name: p.w.mariadb, Namespace: p.ns}}
		errs = append(errs, p.ensure(m, "MariaDB"))
	}
	errs = append(errs, p.each("MariaDBs", &mariadbv1alpha1.MariaDBList{}, func(obj client.Object) error {
		if readyCurrent(obj.(*mariadbv1alpha1.MariaDB).Status.Conditions, obj.GetGeneration()) {
			return nil
		}
		_, err := simulate.MarkMariaDBReady(p.ctx, p.c, client.ObjectKeyFromObject(obj))
		return err
	}))
	return errors.Join(errs...)
}

func (p *pass) databases() error {
	return errors.Join(
		p.each("Databases", &mariadbv1alpha1.DatabaseList{}, func(obj client.Object) error {
			if readyCurrent(obj.(*mariadbv1alpha1.Database).Status.Conditions, obj.GetGeneration()) {
				return nil
			}
			_, err := simulate.MarkDatabaseReady(p.ctx, p.c, client.ObjectKeyFromObject(obj))
			return err
		}),
		p.each("Users", &mariadbv1alpha1.UserList{}, func(obj client.Object) error {
			if readyCurrent(obj.(*mariadbv1alpha1.User).Status.Conditions, obj.GetGeneration()) {
				return nil
			}
			_, err := simulate.MarkUserReady(p.ctx, p.c, client.ObjectKeyFromObject(obj))
			return err
		}),
		p.each("Grants", &mariadbv1alpha1.GrantList{}, func(obj client.Object) error {
			if readyCurrent(obj.(*mariadbv1alpha1.Grant).Status.Conditions, obj.GetGeneration()) {
				return nil
			}
			_, err := simulate.MarkGrantReady(p.ctx, p.c, client.ObjectKeyFromObject(obj))
			return err
		}),
	)
}

func (p *pass) certificates() error {
	return p.each("Certificates", &certmanagerv1.CertificateList{}, func(obj client.Object) error {
		cert := obj.(*certmanagerv1.Certificate)
		if certificateIssued(p, cert) {
			return nil
		}
		_, err := simulate.MarkCertificateReady(p.ctx, p.c, client.ObjectKeyFromObject(cert))
		return err
	})
}

// certificateIssued reports whether cert is Ready for its generation and its TLS Secret
// exists.
func certificateIssued(p *pass, cert *certmanagerv1.Certificate) bool {
	ready := false
	for _, c := range cert.Status.Conditions {
		if c.Type == certmanagerv1.CertificateConditionReady {
			ready = c.Status == cmmeta.ConditionTrue && c.ObservedGeneration == cert.Generation
		}
	}
	if !ready {
		return false
	}
	err := p.c.Get(p.ctx, client.ObjectKey{Namespace: cert.Namespace, Name: cert.Spec.SecretName}, &corev1.Secret{})
	return err == nil
}

func (p *pass) httpRoutes() error {
	return p.each("HTTPRoutes", &gatewayv1.HTTPRouteList{}, func(obj client.Object) error {
		route := obj.(*gatewayv1.HTTPRoute)
		if routeAccepted(route) {
			return nil
		}
		_, err := simulate.SetHTTPRouteAccepted(p.ctx, p.c, client.ObjectKeyFromObject(route),
			metav1.ConditionTrue, string(gatewayv1.RouteReasonAccepted), "accepted by the test world", 0)
		return err
	})
}

// routeAccepted reports whether every parentRef of route has a status entry that
// accepts it for the route's generation.
func routeAccepted(route *gatewayv1.HTTPRoute) bool {
	for _, ref := range route.Spec.ParentRefs {
		accepted := false
		for _, st := range route.Status.Parents {
			if !equality.Semantic.DeepEqual(st.ParentRef, ref) {
				continue
			}
			c := meta.FindStatusCondition(st.Conditions, string(gatewayv1.RouteConditionAccepted))
			accepted = accepted || (c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == route.Generation)
		}
		if !accepted {
			return false
		}
	}
	return true
}

func (p *pass) deployments() error {
	return p.each("Deployments", &appsv1.DeploymentList{}, func(obj client.Object) error {
		if rolledOut(obj.(*appsv1.Deployment)) {
			return nil
		}
		_, err := simulate.MarkDeploymentAvailable(p.ctx, p.c, client.ObjectKeyFromObject(obj))
		return err
	})
}

// rolledOut reports whether d's status is that of a finished rollout of its generation.
func rolledOut(d *appsv1.Deployment) bool {
	replicas := int32(1)
	if d.Spec.Replicas != nil {
		replicas = *d.Spec.Replicas
	}
	s := d.Status
	if s.ObservedGeneration != d.Generation || s.UpdatedReplicas != replicas || s.ReadyReplicas != replicas || s.AvailableReplicas != replicas {
		return false
	}
	for _, c := range s.Conditions {
		if c.Type == appsv1.DeploymentAvailable {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func (p *pass) jobs() error {
	return p.each("Jobs", &batchv1.JobList{}, func(obj client.Object) error {
		for _, c := range obj.(*batchv1.Job).Status.Conditions {
			if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
				return nil
			}
		}
		_, err := simulate.MarkJobComplete(p.ctx, p.c, client.ObjectKeyFromObject(obj))
		return err
	})
}
