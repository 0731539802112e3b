package multicluster

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// AllowedNamespacesAnnotation is the annotation of a kubeconfig Secret that registers a
// target cluster which lists the namespaces whose CRs may name the cluster in spec.targetClusterRef:
// a comma-separated list of namespace names (spaces around a name are ignored), or "*"
// for every namespace. A Secret without it serves no namespace: a CR naming the cluster
// gets TargetClusterUnavailable, and nothing is written to or swept from the cluster
// for it.
const AllowedNamespacesAnnotation = "cobaltcore.c5c3.io/allowed-namespaces"

// ReasonKubeconfigRefused (Warning) is the event reason recorded on a kubeconfig Secret
// whose kubeconfig is refused ([KubeconfigOptions]); the note names the refused fields,
// never a credential. The target cluster is not engaged while it is refused.
const ReasonKubeconfigRefused = "KubeconfigRefused"

var (
	// ErrKubeconfigRefused is wrapped by the error that refuses a kubeconfig Secret
	// ([KubeconfigOptions]); the resolver's UnavailableError wraps it.
	ErrKubeconfigRefused = errors.New("kubeconfig refused")
	// ErrNamespaceNotAllowed is wrapped by the resolver's error for a CR whose
	// namespace the target cluster's kubeconfig Secret does not list in
	// [AllowedNamespacesAnnotation].
	ErrNamespaceNotAllowed = errors.New("namespace not allowed")
)

// The command-line flags of [KubeconfigOptions.BindFlags].
const (
	// FlagInsecureKubeconfigExec sets KubeconfigOptions.InsecureExec.
	FlagInsecureKubeconfigExec = "insecure-kubeconfig-exec"
	// FlagInsecureKubeconfigFiles sets KubeconfigOptions.InsecureFiles.
	FlagInsecureKubeconfigFiles = "insecure-kubeconfig-files"
	// FlagInsecureKubeconfigTLS sets KubeconfigOptions.InsecureTLS.
	FlagInsecureKubeconfigTLS = "insecure-kubeconfig-tls"
)

// KubeconfigOptions bound what a kubeconfig Secret of the clusters namespace may make
// the operator do. Whoever may write a labelled Secret there is not trusted with the
// operator's pod: by default (the zero value) a kubeconfig is refused when any of its
// users or clusters, used by the current context or not,
//
//   - runs a plugin in the operator's pod: users[].user.exec or
//     users[].user.auth-provider (allowed by InsecureExec);
//   - reads a file of the operator's pod, which would hand, say, the operator's own
//     ServiceAccount token to the server the kubeconfig names:
//     users[].user.tokenFile, users[].user.client-certificate, users[].user.client-key
//     or clusters[].cluster.certificate-authority (allowed by InsecureFiles; the
//     *-data fields carry the same material inline and are always accepted);
//   - weakens TLS: clusters[].cluster.insecure-skip-tls-verify, or a server that is not
//     an https:// URL (allowed by InsecureTLS).
//
// clusters[].cluster.proxy-url is accepted: it reads nothing of the pod and reaches no
// address the server URL could not name; VetConfig can refuse it (rest.Config.Proxy).
// A kubeconfig that does not parse, or a Secret without the data key
// [KubeconfigSecretKey], is refused as well.
//
// A refused Secret is not engaged (one engaged from its earlier content is
// disengaged), the refusal is recorded as a Warning event [ReasonKubeconfigRefused] on
// the Secret, and a CR naming the cluster gets TargetClusterUnavailable with a message
// naming the Secret, each refused field and the flag that would allow it. The check
// runs on the kubeconfig before client-go parses it, so nothing is executed, opened or
// sent for a refused Secret.
type KubeconfigOptions struct {
	// InsecureExec accepts exec and auth-provider plugins, which run in the operator's
	// pod with its ServiceAccount and file system (--insecure-kubeconfig-exec). Off by
	// default.
	InsecureExec bool
	// InsecureFiles accepts the fields that read a file of the operator's pod
	// (tokenFile, client-certificate, client-key, certificate-authority)
	// (--insecure-kubeconfig-files). Off by default.
	InsecureFiles bool
	// InsecureTLS accepts insecure-skip-tls-verify and servers reached without TLS
	// (--insecure-kubeconfig-tls). Off by default.
	InsecureTLS bool
	// VetConfig, when set, is asked about every kubeconfig that passed the checks
	// above, with the Secret's namespace and name and the REST config built from it (a
	// copy: changes are discarded); an error refuses the Secret, and its text is part
	// of the refusal's event and condition message, so it must not carry a credential.
	// It may be called more than once for the same content and from several
	// goroutines.
	VetConfig func(secret types.NamespacedName, cfg *rest.Config) error
}

// BindFlags binds --insecure-kubeconfig-exec, --insecure-kubeconfig-files and
// --insecure-kubeconfig-tls on fs, each defaulting to o's current value.
func (o *KubeconfigOptions) BindFlags(fs *flag.FlagSet) {
	fs.BoolVar(&o.InsecureExec, FlagInsecureKubeconfigExec, o.InsecureExec,
		"accept exec and auth-provider plugins in target-cluster kubeconfig Secrets: they run commands in the operator's pod")
	fs.BoolVar(&o.InsecureFiles, FlagInsecureKubeconfigFiles, o.InsecureFiles,
		"accept file paths (tokenFile, client-certificate, client-key, certificate-authority) in target-cluster kubeconfig Secrets: they read the operator's files")
	fs.BoolVar(&o.InsecureTLS, FlagInsecureKubeconfigTLS, o.InsecureTLS,
		"accept insecure-skip-tls-verify and http:// servers in target-cluster kubeconfig Secrets")
}

