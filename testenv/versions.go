package testenv

import "github.com/c5c3/reconciler-sdk/testenv/assets"

// Pinned versions. KubernetesVersion, KWOKModule and KWOKVersion are pinned in package
// testenv/assets, which provides the binaries (go run
// github.com/c5c3/reconciler-sdk/cmd/envtest, or hack/envtest.sh in this repository).
const (
	// KubernetesVersion is the version of kube-apiserver and etcd's Kubernetes release
	// that the kit runs: [assets.KubernetesVersion].
	KubernetesVersion = assets.KubernetesVersion

	// ESOModule and ESOVersion locate External Secrets Operator's CRDs.
	ESOModule  = "github.com/external-secrets/external-secrets"
	ESOVersion = "v0.20.4"
	// CertManagerModule and CertManagerVersion locate cert-manager's CRDs.
	CertManagerModule  = "github.com/cert-manager/cert-manager"
	CertManagerVersion = "v1.20.2"
	// MariaDBOperatorModule and MariaDBOperatorVersion locate mariadb-operator's CRDs.
	MariaDBOperatorModule  = "github.com/mariadb-operator/mariadb-operator/v25"
	MariaDBOperatorVersion = "v25.10.4"
	// GatewayAPIModule and GatewayAPIVersion locate the Gateway API CRDs.
	GatewayAPIModule  = "sigs.k8s.io/gateway-api"
	GatewayAPIVersion = "v1.6.3"
	// VPAModule and VPAVersion locate the VerticalPodAutoscaler CRDs.
	VPAModule  = "k8s.io/autoscaler/vertical-pod-autoscaler"
	VPAVersion = "v1.8.1"

	// KWOKModule and KWOKVersion locate the kwok Stage documents that
	// [Options.Controllers] hands to the kwok binary; [assets.Build] installs that
	// binary from the same module at the same version.
	KWOKModule  = assets.KWOKModule
	KWOKVersion = assets.KWOKVersion
)
