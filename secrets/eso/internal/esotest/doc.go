// Package esotest holds test helpers shared by the tests of the ESO typed mirror
// packages (secrets/eso/v1 and secrets/eso/v1alpha1). It is internal: operator authors
// test against the mirror through the SDK's test kit, not through this package.
package esotest
