package testenv

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/multicluster"
)

// The labels and data key of a kubeconfig Secret, as the kubeconfig provider of
// sigs.k8s.io/multicluster-runtime (providers/kubeconfig) reads them by default: it
// watches the Secrets of one namespace that carry KubeconfigSecretLabel with value
// "true", registers each as a cluster named after the Secret, and reads the kubeconfig
// from the data key KubeconfigSecretKey.
const (
	// KubeconfigSecretLabel marks a Secret that registers a cluster; its value is "true".
	KubeconfigSecretLabel = "sigs.k8s.io/multicluster-runtime-kubeconfig"
	// KubeconfigSecretKey is the Secret data key that holds the kubeconfig.
	KubeconfigSecretKey = "kubeconfig"
)

// ErrNotRunning reports that an [Env] was never started or has been stopped with
// [Env.Stop]: it has no API server to reach, stop or restart.
var ErrNotRunning = errors.New("environment not running")

// readyPollInterval is how often RestartAPIServer asks /readyz while it waits.
const readyPollInterval = 100 * time.Millisecond

// Kubeconfig returns a kubeconfig that reaches this control plane as cluster admin
// (a client certificate in the group system:masters, with the API server's CA). Every
// call returns the same bytes, and they stay valid across [Env.StopAPIServer] and
// [Env.RestartAPIServer]. The kubeconfig holds a private key: never log it. It returns
// an error wrapping [ErrNotRunning] after [Env.Stop].
func (e *Env) Kubeconfig() ([]byte, error) {
	if e == nil || e.env == nil {
		return nil, fmt.Errorf("testenv: kubeconfig: %w", ErrNotRunning)
	}
	if e.stopped.Load() {
		return nil, fmt.Errorf("testenv: kubeconfig of %s: %w", e.Config.Host, ErrNotRunning)
	}
	if len(e.env.KubeConfig) == 0 {
		return nil, fmt.Errorf("testenv: kubeconfig of %s: envtest wrote none", e.Config.Host)
	}
	return append([]byte(nil), e.env.KubeConfig...), nil
}

// KubeconfigSecret returns, without creating it, a Secret namespace/name that registers
// this control plane as the cluster name with the multicluster-runtime kubeconfig
// provider: labelled [KubeconfigSecretLabel]: "true", with [Env.Kubeconfig] under
// [KubeconfigSecretKey]. The provider only sees it in the namespace it watches. With
// allowedNamespaces, the Secret's multicluster.AllowedNamespacesAnnotation lists them
// (comma separated; "*" for all), the namespaces whose CRs may use the cluster through
// a multicluster.ClusterResolver; without, it has no such annotation and serves none.
func (e *Env) KubeconfigSecret(namespace, name string, allowedNamespaces ...string) (*corev1.Secret, error) {
	kubeconfig, err := e.Kubeconfig()
	if err != nil {
		return nil, fmt.Errorf("testenv: kubeconfig Secret %s/%s: %w", namespace, name, err)
	}
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: namespace,
			Labels:    map[string]string{KubeconfigSecretLabel: "true"},
		},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{KubeconfigSecretKey: kubeconfig},
	}
	if len(allowedNamespaces) > 0 {
		s.Annotations = map[string]string{multicluster.AllowedNamespacesAnnotation: strings.Join(allowedNamespaces, ",")}
	}
	return s, nil
}

// RegisterTarget registers this control plane as the target cluster name on the
// management control plane mgmt, for the CRs of allowedNamespaces: it creates
// [Env.KubeconfigSecret](namespace, name, allowedNamespaces...) on mgmt and deletes that
// Secret when the test ends. It creates namespace when it is
// missing and leaves it in place afterwards (a namespace the provider watches is
// usually shared, and plain envtest never finishes deleting a namespace). It fails the
// test when a Secret namespace/name already exists: it never takes over or overwrites
// a Secret it did not create, and at the end it deletes only the one it created (a
// Secret recreated under the same name in the meantime is left alone).
func (e *Env) RegisterTarget(t testing.TB, mgmt *Env, namespace, name string, allowedNamespaces ...string) {
	t.Helper()
	ctx := context.Background()
	secret, err := e.KubeconfigSecret(namespace, name, allowedNamespaces...)
	if err != nil {
		t.Fatalf("testenv: register target %s: %v", name, err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if err := mgmt.Client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("testenv: register target %s: create Namespace %s: %v", name, namespace, err)
	}
	if err := mgmt.Client.Create(ctx, secret); err != nil {
		if apierrors.IsAlreadyExists(err) {
			t.Fatalf("testenv: register target %s: Secret %s/%s already exists and is not the kit's: %v", name, namespace, name, err)
		}
		t.Fatalf("testenv: register target %s: create Secret %s/%s: %v", name, namespace, name, err)
	}
	uid := secret.UID
	t.Cleanup(func() {
		err := mgmt.Client.Delete(context.Background(), secret, client.Preconditions{UID: &uid})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			t.Errorf("testenv: unregister target %s: delete Secret %s/%s: %v", name, namespace, name, err)
		}
	})
}

