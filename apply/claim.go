package apply

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// The labels and the annotation that claim a child for its owner on a target cluster
// (see "Target clusters" in the package documentation). ClaimLabels builds the labels,
// ClaimOf reads a claim back.
const (
	// OwnerClusterLabel names the management cluster the owner lives on
	// (RemoteOwnership.ManagementCluster).
	OwnerClusterLabel = "cobaltcore.c5c3.io/owner-cluster"
	// OwnerKindLabel names the owner's kind as "Kind.group" ("Kind" for the core
	// group), shortened as described at ClaimLabelValue.
	OwnerKindLabel = "cobaltcore.c5c3.io/owner-kind"
	// OwnerNamespaceLabel names the owner's namespace ("" for a cluster-scoped owner),
	// shortened as described at ClaimLabelValue.
	OwnerNamespaceLabel = "cobaltcore.c5c3.io/owner-namespace"
	// OwnerNameLabel names the owner, shortened as described at ClaimLabelValue.
	OwnerNameLabel = "cobaltcore.c5c3.io/owner-name"
	// OwnerAnnotation holds the owner exactly, as "<Kind.group>/<namespace>/<name>"
	// ("Kind" alone for the core group, an empty namespace for a cluster-scoped
	// owner), so that a name too long for a label value survives.
	OwnerAnnotation = "cobaltcore.c5c3.io/owner"
)

// claimLabelKeys are the four claim labels.
var claimLabelKeys = [...]string{OwnerClusterLabel, OwnerKindLabel, OwnerNamespaceLabel, OwnerNameLabel}

// ErrInvalidRemoteOwnership reports a RemoteOwnership whose ManagementCluster is empty or
// not a valid label value. EnsureObject and SetOwnership refuse it before any API call.
var ErrInvalidRemoteOwnership = errors.New("invalid remote ownership")

// RemoteOwnership makes an Applier claim the children it writes with labels instead of
// an owner reference: its client writes to a target cluster, while the owners live on
// the management cluster (see "Target clusters" in the package documentation).
type RemoteOwnership struct {
	// ManagementCluster identifies the cluster the owners live on, written to
	// OwnerClusterLabel on every child: a non-empty valid label value, distinct for
	// every management cluster writing to the same target cluster (two with the same
	// identity can take each other's children).
	ManagementCluster string
}

// Validate returns nil when o can be used, and otherwise an error wrapping
// ErrInvalidRemoteOwnership that says what is wrong with ManagementCluster.
func (o RemoteOwnership) Validate() error {
	if o.ManagementCluster == "" {
		return fmt.Errorf("%w: ManagementCluster is empty", ErrInvalidRemoteOwnership)
	}
	if problems := validation.IsValidLabelValue(o.ManagementCluster); len(problems) > 0 {
		return fmt.Errorf("%w: ManagementCluster %q is not a valid label value: %s",
			ErrInvalidRemoteOwnership, o.ManagementCluster, strings.Join(problems, "; "))
	}
	return nil
}

// Claim is the owner a child on a target cluster is claimed for: ClaimOf reads it from
// the child's labels and annotation.
type Claim struct {
	// ManagementCluster is the identity of the cluster the owner lives on.
	ManagementCluster string
	// GroupKind is the owner's kind.
	GroupKind schema.GroupKind
	// Namespace is the owner's namespace, "" for a cluster-scoped owner.
	Namespace string
	// Name is the owner's name.
	Name string
}

// String renders the claim as `Memo.memo.example/ns/name of management cluster
// "mgmt-a"`: the owner as OwnerAnnotation holds it, and the cluster.
func (c Claim) String() string {
	return fmt.Sprintf("%s of management cluster %q", c.annotation(), c.ManagementCluster)
}

// annotation renders the owner as OwnerAnnotation holds it.
func (c Claim) annotation() string {
	return c.GroupKind.String() + "/" + c.Namespace + "/" + c.Name
}

