package health

// CacheLen returns the number of cached passing probes, for tests of the sweep.
func (p *Prober) CacheLen() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.passed)
}
