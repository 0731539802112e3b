package golden_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/c5c3/reconciler-sdk/testenv/golden"
)

// A test renders its output and compares it with the golden file; Check is the error
// form that Compare fails the test with.
func ExampleCheck() {
	dir, _ := os.MkdirTemp("", "golden")
	defer func() { _ = os.RemoveAll(dir) }()
	path := filepath.Join(dir, "settings.conf")
	_ = os.WriteFile(path, []byte("[DEFAULT]\ndebug = false\n"), 0o600)

	fmt.Println(golden.Check(path, []byte("[DEFAULT]\ndebug = false\n")))
	err := golden.Check(path, []byte("[DEFAULT]\ndebug = true\n"))
	fmt.Println(errors.Is(err, golden.ErrDiffers))
	// Output:
	// <nil>
	// true
}
