package katalog

import (
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// APIVersion and Kind are the only apiVersion and kind a Katalog file may declare.
const (
	APIVersion = "orkestra.orkspace.io/v1"
	Kind       = "Katalog"
)

// Defaults applied when a CRD entry leaves a field out.
const (
	// DefaultWorkers is the number of reconcile workers of a CRD without workers.
	DefaultWorkers = 1
	// DefaultResync is how often every custom resource of a CRD without resync is
	// re-enqueued, so that drift is found even when nothing changed.
	DefaultResync = 15 * time.Second
	// DefaultForEachAs is the name under which forEach exposes the current element when
	// as is left out.
	DefaultForEachAs = "item"
)

// ProviderBlocks are the blocks of the original engine that call services outside the
// cluster (AWS, MongoDB, git checkouts, image builds). This engine refuses them at load time
// wherever they appear in a CRD entry, naming the block, instead of ignoring them.
var ProviderBlocks = []string{"aws", "mongodb", "git", "docker"}

// Katalog is one Katalog file: a declarative operator for one or more custom resource
// definitions. Load, Parse and LoadAll return it only when every check passed.
type Katalog struct {
	// APIVersion must be orkestra.orkspace.io/v1.
	APIVersion string `yaml:"apiVersion"`
	// Kind must be Katalog.
	Kind string `yaml:"kind"`
	// Metadata names the Katalog.
	Metadata Metadata `yaml:"metadata"`
	// Spec holds the CRD entries.
	Spec Spec `yaml:"spec"`

	// File is the name the Katalog was loaded from (the path for Load, the name given to Parse).
	File string `yaml:"-"`

	lines map[string]int
}

// Metadata names a Katalog.
type Metadata struct {
	// Name identifies the Katalog; required.
	Name string `yaml:"name"`
	// Namespace groups Katalogs; informational.
	Namespace string `yaml:"namespace"`
	// Labels are informational key/value pairs.
	Labels map[string]string `yaml:"labels"`
	// Annotations are informational key/value pairs.
	Annotations map[string]string `yaml:"annotations"`
}

// Spec is the body of a Katalog.
type Spec struct {
	// CRDs maps a CRD's short name (lowercase, a DNS label: it appears in URLs and in
	// dependsOn and cross references) to its entry. At least one is required.
	CRDs map[string]*CRD `yaml:"crds"`
}

// CRD is one custom resource definition the Katalog operates: which API type it watches,
// how many workers reconcile it, what it waits for, how custom resources are validated and
// defaulted, and what the operator box creates for each of them.
type CRD struct {
	// Name is the entry's key under spec.crds; set by the loader.
	Name string `yaml:"-"`

	// Enabled switches the entry off when false; a disabled entry is loaded and checked
	// but not run, and no other entry may depend on or cross-reference it. Default true.
	Enabled *bool `yaml:"enabled"`
	// APITypes is the group, version, kind and plural of the custom resource; all required.
	APITypes APITypes `yaml:"apiTypes"`
	// Unstructured marks a CRD that has no Go type: its custom resources are read as
	// unstructured objects. This engine always reads them that way; the field is accepted
	// so that Katalogs written for engines with Go types load unchanged.
	Unstructured bool `yaml:"unstructured"`
	// Workers is the number of concurrent reconciles for this CRD; 0 means DefaultWorkers.
	Workers int `yaml:"workers"`
	// Resync is the period after which every custom resource is reconciled again even
	// without a change (drift correction), as a Go duration such as 30s; 0 means DefaultResync.
	Resync Duration `yaml:"resync"`
	// AllowedNamespaces limits reconciling to custom resources in these namespaces; empty
	// means all namespaces.
	AllowedNamespaces []string `yaml:"allowedNamespaces"`
	// RestrictedNamespaces excludes custom resources in these namespaces.
	RestrictedNamespaces []string `yaml:"restrictedNamespaces"`
	// DependsOn maps another CRD of the Katalog to the state it must reach before a
	// custom resource of this CRD is reconciled; healthy is judged per namespace (see
	// DependencyHealthy). A custom resource being deleted does not wait. The edges must
	// not form a cycle.
	DependsOn map[string]DependencyCondition `yaml:"dependsOn"`
	// Validation rules are checked on every reconcile.
	Validation *Validation `yaml:"validation"`
	// Mutation rules default fields of the custom resource on every reconcile.
	Mutation *Mutation `yaml:"mutation"`
	// OperatorBox declares what is created, updated and deleted for each custom resource,
	// and how its status is written.
	OperatorBox *OperatorBox `yaml:"operatorBox"`
}

// IsEnabled reports whether the entry runs: Enabled unset or true.
func (c *CRD) IsEnabled() bool { return c.Enabled == nil || *c.Enabled }

// WorkerCount is Workers, or DefaultWorkers when unset.
func (c *CRD) WorkerCount() int {
	if c.Workers > 0 {
		return c.Workers
	}
	return DefaultWorkers
}

// ResyncPeriod is Resync, or DefaultResync when unset.
func (c *CRD) ResyncPeriod() time.Duration {
	if c.Resync.Duration > 0 {
		return c.Resync.Duration
	}
	return DefaultResync
}

// GroupVersionKind is the custom resource's group, version and kind.
func (c *CRD) GroupVersionKind() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: c.APITypes.Group, Version: c.APITypes.Version, Kind: c.APITypes.Kind}
}