// labels returns the four claim labels of c.
func (c Claim) labels() map[string]string {
	return map[string]string{
		OwnerClusterLabel:   c.ManagementCluster,
		OwnerKindLabel:      ClaimLabelValue(c.GroupKind.String()),
		OwnerNamespaceLabel: ClaimLabelValue(c.Namespace),
		OwnerNameLabel:      ClaimLabelValue(c.Name),
	}
}

// claimFor returns the claim of owner, of kind ownerGVK, from management cluster remote.
func claimFor(remote RemoteOwnership, ownerGVK schema.GroupVersionKind, owner client.Object) Claim {
	return Claim{
		ManagementCluster: remote.ManagementCluster,
		GroupKind:         ownerGVK.GroupKind(),
		Namespace:         owner.GetNamespace(),
		Name:              owner.GetName(),
	}
}

// ClaimLabels returns the four labels that claim a child for owner (of kind ownerGVK) on
// behalf of the management cluster remote names. As client.MatchingLabels they select
// exactly owner's children on a target cluster, to list and sweep them; a claim also needs
// [OwnerAnnotation] ([ClaimOf]), which SetOwnership writes with them.
func ClaimLabels(remote RemoteOwnership, ownerGVK schema.GroupVersionKind, owner client.Object) map[string]string {
	return claimFor(remote, ownerGVK, owner).labels()
}

// ClaimOf returns the claim obj carries: its four claim labels and OwnerAnnotation. ok
// is false when any of the labels is missing, or the annotation is missing, malformed
// or names another owner than the labels (each label must equal ClaimLabelValue of the
// annotation's kind, namespace and name).
func ClaimOf(obj client.Object) (claim Claim, ok bool) {
	labels := obj.GetLabels()
	for _, k := range claimLabelKeys {
		if _, ok := labels[k]; !ok {
			return Claim{}, false
		}
	}
	parts := strings.SplitN(obj.GetAnnotations()[OwnerAnnotation], "/", 3)
	if len(parts) != 3 || parts[2] == "" {
		return Claim{}, false
	}
	claim = Claim{
		ManagementCluster: labels[OwnerClusterLabel],
		GroupKind:         schema.ParseGroupKind(parts[0]),
		Namespace:         parts[1],
		Name:              parts[2],
	}
	if claim.GroupKind.Kind == "" || !maps.Equal(claim.labels(), pick(labels, claimLabelKeys[:])) {
		return Claim{}, false
	}
	return claim, true
}

// pick returns the entries of m under keys.
func pick(m map[string]string, keys []string) map[string]string {
	out := make(map[string]string, len(keys))
	for _, k := range keys {
		if v, ok := m[k]; ok {
			out[k] = v
		}
	}
	return out
}

// hasClaimLabel reports whether obj carries any of the four claim labels.
func hasClaimLabel(obj client.Object) bool {
	labels := obj.GetLabels()
	for _, k := range claimLabelKeys {
		if _, ok := labels[k]; ok {
			return true
		}
	}
	return false
}

// claimPrefixLength is how many characters of a shortened value ClaimLabelValue keeps.
const claimPrefixLength = 52

// ClaimLabelValue returns v as the claim labels carry it: unchanged when it is a valid
// label value (empty included), otherwise a valid one of at most 63 characters made
// deterministically from it: its first 52 bytes with disallowed characters replaced by '-'
// and trimmed to alphanumerics, "-" and 10 hex digits of the SHA-256 of v (the digits
// alone when no prefix is left). [OwnerAnnotation] keeps the exact value.
func ClaimLabelValue(v string) string {
	if len(validation.IsValidLabelValue(v)) == 0 {
		return v
	}
	prefix := v
	if len(prefix) > claimPrefixLength {
		prefix = prefix[:claimPrefixLength]
	}
	prefix = strings.Map(func(r rune) rune {
		if isAlphanumeric(r) || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '-'
	}, prefix)
	prefix = strings.TrimFunc(prefix, func(r rune) bool { return !isAlphanumeric(r) })
	sum := sha256.Sum256([]byte(v))
	digest := hex.EncodeToString(sum[:])[:10]
	if prefix == "" {
		return digest
	}
	return prefix + "-" + digest
}

