package testenv

import "time"

// SetQuietTimeout sets how long ExpectQuiet waits for the first quiet pass, and returns
// a function that restores the default.
func SetQuietTimeout(d time.Duration) (restore func()) {
	old := quietTimeout
	quietTimeout = d
	return func() { quietTimeout = old }
}

// SetConditionTimeout sets how long WaitForCondition waits at most, and returns a
// function that restores the default.
func SetConditionTimeout(d time.Duration) (restore func()) {
	old := conditionTimeout
	conditionTimeout = d
	return func() { conditionTimeout = old }
}

// APIServerCertDir returns the directory that holds e's kube-apiserver certificates; it
// appears in the API server's command line (--cert-dir).
func APIServerCertDir(e *Env) string { return e.certDir }

// EtcdDataDir returns e's etcd data directory; it appears in etcd's command line
// (--data-dir).
func EtcdDataDir(e *Env) string { return e.env.ControlPlane.Etcd.DataDir }
