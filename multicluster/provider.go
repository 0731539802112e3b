package multicluster

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	"sigs.k8s.io/multicluster-runtime/providers/kubeconfig"

	"github.com/c5c3/reconciler-sdk/shard"
)

// secretProvider is the kubeconfig provider of multicluster-runtime behind a vetting
// reader: the provider reads each registration Secret through vettingClient, which
// answers NotFound for a Secret whose kubeconfig KubeconfigOptions refuse, so the
// provider never parses it (and disengages a cluster it engaged from the Secret's
// earlier content). The resolver asks it for the Secret behind a cluster name.
type secretProvider struct {
	*kubeconfig.Provider
	namespace string
	opts      KubeconfigOptions
	shard     *shard.Member // narrows the children on every target cluster (ManagerOptions.Shard)

	mu       sync.Mutex
	verdicts map[string]verdict // by Secret name
	recorder events.EventRecorder
}

// verdict is the outcome of vetting one version of a Secret.
type verdict struct {
	resourceVersion string
	err             error
}

func newSecretProvider(namespace string, opts KubeconfigOptions, kopts kubeconfig.Options) *secretProvider {
	kopts.Namespace = namespace
	return &secretProvider{
		Provider:  kubeconfig.New(kopts),
		namespace: namespace,
		opts:      opts,
		verdicts:  map[string]verdict{},
	}
}

// setup registers the provider's Secret controller on mgr, reading through the vetting
// client.
func (p *secretProvider) setup(mgr mcmanager.Manager, fieldManager string) error {
	local := mgr.GetLocalManager()
	p.recorder = local.GetEventRecorder(fieldManager)
	vetted := &providerManager{Manager: mgr, local: &providerLocalManager{Manager: local,
		client: &vettingClient{Client: local.GetClient(), provider: p}}}
	return p.SetupWithManager(context.Background(), vetted)
}

// vet returns the verdict on secret's current content, vetting each version once.
func (p *secretProvider) vet(secret *corev1.Secret) error {
	p.mu.Lock()
	v, ok := p.verdicts[secret.Name]
	p.mu.Unlock()
	if ok && v.resourceVersion == secret.ResourceVersion && secret.ResourceVersion != "" {
		return v.err
	}
	err := p.opts.vetKubeconfig(secret)
	p.mu.Lock()
	p.verdicts[secret.Name] = verdict{resourceVersion: secret.ResourceVersion, err: err}
	p.mu.Unlock()
	return err
}

// forget drops the verdict of a Secret that is gone.
func (p *secretProvider) forget(name string) {
	p.mu.Lock()
	delete(p.verdicts, name)
	p.mu.Unlock()
}

// registration reads the Secret that registers the target cluster name through r. It
// returns nil when there is none (no such Secret, or one without KubeconfigSecretLabel).
func (p *secretProvider) registration(ctx context.Context, r client.Reader, name string) (*corev1.Secret, error) {
	secret := &corev1.Secret{}
	if err := r.Get(ctx, types.NamespacedName{Namespace: p.namespace, Name: name}, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("read kubeconfig Secret %s/%s: %w", p.namespace, name, err)
	}
	if secret.Labels[KubeconfigSecretLabel] != "true" {
		return nil, nil
	}
	return secret, nil
}

// vettingClient is the client the kubeconfig provider reads registration Secrets
// through: a Secret of the clusters namespace whose kubeconfig is refused reads as
// NotFound, after a Warning event on it says why.
type vettingClient struct {
	client.Client
	provider *secretProvider
}

// Get reads key; a refused registration Secret is reported as NotFound.
func (c *vettingClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	err := c.Client.Get(ctx, key, obj, opts...)
	if key.Namespace != c.provider.namespace {
		return err
	}
	if apierrors.IsNotFound(err) {
		c.provider.forget(key.Name)
	}
	if err != nil {
		return err
	}
	secret, ok := obj.(*corev1.Secret)
	if !ok {
		// The provider reads Secrets only; anything else is not vetted, so not handed on.
		return fmt.Errorf("multicluster: kubeconfig provider read a %T in the clusters namespace; only Secrets are vetted", obj)
	}
	// Vetted whatever its labels say: the provider does not look at them again once
	// its watch let the event through.
	refused := c.provider.vet(secret)
	if refused == nil {
		return nil
	}
	log.FromContext(ctx).Info("kubeconfig Secret refused; its target cluster is not engaged",
		"secret", key.String(), "reason", refused.Error())
	if c.provider.recorder != nil {
		c.provider.recorder.Eventf(secret, nil, corev1.EventTypeWarning, ReasonKubeconfigRefused, "Engage",
			"target cluster %q is not engaged: %s", key.Name, refused.Error())
	}
	return apierrors.NewNotFound(corev1.Resource("secrets"), key.Name)
}

// providerManager is the manager the kubeconfig provider is set up with: the
// multicluster manager whose local manager reads through the vetting client.
type providerManager struct {
	mcmanager.Manager
	local manager.Manager
}

// GetLocalManager returns the local manager with the vetting client.
func (m *providerManager) GetLocalManager() manager.Manager { return m.local }

// providerLocalManager is the local manager whose client is the vetting client.
type providerLocalManager struct {
	manager.Manager
	client client.Client
}

// GetClient returns the vetting client.
func (m *providerLocalManager) GetClient() client.Client { return m.client }
