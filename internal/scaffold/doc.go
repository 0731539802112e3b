// Package scaffold writes a new operator built on the SDK, laid out as the quick start
// (examples/quickstart) and as kubebuilder users expect. [Init] writes the project:
// go.mod requiring the SDK (its commands envtest and reconciler-sdk as tool
// directives), cmd/main.go on operator.Run, a Makefile, the config/default,
// config/manager and config/rbac kustomize layers, a README and a PROJECT file holding
// its settings. [CreateAPI] adds one custom resource to it: its api/<version> types
// with kubebuilder markers, a controller whose pipeline applies one owned ConfigMap,
// its envtest and conformance tests, a sample, and the wiring into cmd/main.go and the
// test mains.
//
// The templates are embedded (embed.FS, text/template); every rendered .go file goes
// through go/format. Both functions validate their options first, returning an
// *[OptionError] that names the flag, and refuse to overwrite a file, returning an
// *[ExistsError] that names it; either way they write nothing. Running the tools that
// complete the tree (go mod tidy, controller-gen through `make generate`) is the
// caller's part: cmd/reconciler-sdk does it.
package scaffold
