package katalog

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

var (
	kindPattern       = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
	identifierPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	// reservedData are the top-level keys of the template data (forEach's index and value
	// among them); a forEach alias must not shadow them.
	reservedData = []string{"metadata", "spec", "status", "cross", "external", "children", "value", "index"}
	httpMethods  = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}
)

// checker reports problems of one Katalog at the line of their YAML path.
type checker struct {
	k    *Katalog
	errs *errList
}

func (c checker) fail(path string, err error) { c.errs.add(c.k.File, path, c.k.lineOf(path), err) }

func (c checker) missing(path string) {
	c.fail(path, fmt.Errorf("%w: %s", ErrMissingField, path[strings.LastIndexAny(path, ".]")+1:]))
}

func (c checker) invalid(path, format string, args ...any) {
	c.fail(path, fmt.Errorf("%w: "+format, append([]any{ErrInvalidValue}, args...)...))
}

// check runs the checks that need only this Katalog.
func (k *Katalog) check(errs *errList) {
	c := checker{k: k, errs: errs}
	switch {
	case k.APIVersion == "":
		c.missing("apiVersion")
	case k.APIVersion != APIVersion:
		c.invalid("apiVersion", "%q; a Katalog declares apiVersion %s", k.APIVersion, APIVersion)
	}
	switch {
	case k.Kind == "":
		c.missing("kind")
	case k.Kind != Kind:
		c.invalid("kind", "%q; a Katalog declares kind %s", k.Kind, Kind)
	}
	if k.Metadata.Name == "" {
		c.missing("metadata.name")
	}
	if len(k.Spec.CRDs) == 0 {
		c.fail("spec.crds", fmt.Errorf("%w: spec.crds declares no CRD", ErrMissingField))
	}
	for _, name := range k.CRDNames() {
		crd := k.Spec.CRDs[name]
		if crd == nil {
			crd = &CRD{}
			k.Spec.CRDs[name] = crd
		}
		crd.Name = name
		c.crd(crd)
	}
}

func (c checker) crd(crd *CRD) {
	p := crdPath(crd.Name)
	if msgs := validation.IsDNS1123Label(crd.Name); len(msgs) > 0 {
		c.invalid(p, "CRD name %q: %s", crd.Name, strings.Join(msgs, "; "))
	}
	at := p + ".apiTypes"
	for field, value := range map[string]string{"group": crd.APITypes.Group, "version": crd.APITypes.Version, "kind": crd.APITypes.Kind, "plural": crd.APITypes.Plural} {
		if value == "" {
			c.missing(at + "." + field)
		}
	}
	if g := crd.APITypes.Group; g != "" && len(validation.IsDNS1123Subdomain(g)) > 0 {
		c.invalid(at+".group", "%q is not a DNS subdomain such as platform.io", g)
	}
	if v := crd.APITypes.Version; v != "" && len(validation.IsDNS1123Label(v)) > 0 {
		c.invalid(at+".version", "%q is not a version such as v1alpha1", v)
	}
	if kind := crd.APITypes.Kind; kind != "" && !kindPattern.MatchString(kind) {
		c.invalid(at+".kind", "%q is not a kind such as Application", kind)
	}
	if pl := crd.APITypes.Plural; pl != "" && len(validation.IsDNS1123Label(pl)) > 0 {
		c.invalid(at+".plural", "%q is not a lowercase plural such as applications", pl)
	}
	if crd.Workers < 0 {
		c.invalid(p+".workers", "%d; workers is at least 1 (0 or unset means %d)", crd.Workers, DefaultWorkers)
	}
	c.namespaces(p, crd)
	for _, dep := range sortedKeys(crd.DependsOn) {
		if cond := crd.DependsOn[dep]; cond != DependencyHealthy && cond != DependencySynced {
			c.invalid(joinKey(p+".dependsOn", dep), "%q; a dependency waits until its CRD is %s or %s", cond, DependencyHealthy, DependencySynced)
		}
	}
	if crd.Validation != nil {
		for i, r := range crd.Validation.Rules {
			if r.Action != "" && r.Action != ActionDeny && r.Action != ActionWarn {
				c.invalid(joinIndex(p+".validation.rules", i)+".action", "%q; the actions are %s and %s", r.Action, ActionDeny, ActionWarn)
			}
		}
	}
	if crd.Mutation != nil {
		for i, r := range crd.Mutation.Rules {
			rp := joinIndex(p+".mutation.rules", i)
			if r.Field == "" {
				c.missing(rp + ".field")
			}
			if s, ok := r.Default.(string); ok {
				if _, err := NewTemplate(s); err != nil {
					c.fail(rp+".default", err)
				}
			}
		}
	}
	if crd.OperatorBox != nil {
		c.operatorBox(p+".operatorBox", crd.OperatorBox)
	}
}