// refusal is an error with its own text that errors.Is matches to sentinel.
type refusal struct {
	sentinel error
	msg      string
}

func (r *refusal) Error() string        { return r.msg }
func (r *refusal) Is(target error) bool { return target == r.sentinel }

// vetKubeconfig checks the kubeconfig Secret secret against o and returns nil or an
// error wrapping ErrKubeconfigRefused that names the Secret and every refused field.
// It reads no file and runs nothing unless o allows it.
func (o KubeconfigOptions) vetKubeconfig(secret *corev1.Secret) error {
	key := types.NamespacedName{Namespace: secret.Namespace, Name: secret.Name}
	refuse := func(why string) error {
		return &refusal{sentinel: ErrKubeconfigRefused, msg: fmt.Sprintf("kubeconfig Secret %s: %s", key, why)}
	}
	data := secret.Data[KubeconfigSecretKey]
	if len(data) == 0 {
		return refuse(fmt.Sprintf("holds no kubeconfig under data key %q", KubeconfigSecretKey))
	}
	// The parser's own errors may quote the content; they are not passed on.
	cfg, err := clientcmd.Load(data)
	if err != nil {
		return refuse(fmt.Sprintf("data key %q does not parse as a kubeconfig", KubeconfigSecretKey))
	}
	if problems := o.problems(cfg); len(problems) > 0 {
		return refuse(strings.Join(problems, "; "))
	}
	restCfg, err := clientcmd.NewDefaultClientConfig(*cfg, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return refuse("is not a usable kubeconfig (check its current context, cluster and user)")
	}
	if o.VetConfig != nil {
		if err := o.VetConfig(key, rest.CopyConfig(restCfg)); err != nil {
			return refuse("refused by KubeconfigOptions.VetConfig: " + err.Error())
		}
	}
	return nil
}

// problems names every field of cfg that o refuses, in a stable order.
func (o KubeconfigOptions) problems(cfg *clientcmdapi.Config) []string {
	const (
		plugin = "runs a plugin in the operator's pod (an administrator allows it with --" + FlagInsecureKubeconfigExec + ")"
		file   = "reads a file of the operator's pod (an administrator allows it with --" + FlagInsecureKubeconfigFiles + ")"
	)
	var out []string
	for _, name := range sortedKeys(cfg.AuthInfos) {
		u := cfg.AuthInfos[name]
		if u == nil {
			continue
		}
		field := func(f string) string { return fmt.Sprintf("users[%q].user.%s", name, f) }
		if !o.InsecureExec {
			if u.Exec != nil {
				out = append(out, field("exec")+": "+plugin)
			}
			if u.AuthProvider != nil {
				out = append(out, field("auth-provider")+": "+plugin)
			}
		}
		if !o.InsecureFiles {
			for _, f := range []struct{ name, value string }{
				{"tokenFile", u.TokenFile}, {"client-certificate", u.ClientCertificate}, {"client-key", u.ClientKey},
			} {
				if f.value != "" {
					out = append(out, field(f.name)+": "+file)
				}
			}
		}
	}
	for _, name := range sortedKeys(cfg.Clusters) {
		c := cfg.Clusters[name]
		if c == nil {
			continue
		}
		field := func(f string) string { return fmt.Sprintf("clusters[%q].cluster.%s", name, f) }
		if !o.InsecureFiles && c.CertificateAuthority != "" {
			out = append(out, field("certificate-authority")+": "+file)
		}
		if !o.InsecureTLS {
			if c.InsecureSkipTLSVerify {
				out = append(out, field("insecure-skip-tls-verify")+
					": the server's certificate would not be verified (an administrator allows it with --"+FlagInsecureKubeconfigTLS+")")
			}
			if !strings.HasPrefix(strings.ToLower(c.Server), "https://") {
				out = append(out, field("server")+
					": not an https:// URL, the connection would not be encrypted (an administrator allows it with --"+FlagInsecureKubeconfigTLS+")")
			}
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// allowedNamespaces checks that namespace may use the target cluster the kubeconfig
// Secret secret registers ([AllowedNamespacesAnnotation]); the error wraps
// ErrNamespaceNotAllowed.
func allowedNamespaces(secret *corev1.Secret, namespace string) error {
	key := types.NamespacedName{Namespace: secret.Namespace, Name: secret.Name}
	value, ok := secret.Annotations[AllowedNamespacesAnnotation]
	if !ok {
		return &refusal{sentinel: ErrNamespaceNotAllowed, msg: fmt.Sprintf(
			"kubeconfig Secret %s has no annotation %s (a comma-separated list of namespaces, or \"*\" for all), so no namespace may use it",
			key, AllowedNamespacesAnnotation)}
	}
	for _, entry := range strings.Split(value, ",") {
		if entry = strings.TrimSpace(entry); entry == "*" || (entry != "" && entry == namespace) {
			return nil
		}
	}
	return &refusal{sentinel: ErrNamespaceNotAllowed, msg: fmt.Sprintf(
		"kubeconfig Secret %s does not list it in annotation %s", key, AllowedNamespacesAnnotation)}
}
