package image_test

import (
	"archive/tar"
	"context"
	"debug/elf"
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/c5c3/reconciler-sdk/internal/image"
)

// epoch is the Epoch the tests build with: not the Unix epoch, so that a file whose
// time Build forgot to set shows.
var epoch = time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)

// hello builds the image of testdata/hello once for the tests that only read it.
var hello = sync.OnceValues(func() (v1.Image, error) {
	return image.Build(context.Background(), helloOptions())
})

func helloOptions() image.Options {
	return image.Options{
		Main:  "./testdata/hello",
		Epoch: epoch,
		Labels: map[string]string{
			image.LabelSource:   "https://example.com/hello",
			image.LabelRevision: "0123abcd",
			image.LabelTitle:    "hello",
			"empty":             "",
		},
	}
}

func helloImage(t *testing.T) v1.Image {
	t.Helper()
	img, err := hello()
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return img
}

func digest(t *testing.T, img v1.Image) v1.Hash {
	t.Helper()
	d, err := img.Digest()
	if err != nil {
		t.Fatalf("Digest: %v", err)
	}
	return d
}

func configName(t *testing.T, img v1.Image) v1.Hash {
	t.Helper()
	d, err := img.ConfigName()
	if err != nil {
		t.Fatalf("ConfigName: %v", err)
	}
	return d
}

// layerDigests returns the digests of img's compressed layers, joined.
func layerDigests(t *testing.T, img v1.Image) string {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	var ds []string
	for _, l := range layers {
		d, err := l.Digest()
		if err != nil {
			t.Fatal(err)
		}
		ds = append(ds, d.String())
	}
	return strings.Join(ds, ",")
}

func TestBuildConfig(t *testing.T) {
	img := helloImage(t)
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.OS != "linux" || cf.Architecture != runtime.GOARCH {
		t.Errorf("platform %s/%s, want linux/%s", cf.OS, cf.Architecture, runtime.GOARCH)
	}
	c := cf.Config
	if c.User != "65532:65532" {
		t.Errorf("User %q, want 65532:65532", c.User)
	}
	if len(c.Entrypoint) != 1 || c.Entrypoint[0] != "/manager" {
		t.Errorf("Entrypoint %q, want [/manager]", c.Entrypoint)
	}
	if c.WorkingDir != "/" {
		t.Errorf("WorkingDir %q, want /", c.WorkingDir)
	}
	if len(c.Env) != 0 || len(c.Cmd) != 0 || c.Shell != nil || len(c.ExposedPorts) != 0 || len(c.Volumes) != 0 {
		t.Errorf("config has Env %q, Cmd %q, Shell %q, ports %v, volumes %v; want none", c.Env, c.Cmd, c.Shell, c.ExposedPorts, c.Volumes)
	}
	wantLabels := map[string]string{
		"org.opencontainers.image.source":   "https://example.com/hello",
		"org.opencontainers.image.revision": "0123abcd",
		"org.opencontainers.image.title":    "hello",
	}
	if len(c.Labels) != len(wantLabels) {
		t.Errorf("labels %v, want %v", c.Labels, wantLabels)
	}
	for k, v := range wantLabels {
		if c.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, c.Labels[k], v)
		}
	}
	if !cf.Created.Equal(epoch) {
		t.Errorf("created %v, want %v", cf.Created.Time, epoch)
	}
	for _, h := range cf.History {
		if !h.Created.Equal(epoch) {
			t.Errorf("history %q created %v, want %v", h.CreatedBy, h.Created.Time, epoch)
		}
	}

	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.MediaType != types.OCIManifestSchema1 || m.Config.MediaType != types.OCIConfigJSON {
		t.Errorf("media types manifest %s config %s, want OCI", m.MediaType, m.Config.MediaType)
	}
	if len(m.Layers) != 1 || m.Layers[0].MediaType != types.OCILayer {
		t.Fatalf("layers %+v, want one %s", m.Layers, types.OCILayer)
	}
}