// GroupVersionResource is the custom resource's group, version and plural resource name.
func (c *CRD) GroupVersionResource() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: c.APITypes.Group, Version: c.APITypes.Version, Resource: c.APITypes.Plural}
}

// APITypes identifies the custom resource a CRD entry operates.
type APITypes struct {
	// Group is the API group, a DNS subdomain such as platform.io.
	Group string `yaml:"group"`
	// Version is the API version, such as v1alpha1.
	Version string `yaml:"version"`
	// Kind is the kind, such as Application.
	Kind string `yaml:"kind"`
	// Plural is the lowercase plural resource name, such as applications.
	Plural string `yaml:"plural"`
}

// DependencyCondition is the state a dependsOn target must reach.
type DependencyCondition string

// The dependency conditions.
const (
	// DependencyHealthy: the target CRD's cache has synced and none of the last
	// EngineOptions.HealthWindow reconciles of its custom resources in the waiting custom
	// resource's namespace failed, so that one failing custom resource holds back its own
	// namespace only.
	DependencyHealthy DependencyCondition = "healthy"
	// DependencySynced: the target CRD's cache of custom resources has synced.
	DependencySynced DependencyCondition = "synced"
)

// Validation holds the rules a custom resource is checked against.
type Validation struct {
	// Rules are checked in order.
	Rules []ValidationRule `yaml:"rules"`
}

// ValidationRule is a condition every custom resource must meet. When the condition does
// not hold, Action decides what happens: deny fails the reconcile with an error naming the
// field and creates nothing; warn records a warning and carries on.
type ValidationRule struct {
	Condition `yaml:",inline"`
	// Action is deny (the default) or warn.
	Action ValidationAction `yaml:"action"`
	// Message replaces the generated explanation when the rule fails.
	Message string `yaml:"message"`
}

// ValidationAction is what a failed validation rule does.
type ValidationAction string

// The validation actions.
const (
	// ActionDeny fails the reconcile.
	ActionDeny ValidationAction = "deny"
	// ActionWarn records a warning and continues.
	ActionWarn ValidationAction = "warn"
)

// Mutation holds the defaults applied to a custom resource.
type Mutation struct {
	// MutateFirst applies the rules before validation (so that defaults can make a
	// resource valid); by default validation runs first.
	MutateFirst bool `yaml:"mutateFirst"`
	// Rules are applied in order.
	Rules []MutationRule `yaml:"rules"`
}

// MutationRule sets a field of the custom resource when it is absent or empty.
type MutationRule struct {
	// Field is the dot path of the field, such as spec.replicas; required.
	Field string `yaml:"field"`
	// Default is the value written when the field is absent or empty, with its YAML type
	// (2 stays an integer, "2" a string). A string may be a template.
	Default any `yaml:"default"`
}

// OperatorBox is the declarative reconciler of a CRD.
type OperatorBox struct {
	// Default selects the generic declarative reconciler. It defaults to true; false (Go
	// hooks registered in the engine's binary) is refused, as this engine has no Go hooks.
	Default *bool `yaml:"default"`
	// Cross reads custom resources of other CRDs of the Katalog from their caches; their
	// data is available in templates as .cross.<as>.
	Cross []CrossRef `yaml:"cross"`
	// OnCreate resources are created when missing and left alone when present and
	// controlled by the custom resource; one present that is someone else's, has no
	// controller or is being deleted is never taken over, and the reconcile fails naming it.
	OnCreate *ResourceGroup `yaml:"onCreate"`
	// OnReconcile resources are created when missing and updated to their declaration on
	// every reconcile (drift correction).
	OnReconcile *ResourceGroup `yaml:"onReconcile"`
	// OnDelete runs when the custom resource is being deleted, before its finalizer is
	// removed; it gives up after EngineOptions.OnDeleteGiveUpAfter and is skipped in a
	// namespace being deleted (see the package documentation).
	OnDelete *ResourceGroup `yaml:"onDelete"`
	// Status writes fields of the custom resource's status after each reconcile.
	Status *Status `yaml:"status"`
}

