// Package deploy holds the tests of the example operators' shipped configuration: each
// example's config/default (examples/quickstart, examples/horizon, examples/keystone,
// and examples/katalog's for the Katalog engine cmd/katalog) is built with kustomize,
// applied server-side to a real API server and taken out again, as `make deploy` and
// `make undeploy` do through internal/deploy; and each operator's binary, taken out of
// its image, runs as a separate process authenticated as the shipped ServiceAccount with
// only the shipped RBAC. The package has no code besides its tests.
package deploy
