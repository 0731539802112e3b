package satellite

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ObserveParams are the inputs of [SectionProjected]: the chain from the parent's
// Deployment through its pod volume to the Secret, and what to look for there.
type ObserveParams struct {
	// Children reads the Deployment and the Secret: the children client
	// [ResolveParentChildren] returned. Required.
	Children client.Client
	// DeploymentKey is the namespace and name of the Deployment the parent runs.
	// Required.
	DeploymentKey client.ObjectKey
	// VolumeName is the name of the pod volume that mounts the rendered Secret.
	// Required.
	VolumeName string
	// SectionHeader is the line that marks the satellite's section ("[store]"), looked
	// up with [SectionPresent] in the value of DataKey. Empty means the data key is
	// the satellite's own (one file per satellite, such as one per identity domain),
	// so its presence is the evidence.
	SectionHeader string
	// DataKey is the key of the Secret's data holding the rendered file
	// ("backends.conf"). Required.
	DataKey string
}

// SectionProjected reports whether the configuration the parent's pods run carries the
// satellite's section, following the Deployment's pod volume to the Secret it mounts:
// the evidence a satellite controller sets ConfigProjected on. Anything missing on the
// way is (false, nil); a failed read is an error naming the object (the package
// documentation, "Observing the projection").
func SectionProjected(ctx context.Context, p ObserveParams) (bool, error) {
	if err := p.validate(); err != nil {
		return false, err
	}
	var d appsv1.Deployment
	if err := p.Children.Get(ctx, p.DeploymentKey, &d); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("fetching Deployment %s: %w", p.DeploymentKey, err)
	}
	name := SecretNameForVolume(&d.Spec.Template.Spec, p.VolumeName)
	if name == "" {
		return false, nil
	}
	key := client.ObjectKey{Namespace: d.Namespace, Name: name}
	var s corev1.Secret
	if err := p.Children.Get(ctx, key, &s); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("fetching projection Secret %s: %w", key, err)
	}
	rendered, ok := s.Data[p.DataKey]
	if !ok {
		return false, nil
	}
	if p.SectionHeader == "" {
		return true, nil
	}
	return SectionPresent(rendered, p.SectionHeader), nil
}

// validate refuses the parameters SectionProjected cannot work with.
func (p *ObserveParams) validate() error {
	switch {
	case p.Children == nil:
		return fmt.Errorf("%w: ObserveParams.Children is nil", ErrInvalidParams)
	case p.DeploymentKey.Name == "":
		return fmt.Errorf("%w: ObserveParams.DeploymentKey.Name is empty", ErrInvalidParams)
	case p.VolumeName == "":
		return fmt.Errorf("%w: ObserveParams.VolumeName is empty", ErrInvalidParams)
	case p.DataKey == "":
		return fmt.Errorf("%w: ObserveParams.DataKey is empty", ErrInvalidParams)
	}
	return nil
}

// SecretNameForVolume returns the name of the Secret the pod volume volumeName mounts,
// or "" when spec is nil, has no volume of that name, or the first volume of that name
// mounts no Secret (a ConfigMap, an emptyDir, a projected volume).
func SecretNameForVolume(spec *corev1.PodSpec, volumeName string) string {
	if spec == nil {
		return ""
	}
	for i := range spec.Volumes {
		v := &spec.Volumes[i]
		if v.Name != volumeName {
			continue
		}
		if v.Secret == nil {
			return ""
		}
		return v.Secret.SecretName
	}
	return ""
}

// SectionPresent reports whether header appears in rendered as a whole line, exactly (no
// white space trimmed; LF and CRLF line ends both work): "[name2]" and "x = [name]" do
// not satisfy "[name]". An empty header, or one containing a line break, is never
// present.
func SectionPresent(rendered []byte, header string) bool {
	if header == "" || strings.ContainsAny(header, "\r\n") {
		return false
	}
	h := []byte(header)
	for off := 0; off <= len(rendered)-len(h); {
		i := bytes.Index(rendered[off:], h)
		if i < 0 {
			return false
		}
		start, end := off+i, off+i+len(h)
		if (start == 0 || isLineBreak(rendered[start-1])) && (end == len(rendered) || isLineBreak(rendered[end])) {
			return true
		}
		off = start + 1
	}
	return false
}

// isLineBreak reports whether c ends a line: LF or CR.
func isLineBreak(c byte) bool { return c == '\n' || c == '\r' }
