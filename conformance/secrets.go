package conformance

import (
	"errors"
	"slices"
	"strings"
	"time"
)

// checkSecrets is [CheckSecrets]: no value of a Secret of the namespace shows in the
// operator's logs, Events, the CRs' status or its metrics.
func (w *world) checkSecrets() error {
	r, err := w.startAndConverge(nil)
	if err != nil {
		return err
	}
	for _, cr := range w.crs {
		for range quietPasses {
			w.pass(r, cr)
		}
	}
	var leaks []error
	// Events reach the API server asynchronously: look again for a moment.
	for deadline := time.Now().Add(2 * time.Second); ; {
		values, err := w.secretValues()
		if err != nil {
			return err
		}
		shown, err := w.exposures()
		if err != nil {
			return err
		}
		leaks = nil
		for _, v := range values {
			for _, e := range shown {
				if slices.ContainsFunc(v.forms, func(f string) bool { return strings.Contains(e.text, f) }) {
					leaks = append(leaks, w.violation(v.secret, "data["+v.key+"]",
						"never put a Secret's data into a log, an event, a condition or a metric; name the Secret and its key instead",
						"its value appears in the operator's %s", e.where))
				}
			}
		}
		if len(leaks) > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(4 * poll)
	}
	return errors.Join(leaks...)
}
