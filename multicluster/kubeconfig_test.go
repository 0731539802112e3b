package multicluster_test

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	mcmulticluster "sigs.k8s.io/multicluster-runtime/pkg/multicluster"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/multicluster"
)

// targetKubeconfig returns the shared target's kubeconfig, parsed, with the names of
// its current context's user and cluster.
func targetKubeconfig(t *testing.T) (cfg *clientcmdapi.Config, user, cluster string) {
	t.Helper()
	data, err := target.Kubeconfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg, err = clientcmd.Load(data); err != nil {
		t.Fatal(err)
	}
	kctx := cfg.Contexts[cfg.CurrentContext]
	if kctx == nil || cfg.AuthInfos[kctx.AuthInfo] == nil || cfg.Clusters[kctx.Cluster] == nil {
		t.Fatalf("the target's kubeconfig has no complete current context %q", cfg.CurrentContext)
	}
	return cfg, kctx.AuthInfo, kctx.Cluster
}

// editedKubeconfig returns the target's kubeconfig after edit changed its current
// user and cluster.
func editedKubeconfig(t *testing.T, edit func(user *clientcmdapi.AuthInfo, cluster *clientcmdapi.Cluster)) (kubeconfig []byte, user, cluster string) {
	t.Helper()
	cfg, user, cluster := targetKubeconfig(t)
	edit(cfg.AuthInfos[user], cfg.Clusters[cluster])
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return data, user, cluster
}

// writeFile writes data to a new file in dir and returns its path.
func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// exists reports whether path exists.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// tokenServer is a TLS server that records the bearer tokens it is sent, the way a
// server a kubeconfig names would receive them.
type tokenServer struct {
	*httptest.Server
	mu     sync.Mutex
	tokens []string
}

func newTokenServer(t *testing.T) *tokenServer {
	t.Helper()
	s := &tokenServer{}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
			s.mu.Lock()
			s.tokens = append(s.tokens, tok)
			s.mu.Unlock()
		}
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	}))
	t.Cleanup(s.Close)
	return s
}

// received reports whether the server was sent token.
func (s *tokenServer) received(token string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, tok := range s.tokens {
		if tok == token {
			return true
		}
	}
	return false
}

// refusedEvent reports whether a Warning event regarding the Secret key names
// fragment.
func refusedEvent(t *testing.T, secret *corev1.Secret, fragment string) bool {
	t.Helper()
	for _, e := range events(t, env, secret) {
		if strings.HasPrefix(e, "Warning KubeconfigRefused") && strings.Contains(e, fragment) {
			return true
		}
	}
	return false
}

