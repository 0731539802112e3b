package katalog_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/c5c3/reconciler-sdk/katalog"
)

// sentinels names every exported sentinel, so that a reported error can be compared by name.
var sentinels = map[string]error{
	"ErrRead":              katalog.ErrRead,
	"ErrSyntax":            katalog.ErrSyntax,
	"ErrUnknownField":      katalog.ErrUnknownField,
	"ErrDuplicateKey":      katalog.ErrDuplicateKey,
	"ErrInvalidValue":      katalog.ErrInvalidValue,
	"ErrMissingField":      katalog.ErrMissingField,
	"ErrProviderBlock":     katalog.ErrProviderBlock,
	"ErrTemplate":          katalog.ErrTemplate,
	"ErrUnknownOperator":   katalog.ErrUnknownOperator,
	"ErrDependencyCycle":   katalog.ErrDependencyCycle,
	"ErrUnknownDependency": katalog.ErrUnknownDependency,
	"ErrUnknownCrossRef":   katalog.ErrUnknownCrossRef,
	"ErrDuplicateResource": katalog.ErrDuplicateResource,
	"ErrDuplicateName":     katalog.ErrDuplicateName,
	"ErrDuplicateCRD":      katalog.ErrDuplicateCRD,
}

// reported is what a test asserts of one *LoadError.
type reported struct {
	File     string
	Line     int
	Path     string
	Sentinel string
	// Says is a fragment the message must contain; compared separately.
	Says string `cmp:"-"`
}

// project reduces err to its LoadErrors, naming the single sentinel each wraps; it fails
// the test when an error wraps no sentinel or several.
func project(t *testing.T, err error) []reported {
	t.Helper()
	var out []reported
	for _, le := range katalog.LoadErrors(err) {
		var names []string
		for name, s := range sentinels {
			if errors.Is(le, s) {
				names = append(names, name)
			}
		}
		if len(names) != 1 {
			t.Errorf("%v wraps sentinels %v, want exactly one", le, names)
		}
		r := reported{File: le.File, Line: le.Line, Path: le.Path}
		if len(names) == 1 {
			r.Sentinel = names[0]
		}
		out = append(out, r)
	}
	if n := len(katalog.LoadErrors(err)); err != nil && n == 0 {
		t.Errorf("error %v holds no *LoadError", err)
	}
	return out
}

func compareReported(t *testing.T, err error, want []reported) {
	t.Helper()
	got := project(t, err)
	ignoreSays := cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Says" }, cmp.Ignore())
	if diff := cmp.Diff(want, got, ignoreSays); diff != "" {
		t.Errorf("errors (-want +got):\n%s\nerror text:\n%v", diff, err)
	}
	les := katalog.LoadErrors(err)
	for i, w := range want {
		if w.Says != "" && i < len(les) && !strings.Contains(les[i].Error(), w.Says) {
			t.Errorf("error %d = %q, want it to contain %q", i, les[i].Error(), w.Says)
		}
	}
}

