package testenv

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// APIChangeTimeout bounds how long [Env.InstallCRDs] and [Env.RemoveCRDs] wait for
// discovery to follow a CRD that was created or deleted (usually well under a second).
const APIChangeTimeout = time.Minute

// InstallCRDs installs the CRD manifests of sources on the control plane for the rest
// of the test and waits until discovery serves every kind they define. When the test
// ends it deletes them again and waits until discovery no longer serves them, so the
// control plane is as before for the next test and for the next run of go test -count.
//
// It is for the "API installed later" case of an optional child's flow: start a test
// on a control plane without the API (an [Env] started with fewer CRDSources), check
// the NotInstalled condition, then InstallCRDs and check that the next pass applies
// the child. A CRD that is already installed fails the test: it would be removed at
// the end although the test did not add it.
func (e *Env) InstallCRDs(t testing.TB, sources ...CRDSource) {
	t.Helper()
	paths, err := ResolveCRDPaths(sources)
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	opts := envtest.CRDInstallOptions{Paths: paths, ErrorIfPathMissing: true}
	if err := envtest.ReadCRDFiles(&opts); err != nil {
		t.Fatalf("testenv: read CRDs: %v", err)
	}
	ctx := context.Background()
	for _, crd := range opts.CRDs {
		err := e.Client.Get(ctx, client.ObjectKeyFromObject(crd), &apiextensionsv1.CustomResourceDefinition{})
		if err == nil {
			t.Fatalf("testenv: CRD %s is already installed; InstallCRDs would remove it when the test ends", crd.Name)
		} else if !apierrors.IsNotFound(err) {
			t.Fatalf("testenv: get CRD %s: %v", crd.Name, err)
		}
	}
	t.Cleanup(func() { e.removeCRDs(t, opts.CRDs) })
	if err := e.createCRDs(opts.CRDs); err != nil {
		t.Fatalf("testenv: %v", err)
	}
}

// RemoveCRDs deletes the named CRDs (e.g. "verticalpodautoscalers.autoscaling.k8s.io")
// for the rest of the test and waits until discovery no longer serves their kinds.
// When the test ends it creates them again, as they were, and waits until they are
// served. It is for the "API not installed" case on a control plane that has the API
// for every other test. Objects of those kinds are deleted with their CRD.
func (e *Env) RemoveCRDs(t testing.TB, names ...string) {
	t.Helper()
	ctx := context.Background()
	removed := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(names))
	for _, name := range names {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := e.Client.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			t.Fatalf("testenv: get CRD %s: %v", name, err)
		}
		removed = append(removed, crd)
	}
	// A CRD whose storage is still initializing (one created moments ago, as at the
	// start of a test binary) cannot be deleted: the API server's finalizer fails to
	// list its instances and backs off for longer than APIChangeTimeout.
	if err := e.waitServed(removed, true); err != nil {
		t.Fatalf("testenv: before removing: %v", err)
	}
	t.Cleanup(func() {
		restored := make([]*apiextensionsv1.CustomResourceDefinition, len(removed))
		for i, crd := range removed {
			restored[i] = &apiextensionsv1.CustomResourceDefinition{
				ObjectMeta: metav1.ObjectMeta{Name: crd.Name, Labels: crd.Labels, Annotations: crd.Annotations},
				Spec:       *crd.Spec.DeepCopy(),
			}
		}
		if err := e.createCRDs(restored); err != nil {
			t.Errorf("testenv: %v", err)
		}
	})
	e.removeCRDs(t, removed)
}

// createCRDs creates crds and waits until their kinds are served and listable.
func (e *Env) createCRDs(crds []*apiextensionsv1.CustomResourceDefinition) error {
	if err := envtest.CreateCRDs(e.Config, crds); err != nil {
		return fmt.Errorf("create CRDs: %w", err)
	}
	return e.waitServed(crds, true)
}

// removeCRDs deletes crds and waits until they are gone and their kinds unserved.
func (e *Env) removeCRDs(t testing.TB, crds []*apiextensionsv1.CustomResourceDefinition) {
	t.Helper()
	ctx := context.Background()
	for _, crd := range crds {
		err := e.Client.Delete(ctx, &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: crd.Name}})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("testenv: delete CRD %s: %v", crd.Name, err)
			return
		}
	}
	if err := e.waitServed(crds, false); err != nil {
		t.Errorf("testenv: %v", err)
	}
}

// waitServed waits until discovery serves every kind of crds (served=true), or none of
// them and the CRD objects are gone (served=false).
func (e *Env) waitServed(crds []*apiextensionsv1.CustomResourceDefinition, served bool) error {
	dc, err := discovery.NewDiscoveryClientForConfig(e.Config)
	if err != nil {
		return fmt.Errorf("discovery client: %w", err)
	}
	var pending string
	err = wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, APIChangeTimeout, true,
		func(ctx context.Context) (bool, error) {
			for _, crd := range crds {
				if !served {
					cur := &apiextensionsv1.CustomResourceDefinition{}
					err := e.Client.Get(ctx, client.ObjectKey{Name: crd.Name}, cur)
					switch {
					case apierrors.IsNotFound(err):
					case err != nil:
						if ctx.Err() == nil {
							pending = fmt.Sprintf("CRD %s: get: %v", crd.Name, err)
						}
						return false, nil
					default:
						pending = fmt.Sprintf("CRD %s still exists (conditions %+v)", crd.Name, cur.Status.Conditions)
						return false, nil
					}
				}
				for _, v := range crd.Spec.Versions {
					if !v.Served {
						continue
					}
					gv := crd.Spec.Group + "/" + v.Name
					has, err := servesKind(dc, gv, crd.Spec.Names.Kind)
					if err != nil {
						return false, err
					}
					if has != served {
						pending = fmt.Sprintf("%s %s served=%v", gv, crd.Spec.Names.Kind, has)
						return false, nil
					}
					if served {
						// Discovery runs ahead of the storage: until a list succeeds,
						// deleting the CRD again leaves it stuck Terminating
						// ("could not list instances: storage is (re)initializing").
						list := &metav1.PartialObjectMetadataList{}
						list.SetGroupVersionKind(schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.ListKind})
						if err := e.Client.List(ctx, list, client.Limit(1)); err != nil {
							pending = fmt.Sprintf("list %s %s: %v", gv, crd.Spec.Names.Kind, err)
							return false, nil
						}
					}
				}
			}
			return true, nil
		})
	if err != nil {
		want := "served"
		if !served {
			want = "gone"
		}
		return fmt.Errorf("waiting for the CRDs' kinds to be %s: %w (last: %s)", want, err, pending)
	}
	return nil
}

// servesKind asks discovery whether group version gv serves kind; a group version
// discovery does not know serves nothing.
func servesKind(dc discovery.DiscoveryInterface, gv, kind string) (bool, error) {
	list, err := dc.ServerResourcesForGroupVersion(gv)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("discover %s: %w", gv, err)
	}
	return slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Kind == kind }), nil
}
