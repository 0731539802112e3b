// Package keystests holds the envtest tests of the Keystone operator's key repository
// steps (keystone.NewFernetKeysStep, keystone.NewCredentialKeysStep) and of the
// key rotation (rotation.RotateKeys, rotation.RunRotateKeys). It has no code of its
// own: the tests run on a control plane of their own, next to the keystone package's
// tests, and use only the exported API of packages keystone and rotation.
//
// External Secrets Operator does not run on envtest; the tests' backend stands in for
// OpenBao behind it, pushing a whole repository Secret as one provider secret and
// syncing every property of that secret back into the restore copy, with ESO v0.20's
// answers for a provider secret that does not exist.
package keystests