func (c checker) namespaces(p string, crd *CRD) {
	for field, list := range map[string][]string{"allowedNamespaces": crd.AllowedNamespaces, "restrictedNamespaces": crd.RestrictedNamespaces} {
		for i, ns := range list {
			if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
				c.invalid(joinIndex(p+"."+field, i), "namespace %q: %s", ns, strings.Join(msgs, "; "))
			}
		}
	}
	for i, ns := range crd.RestrictedNamespaces {
		if slices.Contains(crd.AllowedNamespaces, ns) {
			c.invalid(joinIndex(p+".restrictedNamespaces", i), "namespace %q is both allowed and restricted", ns)
		}
	}
}

func (c checker) operatorBox(p string, box *OperatorBox) {
	if box.Default != nil && !*box.Default {
		c.invalid(p+".default", "false selects Go hooks compiled into the engine; this engine runs the declarative operator box only, so leave default unset or true")
	}
	aliases := map[string]string{}
	for i, x := range box.Cross {
		xp := joinIndex(p+".cross", i)
		if x.CRD == "" {
			c.missing(xp + ".crd")
		}
		if x.Selector.Name.IsZero() {
			c.missing(xp + ".selector.name")
		}
		if x.AllowCrossNamespace && x.Selector.Namespace.IsZero() {
			c.invalid(xp+".allowCrossNamespace", "true without selector.namespace, which reads the custom resource's own namespace; set selector.namespace or leave allowCrossNamespace out")
		}
		if alias := x.Alias(); alias != "" {
			if first, dup := aliases[alias]; dup {
				c.fail(xp, fmt.Errorf("%w: cross alias %q is also used by %s (line %d)", ErrDuplicateName, alias, first, c.k.lineOf(first)))
			} else {
				aliases[alias] = xp
			}
		}
	}
	groups := box.Groups()
	for _, name := range sortedKeys(groups) {
		c.group(p+"."+name, groups[name])
	}
	if box.Status != nil {
		for i, f := range box.Status.Fields {
			fp := joinIndex(p+".status.fields", i)
			if f.Path == "" {
				c.missing(fp + ".path")
			}
			if f.Value.IsZero() {
				c.missing(fp + ".value")
			}
		}
	}
	c.duplicates(p, box)
}

func (c checker) group(p string, g *ResourceGroup) {
	names := map[string]string{}
	for i, e := range g.External {
		ep := joinIndex(p+".external", i)
		switch first, dup := names[e.Name]; {
		case e.Name == "":
			c.missing(ep + ".name")
		case dup:
			c.fail(ep+".name", fmt.Errorf("%w: external call %q is also declared at %s (line %d)", ErrDuplicateName, e.Name, first, c.k.lineOf(first)))
		default:
			names[e.Name] = ep
		}
		if e.URL.IsZero() {
			c.missing(ep + ".url")
		}
		if e.Method != "" && !slices.Contains(httpMethods, e.Method) {
			c.invalid(ep+".method", "%q; the methods are %s", e.Method, strings.Join(httpMethods, ", "))
		}
		if e.ExpectedStatus != 0 && (e.ExpectedStatus < 100 || e.ExpectedStatus > 599) {
			c.invalid(ep+".expectedStatus", "%d is not an HTTP status code", e.ExpectedStatus)
		}
	}
	for _, d := range declarations(p, g) {
		if d.res.Name.IsZero() {
			c.missing(d.path + ".name")
		}
		for _, field := range d.required {
			c.missing(d.path + "." + field)
		}
		if f := d.res.ForEach; f != nil {
			if f.Field == "" {
				c.missing(d.path + ".forEach.field")
			}
			if f.As != "" && (!identifierPattern.MatchString(f.As) || slices.Contains(reservedData, f.As)) {
				c.invalid(d.path+".forEach.as", "%q must be an identifier other than %s", f.As, strings.Join(reservedData, ", "))
			}
		}
	}
	for i, s := range g.Services {
		if t := s.Type; t != "" && t != "ClusterIP" && t != "NodePort" && t != "LoadBalancer" {
			c.invalid(joinIndex(p+".services", i)+".type", "%q; the types are ClusterIP, NodePort and LoadBalancer", t)
		}
	}
}

