package satellite_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/satellite"
)

// readme:start
// The satellite's controller: find the parent and the cluster it targets, then look
// for its own section in the Secret the parent's Deployment mounts.
func (r *BackendReconciler) observe(ctx context.Context, b *GlanceBackend) (ctrl.Result, error) {
	children, res, err := satellite.ResolveParentChildren(ctx, satellite.ResolveParams{
		Client: r.client, Parent: &Glance{}, ParentKind: "Glance",
		ParentKey:        client.ObjectKey{Namespace: b.Namespace, Name: b.Spec.Glance},
		TargetClusterRef: func(p client.Object) *commonv1.TargetClusterRefSpec { return p.(*Glance).Spec.TargetClusterRef },
		Resolver:         r.resolver, // nil keeps everything on the management cluster
		Conditions:       &b.Status.Conditions, Generation: b.Generation,
		GateConditionType: "CredentialsReady", RequeueAfter: 15 * time.Second,
		WaitingForParentReason: "WaitingForParent", WaitingForParentMessage: "Glance " + b.Spec.Glance + " does not exist",
	})
	if children == nil {
		return res, err
	}
	projected, err := satellite.SectionProjected(ctx, satellite.ObserveParams{Children: children,
		DeploymentKey: client.ObjectKey{Namespace: b.Namespace, Name: b.Spec.Glance},
		VolumeName:    "backends", DataKey: "backends.conf", SectionHeader: "[" + b.Name + "]"})
	if err != nil || !projected {
		return ctrl.Result{RequeueAfter: 15 * time.Second}, err // ConfigProjected stays False
	}
	meta.SetStatusCondition(&b.Status.Conditions, metav1.Condition{Type: "ConfigProjected",
		Status: metav1.ConditionTrue, Reason: "SectionMounted", ObservedGeneration: b.Generation})
	return ctrl.Result{}, nil
}

// The parent's aggregation step: the backends that passed their gate, sorted by name,
// one section each; the rendered file goes into a content-addressed Secret.
func renderBackends(list *GlanceBackendList) (string, bool) {
	items := make([]*GlanceBackend, 0, len(list.Items))
	for i := range list.Items {
		items = append(items, &list.Items[i])
	}
	c := satellite.Collect(satellite.CollectParams[GlanceBackend, *GlanceBackend]{
		Items: items,
		Gate: func(b *GlanceBackend) bool {
			return meta.IsStatusConditionTrue(b.Status.Conditions, "CredentialsReady")
		},
		IsDefault: func(b *GlanceBackend) bool { return b.Spec.Default },
	})
	var out strings.Builder
	for _, b := range c.Gated {
		fmt.Fprintf(&out, "[%s]\nstore = s3\n\n", b.Name)
	}
	return out.String(), c.Valid // Valid: exactly one gated default
}

// readme:end

// BackendReconciler is the example satellite controller.
type BackendReconciler struct {
	client   client.Client
	resolver multicluster.Resolver
}

// Glance is the example parent kind.
type Glance struct {
	appsv1.Deployment // stands in for the parent's own type in this example
	Spec              struct {
		TargetClusterRef *commonv1.TargetClusterRefSpec
	}
}

// GlanceBackend is the example satellite kind.
type GlanceBackend struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Glance  string
		Default bool
	}
	Status struct{ Conditions []metav1.Condition }
}

// DeepCopyObject implements runtime.Object.
func (b *GlanceBackend) DeepCopyObject() runtime.Object {
	out := *b
	b.DeepCopyInto(&out.ObjectMeta)
	out.Status.Conditions = append([]metav1.Condition(nil), b.Status.Conditions...)
	return &out
}

// GlanceBackendList is a list of GlanceBackends.
type GlanceBackendList struct{ Items []GlanceBackend }

// Example_handshake renders the parent's section file from the satellites that passed
// their gate: the one without credentials is left out, the order is by name.
func Example_handshake() {
	backend := func(name string, ready, def bool) GlanceBackend {
		b := GlanceBackend{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "openstack"}}
		b.Spec.Default = def
		if ready {
			b.Status.Conditions = []metav1.Condition{{Type: "CredentialsReady", Status: metav1.ConditionTrue}}
		}
		return b
	}
	rendered, valid := renderBackends(&GlanceBackendList{Items: []GlanceBackend{
		backend("west", true, false), backend("east", true, true), backend("north", false, false)}})
	fmt.Print(rendered)
	fmt.Println("valid:", valid)
	_ = (&BackendReconciler{}).observe
	// Output:
	// [east]
	// store = s3
	//
	// [west]
	// store = s3
	//
	// valid: true
}