// StopAPIServer stops this control plane's kube-apiserver and nothing else (on Linux it
// kills it, as a crash would, so that clients with open watches cannot hold it in a
// graceful drain): etcd keeps
// the data, and the controllers of [Options.Controllers] keep running (and retrying).
// Until [Env.RestartAPIServer], every request to the API server fails with "connection
// refused", which is how a target cluster that no longer answers looks to a client.
// Calling it while the API server is already down does nothing. After [Env.Stop] it
// returns an error wrapping [ErrNotRunning].
func (e *Env) StopAPIServer() error {
	if e == nil || e.env == nil {
		return fmt.Errorf("testenv: stop kube-apiserver: %w", ErrNotRunning)
	}
	e.apiMu.Lock()
	defer e.apiMu.Unlock()
	if e.stopped.Load() {
		return fmt.Errorf("testenv: stop kube-apiserver at %s: %w", e.Config.Host, ErrNotRunning)
	}
	if e.apiDown {
		return nil
	}
	// A crash, not a graceful shutdown: clients with open watches (a manager's
	// informers) would otherwise hold kube-apiserver in its drain for a minute.
	api := e.env.ControlPlane.GetAPIServer()
	if _, err := crashAPIServer(api.Port); err != nil {
		return fmt.Errorf("testenv: stop kube-apiserver at %s: %w", e.Config.Host, err)
	}
	if err := api.Stop(); err != nil {
		return fmt.Errorf("testenv: stop kube-apiserver at %s: %w", e.Config.Host, err)
	}
	e.apiDown = true
	return nil
}

// RestartAPIServer starts kube-apiserver again on the same address, with the same
// serving certificate and the same client CA, over the same etcd: [Env.Config],
// [Env.Client], [Env.Kubeconfig] and every client built from them before the stop work
// again, and every object stored before the stop is still there. It returns once the
// API server answers /readyz with 200, waiting at most two minutes. Called while the
// API server runs, it stops it first (a restart). After [Env.Stop] it returns an error
// wrapping [ErrNotRunning]. When the start fails the API server stays down and
// RestartAPIServer may be called again.
func (e *Env) RestartAPIServer() error {
	if e == nil || e.env == nil {
		return fmt.Errorf("testenv: restart kube-apiserver: %w", ErrNotRunning)
	}
	e.apiMu.Lock()
	defer e.apiMu.Unlock()
	if e.stopped.Load() {
		return fmt.Errorf("testenv: restart kube-apiserver at %s: %w", e.Config.Host, ErrNotRunning)
	}
	as := e.env.ControlPlane.GetAPIServer()
	if !e.apiDown {
		if err := as.Stop(); err != nil {
			return fmt.Errorf("testenv: restart kube-apiserver at %s: stop: %w", e.Config.Host, err)
		}
		e.apiDown = true
	}
	if err := as.Start(); err != nil {
		// Whatever came up must not outlive the failed start.
		return errors.Join(fmt.Errorf("testenv: restart kube-apiserver at %s: %w", e.Config.Host, err), as.Stop())
	}
	e.apiDown = false
	return waitReady(e.Config, startTimeout)
}

// waitReady polls cfg's /readyz until it answers 200, for at most timeout.
func waitReady(cfg *rest.Config, timeout time.Duration) error {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return fmt.Errorf("testenv: client for %s/readyz: %w", cfg.Host, err)
	}
	defer hc.CloseIdleConnections()
	url := strings.TrimSuffix(cfg.Host, "/") + "/readyz"
	var last error
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	err = wait.PollUntilContextCancel(ctx, readyPollInterval, true, func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, err
		}
		resp, err := hc.Do(req)
		if err != nil {
			if ctx.Err() == nil { // keep the last real answer, not the deadline's
				last = err
			}
			return false, nil
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			last = fmt.Errorf("status %s", resp.Status)
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		if last == nil {
			last = errors.New("none")
		}
		return fmt.Errorf("testenv: %s not ready within %s (last answer: %w): %w", url, timeout, last, err)
	}
	return nil
}