// declaration is one declared object of a group, with its kind and the required fields
// it leaves empty.
type declaration struct {
	kind     string
	path     string
	res      *Resource
	required []string
}

// declarations lists the objects a group declares, in kind and declaration order.
func declarations(p string, g *ResourceGroup) []declaration {
	var out []declaration
	add := func(kind, field string, i int, res *Resource, required map[string]Template) {
		d := declaration{kind: kind, path: joinIndex(p+"."+field, i), res: res}
		for _, name := range sortedKeys(required) {
			if required[name].IsZero() {
				d.required = append(d.required, name)
			}
		}
		out = append(out, d)
	}
	for i := range g.Deployments {
		add("Deployment", "deployments", i, &g.Deployments[i].Resource, map[string]Template{"image": g.Deployments[i].Image})
	}
	for i := range g.Services {
		add("Service", "services", i, &g.Services[i].Resource, map[string]Template{"port": g.Services[i].Port})
	}
	for i := range g.Secrets {
		add("Secret", "secrets", i, &g.Secrets[i].Resource, nil)
	}
	for i := range g.ConfigMaps {
		add("ConfigMap", "configMaps", i, &g.ConfigMaps[i].Resource, nil)
	}
	for i := range g.ServiceAccounts {
		add("ServiceAccount", "serviceAccounts", i, &g.ServiceAccounts[i].Resource, nil)
	}
	for i := range g.Jobs {
		add("Job", "jobs", i, &g.Jobs[i].Resource, map[string]Template{"image": g.Jobs[i].Image})
	}
	for i := range g.CronJobs {
		add("CronJob", "cronJobs", i, &g.CronJobs[i].Resource, map[string]Template{"image": g.CronJobs[i].Image, "schedule": g.CronJobs[i].Schedule})
	}
	return out
}

// duplicates reports two declarations of one kind that name the same object for every
// custom resource: their names are literal or use only {{ .metadata.name }}, neither uses
// forEach, and their conditions do not exclude each other. onCreate and onReconcile write
// the same objects, so they are checked together; onDelete on its own, except that an
// onDelete Job may not share such a name with an onCreate or onReconcile Job whatever
// the conditions: the Job that ran before would stand in the way of the cleanup.
func (c checker) duplicates(p string, box *OperatorBox) {
	var live, deletion []declaration
	if box.OnCreate != nil {
		live = append(live, declarations(p+".onCreate", box.OnCreate)...)
	}
	if box.OnReconcile != nil {
		live = append(live, declarations(p+".onReconcile", box.OnReconcile)...)
	}
	if box.OnDelete != nil {
		deletion = declarations(p+".onDelete", box.OnDelete)
	}
	for _, decls := range [][]declaration{live, deletion} {
		for j, b := range decls {
			bName, ok := b.res.Name.StaticName(metadataNameMarker)
			if !ok || b.res.ForEach != nil || b.res.Name.IsZero() {
				continue
			}
			for _, a := range decls[:j] {
				aName, ok := a.res.Name.StaticName(metadataNameMarker)
				if !ok || a.res.ForEach != nil || a.kind != b.kind || aName != bName {
					continue
				}
				if exclusive(a.res.When, b.res.When) {
					continue
				}
				c.fail(b.path+".name", fmt.Errorf("%w: %s %q is also declared at %s (line %d)",
					ErrDuplicateResource, b.kind, b.res.Name.Text, a.path, c.k.lineOf(a.path)))
				break
			}
		}
	}
	for _, b := range deletion {
		bName, ok := b.res.Name.StaticName(metadataNameMarker)
		if !ok || b.kind != "Job" || b.res.ForEach != nil || b.res.Name.IsZero() {
			continue
		}
		for _, a := range live {
			if aName, ok := a.res.Name.StaticName(metadataNameMarker); ok && a.kind == "Job" && a.res.ForEach == nil && aName == bName {
				c.fail(b.path+".name", fmt.Errorf("%w: Job %q is also declared at %s (line %d); an onDelete Job needs a name of its own",
					ErrDuplicateResource, b.res.Name.Text, a.path, c.k.lineOf(a.path)))
				break
			}
		}
	}
}

