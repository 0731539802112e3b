package image

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/match"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// BinaryPath is where the image holds the binary of the main package, and its
// entrypoint.
const BinaryPath = "/manager"

// UID and GID are the numeric user and group the image runs as (distroless's nonroot).
const (
	UID = 65532
	GID = 65532
)

// User is the image config's User: UID:GID, numeric, so that a Pod's runAsNonRoot
// check passes without looking the name up.
const User = "65532:65532"

// The labels Build sets from Options.Labels are free-form; these are the annotations of
// the OCI image spec that the reconciler-sdk image command fills in.
const (
	// LabelSource is the URL of the source repository.
	LabelSource = "org.opencontainers.image.source"
	// LabelRevision is the source revision (commit) the image is built from.
	LabelRevision = "org.opencontainers.image.revision"
	// LabelTitle is the human-readable name of the image.
	LabelTitle = "org.opencontainers.image.title"
)

// refNameAnnotation is the annotation of an OCI layout's index that names an image.
const refNameAnnotation = "org.opencontainers.image.ref.name"

// passwd and group are the /etc/passwd and /etc/group of the image: root and the
// nonroot user, with no login shell.
const (
	passwd = "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"
	group  = "root:x:0:\nnonroot:x:65532:\n"
)

// Options says what Build builds.
type Options struct {
	// Main is the main package, as `go build` takes it (such as "./cmd/katalog" or an
	// import path); required.
	Main string
	// Dir is the directory `go build` runs in, inside the module that holds Main;
	// empty is the current directory.
	Dir string
	// GOARCH is the architecture to build for (the OS is always linux); empty is
	// runtime.GOARCH.
	GOARCH string
	// Epoch is the modification time of every file in the layer and the image's
	// created time; the zero value is the Unix epoch (1970-01-01T00:00:00Z).
	Epoch time.Time
	// Labels are the image config's labels (such as LabelSource, LabelRevision,
	// LabelTitle); an empty value is left out.
	Labels map[string]string
}

// DefaultOptions returns Options for the main package main, built in the current
// directory for runtime.GOARCH, with Epoch taken from $SOURCE_DATE_EPOCH (seconds
// since the Unix epoch) when it is set, and the Unix epoch otherwise. A
// SOURCE_DATE_EPOCH that is not a number is an error.
func DefaultOptions(main string) (Options, error) {
	o := Options{Main: main, GOARCH: runtime.GOARCH, Epoch: time.Unix(0, 0).UTC()}
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		sec, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return Options{}, fmt.Errorf("SOURCE_DATE_EPOCH %q: %w", s, err)
		}
		o.Epoch = time.Unix(sec, 0).UTC()
	}
	return o, nil
}

// Build compiles o.Main into a static linux binary and returns the single-layer image
// that runs it (see the package documentation for what the image holds). The error of
// a package that does not compile names the package and holds the compiler's output.
func Build(ctx context.Context, o Options) (v1.Image, error) {
	if o.Main == "" {
		return nil, errors.New("image: no main package given")
	}
	arch := o.GOARCH
	if arch == "" {
		arch = runtime.GOARCH
	}
	epoch := o.Epoch
	if epoch.IsZero() {
		epoch = time.Unix(0, 0)
	}
	epoch = epoch.UTC().Truncate(time.Second)

	bin, err := compile(ctx, o.Main, o.Dir, arch)
	if err != nil {
		return nil, err
	}
	layerTar, err := layerContents(bin, epoch)
	if err != nil {
		return nil, fmt.Errorf("image of %s: %w", o.Main, err)
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("layer of %s: %w", o.Main, err)
	}

	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History: v1.History{
			Created:   v1.Time{Time: epoch},
			CreatedBy: "reconciler-sdk image " + o.Main,
			Comment:   "static binary at " + BinaryPath,
		},
	})
	if err != nil {
		return nil, fmt.Errorf("image of %s: %w", o.Main, err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("config of %s: %w", o.Main, err)
	}
	cf = cf.DeepCopy()
	cf.Architecture = arch
	cf.OS = "linux"
	cf.Created = v1.Time{Time: epoch}
	cf.Config = v1.Config{
		User:       User,
		Entrypoint: []string{BinaryPath},
		WorkingDir: "/",
	}
	for k, v := range o.Labels {
		if v == "" {
			continue
		}
		if cf.Config.Labels == nil {
			cf.Config.Labels = map[string]string{}
		}
		cf.Config.Labels[k] = v
	}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, fmt.Errorf("config of %s: %w", o.Main, err)
	}
	return img, nil
}

