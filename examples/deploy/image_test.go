package deploy_test

import (
	"path/filepath"
	"testing"

	"github.com/c5c3/reconciler-sdk/internal/image"
)

// imageBinary builds the image of the main package pkg (a path from the module root)
// with internal/image, as `make image` does, and takes the manager binary back out of
// it into a directory of the test's: the binary the image's pods would run.
func imageBinary(t *testing.T, pkg string) string {
	t.Helper()
	opts, err := image.DefaultOptions(pkg)
	if err != nil {
		t.Fatal(err)
	}
	opts.Dir = "../.."
	img, err := image.Build(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Config.User != image.User {
		t.Fatalf("image of %s runs as %q, want %q: the shipped Deployment runs as non-root", pkg, cfg.Config.User, image.User)
	}
	bin := filepath.Join(t.TempDir(), "manager")
	if err := image.ExtractFile(img, image.BinaryPath, bin); err != nil {
		t.Fatal(err)
	}
	return bin
}