func TestLoadFileErrors(t *testing.T) {
	type args struct{ file string }
	type want struct{ errs []reported }
	f := func(name string) string { return filepath.Join("testdata", name) }
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"UnknownField": {
			reason: "A key the format does not define is refused with its YAML path and line.",
			args:   args{f("bad-unknown-field.yaml")},
			want: want{[]reported{{f("bad-unknown-field.yaml"), 18, "spec.crds.application.operatorBox.onCreate.deployments[0].foo", "ErrUnknownField",
				`testdata/bad-unknown-field.yaml:18: spec.crds.application.operatorBox.onCreate.deployments[0].foo: unknown field "foo"`}}},
		},
		"ProviderBlocks": {
			reason: "Every provider block is refused, naming the block, and the rest of the group still loads.",
			args:   args{f("bad-provider-block.yaml")},
			want: want{[]reported{
				{f("bad-provider-block.yaml"), 15, "spec.crds.application.operatorBox.onReconcile.git", "ErrProviderBlock", `"git"`},
				{f("bad-provider-block.yaml"), 20, "spec.crds.application.operatorBox.onReconcile.aws", "ErrProviderBlock", `remove the aws block`},
			}},
		},
		"Templates": {
			reason: "A template that does not parse is refused at its field; inside a block scalar, at the template's own line.",
			args:   args{f("bad-template.yaml")},
			want: want{[]reported{
				{f("bad-template.yaml"), 16, "spec.crds.application.operatorBox.onCreate.secrets[0].name", "ErrTemplate", `unexpected "}"`},
				{f("bad-template.yaml"), 18, "spec.crds.application.operatorBox.onCreate.secrets[0].data.password", "ErrTemplate", `function "randomAlfanumeric" not defined`},
				{f("bad-template.yaml"), 25, `spec.crds.application.operatorBox.onCreate.configMaps[0].data["app.conf"]`, "ErrTemplate", "unclosed action"},
			}},
		},
		"UnknownOperators": {
			reason: "Operators outside the list are refused in long and shorthand form, and a condition without an operator too.",
			args:   args{f("bad-unknown-operator.yaml")},
			want: want{[]reported{
				{f("bad-unknown-operator.yaml"), 16, "spec.crds.application.validation.rules[0].operator", "ErrUnknownOperator", `unknown operator "present"`},
				{f("bad-unknown-operator.yaml"), 25, "spec.crds.application.operatorBox.onCreate.deployments[0].when[0].greaterThen", "ErrUnknownOperator", `unknown operator "greaterThen"; the operators are equals,`},
				{f("bad-unknown-operator.yaml"), 31, "spec.crds.application.operatorBox.status.fields[0].anyOf[0]", "ErrUnknownOperator", "no operator"},
			}},
		},
		"DependencyCycles": {
			reason: "Each cycle is reported once, naming it from its smallest CRD, at that CRD's dependsOn entry; a self-dependency is a cycle.",
			args:   args{f("bad-cycle.yaml")},
			want: want{[]reported{
				{f("bad-cycle.yaml"), 10, "spec.crds.alpha.dependsOn.beta", "ErrDependencyCycle", "dependsOn cycle: alpha -> beta -> gamma -> alpha"},
				{f("bad-cycle.yaml"), 22, "spec.crds.delta.dependsOn.delta", "ErrDependencyCycle", "delta -> delta"},
			}},
		},
		"UnknownReferences": {
			reason: "dependsOn and cross must name CRDs of the Katalog.",
			args:   args{f("bad-cross-ref.yaml")},
			want: want{[]reported{
				{f("bad-cross-ref.yaml"), 10, "spec.crds.application.dependsOn.cache", "ErrUnknownDependency", `CRD "cache" is not in the Katalog`},
				{f("bad-cross-ref.yaml"), 13, "spec.crds.application.operatorBox.cross[0].crd", "ErrUnknownCrossRef", `CRD "database" is not in the Katalog`},
			}},
		},
		"DuplicateResources": {
			reason: "Names equal after normalising {{ .metadata.name }} collide across onCreate and onReconcile; exclusive when conditions, forEach and other kinds do not.",
			args:   args{f("bad-duplicate-resource.yaml")},
			want: want{[]reported{
				{f("bad-duplicate-resource.yaml"), 32, "spec.crds.application.operatorBox.onReconcile.secrets[0].name", "ErrDuplicateResource",
					`Secret "{{.metadata.name}}-credentials" is also declared at spec.crds.application.operatorBox.onCreate.secrets[0] (line 12)`},
				{f("bad-duplicate-resource.yaml"), 36, "spec.crds.application.operatorBox.onReconcile.configMaps[2].name", "ErrDuplicateResource", `ConfigMap "shared"`},
			}},
		},
		"Unreadable": {
			reason: "A file that cannot be read is reported without a line.",
			args:   args{f("does-not-exist.yaml")},
			want:   want{[]reported{{f("does-not-exist.yaml"), 0, "", "ErrRead", "no such file"}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			k, err := katalog.Load(tc.args.file)
			if k != nil {
				t.Errorf("%s\nLoad returned a Katalog with errors", tc.reason)
			}
			if err == nil {
				t.Fatalf("%s\nLoad(%s): no error", tc.reason, tc.args.file)
			}
			compareReported(t, err, tc.want.errs)
		})
	}
}

// doc builds a Katalog file around one CRD entry body, indented as under spec.crds.app.
// The entry's first line is line 7.
func doc(entry string) string {
	return "apiVersion: orkestra.orkspace.io/v1\nkind: Katalog\nmetadata:\n  name: t\nspec:\n  crds:\n    app:\n" +
		"      apiTypes: {group: platform.io, version: v1, kind: App, plural: apps}\n" + entry
}