// compile runs go build of main in dir for linux/arch and returns the binary.
func compile(ctx context.Context, main, dir, arch string) ([]byte, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return nil, fmt.Errorf("build %s: %w", main, err)
	}
	tmp, err := os.MkdirTemp("", "reconciler-sdk-image-")
	if err != nil {
		return nil, fmt.Errorf("build %s: %w", main, err)
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	out := filepath.Join(tmp, "manager")
	cmd := exec.CommandContext(ctx, goBin, "build",
		"-trimpath", "-buildvcs=false", "-ldflags=-s -w -buildid=",
		"-o", out, main)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
	var output bytes.Buffer
	cmd.Stdout = &output
	cmd.Stderr = &output
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go build %s (GOOS=linux GOARCH=%s CGO_ENABLED=0): %w\n%s",
			main, arch, err, strings.TrimSpace(output.String()))
	}
	bin, err := os.ReadFile(out)
	if err != nil {
		return nil, fmt.Errorf("build %s: %w", main, err)
	}
	return bin, nil
}

// layerContents returns the uncompressed tar of the image's only layer.
func layerContents(bin []byte, epoch time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	entries := []struct {
		hdr  tar.Header
		data []byte
	}{
		{tar.Header{Typeflag: tar.TypeDir, Name: "etc/", Mode: 0o755}, nil},
		{tar.Header{Typeflag: tar.TypeReg, Name: "etc/group", Mode: 0o644}, []byte(group)},
		{tar.Header{Typeflag: tar.TypeReg, Name: "etc/passwd", Mode: 0o644}, []byte(passwd)},
		{tar.Header{Typeflag: tar.TypeReg, Name: strings.TrimPrefix(BinaryPath, "/"), Mode: 0o755,
			Uid: UID, Gid: GID, Uname: "nonroot", Gname: "nonroot"}, bin},
	}
	for _, e := range entries {
		hdr := e.hdr
		hdr.ModTime = epoch
		hdr.Format = tar.FormatPAX
		if hdr.Uname == "" {
			hdr.Uname, hdr.Gname = "root", "root"
		}
		hdr.Size = int64(len(e.data))
		if err := tw.WriteHeader(&hdr); err != nil {
			return nil, fmt.Errorf("layer entry %s: %w", hdr.Name, err)
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, fmt.Errorf("layer entry %s: %w", hdr.Name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	return buf.Bytes(), nil
}

// WriteLayout writes img into the OCI image layout directory dir, named ref (the
// annotation org.opencontainers.image.ref.name of its index entry). A directory that
// already is a layout keeps its other images and has an image of the same ref
// replaced; a directory that does not exist is made.
func WriteLayout(dir, ref string, img v1.Image) error {
	var annotations map[string]string
	if ref != "" {
		annotations = map[string]string{refNameAnnotation: ref}
	}
	opt := layout.WithAnnotations(annotations)
	p, err := layout.FromPath(dir)
	if err != nil {
		if p, err = layout.Write(dir, empty.Index); err != nil {
			return fmt.Errorf("OCI layout %s: %w", dir, err)
		}
	}
	if ref != "" {
		err = p.ReplaceImage(img, match.Annotation(refNameAnnotation, ref), opt)
	} else {
		err = p.AppendImage(img, opt)
	}
	if err != nil {
		return fmt.Errorf("OCI layout %s: %w", dir, err)
	}
	return nil
}

// FromLayout reads back the image named ref from the OCI image layout directory dir;
// an empty ref takes the layout's only image (more than one is an error).
func FromLayout(dir, ref string) (v1.Image, error) {
	p, err := layout.FromPath(dir)
	if err != nil {
		return nil, fmt.Errorf("OCI layout %s: %w", dir, err)
	}
	idx, err := p.ImageIndex()
	if err != nil {
		return nil, fmt.Errorf("OCI layout %s: %w", dir, err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, fmt.Errorf("OCI layout %s: %w", dir, err)
	}
	var found []v1.Descriptor
	for _, d := range m.Manifests {
		if ref == "" || d.Annotations[refNameAnnotation] == ref {
			found = append(found, d)
		}
	}
	switch {
	case len(found) == 0:
		return nil, fmt.Errorf("OCI layout %s: no image named %q", dir, ref)
	case len(found) > 1:
		return nil, fmt.Errorf("OCI layout %s: %d images named %q", dir, len(found), ref)
	}
	img, err := idx.Image(found[0].Digest)
	if err != nil {
		return nil, fmt.Errorf("OCI layout %s: image %s: %w", dir, found[0].Digest, err)
	}
	return img, nil
}

// WriteTarball writes img to the file path as a tarball that `docker load` and `kind
// load image-archive` accept, tagged ref (such as "quickstart:dev"; a ref without a
// tag gets ":latest"). The format (docker save's) holds the config and the layers but
// no manifest, so what a reader of the tarball sees as the image's identity is its
// config digest (the image ID `docker images` shows), not the manifest digest.
func WriteTarball(path, ref string, img v1.Image) error {
	tag, err := name.NewTag(ref)
	if err != nil {
		return fmt.Errorf("tarball %s: image reference: %w", path, err)
	}
	if err := tarball.WriteToFile(path, tag, img); err != nil {
		return fmt.Errorf("tarball %s: %w", path, err)
	}
	return nil
}

// Push writes img to the registry as ref (a tag or a digest reference), with the
// credentials the local Docker configuration holds for that registry
// (authn.DefaultKeychain) and anonymous access otherwise.
func Push(ctx context.Context, ref string, img v1.Image) error {
	r, err := name.ParseReference(ref)
	if err != nil {
		return fmt.Errorf("push %s: %w", ref, err)
	}
	if err := remote.Write(r, img, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
		return fmt.Errorf("push %s: %w", ref, err)
	}
	return nil
}

// ExtractFile writes the file at file (an absolute path in the image, such as
// BinaryPath) of img's flattened file system to dst, with the file's permission bits.
// A path the image does not hold as a regular file is an error.
func ExtractFile(img v1.Image, file, dst string) error {
	want := strings.TrimPrefix(path.Clean("/"+file), "/")
	rc := mutate.Extract(img)
	defer func() { _ = rc.Close() }()
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("image has no file %s", file)
		}
		if err != nil {
			return fmt.Errorf("read image for %s: %w", file, err)
		}
		if strings.TrimPrefix(path.Clean("/"+hdr.Name), "/") != want {
			continue
		}
		if hdr.Typeflag != tar.TypeReg {
			return fmt.Errorf("image file %s is not a regular file (tar type %q)", file, hdr.Typeflag)
		}
		f, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, hdr.FileInfo().Mode().Perm())
		if err != nil {
			return fmt.Errorf("extract %s: %w", file, err)
		}
		if _, err := io.Copy(f, tr); err != nil {
			_ = f.Close()
			return fmt.Errorf("extract %s to %s: %w", file, dst, err)
		}
		if err := f.Close(); err != nil {
			return fmt.Errorf("extract %s to %s: %w", file, dst, err)
		}
		return nil
	}
}
