package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/c5c3/reconciler-sdk/testenv/assets"
)

// ErrNoControllerBinaries reports that [Options.Controllers] is set but the assets
// directory lacks kube-controller-manager, kube-scheduler or kwok.
var ErrNoControllerBinaries = errors.New("controller binaries (kube-controller-manager, kube-scheduler, kwok) not found")

// KubeControllerManagerControllers are the controllers that kube-controller-manager
// runs under [Options.Controllers]: owner-reference garbage collection, Deployments,
// ReplicaSets, Jobs and namespace deletion.
const KubeControllerManagerControllers = "garbagecollector,deployment,replicaset,job,namespace"

const (
	// controllersStartTimeout bounds the wait for the fake Node to become Ready and
	// for garbage collection to work once the processes run.
	controllersStartTimeout = 2 * time.Minute
	// controllersPollInterval is how often start-up conditions are checked.
	controllersPollInterval = 200 * time.Millisecond
)

// controllerBinaries are the binaries [Options.Controllers] runs, in the order they
// start; they live in the assets directory next to kube-apiserver.
var controllerBinaries = []string{"kube-controller-manager", "kube-scheduler", "kwok"}

// checkControllerBinaries returns an error wrapping [ErrNoControllerBinaries] that
// names the missing binaries and says how to get them.
func checkControllerBinaries(dir string) error {
	missing := assets.Missing(dir, controllerBinaries)
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("testenv: %w: Options.Controllers needs %s in %s, next to kube-apiserver: run `KUBEBUILDER_ASSETS=$(go run github.com/c5c3/reconciler-sdk/cmd/envtest -no-download)` in your module with KUBEBUILDER_ASSETS unset (`make envtest` in the reconciler-sdk repository), which builds all of them into %s (setup-envtest ships none of them)",
		ErrNoControllerBinaries, strings.Join(missing, ", "), dir, DefaultAssetsDir())
}