// Groups returns the non-nil resource groups keyed by their field name (onCreate,
// onReconcile, onDelete).
func (b *OperatorBox) Groups() map[string]*ResourceGroup {
	out := map[string]*ResourceGroup{}
	for name, g := range map[string]*ResourceGroup{"onCreate": b.OnCreate, "onReconcile": b.OnReconcile, "onDelete": b.OnDelete} {
		if g != nil {
			out[name] = g
		}
	}
	return out
}

// CrossRef reads one custom resource of another CRD: the one its Selector names.
type CrossRef struct {
	// CRD is the name of another CRD entry of the Katalog (or of a Katalog loaded with it
	// by LoadAll); required.
	CRD string `yaml:"crd"`
	// Selector names the custom resource to read.
	Selector CrossSelector `yaml:"selector"`
	// As is the key under .cross in templates; default the CRD name. Aliases are unique
	// within an operator box.
	As string `yaml:"as"`
	// AllowCrossNamespace lets Selector.Namespace name another namespace than the reading
	// custom resource's own. Without it a cross read stays in the reader's namespace: a
	// selector that renders another namespace (the namespace template is often filled
	// from the reader's spec, which the custom resource's author writes) reads nothing and
	// fails the pass with an error wrapping ErrCrossNamespace. Even with it, only
	// namespaces that the target CRD's allowedNamespaces and restrictedNamespaces admit
	// are read. It needs Selector.Namespace; default false.
	AllowCrossNamespace bool `yaml:"allowCrossNamespace"`
}

// Alias is As, or the CRD name when As is empty.
func (c CrossRef) Alias() string {
	if c.As != "" {
		return c.As
	}
	return c.CRD
}

// CrossSelector names a custom resource by templates evaluated against the custom resource
// being reconciled.
type CrossSelector struct {
	// Name of the custom resource to read; required.
	Name Template `yaml:"name"`
	// Namespace of the custom resource to read; default the reconciled resource's
	// namespace. Another namespace is read only when the cross entry sets
	// AllowCrossNamespace.
	Namespace Template `yaml:"namespace"`
}

// ResourceGroup is what the operator box does in one phase: external calls first, in
// order, then the Kubernetes objects of each kind.
type ResourceGroup struct {
	// External HTTP calls run in order before any object is written; their results are
	// available as .external.<name>.{status,body,error,called} and to when conditions as
	// external.<name>.status.
	External []ExternalCall `yaml:"external"`
	// Deployments to create or update.
	Deployments []Deployment `yaml:"deployments"`
	// Services to create or update.
	Services []Service `yaml:"services"`
	// Secrets to create or update.
	Secrets []Secret `yaml:"secrets"`
	// ConfigMaps to create or update.
	ConfigMaps []ConfigMap `yaml:"configMaps"`
	// ServiceAccounts to create or update.
	ServiceAccounts []ServiceAccount `yaml:"serviceAccounts"`
	// Jobs to create.
	Jobs []Job `yaml:"jobs"`
	// CronJobs to create or update.
	CronJobs []CronJob `yaml:"cronJobs"`
}

// Resource holds what every declared object has: its name, when it applies and how it is
// repeated. Objects are owned by the custom resource and labelled with its name.
type Resource struct {
	// Name of the object, a template; required.
	Name Template `yaml:"name"`
	// When conditions must all hold for the object to exist; when they stop holding, an
	// object created earlier is deleted if the custom resource controls it, except an
	// onCreate object, a Job or a once Secret: for those the conditions gate the creation
	// only, and the object is kept until its declaration (or forEach element) is gone.
	When []Condition `yaml:"when"`
	// AnyOf conditions: at least one must hold (in addition to every When condition).
	AnyOf []Condition `yaml:"anyOf"`
	// ForEach repeats the declaration once per element of a list or map field.
	ForEach *ForEach `yaml:"forEach"`
}

// ForEach repeats a declaration. Over a list field, .<as> is the element; over a map field,
// .<as> is the key and .value the value, in sorted key order, so that expansion is
// deterministic across reconciles; .index is the position (0, 1, ...) either way. One
// forEach expands to at most EngineOptions.MaxForEachElements elements per custom
// resource; a field with more writes none of them and fails the pass.
type ForEach struct {
	// Field is the dot path of the list or map, such as spec.regions; required.
	Field string `yaml:"field"`
	// As is the template name of the current element; default DefaultForEachAs. It must
	// be an identifier and no key of the template data (metadata, spec, status, cross,
	// external, children, value, index).
	As string `yaml:"as"`
}

// Alias is As, or DefaultForEachAs when As is empty.
func (f *ForEach) Alias() string {
	if f.As != "" {
		return f.As
	}
	return DefaultForEachAs
}