// checkSet runs the checks across Katalogs that run together: unique CRD names and API
// types, dependsOn and cross targets, and dependsOn cycles.
func checkSet(kats []*Katalog, errs *errList) {
	type entry struct {
		k   *Katalog
		crd *CRD
	}
	byName := map[string]entry{}
	byGVK := map[string]entry{}
	for _, k := range kats {
		for _, name := range k.CRDNames() {
			crd := k.Spec.CRDs[name]
			c := checker{k: k, errs: errs}
			if first, dup := byName[name]; dup {
				c.fail(crdPath(name), fmt.Errorf("%w: CRD %q is also declared in %s:%d", ErrDuplicateCRD, name, first.k.File, first.k.lineOf(crdPath(name))))
				continue
			}
			byName[name] = entry{k, crd}
			gvk := crd.GroupVersionKind()
			if gvk.Kind == "" || gvk.Group == "" {
				continue
			}
			if first, dup := byGVK[gvk.String()]; dup {
				c.fail(crdPath(name)+".apiTypes", fmt.Errorf("%w: %s is also operated by CRD %q (%s:%d)", ErrDuplicateCRD, gvk.Kind+"."+gvk.Group+"/"+gvk.Version, first.crd.Name, first.k.File, first.k.lineOf(crdPath(first.crd.Name))))
				continue
			}
			byGVK[gvk.String()] = entry{k, crd}
		}
	}
	target := func(name string) (found, enabled bool) {
		e, ok := byName[name]
		return ok, ok && e.crd.IsEnabled()
	}
	for _, k := range kats {
		c := checker{k: k, errs: errs}
		for _, name := range k.CRDNames() {
			crd := k.Spec.CRDs[name]
			for _, dep := range sortedKeys(crd.DependsOn) {
				dp := joinKey(crdPath(name)+".dependsOn", dep)
				switch found, enabled := target(dep); {
				case dep == name:
				case !found:
					c.fail(dp, fmt.Errorf("%w: CRD %q is not in the Katalog", ErrUnknownDependency, dep))
				case !enabled && crd.IsEnabled():
					c.fail(dp, fmt.Errorf("%w: CRD %q is disabled, so %q would never start", ErrUnknownDependency, dep, name))
				}
			}
			if crd.OperatorBox == nil {
				continue
			}
			for i, x := range crd.OperatorBox.Cross {
				if x.CRD == "" {
					continue
				}
				xp := joinIndex(crdPath(name)+".operatorBox.cross", i) + ".crd"
				switch found, enabled := target(x.CRD); {
				case !found:
					c.fail(xp, fmt.Errorf("%w: CRD %q is not in the Katalog", ErrUnknownCrossRef, x.CRD))
				case !enabled && crd.IsEnabled():
					c.fail(xp, fmt.Errorf("%w: CRD %q is disabled, so its custom resources are never read", ErrUnknownCrossRef, x.CRD))
				default:
					// A literal namespace the target does not operate could never be read.
					t, ns := byName[x.CRD].crd, x.Selector.Namespace
					if x.AllowCrossNamespace && !ns.IsZero() && ns.IsLiteral() &&
						!(namespaceFilter{allowed: t.AllowedNamespaces, restricted: t.RestrictedNamespaces}).admits(ns.Text) {
						c.invalid(strings.TrimSuffix(xp, ".crd")+".selector.namespace",
							"%q is a namespace that CRD %q does not operate (allowedNamespaces, restrictedNamespaces), so the cross entry could never read it", ns.Text, x.CRD)
					}
				}
			}
		}
	}
	// Cycles: a depth-first search in name order; each cycle reported once, rotated to
	// start at its smallest name, at the dependsOn entry of that name.
	names := sortedKeys(byName)
	const (
		unvisited = iota
		onStack
		done
	)
	state := map[string]int{}
	reported := map[string]bool{}
	var stack []string
	var visit func(string)
	visit = func(n string) {
		state[n] = onStack
		stack = append(stack, n)
		for _, dep := range sortedKeys(byName[n].crd.DependsOn) {
			if _, ok := byName[dep]; !ok {
				continue
			}
			switch state[dep] {
			case unvisited:
				visit(dep)
			case onStack:
				cycle := slices.Clone(stack[slices.Index(stack, dep):])
				start := slices.Index(cycle, slices.Min(cycle))
				cycle = append(cycle[start:], cycle[:start]...)
				cycle = append(cycle, cycle[0])
				key := strings.Join(cycle, " -> ")
				if reported[key] {
					continue
				}
				reported[key] = true
				e := byName[cycle[0]]
				checker{k: e.k, errs: errs}.fail(joinKey(crdPath(cycle[0])+".dependsOn", cycle[1]),
					fmt.Errorf("%w: %s", ErrDependencyCycle, key))
			}
		}
		stack = stack[:len(stack)-1]
		state[n] = done
	}
	for _, n := range names {
		if state[n] == unvisited {
			visit(n)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
