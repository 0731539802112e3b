package deployment

import "time"

// PollInterval is how often a step polls a Deployment that is not ready yet: 10 s.
const PollInterval = 10 * time.Second

// DefaultRevisionHistoryLimit is the spec.revisionHistoryLimit to give a Deployment
// whose pods mount content-addressed configuration: 3, matching config.DefaultRetain.
// The configuration prune spares the ConfigMaps that live ReplicaSets mount, so with
// Kubernetes' default of 10 old ReplicaSets up to 10 old ConfigMaps would stay.
const DefaultRevisionHistoryLimit int32 = 3
