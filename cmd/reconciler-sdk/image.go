package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/c5c3/reconciler-sdk/internal/image"
)

func init() {
	register(command{name: "image", summary: "build the OCI image of a main package (no Docker needed) into a layout, a tarball or a registry",
		run: runImage})
}

// runImage is `reconciler-sdk image [-t IMG] [-o DIR] [-tar FILE] [-push] [-arch A]
// [-source URL] [-revision REV] [-title T] [-main] PKG`: image.Build of PKG, then
// image.WriteLayout, image.WriteTarball and image.Push for the outputs the flags ask for.
func runImage(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("image", "image [-t IMG] [-o DIR] [-tar FILE] [-push] [-arch GOARCH] [-source URL] [-revision REV] [-title NAME] PKG",
		"Builds the main package PKG (in the current directory's module) into a static linux binary at "+image.BinaryPath+
			"\non an empty image, run as "+image.User+", and writes it where -o, -tar and -push say (at least one).\n$SOURCE_DATE_EPOCH, when set, is the time of its files and of the image.",
		stderr)
	var tag string
	fs.StringVar(&tag, "t", "", "the image's `reference` (such as registry.example/memo:v1): the tarball's tag, the layout's ref name, where -push pushes")
	fs.StringVar(&tag, "tag", "", "the same as -t")
	mainPkg := fs.String("main", "", "the main `package` to build, as go build takes it (or give it as the argument)")
	layoutDir := fs.String("o", "", "write the image into the OCI image layout `directory` (made if missing)")
	tarPath := fs.String("tar", "", "write the image to the `file` as a tarball for docker load / kind load image-archive")
	push := fs.Bool("push", false, "push the image to the registry of -t, with the credentials of the Docker configuration")
	opts, err := image.DefaultOptions("")
	if err != nil {
		return err
	}
	fs.StringVar(&opts.GOARCH, "arch", opts.GOARCH, "the `GOARCH` to build for (the OS is linux)")
	source := fs.String("source", "", "the label "+image.LabelSource+" (the source repository's `URL`)")
	revision := fs.String("revision", "", "the label "+image.LabelRevision+" (the `commit` built; mark a dirty tree, such as with a -dirty suffix)")
	title := fs.String("title", "", "the label "+image.LabelTitle+" (the image's `name`)")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	switch {
	case *mainPkg != "" && fs.NArg() == 0:
		opts.Main = *mainPkg
	case *mainPkg == "" && fs.NArg() == 1:
		opts.Main = fs.Arg(0)
	default:
		fs.Usage()
		return usageError{fmt.Errorf("want one main package, as -main or as the argument, got %d arguments and -main %q", fs.NArg(), *mainPkg)}
	}
	if *layoutDir == "" && *tarPath == "" && !*push {
		fs.Usage()
		return usageError{errors.New("nothing to write: give -o, -tar or -push")}
	}
	if tag == "" && (*tarPath != "" || *push) {
		fs.Usage()
		return usageError{errors.New("-tar and -push need the image reference -t")}
	}
	opts.Labels = map[string]string{image.LabelSource: *source, image.LabelRevision: *revision, image.LabelTitle: *title}

	img, err := image.Build(ctx, opts)
	if err != nil {
		return err
	}
	digest, err := img.Digest()
	if err != nil {
		return fmt.Errorf("image of %s: %w", opts.Main, err)
	}
	id, err := img.ConfigName()
	if err != nil {
		return fmt.Errorf("image of %s: %w", opts.Main, err)
	}
	var out strings.Builder
	fmt.Fprintf(&out, "built %s for linux/%s: digest %s, image ID %s\n", opts.Main, opts.GOARCH, digest, id)
	var errs []error
	if *layoutDir != "" {
		if err := image.WriteLayout(*layoutDir, tag, img); err != nil {
			errs = append(errs, err)
		} else {
			fmt.Fprintf(&out, "wrote OCI layout %s\n", *layoutDir)
		}
	}
	if *tarPath != "" {
		if err := image.WriteTarball(*tarPath, tag, img); err != nil {
			errs = append(errs, err)
		} else {
			fmt.Fprintf(&out, "wrote tarball %s (%s)\n", *tarPath, tag)
		}
	}
	if *push && len(errs) == 0 {
		if err := image.Push(ctx, tag, img); err != nil {
			errs = append(errs, err)
		} else {
			fmt.Fprintf(&out, "pushed %s@%s\n", tag, digest)
		}
	}
	if _, err := io.WriteString(stdout, out.String()); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