func TestParseErrors(t *testing.T) {
	type args struct{ data string }
	type want struct{ errs []reported }
	const file = "t.yaml"
	r := func(line int, path, sentinel, says string) reported {
		return reported{File: file, Line: line, Path: path, Sentinel: sentinel, Says: says}
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"Syntax": {
			reason: "Text that is not YAML is refused at the parser's line.",
			args:   args{"apiVersion: x\nkind: a: b\n"},
			want:   want{[]reported{r(2, "", "ErrSyntax", "invalid YAML: mapping values are not allowed")}},
		},
		"Empty": {
			reason: "An empty file holds no Katalog.",
			args:   args{""},
			want:   want{[]reported{r(0, "", "ErrSyntax", "no YAML document")}},
		},
		"TwoDocuments": {
			reason: "One Katalog per file: a second document is refused rather than ignored.",
			args:   args{doc("") + "---\napiVersion: orkestra.orkspace.io/v1\n"},
			want:   want{[]reported{r(9, "", "ErrSyntax", "more than one YAML document")}},
		},
		"NotAMapping": {
			reason: "The YAML document must be a mapping.",
			args:   args{"- a\n- b\n"},
			want:   want{[]reported{r(1, "", "ErrInvalidValue", "expected a mapping with apiVersion")}},
		},
		"Header": {
			reason: "apiVersion, kind and metadata.name are checked; an empty spec.crds is refused.",
			args:   args{"apiVersion: orkestra.orkspace.io/v2\nkind: Catalog\nmetadata: {}\nspec:\n  crds: {}\n"},
			want: want{[]reported{
				r(1, "apiVersion", "ErrInvalidValue", `"orkestra.orkspace.io/v2"`),
				r(2, "kind", "ErrInvalidValue", `"Catalog"`),
				r(3, "metadata.name", "ErrMissingField", "name"),
				r(5, "spec.crds", "ErrMissingField", "declares no CRD"),
			}},
		},
		"DuplicateKey": {
			reason: "A key given twice is refused at the second, naming the first line.",
			args:   args{doc("      workers: 2\n      workers: 3\n")},
			want:   want{[]reported{r(10, "spec.crds.app.workers", "ErrDuplicateKey", "already set on line 9")}},
		},
		"WrongTypes": {
			reason: "Values of the wrong YAML type are refused at their path.",
			args:   args{doc("      workers: ten\n      resync: 30\n      dependsOn: [a]\n      enabled: yes please\n")},
			want: want{[]reported{
				r(9, "spec.crds.app.workers", "ErrInvalidValue", `expected an integer, got the string "ten"`),
				r(10, "spec.crds.app.resync", "ErrInvalidValue", "expected a duration"),
				r(11, "spec.crds.app.dependsOn", "ErrInvalidValue", "expected a mapping, got a list"),
				r(12, "spec.crds.app.enabled", "ErrInvalidValue", "expected true or false"),
			}},
		},
		"BadValues": {
			reason: "Values outside what a field accepts are refused.",
			args: args{doc("      workers: -1\n      resync: 10 parsecs\n      allowedNamespaces: [team-a, Team_B]\n      restrictedNamespaces: [team-a]\n" +
				"      validation:\n        rules:\n          - {field: spec.image, operator: exists, action: block}\n")},
			want: want{[]reported{
				r(9, "spec.crds.app.workers", "ErrInvalidValue", "workers is at least 1"),
				r(10, "spec.crds.app.resync", "ErrInvalidValue", `"10 parsecs" is not a non-negative duration`),
				r(11, "spec.crds.app.allowedNamespaces[1]", "ErrInvalidValue", `namespace "Team_B"`),
				r(12, "spec.crds.app.restrictedNamespaces[0]", "ErrInvalidValue", "both allowed and restricted"),
				r(15, "spec.crds.app.validation.rules[0].action", "ErrInvalidValue", `"block"; the actions are deny and warn`),
			}},
		},
		"APITypes": {
			reason: "Every apiTypes field is required and well formed; the CRD name is a DNS label.",
			args: args{"apiVersion: orkestra.orkspace.io/v1\nkind: Katalog\nmetadata: {name: t}\nspec:\n  crds:\n    My_App:\n      apiTypes:\n" +
				"        group: Platform_IO\n        version: V1\n        kind: app\n"},
			want: want{[]reported{
				r(6, "spec.crds.My_App", "ErrInvalidValue", `CRD name "My_App"`),
				r(7, "spec.crds.My_App.apiTypes.plural", "ErrMissingField", "plural"),
				r(8, "spec.crds.My_App.apiTypes.group", "ErrInvalidValue", "not a DNS subdomain"),
				r(9, "spec.crds.My_App.apiTypes.version", "ErrInvalidValue", "not a version"),
				r(10, "spec.crds.My_App.apiTypes.kind", "ErrInvalidValue", "not a kind"),
			}},
		},
		"ProviderOutsideGroups": {
			reason: "Provider blocks are refused wherever they appear in a CRD entry, not only in a resource group.",
			args:   args{doc("      mongodb:\n        uri: x\n      operatorBox:\n        docker:\n          image: y\n")},
			want: want{[]reported{
				r(9, "spec.crds.app.mongodb", "ErrProviderBlock", `"mongodb"`),
				r(12, "spec.crds.app.operatorBox.docker", "ErrProviderBlock", `"docker"`),
			}},
		},
		"GoHooks": {
			reason: "operatorBox.default: false asks for Go hooks, which this engine cannot load.",
			args:   args{doc("      operatorBox:\n        default: false\n")},
			want:   want{[]reported{r(10, "spec.crds.app.operatorBox.default", "ErrInvalidValue", "Go hooks")}},
		},
		"ConditionForms": {
			reason: "A condition has one operator; exists takes true and no value; value needs operator; field is required.",
			args: args{doc("      operatorBox:\n        status:\n          fields:\n            - path: phase\n              value: Ready\n              when:\n" +
				"                - {field: a, equals: x, notEquals: y}\n" +
				"                - {field: b, exists: false}\n" +
				"                - {field: c, operator: notExists, value: z}\n" +
				"                - {field: d, equals: x, value: y}\n" +
				"                - {equals: x}\n")},
			want: want{[]reported{
				r(15, "spec.crds.app.operatorBox.status.fields[0].when[0].notEquals", "ErrUnknownOperator", "exactly one operator"),
				r(16, "spec.crds.app.operatorBox.status.fields[0].when[1].exists", "ErrInvalidValue", "exists takes true (use notExists for the opposite)"),
				r(17, "spec.crds.app.operatorBox.status.fields[0].when[2].value", "ErrInvalidValue", "notExists takes no value"),
				r(18, "spec.crds.app.operatorBox.status.fields[0].when[3].value", "ErrMissingField", "value needs operator"),
				r(19, "spec.crds.app.operatorBox.status.fields[0].when[4].field", "ErrMissingField", "field"),
			}},
		},
		"ConditionTemplates": {
			reason: "A condition's field and value are templates and are parsed.",
			args: args{doc("      operatorBox:\n        status:\n          fields:\n            - path: phase\n              value: Ready\n              anyOf:\n" +
				"                - field: \"{{ phase .cross.db\"\n                  equals: \"{{ nope }}\"\n")},
			want: want{[]reported{
				r(15, "spec.crds.app.operatorBox.status.fields[0].anyOf[0].field", "ErrTemplate", "unclosed action"),
				r(16, "spec.crds.app.operatorBox.status.fields[0].anyOf[0].equals", "ErrTemplate", `function "nope" not defined`),
			}},
		},
		"Dependencies": {
			reason: "A dependency waits for healthy or synced; a disabled CRD cannot be depended on or read.",
			args: args{doc("      dependsOn: {db: ready}\n      operatorBox:\n        cross:\n          - {crd: db, selector: {name: x}}\n" +
				"    db:\n      enabled: false\n      apiTypes: {group: platform.io, version: v1, kind: DB, plural: dbs}\n")},
			want: want{[]reported{
				r(9, "spec.crds.app.dependsOn.db", "ErrInvalidValue", `"ready"; a dependency waits until its CRD is healthy or synced`),
				r(9, "spec.crds.app.dependsOn.db", "ErrUnknownDependency", `CRD "db" is disabled`),
				r(12, "spec.crds.app.operatorBox.cross[0].crd", "ErrUnknownCrossRef", `CRD "db" is disabled`),
			}},
		},
		"DuplicateNames": {
			reason: "Cross aliases and external call names key template data, so they are unique.",
			args: args{doc("      operatorBox:\n        cross:\n          - {crd: app, selector: {name: a}}\n          - {crd: app, selector: {name: b}, as: app}\n" +
				"        onCreate:\n          external:\n            - {name: check, url: \"http://a\"}\n            - {name: check, url: \"http://b\", method: FETCH, expectedStatus: 42}\n")},
			want: want{[]reported{
				r(12, "spec.crds.app.operatorBox.cross[1]", "ErrDuplicateName", `cross alias "app" is also used by spec.crds.app.operatorBox.cross[0] (line 11)`),
				r(16, "spec.crds.app.operatorBox.onCreate.external[1].expectedStatus", "ErrInvalidValue", "42 is not an HTTP status code"),
				r(16, "spec.crds.app.operatorBox.onCreate.external[1].method", "ErrInvalidValue", `"FETCH"`),
				r(16, "spec.crds.app.operatorBox.onCreate.external[1].name", "ErrDuplicateName", `external call "check" is also declared at spec.crds.app.operatorBox.onCreate.external[0] (line 15)`),
			}},
		},
		"RequiredResourceFields": {
			reason: "Each kind's required fields are named; forEach needs a field and an alias that shadows no data key.",
			args: args{doc("      operatorBox:\n        onReconcile:\n          deployments:\n            - replicas: \"2\"\n          services:\n            - name: web\n              type: Headless\n" +
				"          cronJobs:\n            - name: backup\n              forEach: {as: spec}\n")},
			want: want{[]reported{
				r(12, "spec.crds.app.operatorBox.onReconcile.deployments[0].image", "ErrMissingField", "image"),
				r(12, "spec.crds.app.operatorBox.onReconcile.deployments[0].name", "ErrMissingField", "name"),
				r(14, "spec.crds.app.operatorBox.onReconcile.services[0].port", "ErrMissingField", "port"),
				r(15, "spec.crds.app.operatorBox.onReconcile.services[0].type", "ErrInvalidValue", `"Headless"`),
				r(17, "spec.crds.app.operatorBox.onReconcile.cronJobs[0].image", "ErrMissingField", "image"),
				r(17, "spec.crds.app.operatorBox.onReconcile.cronJobs[0].schedule", "ErrMissingField", "schedule"),
				r(18, "spec.crds.app.operatorBox.onReconcile.cronJobs[0].forEach.as", "ErrInvalidValue", `"spec" must be an identifier`),
				r(18, "spec.crds.app.operatorBox.onReconcile.cronJobs[0].forEach.field", "ErrMissingField", "field"),
			}},
		},
		"MutationAndStatus": {
			reason: "Mutation rules need a field and a default that parses; status fields need a path and a value.",
			args:   args{doc("      mutation:\n        rules:\n          - default: \"{{ .metadata.name\"\n      operatorBox:\n        status:\n          fields:\n            - when: []\n")},
			want: want{[]reported{
				r(11, "spec.crds.app.mutation.rules[0].default", "ErrTemplate", "unclosed action"),
				r(11, "spec.crds.app.mutation.rules[0].field", "ErrMissingField", "field"),
				r(15, "spec.crds.app.operatorBox.status.fields[0].path", "ErrMissingField", "path"),
				r(15, "spec.crds.app.operatorBox.status.fields[0].value", "ErrMissingField", "value"),
			}},
		},
		"MergeKeysAndAliases": {
			reason: "Aliases decode as their anchor; merge keys are refused rather than half-supported.",
			args: args{doc("      operatorBox:\n        onCreate:\n          configMaps:\n            - &base {name: a}\n            - <<: *base\n" +
				"          serviceAccounts:\n            - *base\n            - *base\n")},
			want: want{[]reported{
				r(13, "spec.crds.app.operatorBox.onCreate.configMaps[1].<<", "ErrUnknownField", "merge keys"),
				r(13, "spec.crds.app.operatorBox.onCreate.configMaps[1].name", "ErrMissingField", "name"),
				r(16, "spec.crds.app.operatorBox.onCreate.serviceAccounts[1].name", "ErrDuplicateResource", `ServiceAccount "a" is also declared at spec.crds.app.operatorBox.onCreate.serviceAccounts[0] (line 15)`),
			}},
		},
		"KeysNeedingQuotes": {
			reason: "Keys that are not plain names are quoted in the path.",
			args:   args{doc("      operatorBox:\n        onCreate:\n          configMaps:\n            - name: a\n              data:\n                \"tls.crt\": \"{{ x\"\n")},
			want:   want{[]reported{r(14, `spec.crds.app.operatorBox.onCreate.configMaps[0].data["tls.crt"]`, "ErrTemplate", "")}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			k, err := katalog.Parse(file, []byte(tc.args.data))
			if k != nil {
				t.Errorf("%s\nParse returned a Katalog with errors", tc.reason)
			}
			if err == nil {
				t.Fatalf("%s\nParse: no error", tc.reason)
			}
			compareReported(t, err, tc.want.errs)
		})
	}
}

