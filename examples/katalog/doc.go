// Package katalogexamples holds example Katalogs that run without Go code, with the
// CRDs of their kinds and sample custom resources:
//
//	platform.yaml      Applications: validation, a mutation default, a cross reference,
//	                   an external call to a registry fixed in the Katalog (RegistryHost),
//	                   a once Secret, a Deployment whose creation waits for both (kept
//	                   once created) and the Database's phase in the Application's status
//	database.yaml      Databases: a Secret, a Service and a Deployment, status fields
//	foreach.yaml       RegionalApps: one Deployment per list element and per map key
//	crds/              the CustomResourceDefinitions of Application, Database, RegionalApp
//	samples/           one custom resource of each kind
//
// Run them with cmd/katalog against a cluster, or with `make katalog-demo` on a local
// control plane (hack/katalog-demo). Dir finds the files in the checkout, Load loads
// the Katalogs together, CRDs and Samples decode the manifests, and StandInClient lets a
// local server play the registry of platform.yaml.
package katalogexamples
