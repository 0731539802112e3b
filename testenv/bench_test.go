package testenv_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/c5c3/reconciler-sdk/testenv"
)

// BenchmarkStart measures what a test package pays once, in TestMain: starting (and
// stopping) a control plane without upstream CRDs, plain and with Options.Controllers.
// With controllers it also reports the resident memory of the three extra processes
// (Linux only), read right after Start.
func BenchmarkStart(b *testing.B) {
	for name, controllers := range map[string]bool{"plain": false, "controllers": true} {
		b.Run(name, func(b *testing.B) {
			var rssKiB int
			for b.Loop() {
				e, err := testenv.Start(testenv.Options{CRDSources: []testenv.CRDSource{}, Controllers: controllers})
				if err != nil {
					b.Fatal(err)
				}
				rssKiB = 0
				for _, p := range e.Processes() {
					rssKiB += vmRSSKiB(p.PID)
				}
				if err := e.Stop(); err != nil {
					b.Fatal(err)
				}
			}
			if controllers && rssKiB > 0 {
				b.ReportMetric(float64(rssKiB)/1024, "MiB-rss-controllers")
			}
		})
	}
}

// vmRSSKiB reads a process's VmRSS from /proc; 0 where there is no /proc.
func vmRSSKiB(pid int) int {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			return n
		}
	}
	return 0
}