// TestBuildLayer reads the only layer's tar as it is stored (not a flattened view): it
// holds exactly /etc, /etc/group, /etc/passwd and /manager, with their owners, modes
// and the Epoch as modification time.
func TestBuildLayer(t *testing.T) {
	img := helloImage(t)
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 1 {
		t.Fatalf("%d layers, want 1", len(layers))
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rc.Close() }()
	type entry struct {
		typ      byte
		mode     int64
		uid, gid int
	}
	want := map[string]entry{
		"etc/":       {tar.TypeDir, 0o755, 0, 0},
		"etc/group":  {tar.TypeReg, 0o644, 0, 0},
		"etc/passwd": {tar.TypeReg, 0o644, 0, 0},
		"manager":    {tar.TypeReg, 0o755, 65532, 65532},
	}
	var names []string
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, hdr.Name)
		w, ok := want[hdr.Name]
		if !ok {
			t.Errorf("unexpected layer entry %q", hdr.Name)
			continue
		}
		if got := (entry{hdr.Typeflag, hdr.Mode, hdr.Uid, hdr.Gid}); got != w {
			t.Errorf("%s: type %q mode %o owner %d:%d, want type %q mode %o owner %d:%d",
				hdr.Name, got.typ, got.mode, got.uid, got.gid, w.typ, w.mode, w.uid, w.gid)
		}
		if !hdr.ModTime.Equal(epoch) {
			t.Errorf("%s: mtime %v, want %v", hdr.Name, hdr.ModTime, epoch)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		switch hdr.Name {
		case "etc/passwd":
			if !strings.Contains(string(data), "nonroot:x:65532:65532:") || strings.Contains(string(data), "/bin/sh") {
				t.Errorf("/etc/passwd %q: want the nonroot user 65532 and no shell", data)
			}
		case "etc/group":
			if !strings.Contains(string(data), "nonroot:x:65532:") {
				t.Errorf("/etc/group %q: want the nonroot group 65532", data)
			}
		case "manager":
			if len(data) == 0 {
				t.Error("/manager is empty")
			}
		}
	}
	if len(names) != len(want) {
		t.Errorf("layer entries %q, want exactly %d: /etc, /etc/group, /etc/passwd, /manager", names, len(want))
	}
}

func TestBuildIsReproducible(t *testing.T) {
	first := helloImage(t)
	again, err := image.Build(context.Background(), helloOptions())
	if err != nil {
		t.Fatal(err)
	}
	if a, b := digest(t, first), digest(t, again); a != b {
		t.Errorf("two builds of the same source: digests %s and %s", a, b)
	}
	o := helloOptions()
	o.Epoch = epoch.Add(time.Hour)
	later, err := image.Build(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := digest(t, first), digest(t, later); a == b {
		t.Errorf("builds with different epochs have the same digest %s", a)
	}
}

// TestBinaryRunsAndIsStatic takes /manager back out of the image and runs it: it is
// built for linux/runtime.GOARCH, has no program interpreter and needs no shared
// library.
func TestBinaryRunsAndIsStatic(t *testing.T) {
	img := helloImage(t)
	bin := filepath.Join(t.TempDir(), "manager")
	if err := image.ExtractFile(img, image.BinaryPath, bin); err != nil {
		t.Fatalf("ExtractFile: %v", err)
	}
	fi, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o755 {
		t.Errorf("extracted mode %v, want 0755", fi.Mode().Perm())
	}

	f, err := elf.Open(bin)
	if err != nil {
		t.Fatalf("not an ELF binary: %v", err)
	}
	defer func() { _ = f.Close() }()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("binary has a PT_INTERP program header: it is dynamically linked")
		}
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		t.Fatal(err)
	}
	if len(libs) != 0 {
		t.Errorf("binary needs shared libraries %q", libs)
	}
	if f.Section(".symtab") != nil {
		t.Error("binary has a symbol table: -s was not applied")
	}

	if runtime.GOOS != "linux" {
		t.Fatalf("the binary is built for linux; this test runs it and needs linux, not %s", runtime.GOOS)
	}
	out, err := exec.Command(bin, "a", "b").CombinedOutput()
	if err != nil {
		t.Fatalf("run %s: %v\n%s", bin, err, out)
	}
	if got, want := string(out), "hello from the image: a b\n"; got != want {
		t.Errorf("output %q, want %q", got, want)
	}
}

