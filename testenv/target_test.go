package testenv_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"
	kubeconfigprovider "sigs.k8s.io/multicluster-runtime/providers/kubeconfig"

	sdkmulticluster "github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// startTarget starts a second control plane, without upstream CRDs, and stops it when
// the test ends.
func startTarget(t *testing.T) *testenv.Env {
	t.Helper()
	target, err := testenv.Start(testenv.Options{CRDSources: []testenv.CRDSource{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := target.Stop(); err != nil {
			t.Errorf("stop target: %v", err)
		}
	})
	return target
}

// clientFromKubeconfig builds an uncached client from a kubeconfig, as the kubeconfig
// provider does.
func clientFromKubeconfig(t *testing.T, kubeconfig []byte) client.Client {
	t.Helper()
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		t.Fatalf("kubeconfig: %v", err)
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// freshName returns a name no other test uses.
func freshName(prefix string) string { return prefix + "-" + utilrand.String(6) }

// getSecret reads namespace/name from the management env.
func getSecret(t *testing.T, namespace, name string) (*corev1.Secret, error) {
	t.Helper()
	s := &corev1.Secret{}
	err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, s)
	return s, err
}

func TestKubeconfigSecretConstantsMatchProvider(t *testing.T) {
	if testenv.KubeconfigSecretLabel != kubeconfigprovider.DefaultKubeconfigSecretLabel {
		t.Errorf("KubeconfigSecretLabel = %q, provider default %q", testenv.KubeconfigSecretLabel, kubeconfigprovider.DefaultKubeconfigSecretLabel)
	}
	if testenv.KubeconfigSecretKey != kubeconfigprovider.DefaultKubeconfigSecretKey {
		t.Errorf("KubeconfigSecretKey = %q, provider default %q", testenv.KubeconfigSecretKey, kubeconfigprovider.DefaultKubeconfigSecretKey)
	}
}

func TestTargetMethodsOnEnvNeverStarted(t *testing.T) {
	e := &testenv.Env{}
	if _, err := e.Kubeconfig(); !errors.Is(err, testenv.ErrNotRunning) {
		t.Errorf("Kubeconfig: error = %v, want ErrNotRunning", err)
	}
	if _, err := e.KubeconfigSecret("ns", "c"); !errors.Is(err, testenv.ErrNotRunning) || !strings.Contains(err.Error(), "ns/c") {
		t.Errorf("KubeconfigSecret: error = %v, want ErrNotRunning naming ns/c", err)
	}
	if err := e.StopAPIServer(); !errors.Is(err, testenv.ErrNotRunning) {
		t.Errorf("StopAPIServer: error = %v, want ErrNotRunning", err)
	}
	if err := e.RestartAPIServer(); !errors.Is(err, testenv.ErrNotRunning) {
		t.Errorf("RestartAPIServer: error = %v, want ErrNotRunning", err)
	}
}

// TestTargetCluster runs one target control plane through registration, a reachability
// check, ownership checks, an outage and a stop while its API server is down. The
// subtests run in order and share the target.
func TestTargetCluster(t *testing.T) {
	ctx := context.Background()
	target := startTarget(t)
	namespace := freshName("targets") // does not exist yet on the management env

	t.Run("KubeconfigSecret", func(t *testing.T) {
		kubeconfig, err := target.Kubeconfig()
		if err != nil {
			t.Fatal(err)
		}
		again, err := target.Kubeconfig()
		if err != nil || !bytes.Equal(kubeconfig, again) {
			t.Errorf("second Kubeconfig differs (err %v): the provider would see a changed cluster", err)
		}
		s, err := target.KubeconfigSecret(namespace, "east")
		if err != nil {
			t.Fatal(err)
		}
		if s.Namespace != namespace || s.Name != "east" {
			t.Errorf("Secret is %s/%s, want %s/east", s.Namespace, s.Name, namespace)
		}
		if got := s.Labels[testenv.KubeconfigSecretLabel]; got != "true" {
			t.Errorf("label %s = %q, want \"true\"", testenv.KubeconfigSecretLabel, got)
		}
		if !bytes.Equal(s.Data[testenv.KubeconfigSecretKey], kubeconfig) {
			t.Errorf("data[%s] is not the Env's kubeconfig", testenv.KubeconfigSecretKey)
		}
		if _, ok := s.Annotations[sdkmulticluster.AllowedNamespacesAnnotation]; ok {
			t.Errorf("without namespaces the Secret allows some: %v", s.Annotations)
		}
		allowing, err := target.KubeconfigSecret(namespace, "east", "team-a", "team-b")
		if err != nil {
			t.Fatal(err)
		}
		if got := allowing.Annotations[sdkmulticluster.AllowedNamespacesAnnotation]; got != "team-a,team-b" {
			t.Errorf("annotation %s = %q, want \"team-a,team-b\"", sdkmulticluster.AllowedNamespacesAnnotation, got)
		}
		cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		host := func(s string) string { return strings.TrimSuffix(s, "/") }
		if host(cfg.Host) != host(target.Config.Host) || host(cfg.Host) == host(env.Config.Host) {
			t.Errorf("kubeconfig server = %s, want the target's %s (management: %s)", cfg.Host, target.Config.Host, env.Config.Host)
		}
	})

	t.Run("RegisterTargetReachesTarget", func(t *testing.T) {
		t.Run("registered", func(t *testing.T) {
			target.RegisterTarget(t, env, namespace, "east")
			stored, err := getSecret(t, namespace, "east")
			if err != nil {
				t.Fatalf("registered Secret %s/east: %v", namespace, err)
			}
			if stored.Labels[testenv.KubeconfigSecretLabel] != "true" {
				t.Errorf("stored Secret labels = %v", stored.Labels)
			}
			// A client built from the stored Secret, as the provider builds one.
			remote := clientFromKubeconfig(t, stored.Data[testenv.KubeconfigSecretKey])
			cm := &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: freshName("written-through-kubeconfig"), Namespace: "default"},
				Data:       map[string]string{"k": "v"},
			}
			if err := remote.Create(ctx, cm); err != nil {
				t.Fatalf("create ConfigMap default/%s through the kubeconfig: %v", cm.Name, err)
			}
			got := &corev1.ConfigMap{}
			if err := target.Client.Get(ctx, client.ObjectKeyFromObject(cm), got); err != nil {
				t.Fatalf("ConfigMap default/%s on the target: %v", cm.Name, err)
			}
			if got.UID != cm.UID || got.Data["k"] != "v" {
				t.Errorf("target holds %s %v, want UID %s with k=v", got.UID, got.Data, cm.UID)
			}
			err = env.Client.Get(ctx, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{})
			if !apierrors.IsNotFound(err) {
				t.Errorf("ConfigMap default/%s on the management env: error = %v, want NotFound", cm.Name, err)
			}
		})
		if _, err := getSecret(t, namespace, "east"); !apierrors.IsNotFound(err) {
			t.Errorf("Secret %s/east after the test ended: error = %v, want NotFound", namespace, err)
		}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: namespace}, &corev1.Namespace{}); err != nil {
			t.Errorf("Namespace %s the registration created: %v, want it left in place", namespace, err)
		}
	})

	t.Run("RefusesSomeoneElsesSecret", func(t *testing.T) {
		theirs := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "taken", Namespace: namespace},
			Data:       map[string][]byte{testenv.KubeconfigSecretKey: []byte("theirs")},
		}
		if err := env.Client.Create(ctx, theirs); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), theirs) })
		t.Run("register", func(t *testing.T) {
			rec := runTB(t, func(tb testing.TB) { target.RegisterTarget(tb, env, namespace, "taken") })
			if !strings.Contains(rec.fatal, "already exists") || !strings.Contains(rec.fatal, namespace+"/taken") {
				t.Errorf("RegisterTarget over an existing Secret: fatal = %q, want one naming %s/taken as existing", rec.fatal, namespace)
			}
		})
		stored, err := getSecret(t, namespace, "taken")
		if err != nil {
			t.Fatalf("their Secret after RegisterTarget's test ended: %v", err)
		}
		if stored.UID != theirs.UID || string(stored.Data[testenv.KubeconfigSecretKey]) != "theirs" || len(stored.Labels) != 0 {
			t.Errorf("their Secret was changed: uid %s (was %s), labels %v", stored.UID, theirs.UID, stored.Labels)
		}
	})

	t.Run("CleanupLeavesAReplacedSecret", func(t *testing.T) {
		var replacement *corev1.Secret
		t.Run("register", func(t *testing.T) {
			target.RegisterTarget(t, env, namespace, "replaced")
			ours, err := getSecret(t, namespace, "replaced")
			if err != nil {
				t.Fatal(err)
			}
			if err := env.Client.Delete(ctx, ours); err != nil {
				t.Fatal(err)
			}
			replacement = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "replaced", Namespace: namespace}}
			if err := env.Client.Create(ctx, replacement); err != nil {
				t.Fatal(err)
			}
		})
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), replacement) })
		stored, err := getSecret(t, namespace, "replaced")
		if err != nil {
			t.Fatalf("the replacement Secret after the registering test ended: %v", err)
		}
		if stored.UID != replacement.UID {
			t.Errorf("Secret %s/replaced has UID %s, want the replacement's %s", namespace, stored.UID, replacement.UID)
		}
	})

	t.Run("KubeconfigProviderEngagesTarget", func(t *testing.T) {
		provNS := freshName("provider")
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: freshName("seen-by-provider"), Namespace: "default"}}
		if err := target.Client.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
		provider := kubeconfigprovider.New(kubeconfigprovider.Options{Namespace: provNS})
		mgr, err := mcmanager.New(env.Config, provider, manager.Options{
			Scheme:                 env.Scheme,
			Metrics:                metricsserver.Options{BindAddress: "0"},
			HealthProbeBindAddress: "0",
			Controller:             config.Controller{SkipNameValidation: new(true)},
			Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{provNS: {}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := provider.SetupWithManager(ctx, mgr); err != nil {
			t.Fatal(err)
		}
		mctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- mgr.Start(mctx) }()
		t.Cleanup(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("multicluster manager: %v", err)
			}
		})

		t.Run("registered", func(t *testing.T) {
			target.RegisterTarget(t, env, provNS, "west")
			var engaged client.Client
			err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
				cl, err := provider.Get(ctx, "west")
				if errors.Is(err, multicluster.ErrClusterNotFound) {
					return false, nil
				}
				if err != nil {
					return false, err
				}
				engaged = cl.GetClient()
				return true, nil
			})
			if err != nil {
				t.Fatalf("the kubeconfig provider did not engage cluster west from Secret %s/west: %v", provNS, err)
			}
			got := &corev1.ConfigMap{}
			if err := engaged.Get(ctx, client.ObjectKeyFromObject(cm), got); err != nil || got.UID != cm.UID {
				t.Errorf("ConfigMap default/%s through the engaged cluster: uid %s, %v; want the target's %s", cm.Name, got.UID, err, cm.UID)
			}
		})
		// The registering test has ended: its Secret is gone and the provider lets go.
		err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			_, err := provider.Get(ctx, "west")
			return errors.Is(err, multicluster.ErrClusterNotFound), nil
		})
		if err != nil {
			t.Errorf("cluster west still engaged after its Secret was deleted: %v", err)
		}
	})

	t.Run("OutageKeepsData", func(t *testing.T) {
		kubeconfig, err := target.Kubeconfig()
		if err != nil {
			t.Fatal(err)
		}
		viaKubeconfig := clientFromKubeconfig(t, kubeconfig)
		before := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: freshName("before-outage"), Namespace: "default"},
			Data:       map[string]string{"k": "v"},
		}
		if err := target.Client.Create(ctx, before); err != nil {
			t.Fatal(err)
		}
		key := client.ObjectKeyFromObject(before)

		if err := target.StopAPIServer(); err != nil {
			t.Fatal(err)
		}
		for name, c := range map[string]client.Client{"Env.Client": target.Client, "kubeconfig client": viaKubeconfig} {
			err := c.Get(ctx, key, &corev1.ConfigMap{})
			if !errors.Is(err, syscall.ECONNREFUSED) {
				t.Errorf("%s: Get during the outage: error = %v, want connection refused", name, err)
			}
		}
		if err := target.StopAPIServer(); err != nil {
			t.Errorf("second StopAPIServer: %v, want nil (already down)", err)
		}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: "default"}, &corev1.Namespace{}); err != nil {
			t.Errorf("the management env during the target's outage: %v", err)
		}

		if err := target.RestartAPIServer(); err != nil {
			t.Fatal(err)
		}
		for name, c := range map[string]client.Client{"Env.Client": target.Client, "kubeconfig client": viaKubeconfig} {
			got := &corev1.ConfigMap{}
			if err := c.Get(ctx, key, got); err != nil {
				t.Errorf("%s: Get after the restart: %v", name, err)
				continue
			}
			if got.UID != before.UID || got.Data["k"] != "v" {
				t.Errorf("%s: after the restart default/%s has UID %s data %v, want UID %s k=v", name, key.Name, got.UID, got.Data, before.UID)
			}
		}
		after := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: freshName("after-outage"), Namespace: "default"}}
		if err := viaKubeconfig.Create(ctx, after); err != nil {
			t.Errorf("write through the old kubeconfig client after the restart: %v", err)
		}

		// A restart while the API server runs stops it first.
		if err := target.RestartAPIServer(); err != nil {
			t.Fatalf("RestartAPIServer while running: %v", err)
		}
		if err := target.Client.Get(ctx, client.ObjectKeyFromObject(after), &corev1.ConfigMap{}); err != nil {
			t.Errorf("Get after a restart of a running API server: %v", err)
		}
	})

	t.Run("StopWhileAPIServerDown", func(t *testing.T) {
		certDir, dataDir := testenv.APIServerCertDir(target), testenv.EtcdDataDir(target)
		expectProcesses(t, certDir, 1, "kube-apiserver before StopAPIServer")
		if err := target.StopAPIServer(); err != nil {
			t.Fatal(err)
		}
		expectProcesses(t, certDir, 0, "kube-apiserver after StopAPIServer")
		expectProcesses(t, dataDir, 1, "etcd after StopAPIServer")
		if err := target.Stop(); err != nil {
			t.Fatalf("Stop while the API server is down: %v", err)
		}
		expectStopped(t, target, certDir, dataDir)
	})
}