// platform.yaml, the reference Application Katalog, declares an Application that depends on and reads a
// Database CRD declared elsewhere: alone it is refused for exactly those two references;
// loaded with the Katalog that declares database, it loads.
func TestPlatformKatalog(t *testing.T) {
	platform, database := filepath.Join("testdata", "platform.yaml"), filepath.Join("testdata", "database.yaml")
	_, err := katalog.Load(platform)
	compareReported(t, err, []reported{
		{platform, 16, "spec.crds.application.dependsOn.database", "ErrUnknownDependency", ""},
		{platform, 32, "spec.crds.application.operatorBox.cross[0].crd", "ErrUnknownCrossRef", ""},
	})

	kats, err := katalog.LoadAll(platform, database)
	if err != nil {
		t.Fatalf("LoadAll: %v", err)
	}
	if len(kats) != 2 || kats[0].File != platform || kats[1].File != database {
		t.Fatalf("LoadAll returned %d Katalogs, want platform then database", len(kats))
	}
	app := kats[0].Spec.CRDs["application"]
	type summary struct {
		Name, GVK, GVR    string
		Workers           int
		Resync            time.Duration
		DependsOn         map[string]katalog.DependencyCondition
		Validation        []string
		MutationDefault   any
		Cross             []string
		External          []string
		DeploymentName    string
		DeploymentImage   string
		When              []string
		SecretName        string
		SecretOnce        bool
		SecretData        map[string]string
		StatusPath        string
		StatusValue       string
		StatusWhen        []string
		Default, Unstruct bool
	}
	cond := func(cs []katalog.Condition) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.Field.Text+" "+string(c.Operator)+" "+c.Value.Text)
		}
		return out
	}
	box := app.OperatorBox
	d := box.OnCreate.Deployments[0]
	s := box.OnCreate.Secrets[0]
	e := box.OnCreate.External[0]
	got := summary{
		Name: app.Name, GVK: app.GroupVersionKind().String(), GVR: app.GroupVersionResource().String(),
		Workers: app.WorkerCount(), Resync: app.ResyncPeriod(), DependsOn: app.DependsOn,
		Validation:      []string{app.Validation.Rules[0].Field.Text + " " + string(app.Validation.Rules[0].Operator) + " " + string(app.Validation.Rules[0].Action)},
		MutationDefault: app.Mutation.Rules[0].Default,
		Cross:           []string{box.Cross[0].CRD + " " + box.Cross[0].Selector.Name.Text + " " + box.Cross[0].Alias()},
		External:        []string{e.Name, e.URL.Text, e.Method, strings.Repeat("x", e.ExpectedStatus/100), map[bool]string{true: "continue", false: "stop"}[e.ContinueOnError]},
		DeploymentName:  d.Name.Text, DeploymentImage: d.Image.Text, When: cond(d.When),
		SecretName: s.Name.Text, SecretOnce: s.Once, SecretData: map[string]string{"password": s.Data["password"].Text},
		StatusPath: box.Status.Fields[0].Path, StatusValue: box.Status.Fields[0].Value.Text, StatusWhen: cond(box.Status.Fields[0].When),
		Default: *box.Default, Unstruct: app.Unstructured,
	}
	want := summary{
		Name: "application", GVK: "platform.io/v1alpha1, Kind=Application", GVR: "platform.io/v1alpha1, Resource=applications",
		Workers: 10, Resync: 30 * time.Second, DependsOn: map[string]katalog.DependencyCondition{"database": katalog.DependencyHealthy},
		Validation:      []string{"spec.image exists deny"},
		MutationDefault: 2,
		Cross:           []string{"database {{ .metadata.name }} db"},
		External:        []string{"registry-check", "{{ .spec.registryUrl }}/v2/{{ .spec.image }}/manifests/latest", "", "xx", "stop"},
		DeploymentName:  "{{ .metadata.name }}", DeploymentImage: "{{ .spec.image }}",
		When:       []string{"external.registry-check.status equals 200", "{{ phase .cross.db }} equals Ready"},
		SecretName: "{{ .metadata.name }}-credentials", SecretOnce: true, SecretData: map[string]string{"password": "{{ randomAlphanumeric 32 }}"},
		StatusPath: "phase", StatusValue: "Ready", StatusWhen: []string{"children.deployment.status.readyReplicas greaterThan 0"},
		Default: true,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("application entry (-want +got):\n%s", diff)
	}
	if l := kats[0].Line("spec.crds.application.operatorBox.onCreate.secrets[0].once"); l != 52 {
		t.Errorf("Line(...secrets[0].once) = %d, want 52", l)
	}
	if l := kats[0].Line("spec.crds.nope"); l != 0 {
		t.Errorf("Line of an absent path = %d, want 0", l)
	}
	order := katalog.StartOrder(kats...)
	var names []string
	for _, c := range order {
		names = append(names, c.Name)
	}
	if diff := cmp.Diff([]string{"database", "application"}, names); diff != "" {
		t.Errorf("StartOrder (-want +got):\n%s", diff)
	}
}

