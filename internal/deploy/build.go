package deploy

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// PlaceholderImageName is the image name a kubebuilder layout's manager Deployment
// names (config/manager/manager.yaml: image controller:latest); [Build] sets it to
// BuildOptions.Image.
const PlaceholderImageName = "controller"

// PlaceholderImage is the manager's image as config/manager/manager.yaml writes it.
const PlaceholderImage = PlaceholderImageName + ":latest"

// ErrInvalidImage is wrapped by the error of [Build] for an image reference it cannot
// split into a name and a tag or digest.
var ErrInvalidImage = errors.New("deploy: invalid image reference")

// BuildOptions configure [Build].
type BuildOptions struct {
	// Image replaces the placeholder image (PlaceholderImageName, any tag) wherever
	// kustomize's images transformer sets images, as `kustomize edit set image
	// controller=<Image>` in the directory would, but in memory only. Empty keeps the
	// placeholder.
	Image string
}

// Build runs kustomize on dir (a directory on the local disk with a kustomization,
// such as config/default) with kustomize's default restrictions (no file outside
// a kustomization's directory tree, no plugins) and returns the rendered objects in
// kustomize's order. With opts.Image the placeholder image is set to it: the
// directory's kustomization is read with an images entry added, in memory. Errors name
// dir.
func Build(dir string, opts BuildOptions) ([]*unstructured.Unstructured, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("deploy: %s: %w", dir, err)
	}
	fs := filesys.MakeFsOnDisk()
	if opts.Image != "" {
		img, err := imageEntry(opts.Image)
		if err != nil {
			return nil, err
		}
		if fs, err = withImage(fs, abs, img); err != nil {
			return nil, fmt.Errorf("deploy: %s: %w", dir, err)
		}
	}
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	rm, err := k.Run(fs, abs)
	if err != nil {
		return nil, fmt.Errorf("deploy: kustomize build %s: %w", dir, err)
	}
	var objs []*unstructured.Unstructured
	for _, r := range rm.Resources() {
		// Through JSON: the resource's own map holds Go ints, an Unstructured int64s.
		raw, err := r.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("deploy: kustomize build %s: %s: %w", dir, r.CurId(), err)
		}
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(raw); err != nil {
			return nil, fmt.Errorf("deploy: kustomize build %s: %s: %w", dir, r.CurId(), err)
		}
		objs = append(objs, obj)
	}
	return objs, nil
}

// imageEntry is the kustomize images entry that sets the placeholder to ref
// (name[:tag][@digest]).
func imageEntry(ref string) (types.Image, error) {
	img := types.Image{Name: PlaceholderImageName}
	name := ref
	if i := strings.Index(name, "@"); i >= 0 {
		name, img.Digest = name[:i], name[i+1:]
		if img.Digest == "" {
			return img, fmt.Errorf("%w %q: empty digest", ErrInvalidImage, ref)
		}
	}
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		name, img.NewTag = name[:i], name[i+1:]
		if img.NewTag == "" {
			return img, fmt.Errorf("%w %q: empty tag", ErrInvalidImage, ref)
		}
	}
	if name == "" || strings.ContainsAny(name, " \t\n") {
		return img, fmt.Errorf("%w %q: no image name", ErrInvalidImage, ref)
	}
	img.NewName = name
	return img, nil
}

// withImage returns fs with the kustomization file of dir read with img added to its
// images (replacing an entry for the same name): the file on disk is not changed.
func withImage(fs filesys.FileSystem, dir string, img types.Image) (filesys.FileSystem, error) {
	for _, name := range konfig.RecognizedKustomizationFileNames() {
		path := filepath.Join(dir, name)
		if !fs.Exists(path) {
			continue
		}
		raw, err := fs.ReadFile(path)
		if err != nil {
			return nil, err
		}
		// A generic map keeps every field of the file as it is, known to this kustomize
		// version's types or not.
		var k map[string]any
		if err := yaml.Unmarshal(raw, &k); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if k == nil {
			k = map[string]any{}
		}
		images := []any{img}
		if old, ok := k["images"].([]any); ok {
			for _, i := range old {
				if m, ok := i.(map[string]any); !ok || m["name"] != img.Name {
					images = append(images, i)
				}
			}
		}
		k["images"] = images
		out, err := yaml.Marshal(k)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return overlayFS{FileSystem: fs, path: path, data: out}, nil
	}
	return nil, fmt.Errorf("no kustomization file (%s) in %s", strings.Join(konfig.RecognizedKustomizationFileNames(), ", "), dir)
}

// overlayFS is a file system that reads path as data, and every other file from the
// file system it wraps.
type overlayFS struct {
	filesys.FileSystem
	path string
	data []byte
}

// ReadFile returns data for path, else the wrapped file system's content of name.
func (o overlayFS) ReadFile(name string) ([]byte, error) {
	if filepath.Clean(name) == o.path {
		return bytes.Clone(o.data), nil
	}
	return o.FileSystem.ReadFile(name)
}
