// Package controllers holds the tests that prove the test kit's real-controllers mode
// (testenv.Options{Controllers: true}): owner-reference garbage collection, a
// Deployment that becomes Available through pods that kube-scheduler places and kwok
// runs, a rolling update on a pod-template change and a Job that completes. It has
// no API of its own; read it as a worked example of a test package that uses the
// mode.
package controllers