func TestExtractFile(t *testing.T) {
	img := helloImage(t)
	dir := t.TempDir()
	dst := filepath.Join(dir, "passwd")
	if err := image.ExtractFile(img, "etc/passwd", dst); err != nil {
		t.Fatalf("ExtractFile of a relative path: %v", err)
	}
	if data, err := os.ReadFile(dst); err != nil || !strings.Contains(string(data), "nonroot") {
		t.Errorf("extracted /etc/passwd %q, %v", data, err)
	}
	err := image.ExtractFile(img, "/bin/sh", filepath.Join(dir, "sh"))
	if err == nil || !strings.Contains(err.Error(), "/bin/sh") {
		t.Errorf("ExtractFile of /bin/sh: %v, want an error naming /bin/sh", err)
	}
	err = image.ExtractFile(img, "/etc", filepath.Join(dir, "etc"))
	if err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("ExtractFile of /etc: %v, want not a regular file", err)
	}
	bad := filepath.Join(dir, "missing", "manager")
	err = image.ExtractFile(img, image.BinaryPath, bad)
	if err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("ExtractFile to %s: %v, want an error naming it", bad, err)
	}
}

func TestWriteTarballLoadsBack(t *testing.T) {
	img := helloImage(t)
	path := filepath.Join(t.TempDir(), "hello.tar")
	if err := image.WriteTarball(path, "hello:dev", img); err != nil {
		t.Fatalf("WriteTarball: %v", err)
	}
	tag, err := name.NewTag("hello:dev")
	if err != nil {
		t.Fatal(err)
	}
	back, err := tarball.ImageFromPath(path, &tag)
	if err != nil {
		t.Fatalf("tarball.ImageFromPath with tag %s: %v", tag, err)
	}
	// The docker-save format holds no manifest (a reader makes up a Docker one), so
	// what survives the tarball is the config, whose digest is the image ID docker and
	// kind show, and the layer.
	if a, b := configName(t, img), configName(t, back); a != b {
		t.Errorf("tarball image ID (config digest) %s, want %s", b, a)
	}
	if a, b := layerDigests(t, img), layerDigests(t, back); a != b {
		t.Errorf("tarball layers %s, want %s", b, a)
	}
	other, err := name.NewTag("hello:other")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tarball.ImageFromPath(path, &other); err == nil {
		t.Error("the tarball holds an image tagged hello:other; want only hello:dev")
	}

	bad := filepath.Join(t.TempDir(), "missing", "hello.tar")
	if err := image.WriteTarball(bad, "hello:dev", img); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("WriteTarball to %s: %v, want an error naming it", bad, err)
	}
	if err := image.WriteTarball(path, "Not A Ref", img); err == nil || !strings.Contains(err.Error(), "Not A Ref") {
		t.Errorf("WriteTarball with a bad reference: %v, want an error naming it", err)
	}
}

func TestWriteLayoutReadsBack(t *testing.T) {
	img := helloImage(t)
	dir := filepath.Join(t.TempDir(), "images", "hello")
	if err := image.WriteLayout(dir, "hello:dev", img); err != nil {
		t.Fatalf("WriteLayout: %v", err)
	}
	p, err := layout.FromPath(dir)
	if err != nil {
		t.Fatalf("layout.FromPath: %v", err)
	}
	idx, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	fromIndex, err := idx.Image(digest(t, img))
	if err != nil {
		t.Fatalf("image %s from the layout's index: %v", digest(t, img), err)
	}
	if a, b := digest(t, img), digest(t, fromIndex); a != b {
		t.Errorf("layout image digest %s, want %s", b, a)
	}

	// Writing the same ref again replaces the image; another ref adds one.
	o := helloOptions()
	o.Epoch = epoch.Add(time.Minute)
	other, err := image.Build(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if err := image.WriteLayout(dir, "hello:dev", other); err != nil {
		t.Fatal(err)
	}
	back, err := image.FromLayout(dir, "hello:dev")
	if err != nil {
		t.Fatalf("FromLayout after the rewrite: %v", err)
	}
	if a, b := digest(t, other), digest(t, back); a != b {
		t.Errorf("hello:dev after the rewrite is %s, want %s", b, a)
	}
	only, err := image.FromLayout(dir, "")
	if err != nil {
		t.Fatalf("FromLayout of the only image: %v", err)
	}
	if a, b := digest(t, other), digest(t, only); a != b {
		t.Errorf("the only image is %s, want %s", b, a)
	}
	if err := image.WriteLayout(dir, "hello:v1", img); err != nil {
		t.Fatal(err)
	}
	v1img, err := image.FromLayout(dir, "hello:v1")
	if err != nil {
		t.Fatal(err)
	}
	if a, b := digest(t, img), digest(t, v1img); a != b {
		t.Errorf("hello:v1 is %s, want %s", b, a)
	}
	if _, err := image.FromLayout(dir, ""); err == nil || !strings.Contains(err.Error(), "2 images") {
		t.Errorf("FromLayout without a ref of a layout with two images: %v, want an error", err)
	}
	if _, err := image.FromLayout(dir, "hello:v2"); err == nil || !strings.Contains(err.Error(), "hello:v2") {
		t.Errorf("FromLayout of a missing ref: %v, want an error naming it", err)
	}

	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(file, "layout")
	if err := image.WriteLayout(bad, "hello:dev", img); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("WriteLayout to %s: %v, want an error naming it", bad, err)
	}
	if _, err := image.FromLayout(bad, ""); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("FromLayout of %s: %v, want an error naming it", bad, err)
	}
}

