package testenv

// Pinned versions. KubernetesVersion is the single source of truth for the envtest
// binaries: hack/envtest.sh reads it from this file.
const (
	// KubernetesVersion is the version of kube-apiserver and etcd's Kubernetes release
	// that the kit runs.
	KubernetesVersion = "1.37.2"

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
	// [Options.Controllers] hands to the kwok binary; hack/envtest.sh installs that
	// binary at the same version.
	KWOKModule  = "sigs.k8s.io/kwok"
	KWOKVersion = "v0.8.0"
)
