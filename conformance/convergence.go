package conformance

// checkConvergence is [CheckConvergence]: each valid sample is Current as kstatus
// reads it and Ready=True for its current generation (see ready).
func (w *world) checkConvergence() error {
	_, err := w.startAndConverge(nil)
	return err
}