// The forEach example: over a list .item is the element; over a map the
// alias is the key and .value its settings, with or falling back to the spec.
func TestForEachKatalog(t *testing.T) {
	k, err := katalog.Load(filepath.Join("testdata", "foreach.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	deps := k.Spec.CRDs["regionalapp"].OperatorBox.OnReconcile.Deployments
	if got := []string{deps[0].ForEach.Field, deps[0].ForEach.Alias(), deps[1].ForEach.Field, deps[1].ForEach.Alias()}; !cmp.Equal(got, []string{"spec.regions", "item", "spec.zones", "zone"}) {
		t.Errorf("forEach = %v", got)
	}
	if !k.Spec.CRDs["regionalapp"].Mutation.MutateFirst {
		t.Error("mutateFirst not decoded")
	}
	spec := map[string]any{"image": "nginx:latest", "defaultReplicas": 1, "defaultPort": 80}
	meta := map[string]any{"name": "my-app"}
	render := func(tmpl katalog.Template, data map[string]any) string {
		t.Helper()
		out, err := tmpl.Execute(data)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	list := map[string]any{"metadata": meta, "spec": spec, "item": "us-east-1"}
	if got := render(deps[0].Name, list) + " " + render(deps[0].Replicas, list); got != "my-app-us-east-1 1" {
		t.Errorf("list element renders %q", got)
	}
	withValue := map[string]any{"metadata": meta, "spec": spec, "zone": "eu-west-1", "value": map[string]any{"replicas": 3}}
	if got := render(deps[1].Name, withValue) + " " + render(deps[1].Replicas, withValue) + " " + render(deps[1].Port, withValue); got != "my-app-eu-west-1 3 80" {
		t.Errorf("map element renders %q", got)
	}
}

func TestLoadAll(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write("a.yaml", doc("      dependsOn: {other: healthy}\n"))
	b := write("b.yaml", doc(""))
	c := write("c.yaml", "apiVersion: orkestra.orkspace.io/v1\nkind: Katalog\nmetadata: {name: c}\nspec:\n  crds:\n    other:\n"+
		"      apiTypes: {group: platform.io, version: v1, kind: App, plural: apps}\n      dependsOn: {app: synced}\n")
	_, err := katalog.LoadAll(a, b, c, filepath.Join(dir, "missing.yaml"))
	compareReported(t, err, []reported{
		{a, 9, "spec.crds.app.dependsOn.other", "ErrDependencyCycle", "app -> other -> app"},
		{b, 7, "spec.crds.app", "ErrDuplicateCRD", `CRD "app" is also declared in ` + a + ":7"},
		{c, 7, "spec.crds.other.apiTypes", "ErrDuplicateCRD", `App.platform.io/v1 is also operated by CRD "app" (` + a + ":7)"},
		{filepath.Join(dir, "missing.yaml"), 0, "", "ErrRead", ""},
	})
	kats, err := katalog.LoadAll(a, write("d.yaml", "apiVersion: orkestra.orkspace.io/v1\nkind: Katalog\nmetadata: {name: d}\nspec:\n  crds:\n    other:\n"+
		"      apiTypes: {group: platform.io, version: v1, kind: Other, plural: others}\n"))
	if err != nil {
		t.Fatalf("LoadAll across files: %v", err)
	}
	if got := []string{katalog.StartOrder(kats...)[0].Name, kats[0].StartOrder()[0].Name}; !cmp.Equal(got, []string{"other", "app"}) {
		t.Errorf("start order across files = %v, want other first; within a.yaml alone app", got)
	}
}

func TestCRDDefaults(t *testing.T) {
	k, err := katalog.Parse("t.yaml", []byte(doc("")))
	if err != nil {
		t.Fatal(err)
	}
	app := k.Spec.CRDs["app"]
	if app.WorkerCount() != katalog.DefaultWorkers || app.ResyncPeriod() != katalog.DefaultResync || !app.IsEnabled() {
		t.Errorf("defaults: workers %d resync %s enabled %v", app.WorkerCount(), app.ResyncPeriod(), app.IsEnabled())
	}
	if k.File != "t.yaml" || !cmp.Equal(k.CRDNames(), []string{"app"}) {
		t.Errorf("File %q, CRDNames %v", k.File, k.CRDNames())
	}
}

func TestLoadErrorFormat(t *testing.T) {
	cases := map[string]struct {
		reason string
		err    *katalog.LoadError
		want   string
	}{
		"Full":   {"File, line, path and cause.", &katalog.LoadError{File: "a.yaml", Line: 3, Path: "spec.crds", Err: katalog.ErrMissingField}, "a.yaml:3: spec.crds: missing required field"},
		"NoLine": {"An unreadable file has no line or path.", &katalog.LoadError{File: "a.yaml", Err: katalog.ErrRead}, "a.yaml: cannot read Katalog"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := tc.err.Error(); got != tc.want {
				t.Errorf("%s\nError() = %q, want %q", tc.reason, got, tc.want)
			}
			if !errors.Is(tc.err, tc.err.Err) {
				t.Errorf("%s\nerrors.Is does not reach the cause", tc.reason)
			}
		})
	}
	if got := katalog.LoadErrors(nil); got != nil {
		t.Errorf("LoadErrors(nil) = %v", got)
	}
}

// Two declarations with the same static name are one object unless their when conditions
// exclude each other; only literal conditions on the same field are judged.
func TestDuplicateResourceConditions(t *testing.T) {
	type args struct{ a, b string }
	cases := map[string]struct {
		reason    string
		args      args
		duplicate bool
	}{
		"DifferentEquals":     {"equals two different values: exclusive.", args{"{field: spec.env, equals: prod}", "{field: spec.env, equals: dev}"}, false},
		"EqualsAndNotEquals":  {"equals x and notEquals x: exclusive.", args{"{field: spec.env, equals: prod}", "{field: spec.env, notEquals: prod}"}, false},
		"ExistsAndNotExists":  {"exists and notExists: exclusive.", args{"{field: spec.tls, exists: true}", "{field: spec.tls, notExists: true}"}, false},
		"EqualsAndNotExists":  {"equals a non-empty value and notExists: exclusive.", args{"{field: spec.env, equals: prod}", "{field: spec.env, notExists: true}"}, false},
		"SameEquals":          {"The same condition twice: both exist together.", args{"{field: spec.env, equals: prod}", "{field: spec.env, equals: prod}"}, true},
		"DifferentFields":     {"Conditions on different fields can both hold.", args{"{field: spec.env, equals: prod}", "{field: spec.tier, equals: dev}"}, true},
		"TemplatedValue":      {"A templated value is not judged.", args{"{field: spec.env, equals: \"{{ .spec.a }}\"}", "{field: spec.env, equals: dev}"}, true},
		"GreaterAndLessThan":  {"Numeric ranges are not judged.", args{"{field: spec.n, greaterThan: \"5\"}", "{field: spec.n, lessThan: \"3\"}"}, true},
		"NotEqualsNotEquals":  {"notEquals twice can both hold.", args{"{field: spec.env, notEquals: a}", "{field: spec.env, notEquals: b}"}, true},
		"EmptyEqualsNotExist": {"equals \"\" and notExists can both hold.", args{"{field: spec.env, equals: \"\"}", "{field: spec.env, notExists: true}"}, true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := katalog.Parse("t.yaml", []byte(doc("      operatorBox:\n        onReconcile:\n          jobs:\n"+
				"            - {name: migrate, image: x, when: ["+tc.args.a+"]}\n"+
				"            - {name: migrate, image: x, when: ["+tc.args.b+"]}\n")))
			if got := errors.Is(err, katalog.ErrDuplicateResource); got != tc.duplicate {
				t.Errorf("%s\nduplicate = %v, want %v (error: %v)", tc.reason, got, tc.duplicate, err)
			}
			if err != nil && !tc.duplicate {
				t.Errorf("%s\nunexpected error: %v", tc.reason, err)
			}
		})
	}
}

func TestDecodeEdges(t *testing.T) {
	_, err := katalog.Parse("t.yaml", []byte(doc("      operatorBox:\n        onCreate:\n          external:\n"+
		"            - {name: a, url: \"http://x\", timeout: 5s, headers: {[x]: y}}\n"+
		"          configMaps: {name: x}\n")))
	compareReported(t, err, []reported{
		{"t.yaml", 12, "spec.crds.app.operatorBox.onCreate.external[0].headers", "ErrInvalidValue", "a mapping key must be a string, got a list"},
		{"t.yaml", 13, "spec.crds.app.operatorBox.onCreate.configMaps", "ErrInvalidValue", "expected a list, got a mapping"},
	})
	k, err := katalog.Parse("t.yaml", []byte(doc("      operatorBox:\n        onCreate:\n          external:\n            - {name: a, url: \"http://x\", timeout: 1m30s}\n")))
	if err != nil {
		t.Fatal(err)
	}
	if got := k.Spec.CRDs["app"].OperatorBox.OnCreate.External[0].Timeout.String(); got != "1m30s" {
		t.Errorf("timeout = %s", got)
	}
}

// A set built in Go is not checked: StartOrder still returns every enabled entry, those on
// a cycle last, and leaves disabled entries out.
func TestStartOrderUnchecked(t *testing.T) {
	off := false
	k := &katalog.Katalog{Spec: katalog.Spec{CRDs: map[string]*katalog.CRD{
		"a":   {Name: "a", DependsOn: map[string]katalog.DependencyCondition{"b": katalog.DependencyHealthy}},
		"b":   {Name: "b", DependsOn: map[string]katalog.DependencyCondition{"a": katalog.DependencyHealthy}},
		"c":   {Name: "c", DependsOn: map[string]katalog.DependencyCondition{"gone": katalog.DependencyHealthy}},
		"off": {Name: "off", Enabled: &off},
	}}}
	var names []string
	for _, c := range k.StartOrder() {
		names = append(names, c.Name)
	}
	if diff := cmp.Diff([]string{"c", "a", "b"}, names); diff != "" {
		t.Errorf("StartOrder (-want +got):\n%s", diff)
	}
}
