package scaffold

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"go/format"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"text/template"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

const (
	// SDKModule is the module path of the SDK a scaffolded operator requires.
	SDKModule = "github.com/c5c3/reconciler-sdk"
	// GoVersion is the go directive of a scaffolded go.mod.
	GoVersion = "1.26.8"
	// ControllerToolsVersion is the controller-gen release a scaffolded Makefile pins.
	ControllerToolsVersion = "v0.23.0"
	// DefaultDomain is the domain of the API groups when InitOptions.Domain is empty.
	DefaultDomain = "example.com"
	// ProjectFile is the file, at a project's root, holding its settings (Project).
	ProjectFile = "PROJECT"
	// Layout is the value of Project.Layout this package writes and reads.
	Layout = "reconciler-sdk.c5c3.io/v1alpha1"
	// RoleName is the name of the ClusterRole `make generate` writes from the
	// +kubebuilder:rbac markers (config/rbac/role.yaml).
	RoleName = "manager-role"
)

//go:embed templates
var templates embed.FS

// OptionError is an invalid option: Flag names it as the command line spells it
// ("--group"), Value is what was given and Reason what a valid one looks like.
type OptionError struct {
	Flag   string
	Value  string
	Reason string
}

func (e *OptionError) Error() string {
	return fmt.Sprintf("%s %q: %s", e.Flag, e.Value, e.Reason)
}

// ExistsError is a file the scaffold would write that already exists: Path names it
// (the directory joined with the file's path in the project). Nothing was written.
type ExistsError struct {
	Path string
}

func (e *ExistsError) Error() string {
	return e.Path + " already exists: refusing to overwrite it (nothing was written)"
}

// InitOptions are the settings of Init, one per flag of `reconciler-sdk init`.
type InitOptions struct {
	// Repo is the Go module path of the new operator (--repo), e.g.
	// example.com/memo-operator. Its last element (lowercased, a major version suffix
	// skipped) names the project: the field manager, the namespace <name>-system and
	// the prefix of the deployed objects' names. Required.
	Repo string
	// Domain is the suffix of every API group (--domain); empty means DefaultDomain.
	Domain string
	// SDKVersion is the version of SDKModule go.mod requires (--sdk-version), a
	// semantic version such as v0.4.0. Required.
	SDKVersion string
	// SDKReplace, when set, is a local checkout of the SDK that go.mod's replace
	// directive points at (--sdk-replace); a relative path is made absolute.
	SDKReplace string
}

// Project are the settings of a scaffolded project, kept in its PROJECT file: Init
// writes them, CreateAPI reads them and adds each Resource.
type Project struct {
	// Layout identifies the layout of the project; Layout.
	Layout string `json:"layout"`
	// Domain is the suffix of the API groups.
	Domain string `json:"domain"`
	// ProjectName names the project (see InitOptions.Repo).
	ProjectName string `json:"projectName"`
	// Repo is the project's Go module path.
	Repo string `json:"repo"`
	// Resources are the APIs CreateAPI scaffolded, in order.
	Resources []Resource `json:"resources,omitempty"`
}

// Resource is one API of a project.
type Resource struct {
	// Group is the API group without the domain ("memo").
	Group string `json:"group"`
	// Domain is the project's domain: the API group is Group.Domain.
	Domain string `json:"domain"`
	// Version is the API version ("v1alpha1").
	Version string `json:"version"`
	// Kind is the resource's kind ("Memo").
	Kind string `json:"kind"`
	// Plural is the resource's plural name ("memos").
	Plural string `json:"plural"`
	// Path is the Go package of the resource's types.
	Path string `json:"path"`
}

// APIOptions are the settings of CreateAPI, one per flag of `reconciler-sdk create api`.
type APIOptions struct {
	// Group is the API group without the project's domain (--group): a DNS-1123 label
	// such as "memo". A project holds one group.
	Group string
	// Version is the API version (--version), such as v1, v1beta1 or v1alpha1.
	Version string
	// Kind is the resource's kind (--kind), in UpperCamelCase, such as Memo.
	Kind string
}

