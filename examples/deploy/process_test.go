package deploy_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/c5c3/reconciler-sdk/internal/deploy"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// operatorProcess is an example operator's binary, taken out of its image, running as a
// separate process against env as the shipped ServiceAccount.
type operatorProcess struct {
	cmd *exec.Cmd
	log string
	// done is closed once the process has exited, with waitErr what Wait returned.
	done    chan struct{}
	waitErr error
	// health is the address of its /healthz and /readyz.
	health string
}

// applyAllButManager applies objs except the manager Deployment (the test runs its
// binary as a process instead) and the admission webhook configurations: they call the
// in-cluster webhook Service, which nothing on this machine serves or reaches, so with
// them every create of the operator's kinds would fail.
func applyAllButManager(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	var rest []*unstructured.Unstructured
	for _, obj := range objs {
		switch obj.GetKind() {
		case "Deployment", "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration":
		default:
			rest = append(rest, obj)
		}
	}
	if err := deploy.Apply(t.Context(), env.Client, rest, deploy.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // bounds the Namespace's removal
		defer cancel()
		if _, err := deploy.Delete(ctx, env.Client, rest, deploy.DeleteOptions{Wait: true}); err != nil {
			t.Errorf("undeploy: %v", err)
		}
	})
}

// serviceAccountKubeconfig writes a kubeconfig that reaches env with a token of the
// ServiceAccount ns/name from the TokenRequest API, as a pod of it would hold.
func serviceAccountKubeconfig(t *testing.T, ns, name string) string {
	t.Helper()
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(t.Context(), name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["envtest"] = &clientcmdapi.Cluster{Server: env.Config.Host, CertificateAuthorityData: env.Config.CAData}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	cfg.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: name, Namespace: ns}
	cfg.CurrentContext = "envtest"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// manager returns the manager Deployment of objs.
func manager(t *testing.T, objs []*unstructured.Unstructured) *appsv1.Deployment {
	t.Helper()
	for _, obj := range objs {
		if obj.GetKind() == "Deployment" {
			d := &appsv1.Deployment{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, d); err != nil {
				t.Fatal(err)
			}
			return d
		}
	}
	t.Fatal("no manager Deployment")
	return nil
}

// startOperator runs bin with the manager container's args and environment, as the
// ServiceAccount the Deployment names, until the test ends. What a pod has and a process
// on this machine does not is given instead: the kubeconfig (a pod's mounted token), the
// Lease's namespace (a pod's own), free local addresses for the probes and metrics (the
// pod's network namespace has its own ports), and the files args name under a mounted
// ConfigMap (mounts maps a mount path to the directory to read instead). extra are
// flags an administrator would add to the manifest's args. The webhook
// server's flags are left out: its certificate Secret is not there (cert-manager does
// not run) and the API server is not told to call it.
func startOperator(t *testing.T, bin string, d *appsv1.Deployment, mounts map[string]string, extra ...string) *operatorProcess {
	t.Helper()
	c := d.Spec.Template.Spec.Containers[0]
	ns := d.Namespace
	p := &operatorProcess{health: testenv.FreeAddress(t), log: filepath.Join(t.TempDir(), "manager.log"), done: make(chan struct{})}
	args := []string{"--kubeconfig=" + serviceAccountKubeconfig(t, ns, d.Spec.Template.Spec.ServiceAccountName),
		"--leader-election-namespace=" + ns}
	for _, a := range c.Args {
		switch {
		case strings.HasPrefix(a, "--health-probe-bind-address="):
			a = "--health-probe-bind-address=" + p.health
		case strings.HasPrefix(a, "--metrics-bind-address="):
			a = "--metrics-bind-address=" + testenv.FreeAddress(t)
		case strings.HasPrefix(a, "--webhook-"):
			continue
		}
		for from, to := range mounts {
			a = strings.ReplaceAll(a, from+"/", to+"/")
		}
		args = append(args, a)
	}
	args = append(args, extra...)
	logFile, err := os.Create(p.log)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(bin, args...) //nolint:gosec // the binary the test built
	p.cmd.Stdout, p.cmd.Stderr = logFile, logFile
	p.cmd.Env = []string{"HOME=" + t.TempDir()}
	for _, e := range c.Env {
		p.cmd.Env = append(p.cmd.Env, e.Name+"="+e.Value)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.waitErr = p.cmd.Wait()
		_ = logFile.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(30 * time.Second): // the manager's graceful shutdown, not an assertion
			_ = p.cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("operator log:\n%s", p.tail())
		}
	})
	p.waitReady(t)
	return p
}

// waitReady waits until the process answers /readyz with 200; it fails the test with
// the log's tail when the process exits first.
func (p *operatorProcess) waitReady(t *testing.T) {
	t.Helper()
	testenv.Eventually(t, 2*time.Minute, "the operator's /readyz", func(ctx context.Context) (bool, error) {
		select {
		case <-p.done:
			return false, fmt.Errorf("the operator exited: %w\n%s", p.waitErr, p.tail())
		default:
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.health+"/readyz", nil)
		if err != nil {
			return false, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, nil //nolint:nilerr // not listening yet
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
}

// tail is the end of the process's log.
func (p *operatorProcess) tail() string {
	raw, err := os.ReadFile(p.log)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-40):], "\n")
}

// writeConfigMap writes the data of the ConfigMap the Deployment mounts at mountPath
// into a directory, as the kubelet would mount it.
func writeConfigMap(t *testing.T, d *appsv1.Deployment, mountPath string) string {
	t.Helper()
	c := d.Spec.Template.Spec.Containers[0]
	i := slices.IndexFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == mountPath })
	if i < 0 {
		t.Fatalf("nothing mounted at %s", mountPath)
	}
	v := slices.IndexFunc(d.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == c.VolumeMounts[i].Name })
	cm := &corev1.ConfigMap{}
	get(t, d.Namespace, d.Spec.Template.Spec.Volumes[v].ConfigMap.Name, cm)
	dir := t.TempDir()
	for k, data := range cm.Data {
		if err := os.WriteFile(filepath.Join(dir, k), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