func isAlphanumeric(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}

// remoteOf returns the remote ownership of c: that of the Applier c carries
// ([ApplierOf]) when its ApplierOptions.Remote is set, else nil (children are
// owner-referenced).
func remoteOf(c client.Client) *RemoteOwnership {
	if a := ApplierOf(c); a != nil {
		return a.opts.Remote
	}
	return nil
}

// SetOwnership makes owner the owner of obj the way c's cluster records it, before obj is
// created or applied through c: owner's controller reference, or through an Applier with
// ApplierOptions.Remote the claim labels ([ClaimLabels]) and [OwnerAnnotation] and no owner
// reference (obj may then live in any namespace). Errors wrap [ErrInvalidOwner] (also for
// an obj with another controller), [ErrNilScheme] or [ErrInvalidRemoteOwnership]. It makes
// no API call.
func SetOwnership(c client.Client, scheme *runtime.Scheme, owner, obj client.Object) error {
	if err := CheckScheme(scheme); err != nil {
		return err
	}
	if isNil(owner) {
		return ErrNilOwner
	}
	if isNil(obj) {
		return ErrNilObject
	}
	remote := remoteOf(c)
	if remote == nil {
		if err := controllerutil.SetControllerReference(owner, obj, scheme); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidOwner, err)
		}
		return nil
	}
	if err := remote.Validate(); err != nil {
		return err
	}
	gvk, err := apiutil.GVKForObject(owner, scheme)
	if err != nil {
		return fmt.Errorf("%w: owner %s: %w", ErrInvalidOwner, objectKey(owner), err)
	}
	claim := claimFor(*remote, gvk, owner)
	labels := maps.Clone(obj.GetLabels())
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, claim.labels())
	obj.SetLabels(labels)
	annotations := maps.Clone(obj.GetAnnotations())
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[OwnerAnnotation] = claim.annotation()
	obj.SetAnnotations(annotations)
	return nil
}

// OwnershipFields lists the metadata fields SetOwnership writes through c, as
// Write.Fields names them: "metadata.ownerReferences" on the management cluster, the
// four claim labels and OwnerAnnotation through an *Applier with ApplierOptions.Remote.
// Helpers that adopt an object with a patch report them.
func OwnershipFields(c client.Client) []string {
	if remoteOf(c) == nil {
		return []string{"metadata.ownerReferences"}
	}
	out := make([]string, 0, len(claimLabelKeys)+1)
	for _, k := range claimLabelKeys {
		out = append(out, "metadata.labels."+k)
	}
	return append(out, "metadata.annotations."+OwnerAnnotation)
}

// IsControlled reports whether owner owns obj the way c's cluster records it: owner is
// obj's controller reference, or through an Applier with ApplierOptions.Remote [ClaimOf]
// obj is owner's claim, management cluster included (a claim names the owner, not its
// UID). A nil owner or obj is controlled by nothing.
func IsControlled(c client.Client, owner, obj client.Object) bool {
	if isNil(owner) || isNil(obj) {
		return false
	}
	remote := remoteOf(c)
	if remote == nil {
		return metav1.IsControlledBy(obj, owner)
	}
	gvk, err := c.GroupVersionKindFor(owner)
	if err != nil {
		return false
	}
	claim, ok := ClaimOf(obj)
	return ok && claim == claimFor(*remote, gvk, owner)
}

// Unclaimed reports whether obj has no owner the way c's cluster records one, so that an
// owner may adopt it on consent ([AdoptAnnotation]): no controller reference, and through
// an Applier with ApplierOptions.Remote none of the claim labels either. An object with
// some claim labels but no valid claim is not unclaimed ("Target clusters").
func Unclaimed(c client.Client, obj client.Object) bool {
	if metav1.GetControllerOfNoCopy(obj) != nil {
		return false
	}
	return remoteOf(c) == nil || !hasClaimLabel(obj)
}
