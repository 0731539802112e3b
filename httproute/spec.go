package httproute

import (
	"errors"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// DefaultPath is the path prefix [Build] routes when [Spec.Path] is empty.
const DefaultPath = "/"

// ErrInvalidSpec reports a gateway [Spec] or [Backend] that [Build] refuses; the error
// names the field.
var ErrInvalidSpec = errors.New("invalid gateway spec")

// Spec is the gateway block a CR embeds (for instance as spec.gateway, a pointer: nil
// means "no HTTPRoute"). It selects the Gateway listener and what traffic the route
// takes; the backend is the operator's own Service ([Backend]).
type Spec struct {
	// ParentRef is the Gateway (listener) the route attaches to.
	ParentRef ParentRef `json:"parentRef"`
	// Hostnames the route matches; empty means the listener's hostnames.
	// +optional
	Hostnames []string `json:"hostnames,omitempty"`
	// Path is the path prefix the route matches; empty means "/".
	// +kubebuilder:validation:Pattern=`^/`
	// +optional
	Path string `json:"path,omitempty"`
}

// ParentRef names a Gateway and optionally one of its listeners.
type ParentRef struct {
	// Name of the Gateway.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// Namespace of the Gateway; empty means the route's namespace.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// SectionName is the Gateway listener to attach to; empty means all listeners
	// that allow the route.
	// +optional
	SectionName string `json:"sectionName,omitempty"`
}

// Backend is the Service the route sends traffic to.
type Backend struct {
	// ServiceName is the name of the Service in the route's namespace.
	ServiceName string
	// Port is the Service port (1-65535).
	Port int32
}

// DeepCopyInto copies s into out.
func (s *Spec) DeepCopyInto(out *Spec) {
	*out = *s
	if s.Hostnames != nil {
		out.Hostnames = make([]string, len(s.Hostnames))
		copy(out.Hostnames, s.Hostnames)
	}
}

// DeepCopy returns a deep copy of s, or nil for a nil s.
func (s *Spec) DeepCopy() *Spec {
	if s == nil {
		return nil
	}
	out := new(Spec)
	s.DeepCopyInto(out)
	return out
}

// Build returns the HTTPRoute key that routes requests matching spec (its hostnames
// and path prefix) through the Gateway listener spec.ParentRef to backend. It returns
// an error wrapping [ErrInvalidSpec] that names the field when spec.parentRef.name,
// backend.ServiceName or key's name or namespace is empty, spec.path does not start
// with "/", a hostname is empty, or backend.Port is outside 1-65535.
func Build(key client.ObjectKey, spec Spec, backend Backend) (*gatewayv1.HTTPRoute, error) {
	if err := validate(key, spec, backend); err != nil {
		return nil, fmt.Errorf("build HTTPRoute %s: %w", key, err)
	}
	path := spec.Path
	if path == "" {
		path = DefaultPath
	}
	parent := gatewayv1.ParentReference{Name: gatewayv1.ObjectName(spec.ParentRef.Name)}
	if spec.ParentRef.Namespace != "" {
		parent.Namespace = new(gatewayv1.Namespace(spec.ParentRef.Namespace))
	}
	if spec.ParentRef.SectionName != "" {
		parent.SectionName = new(gatewayv1.SectionName(spec.ParentRef.SectionName))
	}
	var hostnames []gatewayv1.Hostname
	for _, h := range spec.Hostnames {
		hostnames = append(hostnames, gatewayv1.Hostname(h))
	}
	return &gatewayv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace},
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{parent}},
			Hostnames:       hostnames,
			Rules: []gatewayv1.HTTPRouteRule{{
				Matches: []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{
					Type:  new(gatewayv1.PathMatchPathPrefix),
					Value: new(path),
				}}},
				BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
					BackendObjectReference: gatewayv1.BackendObjectReference{
						Name: gatewayv1.ObjectName(backend.ServiceName),
						Port: new(backend.Port),
					},
				}}},
			}},
		},
	}, nil
}

func validate(key client.ObjectKey, spec Spec, backend Backend) error {
	var errs []string
	if key.Name == "" || key.Namespace == "" {
		errs = append(errs, "route name and namespace must not be empty")
	}
	if spec.ParentRef.Name == "" {
		errs = append(errs, "parentRef.name must not be empty")
	}
	if spec.Path != "" && !strings.HasPrefix(spec.Path, "/") {
		errs = append(errs, fmt.Sprintf("path %q must start with \"/\"", spec.Path))
	}
	for i, h := range spec.Hostnames {
		if h == "" {
			errs = append(errs, fmt.Sprintf("hostnames[%d] must not be empty", i))
		}
	}
	if backend.ServiceName == "" {
		errs = append(errs, "backend service name must not be empty")
	}
	if backend.Port < 1 || backend.Port > 65535 {
		errs = append(errs, fmt.Sprintf("backend port %d must be within 1-65535", backend.Port))
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %s", ErrInvalidSpec, strings.Join(errs, "; "))
	}
	return nil
}
