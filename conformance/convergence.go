package conformance

// checkConvergence is [CheckConvergence]: each valid sample reaches Ready=True for its
// current generation.
func (w *world) checkConvergence() error {
	_, err := w.startAndConverge(nil)
	return err
}