// A labelled Secret of the clusters namespace is not trusted: a kubeconfig that would
// run a command in the operator's pod, read one of its files, or drop TLS is refused
// without any of that happening, the target cluster is not engaged, and a CR naming it
// gets TargetClusterUnavailable naming the Secret, the refused field and the knob that
// would allow it, and no credential.
func TestKubeconfigSecretsCannotReachIntoTheOperator(t *testing.T) {
	ns := env.Namespace(t)
	namespaceOn(t, target, ns)
	op := startOperator(t, ns, operatorOptions{})
	dir := t.TempDir()
	cfg, userName, clusterName := targetKubeconfig(t)
	admin, tls := cfg.AuthInfos[userName], cfg.Clusters[clusterName]

	// The exec plugin would leave a marker behind and hand the target's own client
	// certificate over, so that the cluster would really work through it.
	marker := filepath.Join(dir, "exec-ran")
	cred, err := json.Marshal(map[string]any{
		"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
		"status": map[string]string{
			"clientCertificateData": string(admin.ClientCertificateData),
			"clientKeyData":         string(admin.ClientKeyData),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	credFile := writeFile(t, dir, "cred.json", cred)
	// The token file stands for the operator's own ServiceAccount token.
	const token = "the-operators-own-serviceaccount-token"
	tokenFile := writeFile(t, dir, "token", []byte(token))
	thief := newTokenServer(t)
	certFile := writeFile(t, dir, "tls.crt", admin.ClientCertificateData)
	keyFile := writeFile(t, dir, "tls.key", admin.ClientKeyData)
	caFile := writeFile(t, dir, "ca.crt", tls.CertificateAuthorityData)

	type refusal struct {
		edit   func(u *clientcmdapi.AuthInfo, c *clientcmdapi.Cluster)
		fields []string
		knob   string
	}
	user := func(field string) string { return `users["` + userName + `"].user.` + field }
	cluster := func(field string) string { return `clusters["` + clusterName + `"].cluster.` + field }
	cases := map[string]refusal{
		"exec": {
			edit: func(u *clientcmdapi.AuthInfo, _ *clientcmdapi.Cluster) {
				u.ClientCertificateData, u.ClientKeyData = nil, nil
				u.Exec = &clientcmdapi.ExecConfig{
					APIVersion: "client.authentication.k8s.io/v1", Command: "/bin/sh",
					Args:            []string{"-c", "touch " + marker + " && cat " + credFile},
					InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
				}
			},
			fields: []string{user("exec")}, knob: "--insecure-kubeconfig-exec",
		},
		"auth-provider": {
			edit: func(u *clientcmdapi.AuthInfo, _ *clientcmdapi.Cluster) {
				u.AuthProvider = &clientcmdapi.AuthProviderConfig{Name: "oidc",
					Config: map[string]string{"idp-issuer-url": "https://issuer.invalid", "client-id": "c"}}
			},
			fields: []string{user("auth-provider")}, knob: "--insecure-kubeconfig-exec",
		},
		"token-file": {
			edit: func(u *clientcmdapi.AuthInfo, c *clientcmdapi.Cluster) {
				u.ClientCertificateData, u.ClientKeyData = nil, nil
				u.TokenFile = tokenFile
				c.Server = thief.URL
				c.CertificateAuthorityData = pemOf(t, thief)
			},
			fields: []string{user("tokenFile")}, knob: "--insecure-kubeconfig-files",
		},
		"client-certificate-files": {
			edit: func(u *clientcmdapi.AuthInfo, _ *clientcmdapi.Cluster) {
				u.ClientCertificateData, u.ClientKeyData = nil, nil
				u.ClientCertificate, u.ClientKey = certFile, keyFile
			},
			fields: []string{user("client-certificate"), user("client-key")}, knob: "--insecure-kubeconfig-files",
		},
		"certificate-authority-file": {
			edit: func(_ *clientcmdapi.AuthInfo, c *clientcmdapi.Cluster) {
				c.CertificateAuthorityData, c.CertificateAuthority = nil, caFile
			},
			fields: []string{cluster("certificate-authority")}, knob: "--insecure-kubeconfig-files",
		},
		"insecure-skip-tls-verify": {
			edit: func(_ *clientcmdapi.AuthInfo, c *clientcmdapi.Cluster) {
				c.CertificateAuthorityData, c.InsecureSkipTLSVerify = nil, true
			},
			fields: []string{cluster("insecure-skip-tls-verify")}, knob: "--insecure-kubeconfig-tls",
		},
		"plain-http": {
			edit: func(_ *clientcmdapi.AuthInfo, c *clientcmdapi.Cluster) {
				c.Server = strings.Replace(c.Server, "https://", "http://", 1)
			},
			fields: []string{cluster("server")}, knob: "--insecure-kubeconfig-tls",
		},
	}
	secrets := map[string]*corev1.Secret{}
	gadgets := map[string]*Gadget{}
	for name, tc := range cases {
		kubeconfig, _, _ := editedKubeconfig(t, tc.edit)
		secrets[name] = op.registerKubeconfig(t, name, kubeconfig, ns)
		gadgets[name] = op.newGadget(t, ns, "g-"+name, name, "m")
	}

	// The provider has read each Secret once it says so on the Secret; what it would
	// have done with it (run the plugin, send the file) happens on that read.
	eventually(t, 30*time.Second, "the exec kubeconfig refused", func(context.Context) (bool, error) {
		return exists(marker) || refusedEvent(t, secrets["exec"], user("exec")), nil
	})
	if exists(marker) {
		t.Fatal("a kubeconfig Secret ran a command in the operator's pod")
	}
	eventually(t, 30*time.Second, "the tokenFile kubeconfig refused", func(context.Context) (bool, error) {
		return thief.received(token) || refusedEvent(t, secrets["token-file"], user("tokenFile")), nil
	})
	if thief.received(token) {
		t.Fatal("a kubeconfig Secret sent a file of the operator's pod to the server it names")
	}

	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := gadgets[name]
			fragments := append([]string{`target cluster "` + name + `"`,
				"kubeconfig Secret " + op.clustersNS + "/" + name, tc.knob}, tc.fields...)
			expectReason(t, env, g, multicluster.TargetClusterUnavailable, 30*time.Second, fragments...)
			for _, f := range tc.fields {
				eventually(t, 30*time.Second, "a KubeconfigRefused event naming "+f, func(context.Context) (bool, error) {
					return refusedEvent(t, secrets[name], f), nil
				})
			}
			if _, err := op.mgr.GetCluster(context.Background(), mcmulticluster.ClusterName(name)); err == nil {
				t.Error("the refused kubeconfig's cluster is engaged")
			}
			c, err := conditionOf(context.Background(), env, g)
			if err != nil {
				t.Fatal(err)
			}
			said := c.Message + strings.Join(events(t, env, secrets[name]), "\n")
			for _, credential := range []string{token, string(admin.ClientKeyData), tokenFile, keyFile} {
				if strings.Contains(said, credential) {
					t.Errorf("the refusal gives away a credential or its path: %s", said)
				}
			}
			for _, c := range []*Gadget{g} {
				if ok, _ := get(context.Background(), target, childOf(c)); ok {
					t.Error("a child was written through a refused kubeconfig")
				}
			}
		})
	}
}

