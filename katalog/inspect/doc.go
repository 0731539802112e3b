// Package inspect serves what a Katalog engine is doing: a JSON API for tools and
// probes, and the Control Center, a set of HTML pages for people.
//
// Custom resources and their children are read from the manager's cache (the same
// informers the engine reconciles from), so looking at them sends no request to the API
// server; only a custom resource's events are listed through Options.Events, with a
// field selector on involvedObject.uid, served from the API server's watch cache
// (resourceVersion "0"). Health comes from the engine through HealthSource.
//
//	mux := http.NewServeMux()
//	h, err := inspect.New(inspect.Options{
//		Reader:     mgr.GetCache(), // not mgr.GetClient(): it reads unstructured objects past the cache
//		Events:     mgr.GetAPIReader(),
//		CRDs:       katalog.StartOrder(kats...),
//		Health:     engine,
//		ChildKinds: inspect.DefaultChildKinds(),
//	})
//	...
//	mux.Handle("/katalog/", h)
//	mux.Handle("/controlcenter/", h)
//
// # Routes
//
// Every route answers GET and HEAD; any other method gets 405 with an Allow header.
// JSON errors are an ErrorBody naming the CRD or the custom resource; HTML errors are
// a page saying the same.
//
//	route                                      answer
//	GET /katalog/{crd}/health                  HealthReport; 200 when Healthy, 503 otherwise
//	GET /katalog/{crd}                         CRDInfo: name, API types, workers, resync, dependsOn, health
//	GET /katalog/{crd}/cr                      CRList: namespace, name, Ready status and reason,
//	                                           phase, generation, observedGeneration, age
//	GET /katalog/{crd}/cr/{ns}/{name}          CRDetail: status fields, conditions, children with
//	                                           readiness, recent events
//	GET /controlcenter/                        page: every CRD with its health and number of custom resources
//	GET /controlcenter/katalog/{crd}           page: the CRD and its custom resources
//	GET /controlcenter/katalog/{crd}/cr/{ns}/{name}
//	                                           page: status fields, conditions, child resource cards,
//	                                           recent events
//
// An unknown CRD or custom resource is 404; a read that fails otherwise is 500 with the
// cause. In a custom resource's detail, a child kind that cannot be read and an event
// list that fails are reported next to what could be read instead of failing the page.
//
// # Children
//
// The children of a custom resource are the objects of Options.ChildKinds in its
// namespace whose controller owner reference (controller: true) carries its UID, the
// way the engine creates them. Kinds client-go knows are read as their Go types, so
// the cache serves them from the engine's own informers; other kinds are read
// unstructured. Readiness: a Deployment is ready when its available replicas reach
// spec.replicas (default 1), a Job when it has succeeded spec.completions times
// (default 1) and has not failed; any other child is ready because it exists. A
// Secret's data never reaches an answer.
//
// # Pages
//
// The pages are rendered with html/template, so every value taken from the cluster is
// escaped (a status message holding <script> shows as text). They use no JavaScript,
// carry their stylesheet inline, link to each other (CRD list, a CRD's custom
// resources, one custom resource), fit both a 1280-pixel window and a phone's width
// (wide tables scroll sideways), and reload themselves every Options.Refresh through
// <meta http-equiv="refresh">. docs/katalog-inspector.png shows the detail page of a
// custom resource at 1280 pixels; the package's browser test renders it in headless
// Chromium and rewrites it when run with -update-screenshot.
package inspect
