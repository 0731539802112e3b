package deployment

import (
	"context"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
)

// EnsureService applies svc, controlled by owner (a Service is ready once it exists, so
// there is no readiness to report); on return svc holds the server's copy. Leave the
// server-assigned fields (clusterIP, clusterIPs, ipFamilies, nodePort) unset: a pinned
// one that differs from the stored value is refused before any write with
// [ErrImmutableField]. The ownership rules of the package documentation hold.
func EnsureService(
	ctx context.Context,
	c client.Client,
	scheme *runtime.Scheme,
	owner client.Object,
	svc *corev1.Service,
) error {
	if svc == nil {
		return fmt.Errorf("ensure Service: %w", apply.ErrNilObject)
	}
	desc := "Service " + keyOf(svc)
	if err := apply.CheckScheme(scheme); err != nil {
		return fmt.Errorf("ensure %s: %w", desc, err)
	}
	if err := apply.Validate(owner, svc); err != nil {
		return fmt.Errorf("ensure %s: %w", desc, err)
	}
	if pinsAssignedFields(svc) {
		existing := &corev1.Service{}
		err := c.Get(ctx, client.ObjectKeyFromObject(svc), existing)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return fmt.Errorf("ensure %s: get: %w", desc, err)
		default:
			if err := assignedFieldConflict(existing, svc); err != nil {
				return fmt.Errorf("ensure %s: %w", desc, err)
			}
		}
	}
	if err := apply.EnsureObject(ctx, c, scheme, owner, svc, apply.FieldManager); err != nil {
		return fmt.Errorf("ensure Service: %w", err)
	}
	return nil
}

// pinsAssignedFields reports whether svc sets any field the server would assign.
func pinsAssignedFields(svc *corev1.Service) bool {
	if svc.Spec.ClusterIP != "" || len(svc.Spec.ClusterIPs) > 0 || len(svc.Spec.IPFamilies) > 0 {
		return true
	}
	for _, p := range svc.Spec.Ports {
		if p.NodePort != 0 {
			return true
		}
	}
	return false
}

// assignedFieldConflict returns an error wrapping ErrImmutableField for the first
// server-assigned field that desired pins to a value other than the stored one. An
// unassigned stored value (empty, or nodePort 0) is no conflict: the server takes the
// pinned value. For the lists, an entry beyond the stored ones is no conflict either
// (adding a secondary IP family is allowed).
func assignedFieldConflict(stored, desired *corev1.Service) error {
	if d, s := desired.Spec.ClusterIP, stored.Spec.ClusterIP; d != "" && s != "" && d != s {
		return conflict("spec.clusterIP", d, s)
	}
	for i, d := range desired.Spec.ClusterIPs {
		if i < len(stored.Spec.ClusterIPs) && stored.Spec.ClusterIPs[i] != d {
			return conflict("spec.clusterIPs["+strconv.Itoa(i)+"]", d, stored.Spec.ClusterIPs[i])
		}
	}
	for i, d := range desired.Spec.IPFamilies {
		if i < len(stored.Spec.IPFamilies) && stored.Spec.IPFamilies[i] != d {
			return conflict("spec.ipFamilies["+strconv.Itoa(i)+"]", string(d), string(stored.Spec.IPFamilies[i]))
		}
	}
	for _, d := range desired.Spec.Ports {
		if d.NodePort == 0 {
			continue
		}
		s, ok := matchPort(stored.Spec.Ports, d)
		if ok && s.NodePort != 0 && s.NodePort != d.NodePort {
			return conflict(fmt.Sprintf("spec.ports[%s].nodePort", portName(d)),
				strconv.Itoa(int(d.NodePort)), strconv.Itoa(int(s.NodePort)))
		}
	}
	return nil
}

// matchPort finds the stored port that corresponds to d: the one with the same port
// number and protocol (the key Server-Side Apply merges Service ports on).
func matchPort(stored []corev1.ServicePort, d corev1.ServicePort) (corev1.ServicePort, bool) {
	proto := d.Protocol
	if proto == "" {
		proto = corev1.ProtocolTCP
	}
	for _, s := range stored {
		sp := s.Protocol
		if sp == "" {
			sp = corev1.ProtocolTCP
		}
		if s.Port == d.Port && sp == proto {
			return s, true
		}
	}
	return corev1.ServicePort{}, false
}

func portName(p corev1.ServicePort) string {
	if p.Name != "" {
		return p.Name
	}
	return strconv.Itoa(int(p.Port))
}

func conflict(field, desired, assigned string) error {
	return fmt.Errorf("%w: %s is %q, the desired Service pins %q (delete the Service to change it)",
		ErrImmutableField, field, assigned, desired)
}
