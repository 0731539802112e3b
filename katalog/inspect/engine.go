package inspect

import "github.com/c5c3/reconciler-sdk/katalog"

// EngineHealth returns the HealthSource of a running Katalog engine: the health of a
// CRD is what e.Health reports for it (synced, healthy, the counts, the last error and
// the last reconcile). A name the engine does not run is reported unhealthy and not
// synced, with the engine's error as LastError.
func EngineHealth(e *katalog.Engine) HealthSource {
	return engineHealth{e: e}
}

// engineHealth adapts *katalog.Engine to HealthSource.
type engineHealth struct{ e *katalog.Engine }

// Health converts e.Health(crd) into a Health.
func (h engineHealth) Health(crd string) Health {
	c, err := h.e.Health(crd)
	if err != nil {
		return Health{LastError: err.Error()}
	}
	return Health{
		Healthy:       c.Healthy,
		Synced:        c.Synced,
		LastError:     c.LastError,
		LastReconcile: c.LastReconcile,
		Reconciles:    c.Reconciles,
		Failures:      c.Failures,
	}
}
