package katalog_test

import (
	"errors"
	"fmt"

	"github.com/c5c3/reconciler-sdk/katalog"
)

const exampleKatalog = `apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata:
  name: platform
spec:
  crds:
    application:
      apiTypes: {group: platform.io, version: v1alpha1, kind: Application, plural: applications}
      dependsOn:
        database: healthy
      operatorBox:
        cross:
          - crd: database
            selector: {name: "{{ .metadata.name }}"}
            as: db
        onReconcile:
          deployments:
            - name: "{{ .metadata.name }}"
              image: "{{ .spec.image }}"
              when:
                - field: "{{ phase .cross.db }}"
                  equals: Ready
    database:
      apiTypes: {group: platform.io, version: v1alpha1, kind: Database, plural: databases}
      operatorBox:
        onCreate:
          secrets:
            - name: "{{ .metadata.name }}-credentials"
              once: true
              data:
                password: "{{ randomAlphanumeric 32 }}"
`

// Parse a Katalog and list its CRDs in the order their workers start: database first,
// because application depends on it.
func ExampleParse() {
	k, err := katalog.Parse("platform.yaml", []byte(exampleKatalog))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, crd := range k.StartOrder() {
		fmt.Println(crd.Name, crd.GroupVersionKind().Kind, crd.WorkerCount(), crd.ResyncPeriod())
	}
	// Output:
	// database Database 1 15s
	// application Application 1 15s
}

// Every problem is reported with its file, line and YAML path; errors.Is tells the kinds
// apart.
func ExampleParse_errors() {
	_, err := katalog.Parse("app.yaml", []byte(`apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: app}
spec:
  crds:
    application:
      apiTypes: {group: platform.io, version: v1, kind: Application, plural: applications}
      operatorBox:
        onCreate:
          aws:
            s3: [{bucket: "{{ .metadata.name }}"}]
          deployments:
            - name: "{{ .metadata.name }"
              image: nginx
              replica: 2
`))
	for _, le := range katalog.LoadErrors(err) {
		fmt.Println(le.Line, le.Path)
	}
	fmt.Println(errors.Is(err, katalog.ErrProviderBlock), errors.Is(err, katalog.ErrTemplate), errors.Is(err, katalog.ErrUnknownField))
	// Output:
	// 10 spec.crds.application.operatorBox.onCreate.aws
	// 13 spec.crds.application.operatorBox.onCreate.deployments[0].name
	// 15 spec.crds.application.operatorBox.onCreate.deployments[0].replica
	// true true true
}

// A template renders against the data of one reconcile; a missing key renders as nothing.
func ExampleTemplate_Execute() {
	t := katalog.MustTemplate(`{{ .metadata.name }}-{{ .item }}{{ .missing }} {{ phase .cross.db }}`)
	out, err := t.Execute(map[string]any{
		"metadata": map[string]any{"name": "my-app"},
		"item":     "eu-west-1",
		"cross":    map[string]any{"db": map[string]any{"found": "true", "status": map[string]any{"phase": "Ready"}}},
	})
	fmt.Println(out, err)
	// Output: my-app-eu-west-1 Ready <nil>
}