var (
	versionRE = regexp.MustCompile(`^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$`)
	kindRE    = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
	semverRE  = regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$`)
	elemRE    = regexp.MustCompile(`^[A-Za-z0-9._~-]+$`)
	majorRE   = regexp.MustCompile(`^v[0-9]+$`)
)

// ProjectName is the project name Init derives from a module path: its last element,
// lowercased, skipping a major version suffix (example.com/memo-operator/v2 gives
// memo-operator).
func ProjectName(repo string) string {
	elems := strings.Split(repo, "/")
	name := elems[len(elems)-1]
	if len(elems) > 1 && majorRE.MatchString(name) {
		name = elems[len(elems)-2]
	}
	return strings.ToLower(name)
}

// validate checks o and fills its defaults.
func (o *InitOptions) validate() error {
	if o.Repo == "" {
		return &OptionError{Flag: "--repo", Reason: "is required: the Go module path of the operator, e.g. example.com/memo-operator"}
	}
	for _, e := range strings.Split(o.Repo, "/") {
		if !elemRE.MatchString(e) || strings.Trim(e, ".") == "" {
			return &OptionError{Flag: "--repo", Value: o.Repo, Reason: "is not a Go module path: slash-separated elements of letters, digits and ._~-"}
		}
	}
	if name := ProjectName(o.Repo); len(validation.IsDNS1123Label(name)) > 0 || len(name) > 50 {
		return &OptionError{Flag: "--repo", Value: o.Repo, Reason: fmt.Sprintf(
			"its last element %q names the project (namespace %s-system): it must be a DNS-1123 label of at most 50 characters (lowercase letters, digits and '-')", name, name)}
	}
	if o.Domain == "" {
		o.Domain = DefaultDomain
	}
	if errs := validation.IsDNS1123Subdomain(o.Domain); len(errs) > 0 {
		return &OptionError{Flag: "--domain", Value: o.Domain, Reason: "must be a DNS-1123 subdomain (the suffix of the API groups): " + strings.Join(errs, "; ")}
	}
	if o.SDKVersion == "" {
		return &OptionError{Flag: "--sdk-version", Reason: "is required: the version of " + SDKModule + " go.mod requires " +
			"(reconciler-sdk run as go run " + SDKModule + "/cmd/reconciler-sdk@VERSION knows its own; a local build does not)"}
	}
	if !semverRE.MatchString(o.SDKVersion) {
		return &OptionError{Flag: "--sdk-version", Value: o.SDKVersion, Reason: "must be a semantic version of " + SDKModule + ", such as v0.4.0 (no build metadata)"}
	}
	if o.SDKReplace != "" {
		abs, err := filepath.Abs(o.SDKReplace)
		if err != nil {
			return &OptionError{Flag: "--sdk-replace", Value: o.SDKReplace, Reason: err.Error()}
		}
		data, err := os.ReadFile(filepath.Join(abs, "go.mod"))
		if err != nil || modulePath(data) != SDKModule {
			return &OptionError{Flag: "--sdk-replace", Value: o.SDKReplace, Reason: "must be a checkout of " + SDKModule + " (a directory whose go.mod declares that module)"}
		}
		o.SDKReplace = abs
	}
	return nil
}

// modulePath returns the module path a go.mod declares, or "".
func modulePath(gomod []byte) string {
	for _, line := range strings.Split(string(gomod), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

// validate checks o against p.
func (o APIOptions) validate(p Project) error {
	if errs := validation.IsDNS1123Label(o.Group); len(errs) > 0 {
		return &OptionError{Flag: "--group", Value: o.Group, Reason: "must be a DNS-1123 label (lowercase letters, digits and '-'), such as memo"}
	}
	if errs := validation.IsDNS1123Subdomain(o.Group + "." + p.Domain); len(errs) > 0 {
		return &OptionError{Flag: "--group", Value: o.Group, Reason: "with the domain " + p.Domain + " it is no DNS-1123 subdomain: " + strings.Join(errs, "; ")}
	}
	if !versionRE.MatchString(o.Version) {
		return &OptionError{Flag: "--version", Value: o.Version, Reason: "must be a Kubernetes API version: v1, v2beta1, v1alpha1, ..."}
	}
	if !kindRE.MatchString(o.Kind) {
		return &OptionError{Flag: "--kind", Value: o.Kind, Reason: "must be UpperCamelCase letters and digits, such as Memo"}
	}
	if errs := validation.IsDNS1123Label(plural(o.Kind)); len(errs) > 0 {
		return &OptionError{Flag: "--kind", Value: o.Kind, Reason: "its plural " + plural(o.Kind) + " must be a DNS-1123 label: " + strings.Join(errs, "; ")}
	}
	for _, r := range p.Resources {
		if r.Group != o.Group {
			return &OptionError{Flag: "--group", Value: o.Group, Reason: "the project's APIs are in group " + r.Group + ": a project holds one group"}
		}
		if r.Kind == o.Kind {
			return &OptionError{Flag: "--kind", Value: o.Kind, Reason: "the project has that kind already, in version " + r.Version}
		}
		if strings.EqualFold(r.Kind, o.Kind) {
			return &OptionError{Flag: "--kind", Value: o.Kind, Reason: "the project has the kind " + r.Kind + ", which differs only in case (their files would collide)"}
		}
	}
	return nil
}

// plural is the lowercase plural of kind, as kubebuilder forms the common cases.
func plural(kind string) string {
	k := strings.ToLower(kind)
	switch {
	case strings.HasSuffix(k, "s"), strings.HasSuffix(k, "x"), strings.HasSuffix(k, "z"),
		strings.HasSuffix(k, "ch"), strings.HasSuffix(k, "sh"):
		return k + "es"
	case strings.HasSuffix(k, "y") && len(k) > 1 && !strings.ContainsRune("aeiou", rune(k[len(k)-2])):
		return k[:len(k)-1] + "ies"
	}
	return k + "s"
}

// data is what the templates see.
type data struct {
	Repo, Domain, ProjectName, SDKModule, SDKURL, SDKVersion, SDKReplace         string
	GoVersion, ControllerToolsVersion, RoleName, LeaderElectionID, MetricsPrefix string

	Group, FullGroup, Version, Kind, LowerKind, Plural, SampleFile string
}

func projectData(p Project) data {
	prefix := strings.ReplaceAll(p.ProjectName, "-", "_")
	if prefix != "" && prefix[0] >= '0' && prefix[0] <= '9' {
		prefix = "_" + prefix
	}
	return data{
		Repo: p.Repo, Domain: p.Domain, ProjectName: p.ProjectName,
		SDKModule: SDKModule, SDKURL: "https://" + SDKModule, GoVersion: GoVersion,
		ControllerToolsVersion: ControllerToolsVersion, RoleName: RoleName,
		LeaderElectionID: p.ProjectName + "." + p.Domain, MetricsPrefix: prefix,
	}
}

// render executes the template name (a path under templates/) with d.
func render(name string, d data) ([]byte, error) {
	src, err := templates.ReadFile(path.Join("templates", name))
	if err != nil {
		return nil, fmt.Errorf("scaffold: template %s: %w", name, err)
	}
	t, err := template.New(name).Option("missingkey=error").Parse(string(src))
	if err != nil {
		return nil, fmt.Errorf("scaffold: template %s: %w", name, err)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, d); err != nil {
		return nil, fmt.Errorf("scaffold: template %s: %w", name, err)
	}
	return b.Bytes(), nil
}

// formatGo formats every .go file of files with go/format, in place.
func formatGo(files map[string][]byte, dir string) error {
	for name, src := range files {
		if !strings.HasSuffix(name, ".go") {
			continue
		}
		out, err := format.Source(src)
		if err != nil {
			return fmt.Errorf("scaffold: %s would be no valid Go: %w", filepath.Join(dir, filepath.FromSlash(name)), err)
		}
		files[name] = out
	}
	return nil
}

// initFiles maps each template of templates/init to its path in the project.
func initFiles() (map[string]string, error) {
	files := map[string]string{}
	err := fs.WalkDir(templates, "templates/init", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel := strings.TrimPrefix(p, "templates/init/")
		out := strings.TrimSuffix(rel, ".tmpl")
		if out == "gitignore" {
			out = ".gitignore"
		}
		files[out] = path.Join("init", rel)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("scaffold: reading the templates: %w", err)
	}
	return files, nil
}

// Init writes a new project into dir (created when missing): go.mod, PROJECT,
// Makefile, README.md, .gitignore, cmd/main.go, controller/doc.go and the
// config/default, config/manager and config/rbac layers. It returns the paths it
// wrote, relative to dir and sorted. Invalid options are an *OptionError, a file that
// exists already an *ExistsError; either way nothing is written.
func Init(dir string, opts InitOptions) ([]string, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	p := Project{Layout: Layout, Domain: opts.Domain, ProjectName: ProjectName(opts.Repo), Repo: opts.Repo}
	d := projectData(p)
	d.SDKVersion, d.SDKReplace = opts.SDKVersion, opts.SDKReplace
	tmpls, err := initFiles()
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	for out, name := range tmpls {
		if files[out], err = render(name, d); err != nil {
			return nil, err
		}
	}
	if err := formatGo(files, dir); err != nil {
		return nil, err
	}
	if files[ProjectFile], err = marshalProject(p); err != nil {
		return nil, err
	}
	return write(dir, files, nil)
}

func marshalProject(p Project) ([]byte, error) {
	body, err := yaml.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("scaffold: %s: %w", ProjectFile, err)
	}
	header := "# The project's settings, written by `reconciler-sdk init`; `reconciler-sdk create api`\n" +
		"# reads them and adds each API it scaffolds to resources.\n"
	return append([]byte(header), body...), nil
}

// ReadProject reads the PROJECT file of the project in dir.
func ReadProject(dir string) (Project, error) {
	var p Project
	file := filepath.Join(dir, ProjectFile)
	body, err := os.ReadFile(file)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return p, fmt.Errorf("scaffold: %s not found: run `reconciler-sdk init` first, or create api in the project's root: %w", file, err)
		}
		return p, fmt.Errorf("scaffold: %w", err)
	}
	if err := yaml.UnmarshalStrict(body, &p); err != nil {
		return p, fmt.Errorf("scaffold: %s: %w", file, err)
	}
	if p.Layout != Layout {
		return p, fmt.Errorf("scaffold: %s: layout %q, want %q (a project of reconciler-sdk init)", file, p.Layout, Layout)
	}
	return p, nil
}

// wiring is one line CreateAPI adds to an existing file, before the line holding marker.
type wiring struct {
	file, marker, line string
}

// CreateAPI adds the API of opts to the project in dir (see ReadProject): its
// api/<version> types (with doc.go and groupversion_info.go for a new version), the
// controller/<kind>_controller.go whose pipeline applies one owned ConfigMap, its
// envtest and conformance tests (for the first API also cmd/main_test.go, which runs
// what main runs as the generated ClusterRole), a sample in config/samples, config/crd's
// kustomization, the wiring into cmd/main.go and the test mains (before their
// +kubebuilder:scaffold markers) and the resource in PROJECT. It returns the paths it
// wrote or changed, relative to dir and sorted. Invalid options are an *OptionError, a
// file it would create that exists already an *ExistsError; either way nothing is
// written. Generated files (deepcopy, CRD, ClusterRole) are left to `make generate`.
func CreateAPI(dir string, opts APIOptions) ([]string, error) {
	p, err := ReadProject(dir)
	if err != nil {
		return nil, err
	}
	if err := opts.validate(p); err != nil {
		return nil, err
	}
	r := Resource{Group: opts.Group, Domain: p.Domain, Version: opts.Version, Kind: opts.Kind,
		Plural: plural(opts.Kind), Path: p.Repo + "/api/" + opts.Version}
	d := projectData(p)
	d.Group, d.FullGroup, d.Version, d.Kind = r.Group, r.Group+"."+r.Domain, r.Version, r.Kind
	d.LowerKind, d.Plural = strings.ToLower(r.Kind), r.Plural
	d.SampleFile = r.Group + "_" + r.Version + "_" + d.LowerKind + ".yaml"

	newVersion, firstAPI := true, len(p.Resources) == 0
	for _, e := range p.Resources {
		if e.Version == r.Version {
			newVersion = false
		}
	}
	create := map[string]string{ // project path -> template
		"api/" + r.Version + "/" + d.LowerKind + "_types.go":  "api/api/types.go.tmpl",
		"controller/" + d.LowerKind + "_controller.go":        "api/controller/controller.go.tmpl",
		"controller/" + d.LowerKind + "_controller_test.go":   "api/controller/controller_test.go.tmpl",
		"conformance/" + d.LowerKind + "_conformance_test.go": "api/conformance/conformance_test.go.tmpl",
		"config/samples/" + d.SampleFile:                      "api/config/sample.yaml.tmpl",
	}
	if newVersion {
		create["api/"+r.Version+"/doc.go"] = "api/api/doc.go.tmpl"
		create["api/"+r.Version+"/groupversion_info.go"] = "api/api/groupversion_info.go.tmpl"
	}
	if firstAPI {
		create["cmd/main_test.go"] = "api/cmd/main_test.go.tmpl"
		create["controller/main_test.go"] = "api/controller/main_test.go.tmpl"
		create["conformance/main_test.go"] = "api/conformance/main_test.go.tmpl"
		create["config/crd/kustomization.yaml"] = "api/config/crd_kustomization.yaml.tmpl"
	}
	files := map[string][]byte{}
	for out, name := range create {
		if files[out], err = render(name, d); err != nil {
			return nil, err
		}
	}

	apiImport := `"` + r.Path + `"`
	scheme := r.Version + ".AddToScheme,"
	wires := []wiring{
		{"cmd/main.go", "+kubebuilder:scaffold:imports", apiImport},
		{"cmd/main.go", "+kubebuilder:scaffold:scheme", scheme},
		{"cmd/main.go", "+kubebuilder:scaffold:setups", "controller.Setup" + r.Kind + ","},
		{"controller/main_test.go", "+kubebuilder:scaffold:imports", apiImport},
		{"controller/main_test.go", "+kubebuilder:scaffold:scheme", scheme},
		{"conformance/main_test.go", "+kubebuilder:scaffold:imports", apiImport},
		{"conformance/main_test.go", "+kubebuilder:scaffold:scheme", scheme},
		{"config/crd/kustomization.yaml", "+kubebuilder:scaffold:crdkustomizeresource",
			"- bases/" + d.FullGroup + "_" + r.Plural + ".yaml"},
	}
	update := map[string][]byte{}
	for _, w := range wires {
		// A file this call creates is wired in files; an existing one is read once into update.
		into := files
		if _, created := files[w.file]; !created {
			into = update
			if _, read := update[w.file]; !read {
				if update[w.file], err = os.ReadFile(filepath.Join(dir, filepath.FromSlash(w.file))); err != nil {
					return nil, fmt.Errorf("scaffold: wiring the %s into %s: %w", r.Kind, w.file, err)
				}
			}
		}
		if into[w.file], err = insertBefore(into[w.file], w.marker, w.line); err != nil {
			return nil, fmt.Errorf("scaffold: wiring the %s into %s: %w", r.Kind, filepath.Join(dir, w.file), err)
		}
	}
	if err := formatGo(files, dir); err != nil {
		return nil, err
	}
	if err := formatGo(update, dir); err != nil {
		return nil, err
	}
	p.Resources = append(p.Resources, r)
	if update[ProjectFile], err = marshalProject(p); err != nil {
		return nil, err
	}
	return write(dir, files, update)
}

// insertBefore inserts line before the line of src that holds the comment marker,
// indented as the marker is; a line that is there already is not added again. A
// missing marker is an error that says what to add by hand.
func insertBefore(src []byte, marker, line string) ([]byte, error) {
	lines := strings.Split(string(src), "\n")
	at := -1
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if t == line {
			return src, nil
		}
		if at < 0 && (t == "// "+marker || t == "# "+marker) {
			at = i
		}
	}
	if at < 0 {
		return nil, fmt.Errorf("no %q comment to add the line %q before: add the line by hand", marker, line)
	}
	m := lines[at]
	indent := m[:len(m)-len(strings.TrimLeft(m, " \t"))]
	out := append(append(append([]string{}, lines[:at]...), indent+line), lines[at:]...)
	return []byte(strings.Join(out, "\n")), nil
}

// write creates every file of create (refusing one that exists) and rewrites every file
// of update, all below dir; it checks every file before it writes any.
func write(dir string, create, update map[string][]byte) ([]string, error) {
	var paths []string
	for name := range create {
		full := filepath.Join(dir, filepath.FromSlash(name))
		if _, err := os.Lstat(full); err == nil {
			return nil, &ExistsError{Path: full}
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("scaffold: %w", err)
		}
		paths = append(paths, name)
	}
	for name := range update {
		paths = append(paths, name)
	}
	sort.Strings(paths)
	for _, name := range paths {
		full := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return nil, fmt.Errorf("scaffold: %w", err)
		}
		if body, ok := create[name]; ok {
			f, err := os.OpenFile(full, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
			if errors.Is(err, fs.ErrExist) {
				return nil, &ExistsError{Path: full}
			}
			if err != nil {
				return nil, fmt.Errorf("scaffold: %w", err)
			}
			_, err = f.Write(body)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return nil, fmt.Errorf("scaffold: writing %s: %w", full, err)
			}
			continue
		}
		if err := os.WriteFile(full, update[name], 0o644); err != nil {
			return nil, fmt.Errorf("scaffold: writing %s: %w", full, err)
		}
	}
	return paths, nil
}

// ValidSDKVersion reports whether v can be go.mod's requirement of SDKModule: a
// semantic version without build metadata (a binary built from a modified checkout
// records one with "+dirty", a local build "(devel)": neither is).
func ValidSDKVersion(v string) bool { return semverRE.MatchString(v) }
