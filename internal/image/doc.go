// Package image builds the OCI image of a Go main package without a container
// runtime, a Dockerfile or a base image: everything comes from the Go toolchain and the
// module cache (or the module proxy), so `go run ./cmd/reconciler-sdk image` works on a
// machine with no Docker daemon and no registry access.
//
// [Build] compiles the package with CGO_ENABLED=0, GOOS=linux, -trimpath,
// -buildvcs=false and -ldflags "-s -w -buildid=", and puts the static binary at
// [BinaryPath] in a single layer on an empty image. The layer holds exactly three
// files and their directory: /manager (mode 0755) and /etc/passwd and /etc/group
// naming the unprivileged user nonroot (65532) the image runs as, so that os/user
// lookups of the running process find their user instead of failing; there is no
// shell, no package manager and no CA bundle (an operator talks to its API server with
// the service account's CA). Every entry is owned by 65532:65532 except /etc and its
// files (root, world-readable), and has the same modification time, Options.Epoch; the
// image config runs /manager as "65532:65532" in "/" with no environment, and its
// created time is Options.Epoch too. Built twice from the same source with the same
// toolchain and options, the image has the same digest.
//
// The VCS stamp is left out (-buildvcs=false) on purpose: with it, an uncommitted
// change anywhere in the repository (even one that does not touch the package) would
// change the binary, while a change to the package shows in the binary anyway. The
// commit an image comes from is recorded only where the caller puts it, in the label
// org.opencontainers.image.revision ([LabelRevision]).
//
// The image can be written as an OCI image layout directory ([WriteLayout]), as a
// tarball that `docker load` and `kind load image-archive` accept ([WriteTarball]),
// and pushed to a registry with the credentials of the local Docker configuration
// ([Push]). [ExtractFile] takes a file back out of an image, such as the binary, to
// run it as a process; [FromLayout] reads an image back from a layout directory.
//
//	img, err := image.Build(ctx, image.Options{Main: "./examples/quickstart/cmd", Dir: "."})
//	if err != nil {
//		return err
//	}
//	return image.WriteTarball("bin/images/quickstart.tar", "quickstart:dev", img)
package image
