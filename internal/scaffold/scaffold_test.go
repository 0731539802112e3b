package scaffold

import (
	"bytes"
	"errors"
	"go/format"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// initOptions are valid Init options that need no SDK checkout.
func initOptions() InitOptions {
	return InitOptions{Repo: "example.com/memo-operator", SDKVersion: "v0.4.0"}
}

// project is a project Init wrote into a fresh directory.
func project(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if _, err := Init(dir, initOptions()); err != nil {
		t.Fatal(err)
	}
	return dir
}

// tree reads every file below dir, keyed by its slash path.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = string(body)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// expectOptionError fails the test unless err is an *OptionError for flag whose
// message names the flag.
func expectOptionError(t *testing.T, err error, flag string) {
	t.Helper()
	var oe *OptionError
	if !errors.As(err, &oe) || oe.Flag != flag || !strings.Contains(err.Error(), flag) {
		t.Fatalf("error %v, want an *OptionError naming %s", err, flag)
	}
}

// Init refuses every invalid option with an error naming its flag, and writes nothing.
func TestInitValidatesOptions(t *testing.T) {
	notSDK := t.TempDir()
	if err := os.WriteFile(filepath.Join(notSDK, "go.mod"), []byte("module example.com/other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		edit func(*InitOptions)
		flag string
	}{
		{"no repo", func(o *InitOptions) { o.Repo = "" }, "--repo"},
		{"repo with a space", func(o *InitOptions) { o.Repo = "example.com/memo operator" }, "--repo"},
		{"repo with an empty element", func(o *InitOptions) { o.Repo = "example.com//memo" }, "--repo"},
		{"project name no DNS label", func(o *InitOptions) { o.Repo = "example.com/memo_operator" }, "--repo"},
		{"domain no DNS subdomain", func(o *InitOptions) { o.Domain = "Example_Com" }, "--domain"},
		{"no SDK version", func(o *InitOptions) { o.SDKVersion = "" }, "--sdk-version"},
		{"SDK version with build metadata", func(o *InitOptions) { o.SDKVersion = "v0.4.0+dirty" }, "--sdk-version"},
		{"SDK version of a local build", func(o *InitOptions) { o.SDKVersion = "(devel)" }, "--sdk-version"},
		{"replace without go.mod", func(o *InitOptions) { o.SDKReplace = t.TempDir() }, "--sdk-replace"},
		{"replace of another module", func(o *InitOptions) { o.SDKReplace = notSDK }, "--sdk-replace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			opts := initOptions()
			tc.edit(&opts)
			_, err := Init(dir, opts)
			expectOptionError(t, err, tc.flag)
			if files := tree(t, dir); len(files) != 0 {
				t.Errorf("wrote %d files after an invalid option", len(files))
			}
		})
	}
}

// CreateAPI refuses every invalid option with an error naming its flag, and writes
// nothing: the project stays as it was.
func TestCreateAPIValidatesOptions(t *testing.T) {
	dir := project(t)
	if _, err := CreateAPI(dir, APIOptions{Group: "memo", Version: "v1alpha1", Kind: "Memo"}); err != nil {
		t.Fatal(err)
	}
	before := tree(t, dir)
	for _, tc := range []struct {
		opts APIOptions
		flag string
	}{
		{APIOptions{Group: "", Version: "v1", Kind: "Note"}, "--group"},
		{APIOptions{Group: "Memo", Version: "v1", Kind: "Note"}, "--group"},
		{APIOptions{Group: "memo.notes", Version: "v1", Kind: "Note"}, "--group"},
		{APIOptions{Group: "memo_x", Version: "v1", Kind: "Note"}, "--group"},
		{APIOptions{Group: "other", Version: "v1", Kind: "Note"}, "--group"}, // a second group
		{APIOptions{Group: "memo", Version: "", Kind: "Note"}, "--version"},
		{APIOptions{Group: "memo", Version: "1", Kind: "Note"}, "--version"},
		{APIOptions{Group: "memo", Version: "V1", Kind: "Note"}, "--version"},
		{APIOptions{Group: "memo", Version: "v0", Kind: "Note"}, "--version"},
		{APIOptions{Group: "memo", Version: "v1alpha", Kind: "Note"}, "--version"},
		{APIOptions{Group: "memo", Version: "v1", Kind: ""}, "--kind"},
		{APIOptions{Group: "memo", Version: "v1", Kind: "note"}, "--kind"},
		{APIOptions{Group: "memo", Version: "v1", Kind: "Note-Book"}, "--kind"},
		{APIOptions{Group: "memo", Version: "v1", Kind: "Memo"}, "--kind"}, // exists in v1alpha1
		{APIOptions{Group: "memo", Version: "v1alpha1", Kind: "MEMO"}, "--kind"},
	} {
		_, err := CreateAPI(dir, tc.opts)
		expectOptionError(t, err, tc.flag)
	}
	if after := tree(t, dir); !maps.Equal(before, after) {
		t.Errorf("an invalid create api changed the project")
	}
}

// Init and CreateAPI refuse to overwrite a file, name it, and write nothing else.
func TestRefusesToOverwrite(t *testing.T) {
	t.Run("init", func(t *testing.T) {
		dir := t.TempDir()
		mine := filepath.Join(dir, "Makefile")
		if err := os.WriteFile(mine, []byte("mine\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Init(dir, initOptions())
		var ee *ExistsError
		if !errors.As(err, &ee) || ee.Path != mine || !strings.Contains(err.Error(), mine) {
			t.Fatalf("Init over a Makefile: %v, want an *ExistsError naming %s", err, mine)
		}
		if files := tree(t, dir); len(files) != 1 || files["Makefile"] != "mine\n" {
			t.Errorf("Init wrote next to the existing Makefile: %v", slices.Sorted(maps.Keys(files)))
		}
		if _, err := Init(project(t), initOptions()); !errors.As(err, &ee) {
			t.Errorf("Init over a project: %v, want an *ExistsError", err)
		}
	})
	t.Run("create api", func(t *testing.T) {
		dir := project(t)
		mine := filepath.Join(dir, "controller", "memo_controller.go")
		if err := os.WriteFile(mine, []byte("package controller\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		before := tree(t, dir)
		_, err := CreateAPI(dir, APIOptions{Group: "memo", Version: "v1alpha1", Kind: "Memo"})
		var ee *ExistsError
		if !errors.As(err, &ee) || ee.Path != mine || !strings.Contains(err.Error(), mine) {
			t.Fatalf("CreateAPI over a controller: %v, want an *ExistsError naming %s", err, mine)
		}
		if after := tree(t, dir); !maps.Equal(before, after) {
			t.Errorf("CreateAPI changed the project although it refused")
		}
	})
}

// Every Go file Init and CreateAPI write (two kinds in one version, one in another) is
// gofmt-clean, every YAML file parses, and each wiring line appears once.
func TestRenderedFilesAreClean(t *testing.T) {
	dir := project(t)
	for _, o := range []APIOptions{
		{Group: "memo", Version: "v1alpha1", Kind: "Memo"},
		{Group: "memo", Version: "v1alpha1", Kind: "Policy"},
		{Group: "memo", Version: "v1beta1", Kind: "Box"},
	} {
		if _, err := CreateAPI(dir, o); err != nil {
			t.Fatal(err)
		}
	}
	files := tree(t, dir)
	for name, body := range files {
		switch {
		case strings.HasSuffix(name, ".go"):
			formatted, err := format.Source([]byte(body))
			if err != nil {
				t.Errorf("%s: %v", name, err)
			} else if !bytes.Equal(formatted, []byte(body)) {
				t.Errorf("%s is not gofmt-clean", name)
			}
		case strings.HasSuffix(name, ".yaml"), name == ProjectFile:
			yamlDocs(t, name, body)
		}
	}
	for _, want := range []string{"api/v1alpha1/policy_types.go", "api/v1beta1/box_types.go",
		"api/v1beta1/groupversion_info.go", "controller/box_controller_test.go",
		"conformance/policy_conformance_test.go", "config/samples/memo_v1alpha1_policy.yaml"} {
		if _, ok := files[want]; !ok {
			t.Errorf("no %s", want)
		}
	}
	main := files["cmd/main.go"]
	for _, line := range []string{`"example.com/memo-operator/api/v1alpha1"`, `"example.com/memo-operator/api/v1beta1"`,
		"v1alpha1.AddToScheme,", "v1beta1.AddToScheme,", "controller.SetupMemo,", "controller.SetupPolicy,", "controller.SetupBox,"} {
		if n := strings.Count(main, line); n != 1 {
			t.Errorf("cmd/main.go holds %q %d times, want once", line, n)
		}
	}
	if got := files["go.mod"]; !strings.Contains(got, "require "+SDKModule+" v0.4.0") || !strings.Contains(got, "go "+GoVersion) || strings.Contains(got, "replace") {
		t.Errorf("go.mod:\n%s", got)
	}
	p, err := ReadProject(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Resources) != 3 || p.Resources[2] != (Resource{Group: "memo", Domain: DefaultDomain, Version: "v1beta1", Kind: "Box",
		Plural: "boxes", Path: "example.com/memo-operator/api/v1beta1"}) {
		t.Errorf("PROJECT resources: %+v", p.Resources)
	}
}

// With --sdk-replace, go.mod points the SDK at the checkout, by its absolute path.
func TestInitReplace(t *testing.T) {
	sdk := t.TempDir()
	if err := os.WriteFile(filepath.Join(sdk, "go.mod"), []byte("module "+SDKModule+"\n\ngo 1.26.8\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Dir(sdk))
	dir := t.TempDir()
	opts := initOptions()
	opts.SDKReplace = filepath.Base(sdk) // relative to the working directory
	if _, err := Init(dir, opts); err != nil {
		t.Fatal(err)
	}
	if got := tree(t, dir)["go.mod"]; !strings.Contains(got, "replace "+SDKModule+" => "+sdk+"\n") {
		t.Errorf("go.mod:\n%s", got)
	}
}

// A missing PROJECT file is an error that says to run init; a missing wiring marker
// is an error that names the file and the marker, and nothing is written.
func TestCreateAPIErrors(t *testing.T) {
	if _, err := CreateAPI(t.TempDir(), APIOptions{Group: "memo", Version: "v1", Kind: "Memo"}); err == nil ||
		!strings.Contains(err.Error(), "reconciler-sdk init") || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("CreateAPI outside a project: %v", err)
	}
	dir := project(t)
	main := filepath.Join(dir, "cmd", "main.go")
	src, err := os.ReadFile(main)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(main, bytes.ReplaceAll(src, []byte("// +kubebuilder:scaffold:setups"), nil), 0o644); err != nil {
		t.Fatal(err)
	}
	before := tree(t, dir)
	_, err = CreateAPI(dir, APIOptions{Group: "memo", Version: "v1", Kind: "Memo"})
	if err == nil || !strings.Contains(err.Error(), main) || !strings.Contains(err.Error(), "+kubebuilder:scaffold:setups") {
		t.Errorf("CreateAPI without the setups marker: %v", err)
	}
	if after := tree(t, dir); !maps.Equal(before, after) {
		t.Errorf("CreateAPI changed the project although it failed")
	}
}

func TestProjectNameAndPlural(t *testing.T) {
	for repo, want := range map[string]string{
		"example.com/memo-operator":    "memo-operator",
		"example.com/MemoOperator/v2":  "memooperator",
		"memo":                         "memo",
		"github.com/acme/operators/v1": "operators",
	} {
		if got := ProjectName(repo); got != want {
			t.Errorf("ProjectName(%q) = %q, want %q", repo, got, want)
		}
	}
	for kind, want := range map[string]string{"Memo": "memos", "Policy": "policies", "Gateway": "gateways",
		"Box": "boxes", "Class": "classes", "Batch": "batches"} {
		if got := plural(kind); got != want {
			t.Errorf("plural(%q) = %q, want %q", kind, got, want)
		}
	}
}