// startControllers runs kube-controller-manager, kube-scheduler and kwok against te's
// API server, registers the fake Node and returns once the Node is Ready and garbage
// collection has removed a probe object. On error every process it started is
// stopped and the error quotes the tail of each process's log.
func startControllers(te *envtest.Environment, c client.Client, assets string, stages []string) (*processGroup, error) {
	logDir, err := os.MkdirTemp("", "testenv-controllers-")
	if err != nil {
		return nil, fmt.Errorf("testenv: controller log directory: %w", err)
	}
	g := &processGroup{logDir: logDir}
	fail := func(err error) (*processGroup, error) {
		if stopErr := g.stop(); stopErr != nil {
			err = errors.Join(err, stopErr)
		}
		return nil, err
	}

	// One cluster-admin identity for the three processes, written to a kubeconfig
	// inside the private (0700) log directory.
	user, err := te.AddUser(envtest.User{Name: "testenv-controllers", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return fail(fmt.Errorf("testenv: controller user: %w", err))
	}
	kubeconfigData, err := user.KubeConfig()
	if err != nil {
		return fail(fmt.Errorf("testenv: controller kubeconfig: %w", err))
	}
	kubeconfig := filepath.Join(logDir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, kubeconfigData, 0o600); err != nil {
		return fail(fmt.Errorf("testenv: write controller kubeconfig: %w", err))
	}

	args := map[string][]string{
		"kube-controller-manager": {
			"--kubeconfig=" + kubeconfig,
			"--controllers=" + KubeControllerManagerControllers,
			"--leader-elect=false",
			// The controllers use the admin identity: there is no token controller and
			// no service-account signing key to mint per-controller tokens with.
			"--use-service-account-credentials=false",
			"--secure-port=0",
			// The default client throttles at 20 requests per second.
			"--kube-api-qps=100",
			"--kube-api-burst=200",
		},
		"kube-scheduler": {
			"--kubeconfig=" + kubeconfig,
			"--leader-elect=false",
			"--secure-port=0",
		},
		"kwok": kwokArgs(kubeconfig, stages),
	}
	for _, name := range controllerBinaries {
		p, err := startProcess(name, filepath.Join(assets, name), args[name], logDir)
		if err != nil {
			return fail(err)
		}
		g.procs = append(g.procs, p)
	}

	ctx, cancel := context.WithTimeout(context.Background(), controllersStartTimeout)
	defer cancel()
	if err := g.waitReady(ctx, c); err != nil {
		if g.exited() == nil {
			// Nothing crashed, so the logs of all three tell why the wait failed.
			err = fmt.Errorf("%w\n%s", err, g.tails())
		}
		return fail(err)
	}
	return g, nil
}

// waitReady registers the fake Node, waits until kwok makes it Ready, lifts its
// not-ready taint and proves that the garbage collector runs.
func (g *processGroup) waitReady(ctx context.Context, c client.Client) error {
	if err := c.Create(ctx, fakeNode()); err != nil {
		return fmt.Errorf("testenv: create Node %s: %w", FakeNodeName, err)
	}
	err := g.poll(ctx, "kwok to make Node "+FakeNodeName+" Ready", func(ctx context.Context) (bool, error) {
		node := &corev1.Node{}
		if err := c.Get(ctx, client.ObjectKey{Name: FakeNodeName}, node); err != nil {
			return false, err
		}
		return nodeReady(node), nil
	})
	if err != nil {
		return err
	}
	if err := untaintNotReady(ctx, c, FakeNodeName); err != nil {
		return err
	}
	return g.probeGarbageCollection(ctx, c)
}

// probeGarbageCollection deletes a throwaway owner ConfigMap and waits until the
// garbage collector has deleted the ConfigMap it owns.
func (g *processGroup) probeGarbageCollection(ctx context.Context, c client.Client) error {
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		GenerateName: "testenv-gc-probe-", Namespace: metav1.NamespaceDefault,
	}}
	if err := c.Create(ctx, owner); err != nil {
		return fmt.Errorf("testenv: create garbage-collection probe: %w", err)
	}
	child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		GenerateName: owner.Name + "child-", Namespace: metav1.NamespaceDefault,
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID,
		}},
	}}
	if err := c.Create(ctx, child); err != nil {
		return fmt.Errorf("testenv: create garbage-collection probe: %w", err)
	}
	if err := c.Delete(ctx, owner, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		return fmt.Errorf("testenv: delete garbage-collection probe owner %s/%s: %w", owner.Namespace, owner.Name, err)
	}
	return g.poll(ctx, fmt.Sprintf("the garbage collector to delete ConfigMap %s/%s after its owner", child.Namespace, child.Name),
		func(ctx context.Context) (bool, error) {
			err := c.Get(ctx, client.ObjectKeyFromObject(child), &corev1.ConfigMap{})
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			return false, err
		})
}

// poll checks cond until it holds, a controller process exits or ctx ends. Errors
// from cond are taken as transient; the last one is quoted when the wait fails.
func (g *processGroup) poll(ctx context.Context, what string, cond func(context.Context) (bool, error)) error {
	var last error
	err := wait.PollUntilContextCancel(ctx, controllersPollInterval, true, func(ctx context.Context) (bool, error) {
		if err := g.exited(); err != nil {
			return false, err
		}
		ok, err := cond(ctx)
		if err != nil {
			last = err
		}
		return ok, nil
	})
	switch {
	case err == nil:
		return nil
	case wait.Interrupted(err) && last != nil:
		return fmt.Errorf("testenv: timed out after %s waiting for %s (last error: %w)", controllersStartTimeout, what, last)
	case wait.Interrupted(err):
		return fmt.Errorf("testenv: timed out after %s waiting for %s", controllersStartTimeout, what)
	default:
		return fmt.Errorf("testenv: waiting for %s: %w", what, err)
	}
}
