package shard_test

import (
	"os"
	"testing"

	"github.com/c5c3/reconciler-sdk/testenv"
)

// env is a control plane that serves the shard selector (ShardedListAndWatch on).
var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{CRDSources: []testenv.CRDSource{}, FeatureGates: []string{"ShardedListAndWatch=true"}}, &env))
}
