package scaffold_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/c5c3/reconciler-sdk/internal/scaffold"
)

// Init writes a project, CreateAPI adds a kind to it; `go mod tidy` and `make
// generate` in the directory complete the tree (reconciler-sdk create api runs both).
func Example() {
	dir, err := os.MkdirTemp("", "memo-operator")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = os.RemoveAll(dir) }()
	if _, err := scaffold.Init(dir, scaffold.InitOptions{Repo: "example.com/memo-operator", SDKVersion: "v0.4.0"}); err != nil {
		fmt.Println(err)
		return
	}
	written, err := scaffold.CreateAPI(dir, scaffold.APIOptions{Group: "memo", Version: "v1alpha1", Kind: "Memo"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(strings.Join(written, "\n"))
	_, err = scaffold.CreateAPI(dir, scaffold.APIOptions{Group: "memo", Version: "v1alpha1", Kind: "Memo"})
	fmt.Println(strings.ReplaceAll(err.Error(), dir, "DIR"))
	// Output:
	// PROJECT
	// api/v1alpha1/doc.go
	// api/v1alpha1/groupversion_info.go
	// api/v1alpha1/memo_types.go
	// cmd/main.go
	// cmd/main_test.go
	// config/crd/kustomization.yaml
	// config/samples/memo_v1alpha1_memo.yaml
	// conformance/main_test.go
	// conformance/memo_conformance_test.go
	// controller/main_test.go
	// controller/memo_controller.go
	// controller/memo_controller_test.go
	// --kind "Memo": the project has that kind already, in version v1alpha1
}