// TestPush pushes to an in-process registry (go-containerregistry's, over HTTP on
// localhost) with an empty Docker configuration, and pulls the image back.
func TestPush(t *testing.T) {
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	ref := strings.TrimPrefix(srv.URL, "http://") + "/hello:dev"
	img := helloImage(t)
	if err := image.Push(context.Background(), ref, img); err != nil {
		t.Fatalf("Push %s: %v", ref, err)
	}
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	pulled, err := remote.Image(r)
	if err != nil {
		t.Fatalf("pull %s: %v", ref, err)
	}
	if a, b := digest(t, img), digest(t, pulled); a != b {
		t.Errorf("pulled digest %s, want %s", b, a)
	}
	if err := image.Push(context.Background(), "Not A Ref", img); err == nil || !strings.Contains(err.Error(), "Not A Ref") {
		t.Errorf("Push with a bad reference: %v, want an error naming it", err)
	}
}

func TestBuildErrors(t *testing.T) {
	ctx := context.Background()
	_, err := image.Build(ctx, image.Options{Main: "./testdata/broken"})
	if err == nil {
		t.Fatal("Build of a package that does not compile: no error")
	}
	for _, want := range []string{"./testdata/broken", "declared and not used: unused"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
	_, err = image.Build(ctx, image.Options{Main: "./testdata/nothing-here"})
	if err == nil || !strings.Contains(err.Error(), "./testdata/nothing-here") {
		t.Errorf("Build of a missing package: %v, want an error naming it", err)
	}
	if _, err := image.Build(ctx, image.Options{}); err == nil {
		t.Error("Build without a main package: no error")
	}
	_, err = image.Build(ctx, image.Options{Main: "./testdata/hello", GOARCH: "no-such-arch"})
	if err == nil || !strings.Contains(err.Error(), "no-such-arch") {
		t.Errorf("Build for GOARCH no-such-arch: %v, want an error naming it", err)
	}
}

func TestBuildOtherArch(t *testing.T) {
	arch := "arm64"
	if runtime.GOARCH == "arm64" {
		arch = "amd64"
	}
	img, err := image.Build(context.Background(), image.Options{Main: "./testdata/hello", GOARCH: arch})
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Architecture != arch {
		t.Errorf("architecture %s, want %s", cf.Architecture, arch)
	}
	bin := filepath.Join(t.TempDir(), "manager")
	if err := image.ExtractFile(img, image.BinaryPath, bin); err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[arch]
	if f.Machine != want {
		t.Errorf("ELF machine %v, want %v", f.Machine, want)
	}
	if !cf.Created.Equal(time.Unix(0, 0)) {
		t.Errorf("created %v with a zero Epoch, want the Unix epoch", cf.Created.Time)
	}
}

func TestDefaultOptions(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "")
	o, err := image.DefaultOptions("./cmd")
	if err != nil {
		t.Fatal(err)
	}
	if o.Main != "./cmd" || o.GOARCH != runtime.GOARCH || !o.Epoch.Equal(time.Unix(0, 0)) {
		t.Errorf("DefaultOptions without SOURCE_DATE_EPOCH: %+v", o)
	}
	t.Setenv("SOURCE_DATE_EPOCH", "1700000000")
	if o, err = image.DefaultOptions("./cmd"); err != nil || !o.Epoch.Equal(time.Unix(1700000000, 0)) {
		t.Errorf("DefaultOptions with SOURCE_DATE_EPOCH=1700000000: %+v, %v", o, err)
	}
	t.Setenv("SOURCE_DATE_EPOCH", "yesterday")
	if _, err := image.DefaultOptions("./cmd"); err == nil || !strings.Contains(err.Error(), "yesterday") {
		t.Errorf("DefaultOptions with SOURCE_DATE_EPOCH=yesterday: %v, want an error naming it", err)
	}
}
