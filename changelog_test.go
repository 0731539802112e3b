package reconcilersdk_test

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/blang/semver/v4"
)

// modulePath prefixes every import path of docs/api.txt; CHANGELOG.md names an
// identifier by its package's path relative to it and its name (testenv.Verb,
// health.ProberOptions.AllowCrossHostRedirects, health.Prober.Check).
const modulePath = "github.com/c5c3/reconciler-sdk"

// apiIdent is one identifier of docs/api.txt.
type apiIdent struct {
	line       string // its line, trimmed, without the deprecation mark
	deprecated bool
	member     bool // a field or interface method
	iface      bool // an interface method or embedded interface
	sealed     bool // an interface with unexported methods, which no importer implements
}

// parseAPI reads the text hack/api writes into its identifiers, by qualified name:
// package.Name for constants, variables, functions and types, package.Type.Name for
// fields, interface methods and methods.
func parseAPI(text string) map[string]apiIdent {
	idents := map[string]apiIdent{}
	pkg, typ, isIface := "", "", false
	for _, raw := range strings.Split(text, "\n") {
		if raw == "" || strings.HasPrefix(raw, "#") {
			continue
		}
		line, deprecated := strings.CutSuffix(raw, " // Deprecated")
		member := strings.HasPrefix(line, "\t")
		line = strings.TrimSpace(line)
		var name string
		switch {
		case strings.HasPrefix(line, "package "):
			path := strings.Fields(line)[1]
			pkg = strings.TrimPrefix(strings.TrimPrefix(path, modulePath), "/")
			typ = ""
			continue
		case member:
			if line == "// has unexported methods" {
				owner := idents[qualify(pkg, typ)]
				owner.sealed = true
				idents[qualify(pkg, typ)] = owner
			}
			if strings.HasPrefix(line, "//") {
				continue
			}
			name = typ + "." + identAt(strings.TrimPrefix(line, "*"))
		case strings.HasPrefix(line, "method ("):
			recv, rest, _ := strings.Cut(strings.TrimPrefix(line, "method ("), ") ")
			name = identAt(strings.TrimPrefix(recv, "*")) + "." + identAt(rest)
		default:
			kind, rest, _ := strings.Cut(line, " ")
			name = identAt(rest)
			if kind == "type" {
				typ = name
				isIface = strings.HasSuffix(line, " interface")
			}
		}
		idents[qualify(pkg, name)] = apiIdent{line: line, deprecated: deprecated, member: member, iface: member && isIface}
	}
	return idents
}

// identAt returns the identifier s starts with; for pkg.T (an embedded field), T.
func identAt(s string) string {
	end := strings.IndexAny(s, " ([=")
	if end >= 0 {
		s = s[:end]
	}
	return s[strings.LastIndex(s, ".")+1:]
}

// qualify names an identifier of the package at path (relative to the module; "" is
// the root package, reconcilersdk).
func qualify(path, name string) string {
	if path == "" {
		path = "reconcilersdk"
	}
	return path + "." + name
}

// changelogSection returns the bullets of the "### <title>" section of CHANGELOG.md's
// "## [Unreleased]" section, each joined onto one line.
func changelogSection(t *testing.T, changelog, title string) []string {
	t.Helper()
	_, unreleased, ok := strings.Cut(changelog, "\n## [Unreleased]\n")
	if !ok {
		t.Fatal("CHANGELOG.md has no \"## [Unreleased]\" section")
	}
	if i := strings.Index(unreleased, "\n## "); i >= 0 {
		unreleased = unreleased[:i]
	}
	_, section, ok := strings.Cut(unreleased, "\n### "+title+"\n")
	if !ok {
		t.Fatalf("CHANGELOG.md's Unreleased section has no \"### %s\"", title)
	}
	if i := strings.Index(section, "\n#"); i >= 0 {
		section = section[:i]
	}
	var bullets []string
	for _, l := range strings.Split(section, "\n") {
		switch {
		case strings.HasPrefix(l, "- "):
			bullets = append(bullets, l)
		case strings.HasPrefix(l, "  ") && len(bullets) > 0:
			bullets[len(bullets)-1] += " " + strings.TrimSpace(l)
		}
	}
	return bullets
}

// backticked is an identifier in backticks.
var backticked = regexp.MustCompile("`([^`]+)`")

// deprecatedNames returns the identifiers a Deprecated bullet names: the backticked
// names before its "→", which introduces the replacement.
func deprecatedNames(bullet string) ([]string, bool) {
	names, _, ok := strings.Cut(bullet, "→")
	if !ok {
		return nil, false
	}
	var out []string
	for _, m := range backticked.FindAllStringSubmatch(names, -1) {
		out = append(out, m[1])
	}
	return out, len(out) > 0
}

func readAPI(t *testing.T) map[string]apiIdent {
	t.Helper()
	text, err := os.ReadFile(apiFile)
	if err != nil {
		t.Fatal(err)
	}
	return parseAPI(string(text))
}

