package image_test

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/c5c3/reconciler-sdk/internal/image"
)

// Build makes the image of a tiny main package; what it holds is one layer with the
// static binary at /manager, and a config that runs it as the nonroot user.
// WriteLayout, WriteTarball and Push then write it out.
func ExampleBuild() {
	img, err := image.Build(context.Background(), image.Options{
		Main:   "./testdata/hello",
		Labels: map[string]string{image.LabelTitle: "hello"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	cf, err := img.ConfigFile()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("os:", cf.OS)
	fmt.Println("user:", cf.Config.User)
	fmt.Println("entrypoint:", cf.Config.Entrypoint)
	fmt.Println("title:", cf.Config.Labels[image.LabelTitle])
	fmt.Println("created:", cf.Created.UTC())

	tr := tar.NewReader(mutate.Extract(img))
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s %v %d:%d\n", hdr.Name, hdr.FileInfo().Mode(), hdr.Uid, hdr.Gid)
	}
	// Output:
	// os: linux
	// user: 65532:65532
	// entrypoint: [/manager]
	// title: hello
	// created: 1970-01-01 00:00:00 +0000 UTC
	// etc drwxr-xr-x 0:0
	// etc/group -rw-r--r-- 0:0
	// etc/passwd -rw-r--r-- 0:0
	// manager -rwxr-xr-x 65532:65532
}
