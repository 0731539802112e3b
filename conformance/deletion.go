package conformance

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// checkDeletion is [CheckDeletion]: deleting the CRs leaves no finalizer, and the
// garbage collector takes the children.
func (w *world) checkDeletion() error {
	if len(w.opts.Env.Processes()) == 0 {
		return w.violation("", "Options.Env",
			"start the Env with testenv.Options{Controllers: true} (in TestMain), or skip Deletion with a reason",
			"the Env runs without controllers, so no garbage collector would take the children")
	}
	if _, err := w.startAndConverge(nil); err != nil {
		return err
	}
	children, err := w.children(true)
	if err != nil {
		return err
	}
	for _, cr := range w.crs {
		if err := w.c.Delete(w.ctx, cr); ignoreNotFound(err) != nil {
			return fmt.Errorf("conformance: delete %s: %w", describe(cr), err)
		}
	}
	var errs []error
	for _, cr := range w.crs {
		var last *unstructured.Unstructured
		err := w.wait(func() (bool, error) {
			cur, err := w.read(cr)
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			last = cur
			return false, err
		})
		if err != nil && last != nil {
			errs = append(errs, w.violation(describe(cr), "metadata.finalizers",
				"on the deletion pass (deletionTimestamp set) clean up and then remove your finalizer (reconcile.RemoveFinalizer); "+
					"a finalizer that stays blocks the deletion for ever",
				"still present %s after its deletion, with finalizers %v", w.opts.Timeout, last.GetFinalizers()))
		} else if err != nil {
			return err
		}
	}
	for _, c := range children {
		var left *metav1.PartialObjectMetadata
		err := w.wait(func() (bool, error) {
			cur, err := w.getChild(c)
			left = cur
			return cur == nil || cur.UID != c.obj.UID, err
		})
		if err != nil && left != nil {
			errs = append(errs, w.violation(c.String(), "metadata.ownerReferences",
				"make the CR the child's controller owner (apply.EnsureObject does), so that the garbage collector deletes it "+
					"with the CR; children on target clusters must be swept by the CR's finalizer",
				"not garbage-collected %s after its CR was deleted (owner references: %v)", w.opts.Timeout, left.OwnerReferences))
		} else if err != nil {
			return err
		}
	}
	return errors.Join(errs...)
}

// wait polls cond until it holds, within the timeout.
func (w *world) wait(cond func() (bool, error)) error {
	deadline := time.Now().Add(w.opts.Timeout)
	for {
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("conformance: not within %s: %w", w.opts.Timeout, context.DeadlineExceeded)
		}
		time.Sleep(poll)
	}
}
