// Package names holds what the Keystone controller (package keystone), the
// KeystoneIdentityBackend controller (package identitybackend) and the rotation
// commands (package rotation) agree on about a Keystone's children: the names of its
// Secrets, the data keys the other side reads, the labels of its children and the URL
// of its API's Service. Every name is derived from the Keystone's name alone, so any
// of the three finds a child without reading the Keystone's status.
package names
