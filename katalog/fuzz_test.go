package katalog_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/c5c3/reconciler-sdk/katalog"
)

// FuzzParse: Parse never panics, returns a Katalog exactly when it returns no error, and
// every error it returns is a *LoadError wrapping one of the sentinels.
func FuzzParse(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(doc("      operatorBox:\n        onCreate:\n          configMaps:\n            - &a {name: a, data: {k: \"{{ .x }}\"}}\n            - *a\n")))
	f.Add([]byte("a: &a [*a]"))
	f.Add([]byte("{{{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		k, err := katalog.Parse("fuzz.yaml", data)
		if (k == nil) == (err == nil) {
			t.Fatalf("Parse returned Katalog %v with error %v", k != nil, err)
		}
		if err == nil {
			return
		}
		les := katalog.LoadErrors(err)
		if len(les) == 0 {
			t.Fatalf("error %v holds no *LoadError", err)
		}
		for _, le := range les {
			matched := 0
			for _, s := range sentinels {
				if errors.Is(le, s) {
					matched++
				}
			}
			if matched != 1 || le.File != "fuzz.yaml" {
				t.Fatalf("%v: wraps %d sentinels, file %q", le, matched, le.File)
			}
		}
	})
}
