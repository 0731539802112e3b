// Command katalog-demo runs the example Katalogs (examples/katalog) on a local control
// plane: an operator without Go code, with nothing to install but the envtest binaries.
//
// It starts kube-apiserver and etcd with real kube-controller-manager (Deployment and
// ReplicaSet controllers, garbage collector), kube-scheduler and kwok (testenv with
// Controllers), installs examples/katalog/crds, and runs the platform, database and
// regional Katalogs in-process with the inspector on -inspector-bind-address (default
// 127.0.0.1:8080). A local HTTP server on loopback plays the image registry the
// Application's registry check calls (katalogexamples.RegistryHost, which platform.yaml
// fixes): the engine's HTTP client sends that host's requests to it
// (katalogexamples.StandInClient), with loopback allowed for them, which external calls
// are refused by default. It applies examples/katalog/samples in the namespace demo and
// prints each sample's Ready condition and status.phase as they change, then the
// inspector's URL.
//
// A sample is Ready when its Ready condition is True and its status.phase is Ready.
// With -exit-when-ready the demo exits with status 0 once every sample is; otherwise it
// keeps the control plane running, for the inspector, until interrupted. When a sample
// is not Ready within -timeout (3 minutes), it exits with status 1 naming the sample,
// its Ready condition and its phase. The engine's log goes to a file whose path is
// printed.
//
// Run it with `make katalog-demo` (KATALOG_DEMO_FLAGS=-exit-when-ready passes flags),
// which provides the envtest binaries (hack/envtest.sh).
package main
