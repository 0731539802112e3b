package testenv

import (
	"net/http"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// RequestCounter counts the HTTP requests a client sends to the API server, by method.
// Use it to assert "no write" and to report API requests per operation in benchmarks.
type RequestCounter struct {
	mu       sync.Mutex
	byMethod map[string]int
}

// Total returns the number of requests sent since the last Reset.
func (r *RequestCounter) Total() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.byMethod {
		n += c
	}
	return n
}

// Method returns the number of requests with the HTTP method m (GET, POST, PUT, PATCH,
// DELETE) sent since the last Reset.
func (r *RequestCounter) Method(m string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.byMethod[m]
}

// Writes returns the number of POST, PUT, PATCH and DELETE requests since the last Reset.
func (r *RequestCounter) Writes() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.byMethod[http.MethodPost] + r.byMethod[http.MethodPut] +
		r.byMethod[http.MethodPatch] + r.byMethod[http.MethodDelete]
}

// Reset sets all counts to zero.
func (r *RequestCounter) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.byMethod = nil
}

func (r *RequestCounter) add(method string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byMethod == nil {
		r.byMethod = map[string]int{}
	}
	r.byMethod[method]++
}

type countingTransport struct {
	next    http.RoundTripper
	counter *RequestCounter
}

func (t *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.counter.add(req.Method)
	return t.next.RoundTrip(req)
}

// CountingClient returns a new uncached client for cfg with scheme whose requests are
// counted. The counter includes discovery requests the client's REST mapper makes the
// first time it meets a kind; call Reset after a warm-up to count only steady state.
// The client carries no Applier (the SDK's defaults); to count what an Applier sends,
// build one over it with apply.NewApplier (a faults.Injector around that keeps it).
func CountingClient(cfg *rest.Config, scheme *runtime.Scheme) (client.Client, *RequestCounter, error) {
	counter := &RequestCounter{}
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return &countingTransport{next: rt, counter: counter}
	})
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, nil, err
	}
	return c, counter, nil
}

// CountingClient is [CountingClient] for this environment's config and scheme.
func (e *Env) CountingClient() (client.Client, *RequestCounter, error) {
	return CountingClient(e.Config, e.Scheme)
}

// Wrap returns rt with every request counted by r: set it as a rest.Config's
// WrapTransport to count what a manager, a cache or any client built from that config
// sends.
func (r *RequestCounter) Wrap(rt http.RoundTripper) http.RoundTripper {
	return &countingTransport{next: rt, counter: r}
}