// Deployment declares an apps/v1 Deployment with one container.
type Deployment struct {
	Resource `yaml:",inline"`
	// Image of the container; required.
	Image Template `yaml:"image"`
	// Replicas, a template that renders to a non-negative integer; default 1.
	Replicas Template `yaml:"replicas"`
	// Port the container listens on, a template that renders to a port number; optional.
	Port Template `yaml:"port"`
	// Command overrides the image's entrypoint.
	Command []Template `yaml:"command"`
	// Args are passed to the entrypoint.
	Args []Template `yaml:"args"`
	// Env maps environment variable names to templated values.
	Env map[string]Template `yaml:"env"`
}

// Service declares a core/v1 Service.
type Service struct {
	Resource `yaml:",inline"`
	// Type is ClusterIP (default), NodePort or LoadBalancer.
	Type string `yaml:"type"`
	// Port the Service exposes, a template that renders to a port number; required.
	Port Template `yaml:"port"`
	// TargetPort on the selected pods; default Port.
	TargetPort Template `yaml:"targetPort"`
	// Selector labels of the pods to route to; default the pods of the Deployment with the
	// same name.
	Selector map[string]Template `yaml:"selector"`
}

// Secret declares a core/v1 Secret.
type Secret struct {
	Resource `yaml:",inline"`
	// Once creates the Secret a single time and never renders it again while it exists, so
	// that generated values (randomAlphanumeric and the other random functions) stay stable.
	Once bool `yaml:"once"`
	// Type of the Secret; default Opaque.
	Type string `yaml:"type"`
	// Data maps keys to templated plain-text values (encoded by the API server, never logged).
	Data map[string]Template `yaml:"data"`
}

// ConfigMap declares a core/v1 ConfigMap.
type ConfigMap struct {
	Resource `yaml:",inline"`
	// Data maps keys to templated values.
	Data map[string]Template `yaml:"data"`
}

// ServiceAccount declares a core/v1 ServiceAccount.
type ServiceAccount struct {
	Resource `yaml:",inline"`
}

// Job declares a batch/v1 Job with one container. A Job is created once; its pod template
// is immutable, so it is not updated.
type Job struct {
	Resource `yaml:",inline"`
	// Image of the container; required.
	Image Template `yaml:"image"`
	// Command overrides the image's entrypoint.
	Command []Template `yaml:"command"`
	// Args are passed to the entrypoint.
	Args []Template `yaml:"args"`
	// Env maps environment variable names to templated values.
	Env map[string]Template `yaml:"env"`
	// BackoffLimit is the number of retries before the Job fails; default that of the API server.
	BackoffLimit *int `yaml:"backoffLimit"`
}

// CronJob declares a batch/v1 CronJob with one container.
type CronJob struct {
	Resource `yaml:",inline"`
	// Schedule in cron syntax, a template; required.
	Schedule Template `yaml:"schedule"`
	// Image of the container; required.
	Image Template `yaml:"image"`
	// Command overrides the image's entrypoint.
	Command []Template `yaml:"command"`
	// Args are passed to the entrypoint.
	Args []Template `yaml:"args"`
	// Env maps environment variable names to templated values.
	Env map[string]Template `yaml:"env"`
}

// ExternalCall is an HTTP request made during a reconcile. A skipped call (its conditions
// do not hold) records called "false"; a made call records status, body, error and called
// "true".
type ExternalCall struct {
	// Name keys the result under .external; unique within its group; required.
	Name string `yaml:"name"`
	// URL, a template; required.
	URL Template `yaml:"url"`
	// Method is the HTTP method; default GET.
	Method string `yaml:"method"`
	// Headers map header names to templated values.
	Headers map[string]Template `yaml:"headers"`
	// Body, a template; optional.
	Body Template `yaml:"body"`
	// ExpectedStatus is the status code that counts as success; 0 accepts any 2xx.
	ExpectedStatus int `yaml:"expectedStatus"`
	// ContinueOnError carries on with the reconcile when the call fails or returns another
	// status; otherwise the reconcile fails and is retried.
	ContinueOnError bool `yaml:"continueOnError"`
	// Timeout of the request; default 10s.
	Timeout Duration `yaml:"timeout"`
	// When conditions must all hold for the call to be made.
	When []Condition `yaml:"when"`
	// AnyOf conditions: at least one must hold.
	AnyOf []Condition `yaml:"anyOf"`
}

// Status declares the status fields written after each reconcile.
type Status struct {
	// Fields are evaluated in order; when several write the same path, the last one whose
	// conditions hold wins, so terminal states are declared last.
	Fields []StatusField `yaml:"fields"`
}

// StatusField writes one status field.
type StatusField struct {
	// Path below status, in dot notation, such as phase; required.
	Path string `yaml:"path"`
	// Value, a template; required.
	Value Template `yaml:"value"`
	// When conditions must all hold for the field to be written.
	When []Condition `yaml:"when"`
	// AnyOf conditions: at least one must hold.
	AnyOf []Condition `yaml:"anyOf"`
}
