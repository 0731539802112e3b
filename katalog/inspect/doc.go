// Package inspect serves what a Katalog engine is doing: a JSON API for tools and
// probes, and the Control Center, a set of HTML pages for people.
//
// Custom resources, their children and their events are read from the manager's cache
// (the same informers the engine reconciles from), so looking at them sends no request
// to the API server: a custom resource's events through the field index EventUIDIndex
// (involvedObject.uid) that IndexEvents registers, on a cache that holds Events
// (CacheOptions keeps them without managed fields). Health comes from the engine
// through HealthSource.
//
//	// the manager: ctrl.Options{Cache: inspect.CacheOptions(cacheOpts), ...}
//	if err := inspect.IndexEvents(ctx, mgr.GetFieldIndexer()); err != nil { ... }
//	h, err := inspect.New(inspect.Options{
//		Reader:     mgr.GetCache(), // not mgr.GetClient(): it reads unstructured objects past the cache
//		CRDs:       katalog.StartOrder(kats...),
//		Health:     inspect.EngineHealth(engine),
//		ChildKinds: inspect.DefaultChildKinds(),
//	})
//	...
//	srv, err := inspect.NewServer(h, inspect.ServerOptions{
//		BindAddress: inspect.DefaultBindAddress, // 127.0.0.1:8080
//		Config:      mgr.GetConfig(),            // reviews clients' tokens beyond the loopback interface
//		HTTPClient:  mgr.GetHTTPClient(),
//	})
//	...
//	err = mgr.Add(srv)
//
// # Listening
//
// NewServer listens on DefaultBindAddress, 127.0.0.1:8080, unless told otherwise:
// reachable from inside the pod only (kubectl port-forward reaches it), where it
// answers plain HTTP without authentication. Bound to any other address (":8080" is
// every interface) it serves HTTPS (the tls.crt and tls.key of ServerOptions.CertDir,
// or a self-signed certificate) and lets in only a client with a bearer token that
// the API server authenticates (a TokenReview) and whose user may get the path it
// asks for (a SubjectAccessReview of the non-resource URL: path = the request's path,
// verb = get for GET and HEAD), see package httpauth. A viewer needs a ClusterRole
// such as
//
//	rules:
//	- nonResourceURLs: ["/", "/katalog/*", "/controlcenter/*"]
//	  verbs: ["get"]
//
// (only "/katalog/*" for the JSON API, or "/katalog/*/health" for a probe), and the
// operator needs create on tokenreviews.authentication.k8s.io and
// subjectaccessreviews.authorization.k8s.io (katalog.ClusterRole grants both). The
// server bounds every connection: ServerReadHeaderTimeout, ServerReadTimeout,
// ServerWriteTimeout, ServerIdleTimeout and ServerMaxHeaderBytes.
//
// Every answer carries X-Frame-Options: DENY, the Content-Security-Policy
// ContentSecurityPolicy (nothing but the inline stylesheet loads, no frame, no form),
// X-Content-Type-Options: nosniff, Referrer-Policy: no-referrer and Cache-Control:
// no-store.
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
//	                                           phase, generation, observedGeneration, age;
//	                                           one page (?limit, ?continue)
//	GET /katalog/{crd}/cr/{ns}/{name}          CRDetail: status fields, conditions, children with
//	                                           readiness, recent events
//	GET /controlcenter/                        page: every CRD with its health and number of custom resources
//	GET /controlcenter/katalog/{crd}           page: the CRD and one page of its custom resources
//	GET /controlcenter/katalog/{crd}/cr/{ns}/{name}
//	                                           page: status fields, conditions, child resource cards,
//	                                           recent events
//
// The lists of custom resources are paged: ?limit=N (1 to MaxPageSize, DefaultPageSize
// without it) custom resources, sorted by namespace and name, after those of the page
// whose CRList.Continue token ?continue gives; the last page has no Continue. The page
// of a CRD links to the next page and back to the first. A limit or token that is not
// one of these is 400 naming the parameter.
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
