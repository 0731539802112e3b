package katalog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Load reads the Katalog file at path and returns it when it passes every load-time check
// (see Parse). Errors name path.
func Load(path string) (*Katalog, error) {
	data, err := os.ReadFile(path) //nolint:gosec // reading the Katalog the caller names is the point
	if err != nil {
		return nil, (errList{{File: path, Err: fmt.Errorf("%w: %w", ErrRead, err)}}).join()
	}
	return Parse(path, data)
}

// Parse decodes one Katalog from data, which must hold exactly one YAML document, and
// checks it. name is used as the file name in errors and stored in Katalog.File.
//
// Decoding is strict: an unknown field, a value of the wrong type, a provider block, a
// template that does not parse or a condition with an unknown operator is an error. The
// decoded Katalog is then checked as a whole: required fields, dependsOn targets and
// cycles, cross references, and duplicate names. Every problem found is reported, each as a
// *LoadError naming the file, line and YAML path, joined with errors.Join in file and line
// order (see LoadErrors). Nothing is returned with an error.
func Parse(name string, data []byte) (*Katalog, error) {
	var errs errList
	k := parseOne(name, data, &errs)
	if k != nil {
		checkSet([]*Katalog{k}, &errs)
	}
	if err := errs.join(); err != nil {
		return nil, err
	}
	return k, nil
}

// LoadAll loads several Katalog files that run together in one engine. Each is checked as
// Load does; in addition, CRD names and API types must be unique across the files, and
// dependsOn and cross references may name a CRD of any of them. The Katalogs are returned
// in the order of paths, only when every file passed.
func LoadAll(paths ...string) ([]*Katalog, error) {
	var errs errList
	kats := make([]*Katalog, 0, len(paths))
	for _, path := range paths {
		data, err := os.ReadFile(path) //nolint:gosec // as in Load
		if err != nil {
			errs.add(path, "", 0, fmt.Errorf("%w: %w", ErrRead, err))
			continue
		}
		if k := parseOne(path, data, &errs); k != nil {
			kats = append(kats, k)
		}
	}
	checkSet(kats, &errs)
	if err := errs.join(); err != nil {
		return nil, err
	}
	return kats, nil
}

var yamlErrorPrefix = regexp.MustCompile(`^(yaml: )?(line \d+: )?`)

// parseOne decodes and checks one Katalog on its own, adding problems to errs. It returns
// nil when data is not a single YAML document.
func parseOne(name string, data []byte, errs *errList) *Katalog {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			errs.add(name, "", 0, fmt.Errorf("%w: the file holds no YAML document", ErrSyntax))
		} else {
			errs.add(name, "", syntaxLine(err), fmt.Errorf("%w: %s", ErrSyntax, yamlErrorPrefix.ReplaceAllString(err.Error(), "")))
		}
		return nil
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		line := extra.Line
		if err != nil {
			line = syntaxLine(err)
		}
		errs.add(name, "", line, fmt.Errorf("%w: the file holds more than one YAML document; put each Katalog in a file of its own", ErrSyntax))
		return nil
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	k := &Katalog{File: name, lines: map[string]int{}}
	d := &decoder{file: name, errs: errs, lines: k.lines, budget: nodeBudget}
	if root.Kind != yaml.MappingNode {
		d.typeError("", root, "a mapping with apiVersion, kind, metadata and spec")
		return nil
	}
	d.decode(root, "", root.Line, reflect.ValueOf(k).Elem())
	k.check(errs)
	return k
}

// CRDNames returns the names of the Katalog's CRD entries, sorted.
func (k *Katalog) CRDNames() []string {
	names := make([]string, 0, len(k.Spec.CRDs))
	for name := range k.Spec.CRDs {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// Line returns the line of the YAML path in the Katalog's file (for example
// spec.crds.application.operatorBox.cross[0].crd), or 0 when the path was not in the file.
// The reconciler uses it to point at the declaration behind a runtime error.
func (k *Katalog) Line(path string) int { return k.lines[path] }

// StartOrder returns the enabled CRD entries of the Katalog in an order where each comes
// after the entries it depends on; see StartOrder.
func (k *Katalog) StartOrder() []*CRD { return StartOrder(k) }

// StartOrder returns the enabled CRD entries of kats in an order where each comes after
// the entries its dependsOn names, and otherwise by name. A loaded set has no cycles; an
// entry on a cycle (possible only in a set built in Go) comes last, in name order.
func StartOrder(kats ...*Katalog) []*CRD {
	byName := map[string]*CRD{}
	for _, k := range kats {
		for name, c := range k.Spec.CRDs {
			if c != nil && c.IsEnabled() {
				byName[name] = c
			}
		}
	}
	names := make([]string, 0, len(byName))
	for name := range byName {
		names = append(names, name)
	}
	slices.Sort(names)
	placed := map[string]bool{}
	order := make([]*CRD, 0, len(names))
	for len(order) < len(names) {
		progress := false
		for _, name := range names {
			if placed[name] {
				continue
			}
			ready := true
			for dep := range byName[name].DependsOn {
				if _, known := byName[dep]; known && !placed[dep] && dep != name {
					ready = false
					break
				}
			}
			if ready {
				placed[name] = true
				order = append(order, byName[name])
				progress = true
				break // restart so that ties keep name order
			}
		}
		if !progress {
			for _, name := range names {
				if !placed[name] {
					placed[name] = true
					order = append(order, byName[name])
				}
			}
		}
	}
	return order
}

// crdPath is the YAML path of a CRD entry.
func crdPath(name string) string { return joinKey("spec.crds", name) }

// lineOf returns the line of path, or of its nearest recorded ancestor.
func (k *Katalog) lineOf(path string) int {
	for {
		if l, ok := k.lines[path]; ok {
			return l
		}
		i := strings.LastIndexAny(path, ".[")
		if i <= 0 {
			return k.lines[""]
		}
		path = path[:i]
	}
}
