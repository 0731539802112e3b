package main

import (
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/c5c3/reconciler-sdk/internal/image"
)

// helloPkg is internal/image's tiny main package, as go build takes it from here.
const helloPkg = "../../internal/image/testdata/hello"

// image writes the OCI layout, the tarball and the registry push the flags ask for,
// with the labels given and SOURCE_DATE_EPOCH as the image's time; the binary taken
// out of the layout runs.
func TestImageCommand(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1700000000")
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	ref := strings.TrimPrefix(srv.URL, "http://") + "/hello:v1"
	dir := t.TempDir()
	layoutDir := filepath.Join(dir, "images", "hello")
	tarPath := filepath.Join(dir, "hello.tar")

	code, stdout, stderr := runCmd(t, "image", "-t", ref, "-o", layoutDir, "-tar", tarPath, "-push",
		"-source", "https://example.com/hello", "-revision", "abc123-dirty", "-title", "hello", helloPkg)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"built " + helloPkg + " for linux/", "wrote OCI layout " + layoutDir, "wrote tarball " + tarPath + " (" + ref + ")", "pushed " + ref + "@sha256:"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout %q does not contain %q", stdout, want)
		}
	}

	img, err := image.FromLayout(layoutDir, ref)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Created.Unix() != 1700000000 {
		t.Errorf("created %v, want SOURCE_DATE_EPOCH 1700000000", cf.Created.Time)
	}
	for k, v := range map[string]string{image.LabelSource: "https://example.com/hello", image.LabelRevision: "abc123-dirty", image.LabelTitle: "hello"} {
		if cf.Config.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, cf.Config.Labels[k], v)
		}
	}
	digest, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, digest.String()) {
		t.Errorf("stdout %q does not show the digest %s", stdout, digest)
	}

	tag, err := name.NewTag(ref)
	if err != nil {
		t.Fatal(err)
	}
	fromTar, err := tarball.ImageFromPath(tarPath, &tag)
	if err != nil {
		t.Fatalf("tarball %s: %v", tarPath, err)
	}
	id, err := img.ConfigName()
	if err != nil {
		t.Fatal(err)
	}
	if tarID, err := fromTar.ConfigName(); err != nil || tarID != id {
		t.Errorf("tarball image ID %s (%v), want %s", tarID, err, id)
	}
	pulled, err := remote.Image(tag)
	if err != nil {
		t.Fatalf("pull %s: %v", ref, err)
	}
	if d, err := pulled.Digest(); err != nil || d != digest {
		t.Errorf("pushed digest %s (%v), want %s", d, err, digest)
	}

	bin := filepath.Join(dir, "manager")
	if err := image.ExtractFile(img, image.BinaryPath, bin); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "x").CombinedOutput()
	if err != nil || string(out) != "hello from the image: x\n" {
		t.Errorf("run %s: %q, %v", bin, out, err)
	}
}

// -main names the package as well as the argument does; usage errors exit 2 and say
// what is wrong; a bad output path or a package that does not compile exits 1 and
// names it.
func TestImageCommandErrors(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := runCmd(t, "image", "-main", helloPkg, "-o", filepath.Join(dir, "layout"))
	if code != 0 {
		t.Fatalf("-main: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if _, err := image.FromLayout(filepath.Join(dir, "layout"), ""); err != nil {
		t.Errorf("layout of -o without -t: %v", err)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"image"}, "want one main package"},
		{[]string{"image", "-main", helloPkg, helloPkg, "-o", dir}, "want one main package"},
		{[]string{"image", helloPkg}, "nothing to write"},
		{[]string{"image", "-tar", filepath.Join(dir, "x.tar"), helloPkg}, "need the image reference -t"},
		{[]string{"image", "-push", helloPkg}, "need the image reference -t"},
		{[]string{"image", "-no-such-flag", helloPkg}, "no-such-flag"},
	} {
		code, _, stderr := runCmd(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}

	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(file, "layout")
	code, _, stderr = runCmd(t, "image", "-o", bad, helloPkg)
	if code != 1 || !strings.Contains(stderr, bad) {
		t.Errorf("-o %s: exit %d, stderr %q; want 1 and the path", bad, code, stderr)
	}
	broken := "../../internal/image/testdata/broken"
	code, _, stderr = runCmd(t, "image", "-o", filepath.Join(dir, "broken"), broken)
	if code != 1 || !strings.Contains(stderr, broken) || !strings.Contains(stderr, "declared and not used") {
		t.Errorf("a package that does not compile: exit %d, stderr %q; want 1, the package and the compiler's message", code, stderr)
	}
}