// TestChangelogNamesEveryDeprecation: every identifier docs/api.txt marks deprecated is
// named in CHANGELOG.md's Unreleased "Deprecated" section with its replacement, and
// every name there is an identifier that exists and is deprecated (a removed one moves
// to "Incompatible changes").
func TestChangelogNamesEveryDeprecation(t *testing.T) {
	changelog, err := os.ReadFile("CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	idents := readAPI(t)
	named := map[string]bool{}
	for _, b := range changelogSection(t, string(changelog), "Deprecated") {
		names, ok := deprecatedNames(b)
		if !ok {
			t.Errorf("CHANGELOG.md Deprecated bullet %q: want \"- `pkg.Name`, ... → replacement\"", b)
			continue
		}
		for _, n := range names {
			named[n] = true
			switch id, ok := idents[n]; {
			case !ok:
				t.Errorf("CHANGELOG.md deprecates %s, which %s does not hold: a removal belongs under \"Incompatible changes\"", n, apiFile)
			case !id.deprecated:
				t.Errorf("CHANGELOG.md deprecates %s, whose documentation has no \"Deprecated:\" paragraph", n)
			}
		}
	}
	var missing []string
	for n, id := range idents {
		if id.deprecated && !named[n] {
			missing = append(missing, n)
		}
	}
	sort.Strings(missing)
	for _, n := range missing {
		t.Errorf("%s is deprecated in %s but not named in CHANGELOG.md's Deprecated section", n, apiFile)
	}
}

// incompatible returns, sorted, the identifiers of baseline that current removed or
// changed (its line differs, the deprecation mark aside), and the methods current added
// to an interface of baseline that importers can implement: each breaks some importer.
func incompatible(baseline, current map[string]apiIdent) []string {
	var out []string
	for n, old := range baseline {
		if cur, ok := current[n]; !ok || cur.line != old.line {
			out = append(out, n)
		}
	}
	for n, cur := range current {
		if _, ok := baseline[n]; !ok && cur.iface {
			if owner := baseline[n[:strings.LastIndex(n, ".")]]; owner.line != "" && !owner.sealed {
				out = append(out, n)
			}
		}
	}
	sort.Strings(out)
	return out
}

// TestChangelogNamesEveryIncompatibleChange: against the API of the latest release
// (docs/api-<version>.txt, the copy of docs/api.txt made when a version is tagged),
// every removed or changed identifier and every method added to an interface is named
// in backticks under CHANGELOG.md's Unreleased "Incompatible changes". Before the first
// release there is no such copy and docs/api.txt is the baseline.
func TestChangelogNamesEveryIncompatibleChange(t *testing.T) {
	changelog, err := os.ReadFile("CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	bullets := changelogSection(t, string(changelog), "Incompatible changes")
	releases, err := filepath.Glob("docs/api-v*.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(releases) == 0 {
		return
	}
	sort.Slice(releases, func(i, j int) bool { return semverLess(releases[i], releases[j]) })
	text, err := os.ReadFile(releases[len(releases)-1])
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for _, b := range bullets {
		for _, m := range backticked.FindAllStringSubmatch(b, -1) {
			named[m[1]] = true
		}
	}
	for _, n := range incompatible(parseAPI(string(text)), readAPI(t)) {
		if !named[n] {
			t.Errorf("%s changed incompatibly since %s: name it in backticks under CHANGELOG.md's \"Incompatible changes\"", n, releases[len(releases)-1])
		}
	}
}

// semverLess orders docs/api-vMAJOR.MINOR.PATCH.txt by version; a name that is no
// version sorts first.
func semverLess(a, b string) bool {
	va, erra := semver.Parse(fileVersion(a))
	vb, errb := semver.Parse(fileVersion(b))
	if erra != nil || errb != nil {
		return erra != nil && errb == nil
	}
	return va.LT(vb)
}

// fileVersion is the version a docs/api-vX.Y.Z.txt file name carries, without the v.
func fileVersion(file string) string {
	return strings.TrimSuffix(strings.TrimPrefix(filepath.Base(file), "api-v"), ".txt")
}

func TestParseAPIAndIncompatible(t *testing.T) {
	const baseline = `# header
package github.com/c5c3/reconciler-sdk/a
const C = 1
func F(x int) error
func Gone()
type I interface
	M()
type Sealed interface
	M()
	// has unexported methods
type S struct
	X int
	*pkg.Embedded
	// has unexported fields
method (*S) Do() // Deprecated
`
	base := parseAPI(baseline)
	var names []string
	for n := range base {
		names = append(names, n)
	}
	sort.Strings(names)
	if got, want := strings.Join(names, " "), "a.C a.F a.Gone a.I a.I.M a.S a.S.Do a.S.Embedded a.S.X a.Sealed a.Sealed.M"; got != want {
		t.Errorf("parseAPI names = %s, want %s", got, want)
	}
	if !base["a.S.Do"].deprecated || base["a.F"].deprecated {
		t.Errorf("parseAPI deprecation: S.Do %v, F %v", base["a.S.Do"].deprecated, base["a.F"].deprecated)
	}
	current := parseAPI(`package github.com/c5c3/reconciler-sdk/a
const C = 1
func F(x int, y int) error
func New()
type I interface
	M()
	N()
type Sealed interface
	M()
	N()
	// has unexported methods
type S struct
	X int
	Y string
	*pkg.Embedded
method (*S) Do()
`)
	if got := strings.Join(incompatible(base, current), " "); got != "a.F a.Gone a.I.N" {
		t.Errorf("incompatible = %q, want the changed F, the removed Gone and the method N added to I (not to Sealed)", got)
	}
}

func TestSemverLess(t *testing.T) {
	files := []string{"docs/api-v0.10.0.txt", "docs/api-v1.0.0.txt", "docs/api-v0.9.1.txt", "docs/api-v0.9.0.txt"}
	sort.Slice(files, func(i, j int) bool { return semverLess(files[i], files[j]) })
	if got := strings.Join(files, " "); got != "docs/api-v0.9.0.txt docs/api-v0.9.1.txt docs/api-v0.10.0.txt docs/api-v1.0.0.txt" {
		t.Errorf("sorted = %s", got)
	}
}
