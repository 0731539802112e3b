// Package controller is the former home of the Keystone operator's reconcilers, kept
// for one release as deprecated aliases of the names its importers used.
//
// Deprecated: the code moved into focused packages: keystone (the Keystone reconciler
// and its steps), identitybackend (the KeystoneIdentityBackend controller and the
// IdentityBackends row), rotation (what the rotation pods run, and how they are built)
// and names (the names, data keys and labels they share). Import those instead.
package controller
