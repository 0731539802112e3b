package main

import (
	"flag"
	"testing"
	"time"

	"github.com/c5c3/reconciler-sdk/katalog"
)

// TestBoundFlags: --max-foreach-elements and --ondelete-give-up-after default to the
// engine's bounds and set them.
func TestBoundFlags(t *testing.T) {
	o, err := parseFlags(flag.NewFlagSet("katalog", flag.ContinueOnError), []string{"--katalog", "a.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	if o.engine.MaxForEachElements != katalog.DefaultMaxForEachElements || o.engine.OnDeleteGiveUpAfter != katalog.DefaultOnDeleteGiveUpAfter {
		t.Errorf("defaults: max-foreach-elements %d, ondelete-give-up-after %s", o.engine.MaxForEachElements, o.engine.OnDeleteGiveUpAfter)
	}
	o, err = parseFlags(flag.NewFlagSet("katalog", flag.ContinueOnError),
		[]string{"--katalog", "a.yaml", "--max-foreach-elements", "1000", "--ondelete-give-up-after", "1h"})
	if err != nil {
		t.Fatal(err)
	}
	if o.engine.MaxForEachElements != 1000 || o.engine.OnDeleteGiveUpAfter != time.Hour {
		t.Errorf("set: max-foreach-elements %d, ondelete-give-up-after %s", o.engine.MaxForEachElements, o.engine.OnDeleteGiveUpAfter)
	}
}
