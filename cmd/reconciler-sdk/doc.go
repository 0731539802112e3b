// Command reconciler-sdk scaffolds, builds and deploys operators built on
// github.com/c5c3/reconciler-sdk. Run it from the module proxy at the SDK version an
// operator requires:
//
//	go run github.com/c5c3/reconciler-sdk/cmd/reconciler-sdk@latest <command> [flags]
//
// The commands:
//   - init, create api: write an operator in the quick start's layout and add a kind to it;
//   - image: build a Go main package into a reproducible OCI image (a static binary at
//     /manager on an empty base, non-root), as an OCI layout, a docker-load tarball or a push;
//   - deploy DIR, undeploy DIR: apply a kustomize directory server-side (the manager image
//     set in memory), and delete exactly what it applied.
//
// `reconciler-sdk help` lists the commands; `reconciler-sdk <command> -h` shows a
// command's flags.
package main