// pemOf returns the PEM of the TLS server's certificate.
func pemOf(t *testing.T, s *tokenServer) []byte {
	t.Helper()
	c := s.Certificate()
	if c == nil {
		t.Fatal(errors.New("the token server has no certificate"))
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
}

// registerKubeconfig creates the registration Secret name holding kubeconfig in the
// operator's clusters namespace, with the allowed-namespaces annotation set to allowed
// (none when empty), and deletes it when the test ends.
func (o *operator) registerKubeconfig(t *testing.T, name string, kubeconfig []byte, allowed string) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: o.clustersNS, Name: name,
			Labels: map[string]string{multicluster.KubeconfigSecretLabel: "true"}},
		Data: map[string][]byte{multicluster.KubeconfigSecretKey: kubeconfig},
	}
	if allowed != "" {
		s.Annotations = map[string]string{allowedNamespacesAnnotation: allowed}
	}
	if err := o.mgmt.Client.Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = o.mgmt.Client.Delete(context.Background(), s) })
	// A CR's first pass then finds it, instead of waiting for the retry.
	eventually(t, 10*time.Second, "the operator's cache sees Secret "+name, func(ctx context.Context) (bool, error) {
		err := o.mgr.GetLocalManager().GetClient().Get(ctx, client.ObjectKeyFromObject(s), &corev1.Secret{})
		return err == nil, err
	})
	return s
}

