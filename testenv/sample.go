package testenv

import (
	"fmt"
	"os"
	"testing"

	"sigs.k8s.io/yaml"
)

// ReadSample reads the YAML manifest at path (a sample of config/samples) into obj,
// strictly: a field obj's type does not know, or a duplicate one, fails the test, so a
// sample that drifts from its CRD's Go type is caught where it is read. It returns obj.
func ReadSample[T any](t testing.TB, path string, obj T) T {
	t.Helper()
	if err := readSample(path, obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

// readSample is ReadSample's error path, for its test.
func readSample(path string, obj any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading sample: %w", err)
	}
	if err := yaml.UnmarshalStrict(data, obj); err != nil {
		return fmt.Errorf("sample %s: %w", path, err)
	}
	return nil
}
