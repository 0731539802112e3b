package deployment_test

import (
	"testing"
	"time"

	"github.com/c5c3/reconciler-sdk/config"
	"github.com/c5c3/reconciler-sdk/deployment"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// TestDefaults: the revision history a Deployment keeps matches what the configuration
// prune retains, and the poll interval is the one its deprecated alias names.
func TestDefaults(t *testing.T) {
	if got, want := int(deployment.DefaultRevisionHistoryLimit), config.DefaultRetain; got != want {
		t.Errorf("DefaultRevisionHistoryLimit = %d, want config.DefaultRetain (%d)", got, want)
	}
	if deployment.PollInterval != 10*time.Second {
		t.Errorf("PollInterval = %v, want 10s", deployment.PollInterval)
	}
	if alias := reconcile.DeploymentPollInterval; alias != deployment.PollInterval { //nolint:staticcheck // the deprecated alias must stay equal
		t.Errorf("reconcile.DeploymentPollInterval = %v, want deployment.PollInterval (%v)", alias, deployment.PollInterval)
	}
}