// Each knob opens its own door and no other: with all three set, a kubeconfig with an
// exec plugin, one with file paths and one that skips TLS verification all engage.
func TestKubeconfigOptInsOpenTheirDoors(t *testing.T) {
	ns := env.Namespace(t)
	namespaceOn(t, target, ns)
	op := startOperator(t, ns, operatorOptions{kubeconfig: multicluster.KubeconfigOptions{
		InsecureExec: true, InsecureFiles: true, InsecureTLS: true}})
	dir := t.TempDir()
	cfg, userName, _ := targetKubeconfig(t)
	admin := cfg.AuthInfos[userName]
	marker := filepath.Join(dir, "exec-ran")
	cred, err := json.Marshal(map[string]any{
		"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
		"status": map[string]string{
			"clientCertificateData": string(admin.ClientCertificateData),
			"clientKeyData":         string(admin.ClientKeyData),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	credFile := writeFile(t, dir, "cred.json", cred)
	certFile := writeFile(t, dir, "tls.crt", admin.ClientCertificateData)
	keyFile := writeFile(t, dir, "tls.key", admin.ClientKeyData)
	caFile := writeFile(t, dir, "ca.crt", cfg.Clusters[cfg.Contexts[cfg.CurrentContext].Cluster].CertificateAuthorityData)

	cases := map[string]func(u *clientcmdapi.AuthInfo, c *clientcmdapi.Cluster){
		"exec": func(u *clientcmdapi.AuthInfo, _ *clientcmdapi.Cluster) {
			u.ClientCertificateData, u.ClientKeyData = nil, nil
			u.Exec = &clientcmdapi.ExecConfig{
				APIVersion: "client.authentication.k8s.io/v1", Command: "/bin/sh",
				Args:            []string{"-c", "touch " + marker + " && cat " + credFile},
				InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
			}
		},
		"files": func(u *clientcmdapi.AuthInfo, c *clientcmdapi.Cluster) {
			u.ClientCertificateData, u.ClientKeyData = nil, nil
			u.ClientCertificate, u.ClientKey = certFile, keyFile
			c.CertificateAuthorityData, c.CertificateAuthority = nil, caFile
		},
		"insecure-tls": func(_ *clientcmdapi.AuthInfo, c *clientcmdapi.Cluster) {
			c.CertificateAuthorityData, c.InsecureSkipTLSVerify = nil, true
		},
	}
	for name, edit := range cases {
		kubeconfig, _, _ := editedKubeconfig(t, edit)
		op.registerKubeconfig(t, name, kubeconfig, ns)
		op.waitResolves(t, name)
		g := op.newGadget(t, ns, "g-"+name, name, "m")
		t.Run(name, func(t *testing.T) {
			expectReason(t, env, g, "ChildrenApplied", 30*time.Second, "target cluster "+name)
		})
	}
	if !exists(marker) {
		t.Error("the exec plugin an administrator allowed did not run")
	}
}

// VetConfig sees each kubeconfig that passed the built-in checks, with its Secret's
// key and the REST config built from it; its error refuses the Secret, and its text is
// part of the refusal.
func TestKubeconfigVetConfig(t *testing.T) {
	ns := env.Namespace(t)
	namespaceOn(t, target, ns)
	var mu sync.Mutex
	asked := map[string]string{} // Secret key -> host
	vet := func(secret types.NamespacedName, cfg *rest.Config) error {
		mu.Lock()
		asked[secret.String()] = cfg.Host
		mu.Unlock()
		if secret.Name == "vetoed" {
			return errors.New("not on the list of approved API servers")
		}
		return nil
	}
	op := startOperator(t, ns, operatorOptions{kubeconfig: multicluster.KubeconfigOptions{VetConfig: vet}})
	op.registerKubeconfig(t, "vetoed", targetKubeconfigBytes(t), ns)
	op.registerKubeconfig(t, "approved", targetKubeconfigBytes(t), ns)
	op.waitResolves(t, "approved")
	vetoed := op.newGadget(t, ns, "vetoed", "vetoed", "m")
	approved := op.newGadget(t, ns, "approved", "approved", "m")

	expectReason(t, env, vetoed, multicluster.TargetClusterUnavailable, 30*time.Second,
		"kubeconfig Secret "+op.clustersNS+"/vetoed", "refused by KubeconfigOptions.VetConfig: not on the list of approved API servers")
	expectReason(t, env, approved, "ChildrenApplied", 30*time.Second, "target cluster approved")
	_, err := op.resolver.Resolve(multicluster.WithNamespace(context.Background(), ns), vetoed.Spec.TargetClusterRef)
	if !errors.Is(err, multicluster.ErrKubeconfigRefused) || !errors.Is(err, multicluster.ErrTargetClusterUnavailable) {
		t.Errorf("Resolve(vetoed) = %v, want ErrKubeconfigRefused and ErrTargetClusterUnavailable", err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, name := range []string{"vetoed", "approved"} {
		if host := asked[op.clustersNS+"/"+name]; strings.TrimSuffix(host, "/") != strings.TrimSuffix(target.Config.Host, "/") {
			t.Errorf("VetConfig for %s saw host %q, want the target's %q (asked: %v)", name, host, target.Config.Host, asked)
		}
	}
}

// A resolver whose manager has a provider other than NewManager's knows no Secret
// that could list the CR's namespace: every target cluster is refused.
func TestResolverRefusesClustersOfAnotherProvider(t *testing.T) {
	mgr, err := mcmanager.New(env.Config, otherProvider{}, ctrl.Options{Scheme: env.Scheme,
		Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := multicluster.NewResolver(context.Background(), mgr, multicluster.ResolverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Resolve(multicluster.WithNamespace(context.Background(), "team-a"), &commonv1.TargetClusterRefSpec{Name: "edge"})
	if !errors.Is(err, multicluster.ErrTargetClusterUnavailable) || !strings.Contains(err.Error(), "multicluster.NewManager") {
		t.Fatalf("Resolve through another provider = %v", err)
	}
}

// otherProvider is a cluster provider that is not NewManager's.
type otherProvider struct{}

func (otherProvider) Get(context.Context, mcmulticluster.ClusterName) (cluster.Cluster, error) {
	return nil, mcmulticluster.ErrClusterNotFound
}

func (otherProvider) IndexField(context.Context, client.Object, string, client.IndexerFunc) error {
	return nil
}

func TestKubeconfigOptionsBindFlags(t *testing.T) {
	var opts multicluster.OperatorOptions
	fs := flag.NewFlagSet("operator", flag.ContinueOnError)
	opts.BindFlags(fs)
	if k := opts.Kubeconfig; k.InsecureExec || k.InsecureFiles || k.InsecureTLS {
		t.Fatalf("defaults = %+v, want every door closed", k)
	}
	if err := fs.Parse([]string{"--insecure-kubeconfig-exec", "--insecure-kubeconfig-files", "--insecure-kubeconfig-tls"}); err != nil {
		t.Fatal(err)
	}
	k := opts.Kubeconfig
	if !k.InsecureExec || !k.InsecureFiles || !k.InsecureTLS {
		t.Fatalf("after the flags: %+v", k)
	}
}

// Only the kubeconfig Secret's knobs bound by the administrator open a door.
func ExampleKubeconfigOptions_BindFlags() {
	var opts multicluster.KubeconfigOptions
	fs := flag.NewFlagSet("operator", flag.ContinueOnError)
	opts.BindFlags(fs)
	_ = fs.Parse([]string{"--insecure-kubeconfig-files"})
	fmt.Printf("exec %v, files %v, tls %v\n", opts.InsecureExec, opts.InsecureFiles, opts.InsecureTLS)
	// Output: exec false, files true, tls false
}
