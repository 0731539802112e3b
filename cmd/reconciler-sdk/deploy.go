package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/internal/deploy"
)

func init() {
	register(command{name: "deploy", summary: "build a kustomize directory (config/default) and apply it server-side",
		run: runDeploy})
	register(command{name: "undeploy", summary: "delete what deploy applied from a kustomize directory",
		run: runUndeploy})
}

// clusterFlags are the flags deploy and undeploy share.
type clusterFlags struct {
	kubeconfig string
	timeout    time.Duration
}

func (f *clusterFlags) bind(fs *flag.FlagSet) {
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig `file` of the cluster (default: $KUBECONFIG, ~/.kube/config, then the in-cluster config)")
	fs.DurationVar(&f.timeout, "timeout", 5*time.Minute, "give up after this `duration`")
}

// target returns what deploy and undeploy act on: the objects deploy.Build renders from
// dir with opts, and a client of the cluster the flags name.
func (f *clusterFlags) target(dir string, opts deploy.BuildOptions) ([]*unstructured.Unstructured, client.Client, error) {
	objs, err := deploy.Build(dir, opts)
	if err != nil {
		return nil, nil, err
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = f.kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, nil, fmt.Errorf("kubeconfig: %w", err)
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return nil, nil, fmt.Errorf("client of %s: %w", cfg.Host, err)
	}
	return objs, c, nil
}

// parseDir parses args on fs and returns the one directory argument.
func parseDir(fs *flag.FlagSet, args []string) (string, error) {
	if err := fs.Parse(args); err != nil {
		return "", usageError{err}
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return "", usageError{fmt.Errorf("want one kustomize directory (such as config/default), got %d arguments", fs.NArg())}
	}
	return fs.Arg(0), nil
}

// runDeploy is `reconciler-sdk deploy [-img IMG] [-kubeconfig K] [-force-conflicts] DIR`:
// deploy.Build of DIR with the manager image set to IMG, then deploy.Apply.
func runDeploy(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("deploy", "deploy [-img IMG] [-kubeconfig FILE] [-force-conflicts] DIR",
		"Builds the kustomize directory DIR (such as config/default) and applies it server-side as field manager "+deploy.FieldManager+".", stderr)
	var cf clusterFlags
	cf.bind(fs)
	img := fs.String("img", "", "the manager's `image`, in place of the placeholder "+deploy.PlaceholderImage+" (default: kept)")
	force := fs.Bool("force-conflicts", false, "take over fields another field manager owns (default: a conflict is an error)")
	dir, err := parseDir(fs, args)
	if err != nil {
		return err
	}
	objs, c, err := cf.target(dir, deploy.BuildOptions{Image: *img})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, cf.timeout)
	defer cancel()
	if err := deploy.Apply(ctx, c, objs, deploy.ApplyOptions{ForceConflicts: *force}); err != nil {
		return err
	}
	var out strings.Builder
	for _, obj := range deploy.Ordered(objs) {
		fmt.Fprintf(&out, "applied %s\n", deploy.Describe(obj))
	}
	_, err = io.WriteString(stdout, out.String())
	return err
}

// runUndeploy is `reconciler-sdk undeploy [-kubeconfig K] [-wait] DIR`: deploy.Delete of
// what deploy.Build renders from DIR.
func runUndeploy(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("undeploy", "undeploy [-kubeconfig FILE] [-wait] DIR",
		"Deletes the objects of the kustomize directory DIR that deploy applied (field manager "+deploy.FieldManager+"), and leaves the others.", stderr)
	var cf clusterFlags
	cf.bind(fs)
	wait := fs.Bool("wait", false, "return only once every deleted object is gone")
	dir, err := parseDir(fs, args)
	if err != nil {
		return err
	}
	objs, c, err := cf.target(dir, deploy.BuildOptions{})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, cf.timeout)
	defer cancel()
	report, err := deploy.Delete(ctx, c, objs, deploy.DeleteOptions{Wait: *wait})
	var out strings.Builder
	for _, d := range report.Deleted {
		fmt.Fprintf(&out, "deleted %s\n", d)
	}
	for _, s := range report.Skipped {
		fmt.Fprintf(&out, "skipped %s: not applied by %s\n", s, deploy.FieldManager)
	}
	for _, a := range report.Absent {
		fmt.Fprintf(&out, "absent %s\n", a)
	}
	_, werr := io.WriteString(stdout, out.String())
	return errors.Join(err, werr)
}
