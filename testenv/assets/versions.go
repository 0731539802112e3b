package assets

// Pinned versions: the single source of truth for the control-plane binaries. Package
// testenv's KubernetesVersion, KWOKModule and KWOKVersion refer to these constants.
const (
	// KubernetesVersion is the Kubernetes release (without a leading v) whose
	// kube-apiserver, etcd, kubectl, kube-controller-manager and kube-scheduler the
	// kit runs, and the default [Options.Version].
	KubernetesVersion = "1.37.2"

	// KWOKModule is the Go module of kwok: [Build] installs its cmd/kwok, and package
	// testenv reads kwok's Stage documents from it.
	KWOKModule = "sigs.k8s.io/kwok"
	// KWOKVersion is the kwok release [Build] installs (the default
	// [Options.KWOKVersion]); the Stage documents come from the same release.
	KWOKVersion = "v0.8.0"
)
