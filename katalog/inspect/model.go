package inspect

import "time"

// HealthReport is the body of GET /katalog/{crd}/health: the CRD's name and its Health.
type HealthReport struct {
	// CRD is the entry's name in the Katalog.
	CRD string `json:"crd"`
	Health
}

// CRDInfo is the body of GET /katalog/{crd}: the Katalog entry and its health.
type CRDInfo struct {
	// Name is the entry's name in the Katalog.
	Name string `json:"name"`
	// Group, Version, Kind and Plural identify the custom resource.
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
	Plural  string `json:"plural"`
	// Workers is the number of concurrent reconciles.
	Workers int `json:"workers"`
	// Resync is the period of the re-reconcile of every custom resource, as a Go duration.
	Resync string `json:"resync"`
	// DependsOn maps the CRDs this one waits for to the state they must reach.
	DependsOn map[string]string `json:"dependsOn,omitempty"`
	// Health is what the engine reports.
	Health Health `json:"health"`
}

// CRSummary is one custom resource in GET /katalog/{crd}/cr.
type CRSummary struct {
	// Namespace and Name identify the custom resource.
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Phase is status.phase, empty when unset.
	Phase string `json:"phase,omitempty"`
	// Ready is the status of the Ready condition (True, False or Unknown), empty when the
	// custom resource has none.
	Ready string `json:"ready"`
	// Reason is the Ready condition's reason.
	Reason string `json:"reason,omitempty"`
	// Generation is metadata.generation.
	Generation int64 `json:"generation"`
	// ObservedGeneration is status.observedGeneration or, without it, the Ready
	// condition's observedGeneration; 0 when neither is set.
	ObservedGeneration int64 `json:"observedGeneration"`
	// Created is metadata.creationTimestamp.
	Created time.Time `json:"created"`
	// Age is the time since Created, such as 5m or 3d4h.
	Age string `json:"age"`
}

// CRList is the body of GET /katalog/{crd}/cr: one page of the custom resources,
// sorted by namespace and name.
type CRList struct {
	// CRD is the entry's name in the Katalog.
	CRD string `json:"crd"`
	// Items are the custom resources of the page: at most ?limit (DefaultPageSize
	// without it), after those of the page that gave ?continue.
	Items []CRSummary `json:"items"`
	// Continue is the token of the next page (GET /katalog/{crd}/cr?continue=TOKEN);
	// empty on the last page.
	Continue string `json:"continue,omitempty"`
}

// CRDetail is the body of GET /katalog/{crd}/cr/{ns}/{name}.
type CRDetail struct {
	// CRD is the entry's name in the Katalog.
	CRD string `json:"crd"`
	// Kind is the custom resource's kind.
	Kind string `json:"kind"`
	// UID is metadata.uid.
	UID string `json:"uid"`
	CRSummary
	// StatusFields are the fields of status other than conditions, by dot path, sorted.
	StatusFields []Field `json:"statusFields"`
	// Conditions are status.conditions, in the order written.
	Conditions []Condition `json:"conditions"`
	// Children are the objects of the child kinds in the namespace whose controller is
	// the custom resource, in the order of the child kinds, then by name.
	Children []Child `json:"children"`
	// ChildErrors name the child kinds that could not be read, with the cause.
	ChildErrors []string `json:"childErrors,omitempty"`
	// Events are the custom resource's most recent events, newest first, at most
	// RecentEvents.
	Events []Event `json:"events"`
	// EventsError is why the events could not be listed, empty when they were.
	EventsError string `json:"eventsError,omitempty"`
}

// Field is one status field: its dot path below status and its value as text (lists and
// maps as JSON).
type Field struct {
	Path  string `json:"path"`
	Value string `json:"value"`
}

// Condition is one entry of status.conditions.
type Condition struct {
	Type               string    `json:"type"`
	Status             string    `json:"status"`
	Reason             string    `json:"reason,omitempty"`
	Message            string    `json:"message,omitempty"`
	ObservedGeneration int64     `json:"observedGeneration,omitempty"`
	LastTransitionTime time.Time `json:"lastTransitionTime,omitzero"`
}

// Child is one object the custom resource controls, with its readiness: a Deployment is
// ready when its available replicas reach its desired replicas, a Job when it has
// succeeded as often as its completions ask, any other kind when it exists.
type Child struct {
	// Kind and Name identify the object in the custom resource's namespace.
	Kind string `json:"kind"`
	Name string `json:"name"`
	// Ready reports the readiness described above.
	Ready bool `json:"ready"`
	// Readiness says what Ready rests on, such as "2/3 available" or "exists".
	Readiness string `json:"readiness"`
	// Age is the time since the object was created.
	Age string `json:"age"`
}

// Event is one event about the custom resource.
type Event struct {
	// Type is Normal or Warning.
	Type    string `json:"type"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
	// Count is how often the event was seen (1 when not counted).
	Count int32 `json:"count"`
	// Source is the component that reported it.
	Source string `json:"source,omitempty"`
	// LastSeen is when it was last seen.
	LastSeen time.Time `json:"lastSeen"`
	// Age is the time since LastSeen.
	Age string `json:"age"`
}

// ErrorBody is the body of every JSON answer other than 200 and 503: what went wrong,
// naming the CRD or custom resource.
type ErrorBody struct {
	Error string `json:"error"`
}
