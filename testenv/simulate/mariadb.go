package simulate

import (
	"context"
	"fmt"

	mariadbv1alpha1 "github.com/mariadb-operator/mariadb-operator/v25/api/v1alpha1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The simulators below stand in for mariadb-operator, which envtest does not run. They
// write the Ready condition mariadb-operator writes, with its reasons and messages,
// through the status subresource, retrying on conflict, and return the updated object.
// Unlike mariadb-operator v25.10.4, which leaves a condition's observedGeneration at 0,
// they stamp it with the object's current generation, so a test can make a status stale
// by changing the spec afterwards; a Ready Grant also records status.currentPrivileges,
// as the operator does after running GRANT.

// MarkMariaDBReady sets the MariaDB server's Ready condition True (reason
// StatefulSetReady, message Running), as mariadb-operator does once its StatefulSet is
// ready.
func MarkMariaDBReady(ctx context.Context, c client.Client, key client.ObjectKey) (*mariadbv1alpha1.MariaDB, error) {
	return markReady(ctx, c, key, &mariadbv1alpha1.MariaDB{}, metav1.ConditionTrue,
		mariadbv1alpha1.ConditionReasonStatefulSetReady, "Running")
}

// MarkMariaDBNotReady sets the MariaDB server's Ready condition False with reason and
// message (mariadb-operator uses e.g. StatefulSetNotReady / "Not ready").
func MarkMariaDBNotReady(ctx context.Context, c client.Client, key client.ObjectKey, reason, message string) (*mariadbv1alpha1.MariaDB, error) {
	return markReady(ctx, c, key, &mariadbv1alpha1.MariaDB{}, metav1.ConditionFalse, reason, message)
}

// MarkDatabaseReady sets the Database's Ready condition True (reason and message
// Created), as mariadb-operator does once it has run CREATE DATABASE.
func MarkDatabaseReady(ctx context.Context, c client.Client, key client.ObjectKey) (*mariadbv1alpha1.Database, error) {
	return markReady(ctx, c, key, &mariadbv1alpha1.Database{}, metav1.ConditionTrue,
		mariadbv1alpha1.ConditionReasonCreated, "Created")
}

// MarkDatabaseNotReady sets the Database's Ready condition False with reason and
// message (mariadb-operator uses reason Failed with the SQL error as message).
func MarkDatabaseNotReady(ctx context.Context, c client.Client, key client.ObjectKey, reason, message string) (*mariadbv1alpha1.Database, error) {
	return markReady(ctx, c, key, &mariadbv1alpha1.Database{}, metav1.ConditionFalse, reason, message)
}

// MarkUserReady sets the User's Ready condition True (reason and message Created), as
// mariadb-operator does once it has run CREATE USER.
func MarkUserReady(ctx context.Context, c client.Client, key client.ObjectKey) (*mariadbv1alpha1.User, error) {
	return markReady(ctx, c, key, &mariadbv1alpha1.User{}, metav1.ConditionTrue,
		mariadbv1alpha1.ConditionReasonCreated, "Created")
}

// MarkUserNotReady sets the User's Ready condition False with reason and message.
func MarkUserNotReady(ctx context.Context, c client.Client, key client.ObjectKey, reason, message string) (*mariadbv1alpha1.User, error) {
	return markReady(ctx, c, key, &mariadbv1alpha1.User{}, metav1.ConditionFalse, reason, message)
}

// MarkGrantReady sets the Grant's Ready condition True (reason and message Created) and
// status.currentPrivileges to spec.privileges, as mariadb-operator does once it has run
// GRANT.
func MarkGrantReady(ctx context.Context, c client.Client, key client.ObjectKey) (*mariadbv1alpha1.Grant, error) {
	return markReady(ctx, c, key, &mariadbv1alpha1.Grant{}, metav1.ConditionTrue,
		mariadbv1alpha1.ConditionReasonCreated, "Created")
}

// MarkGrantNotReady sets the Grant's Ready condition False with reason and message.
func MarkGrantNotReady(ctx context.Context, c client.Client, key client.ObjectKey, reason, message string) (*mariadbv1alpha1.Grant, error) {
	return markReady(ctx, c, key, &mariadbv1alpha1.Grant{}, metav1.ConditionFalse, reason, message)
}

// mariaDBObject is a mariadb-operator kind with a conditions slice in its status.
type mariaDBObject interface {
	*mariadbv1alpha1.MariaDB | *mariadbv1alpha1.Database | *mariadbv1alpha1.User | *mariadbv1alpha1.Grant
	client.Object
}

func markReady[T mariaDBObject](ctx context.Context, c client.Client, key client.ObjectKey, obj T,
	status metav1.ConditionStatus, reason, message string) (T, error) {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, key, obj); err != nil {
			return err
		}
		cond := metav1.Condition{
			Type: mariadbv1alpha1.ConditionTypeReady, Status: status, Reason: reason, Message: message,
			ObservedGeneration: obj.GetGeneration(),
		}
		switch o := any(obj).(type) {
		case *mariadbv1alpha1.MariaDB:
			meta.SetStatusCondition(&o.Status.Conditions, cond)
		case *mariadbv1alpha1.Database:
			meta.SetStatusCondition(&o.Status.Conditions, cond)
		case *mariadbv1alpha1.User:
			meta.SetStatusCondition(&o.Status.Conditions, cond)
		case *mariadbv1alpha1.Grant:
			meta.SetStatusCondition(&o.Status.Conditions, cond)
			if status == metav1.ConditionTrue {
				o.Status.CurrentPrivileges = append([]string(nil), o.Spec.Privileges...)
			}
		}
		return c.Status().Update(ctx, obj)
	})
	if err != nil {
		kind := fmt.Sprintf("%T", obj)
		if gvk, gerr := c.GroupVersionKindFor(obj); gerr == nil {
			kind = gvk.Kind
		}
		return nil, fmt.Errorf("simulate: set %s %s Ready=%s: %w", kind, key, status, err)
	}
	return obj, nil
}