// TestStopRacesRestart stops an Env while a RestartAPIServer is under way: whichever
// runs first, nothing is left running.
func TestStopRacesRestart(t *testing.T) {
	target := startTarget(t)
	certDir, dataDir := testenv.APIServerCertDir(target), testenv.EtcdDataDir(target)
	if err := target.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var restartErr, stopErr error
	wg.Add(2)
	go func() { defer wg.Done(); restartErr = target.RestartAPIServer() }()
	go func() { defer wg.Done(); stopErr = target.Stop() }()
	wg.Wait()
	if stopErr != nil {
		t.Errorf("Stop: %v", stopErr)
	}
	if restartErr != nil && !errors.Is(restartErr, testenv.ErrNotRunning) {
		t.Errorf("RestartAPIServer racing Stop: %v, want nil or ErrNotRunning", restartErr)
	}
	expectStopped(t, target, certDir, dataDir)
}

// expectStopped asserts that a stopped Env left no kube-apiserver or etcd behind, no
// certificate directory, no listener, and refuses further use.
func expectStopped(t *testing.T, e *testenv.Env, certDir, dataDir string) {
	t.Helper()
	expectProcesses(t, certDir, 0, "kube-apiserver after Stop")
	expectProcesses(t, dataDir, 0, "etcd after Stop")
	if _, err := os.Stat(certDir); !os.IsNotExist(err) {
		t.Errorf("certificate directory %s after Stop: %v, want it removed", certDir, err)
	}
	u, err := url.Parse(e.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	if conn, err := net.DialTimeout("tcp", u.Host, time.Second); err == nil {
		_ = conn.Close()
		t.Errorf("something still listens on the API server's address %s after Stop", u.Host)
	}
	if err := e.RestartAPIServer(); !errors.Is(err, testenv.ErrNotRunning) {
		t.Errorf("RestartAPIServer after Stop: %v, want ErrNotRunning", err)
	}
	if err := e.StopAPIServer(); !errors.Is(err, testenv.ErrNotRunning) {
		t.Errorf("StopAPIServer after Stop: %v, want ErrNotRunning", err)
	}
	if _, err := e.Kubeconfig(); !errors.Is(err, testenv.ErrNotRunning) {
		t.Errorf("Kubeconfig after Stop: %v, want ErrNotRunning", err)
	}
	if err := e.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

// expectProcesses asserts that want processes have s on their command line, read
// from /proc; it checks nothing where there is no /proc (other than Linux).
func expectProcesses(t *testing.T, s string, want int, what string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		return
	}
	if s == "" {
		t.Fatalf("%s: no directory to look for", what)
	}
	cmdlines, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	var pids []string
	for _, path := range cmdlines {
		data, err := os.ReadFile(path)
		if err != nil {
			continue // the process ended meanwhile
		}
		// The directory itself (a flag's value) or a file in it, not a longer name
		// that starts the same.
		if bytes.Contains(data, []byte(s+"\x00")) || bytes.Contains(data, []byte(s+"/")) {
			pids = append(pids, filepath.Base(filepath.Dir(path)))
		}
	}
	if len(pids) != want {
		t.Errorf("%s: %d processes with %s on their command line (pids %v), want %d", what, len(pids), s, pids, want)
	}
}
