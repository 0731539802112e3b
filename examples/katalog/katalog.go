package katalogexamples

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/c5c3/reconciler-sdk/katalog"
)

// Files are the example Katalogs, in the order they are given to katalog.LoadAll (and
// to cmd/katalog's --katalog).
var Files = []string{"platform.yaml", "database.yaml", "foreach.yaml"}

// Directories of the CRD manifests and the sample custom resources, below Dir.
const (
	CRDDir    = "crds"
	SampleDir = "samples"
)

// ErrNoCheckout reports that the example files are not at hand: the program was not
// built from the reconciler-sdk sources (go run or go test in the checkout).
var ErrNoCheckout = errors.New("the example Katalogs are not at hand")

// Dir returns the directory of the example files: the directory of this package's
// sources, which go run and go test build from. It fails with ErrNoCheckout when that
// directory does not hold the Files (a binary built elsewhere, or with -trimpath).
func Dir() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("%w: the source path is unknown", ErrNoCheckout)
	}
	dir := filepath.Dir(file)
	for _, name := range Files {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return "", fmt.Errorf("%w: %w", ErrNoCheckout, err)
		}
	}
	return dir, nil
}

// Paths returns the paths of the Files in dir.
func Paths(dir string) []string {
	out := make([]string, len(Files))
	for i, name := range Files {
		out[i] = filepath.Join(dir, name)
	}
	return out
}

// Load loads the Files of dir together with katalog.LoadAll: application depends on and
// reads database, which another file declares, so they are checked as one set.
func Load(dir string) ([]*katalog.Katalog, error) {
	return katalog.LoadAll(Paths(dir)...)
}

// CRDs decodes the CustomResourceDefinitions of dir's CRDDir, in file name order.
func CRDs(dir string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	docs, err := documents(filepath.Join(dir, CRDDir))
	if err != nil {
		return nil, err
	}
	out := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(docs))
	for _, d := range docs {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(d.data, crd); err != nil {
			return nil, fmt.Errorf("decoding CustomResourceDefinition in %s: %w", d.file, err)
		}
		out = append(out, crd)
	}
	return out, nil
}

// Samples decodes the custom resources of dir's SampleDir, in file name order, without
// a namespace: the caller places them.
func Samples(dir string) ([]*unstructured.Unstructured, error) {
	docs, err := documents(filepath.Join(dir, SampleDir))
	if err != nil {
		return nil, err
	}
	out := make([]*unstructured.Unstructured, 0, len(docs))
	for _, d := range docs {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(d.data, &u.Object); err != nil {
			return nil, fmt.Errorf("decoding sample in %s: %w", d.file, err)
		}
		if u.GetKind() == "" || u.GetName() == "" {
			return nil, fmt.Errorf("sample in %s: kind and metadata.name are required", d.file)
		}
		out = append(out, u)
	}
	return out, nil
}

// document is one YAML document of an example file.
type document struct {
	file string
	data []byte
}

// documents splits every YAML file of dir into its non-empty documents.
func documents(dir string) ([]document, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	var out []document
	for _, e := range entries {
		if e.IsDir() || filepath.Ext(e.Name()) != ".yaml" {
			continue
		}
		name := filepath.Join(dir, e.Name())
		raw, err := os.ReadFile(name) //nolint:gosec // a file of the examples directory
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", name, err)
		}
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
		for {
			doc, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("reading %s: %w", name, err)
			}
			var probe map[string]any
			if err := yaml.Unmarshal(doc, &probe); err != nil {
				return nil, fmt.Errorf("decoding %s: %w", name, err)
			}
			if len(probe) == 0 { // only comments
				continue
			}
			out = append(out, document{file: name, data: doc})
		}
	}
	return out, nil
}
