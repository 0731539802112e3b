// Package httpauth puts an HTTP endpoint of an operator behind the API server's
// authentication and authorization, the way controller-runtime's metrics filter
// (sigs.k8s.io/controller-runtime/pkg/metrics/filters) and the kubelet do, without
// importing k8s.io/apiserver.
//
// A [Guard] takes the request's bearer token (Authorization: Bearer TOKEN), asks the
// API server who it belongs to with a TokenReview (authentication.k8s.io/v1), and asks
// whether that user may use the request's verb on its URL path with a
// SubjectAccessReview (authorization.k8s.io/v1) of non-resource attributes:
//
//	attribute   value
//	path        the request's URL path, such as /metrics or /controlcenter/katalog/app
//	verb        "get" for GET and HEAD ([Verb]); the method in lower case otherwise
//
// so a client is allowed by an RBAC rule with nonResourceURLs, for example
//
//	rules:
//	- nonResourceURLs: ["/metrics"]
//	  verbs: ["get"]
//
// bound to its ServiceAccount with a ClusterRoleBinding. No token, or one the API
// server does not authenticate, is 401; a user RBAC does not allow is 403; a review
// that fails is 500 (fail closed). Answers are reused for [AuthenticatedTTL] (an
// authenticated token), [AllowedTTL] (an allowed review) and [DeniedTTL] (a rejected
// token or a denied review), in caches of at most [MaxCacheEntries] each, so a page
// viewed again sends no review.
//
// The operator's own identity needs
//
//	rules:
//	- apiGroups: ["authentication.k8s.io"]
//	  resources: ["tokenreviews"]
//	  verbs: ["create"]
//	- apiGroups: ["authorization.k8s.io"]
//	  resources: ["subjectaccessreviews"]
//	  verbs: ["create"]
//
// [FilterProvider] is the Guard as a controller-runtime metrics FilterProvider
// (metricsserver.Options.FilterProvider); multicluster.RunOperator serves /metrics with
// it over HTTPS by default. [TLSConfig] is the TLS configuration of such a server: the
// tls.crt and tls.key of a directory, reloaded when they change, or a self-signed
// certificate.
package httpauth
