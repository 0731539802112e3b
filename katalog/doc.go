// Package katalog reads Katalogs: YAML files that declare a whole operator (which custom
// resources it watches, how they are validated and defaulted, which Deployments, Services,
// Secrets, ConfigMaps, ServiceAccounts, Jobs and CronJobs it creates for each of them,
// and how it writes their status) without Go code.
//
// This package is the model and the loader: Load, Parse and LoadAll decode a Katalog into
// the Go types of this package and check it completely before anything runs, so that a
// Katalog that loads can be run without surprises, and one that does not is refused
// with every problem listed.
//
// # The format in brief
//
//	apiVersion: orkestra.orkspace.io/v1
//	kind: Katalog
//	metadata:
//	  name: platform
//	spec:
//	  crds:
//	    application:                 # the CRD's short name: a DNS label
//	      apiTypes: {group: platform.io, version: v1alpha1, kind: Application, plural: applications}
//	      workers: 10                # concurrent reconciles (default 1)
//	      resync: 30s                # periodic re-reconcile (default 15s)
//	      dependsOn:
//	        database: healthy        # start after database is healthy (or synced)
//	      validation:
//	        rules:
//	          - {field: spec.image, operator: exists, action: deny}
//	      mutation:
//	        rules:
//	          - {field: spec.replicas, default: 2}
//	      operatorBox:
//	        cross:                   # read another CRD's custom resource: .cross.db
//	          - {crd: database, selector: {name: "{{ .metadata.name }}"}, as: db}
//	        onCreate:                # created once; onReconcile: kept as declared
//	          external:              # HTTP calls, results in .external.<name>
//	            - {name: registry-check, url: "...", expectedStatus: 200}
//	          deployments:
//	            - name: "{{ .metadata.name }}"
//	              image: "{{ .spec.image }}"
//	              when:              # all must hold; anyOf: at least one
//	                - {field: "{{ phase .cross.db }}", equals: Ready}
//	          secrets:
//	            - name: "{{ .metadata.name }}-credentials"
//	              once: true         # generated values are never regenerated
//	              data: {password: "{{ randomAlphanumeric 32 }}"}
//	        status:
//	          fields:                # later entries win: declare terminal states last
//	            - path: phase
//	              value: Ready
//	              when:
//	                - {field: children.deployment.status.readyReplicas, greaterThan: "0"}
//
// Strings that name or configure objects are Go text/template templates (type Template)
// with the functions of FuncMap; they render against the data of one reconcile:
// .metadata, .spec and .status of the custom resource, .cross, .external, .children and,
// under forEach, the current element. Conditions (type Condition) test a dot path or a
// template's output with one of Operators, written as a key (equals: "200") or as
// operator: with value:.
//
// # What is checked at load time
//
// Decoding is strict. Each problem is a *LoadError naming the file, the line and the YAML
// path (for example app.yaml:14: spec.crds.application.operatorBox.onCreate.deployments[0].foo:
// unknown field "foo"), wrapping a sentinel for errors.Is; all problems are returned
// together, joined with errors.Join in line order (LoadErrors splits them again):
//
//   - a field the format does not define (ErrUnknownField), a key given twice
//     (ErrDuplicateKey), a value of the wrong type or outside its allowed values
//     (ErrInvalidValue), a required field left out (ErrMissingField);
//   - a template that does not parse or calls an undefined function (ErrTemplate);
//   - a condition whose operator is not one of Operators, or that has none or two
//     (ErrUnknownOperator);
//   - dependsOn edges that form a cycle, named in full such as a -> b -> a
//     (ErrDependencyCycle), and dependsOn targets that are not in the Katalog
//     (ErrUnknownDependency);
//   - cross references to CRDs that are not in the Katalog (ErrUnknownCrossRef);
//   - two declarations of one kind whose names are equal for every custom resource:
//     names that are literal or use only {{ .metadata.name }}, in onCreate and
//     onReconcile together, unless their when conditions exclude each other
//     (ErrDuplicateResource); duplicate cross aliases and external call names
//     (ErrDuplicateName);
//   - across files given to LoadAll, a CRD name or API type declared twice
//     (ErrDuplicateCRD).
//
// # What is refused and why
//
// The provider blocks aws, mongodb, git and docker (ProviderBlocks) call services outside
// the cluster. This engine reconciles Kubernetes objects only, so a Katalog that uses one
// is refused with ErrProviderBlock naming the block, rather than run with that part of
// its behaviour silently missing. operatorBox.default: false, which selects Go hooks
// compiled into another engine's binary, is refused for the same reason. Every field of
// this package's types is accepted as written, so a Katalog written for the original
// engine that keeps to them and uses no provider block loads here unchanged.
package katalog
