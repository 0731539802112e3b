package assets_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/c5c3/reconciler-sdk/testenv/assets"
)

// Find takes the cache directory when it holds every binary and names what each
// source lacks when none fits; Ensure would build in that case.
func ExampleFind() {
	root, _ := os.MkdirTemp("", "assets-example-")
	defer func() { _ = os.RemoveAll(root) }()

	opts, _ := assets.DefaultOptions()
	opts.Assets, opts.SetupEnvtest, opts.Log = "", "", nil
	opts.CacheRoot = root
	opts.Version = "1.36.4"

	_, _, err := assets.Find(context.Background(), opts)
	fmt.Println(err != nil, assets.Missing(opts.CacheDir(), assets.AllBinaries))

	_ = os.MkdirAll(opts.CacheDir(), 0o755)
	for _, b := range assets.AllBinaries {
		_ = os.WriteFile(filepath.Join(opts.CacheDir(), b), []byte("#!/bin/sh\n"), 0o755)
	}
	dir, src, err := assets.Find(context.Background(), opts)
	fmt.Println(filepath.Base(dir), src, err)
	// Output:
	// true [kube-apiserver etcd kubectl kube-controller-manager kube-scheduler kwok]
	// 1.36.4 cache <nil>
}
