package httpauth

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authenticationclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// How long the answers of the API server are reused, the way controller-runtime's
// metrics filter (and the kubelet) reuse them.
const (
	// AuthenticatedTTL is how long a token the API server authenticated stays
	// authenticated without another TokenReview.
	AuthenticatedTTL = time.Minute
	// AllowedTTL is how long an allowed SubjectAccessReview is reused.
	AllowedTTL = 5 * time.Minute
	// DeniedTTL is how long a rejected token or a denied SubjectAccessReview is reused.
	DeniedTTL = 30 * time.Second
	// ReviewTimeout bounds one TokenReview or SubjectAccessReview.
	ReviewTimeout = 10 * time.Second
	// MaxCacheEntries bounds each of the two caches of answers.
	MaxCacheEntries = 4096
	// MaxTokenBytes is the longest bearer token sent for review; a longer one is
	// rejected with 401 without asking the API server.
	MaxTokenBytes = 16 << 10
)

// ErrInvalidOptions is wrapped by the error New returns for a nil rest config.
var ErrInvalidOptions = errors.New("invalid httpauth options")

// Guard authenticates every request with a TokenReview of its bearer token and
// authorizes it with a SubjectAccessReview of its non-resource attributes (the URL
// path and [Verb]), both sent to the API server. It is safe for concurrent use.
type Guard struct {
	tokens  authenticationclient.TokenReviewInterface
	reviews authorizationclient.SubjectAccessReviewInterface
	log     logr.Logger
	now     func() time.Time

	mu      sync.Mutex
	authned map[[sha256.Size]byte]entry[*authenticationv1.UserInfo]
	authzed map[string]entry[bool]
}

// entry is a cached answer and when it expires.
type entry[T any] struct {
	value   T
	expires time.Time
}

// New returns a Guard that reviews tokens and access through cfg (the operator's own
// identity, which needs create on tokenreviews.authentication.k8s.io and
// subjectaccessreviews.authorization.k8s.io); httpClient may be nil (one is built
// from cfg) or the manager's, mgr.GetHTTPClient(). log receives the review errors.
func New(cfg *rest.Config, httpClient *http.Client, log logr.Logger) (*Guard, error) {
	if cfg == nil {
		return nil, fmt.Errorf("%w: the rest config is nil", ErrInvalidOptions)
	}
	if httpClient == nil {
		var err error
		if httpClient, err = rest.HTTPClientFor(cfg); err != nil {
			return nil, fmt.Errorf("httpauth: HTTP client for the API server: %w", err)
		}
	}
	authn, err := authenticationclient.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("httpauth: TokenReview client: %w", err)
	}
	authz, err := authorizationclient.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("httpauth: SubjectAccessReview client: %w", err)
	}
	return &Guard{
		tokens:  authn.TokenReviews(),
		reviews: authz.SubjectAccessReviews(),
		log:     log,
		now:     time.Now,
		authned: map[[sha256.Size]byte]entry[*authenticationv1.UserInfo]{},
		authzed: map[string]entry[bool]{},
	}, nil
}

// Verb is the SubjectAccessReview verb of a request: "get" for GET and HEAD (a HEAD
// shows no more than a GET), the method in lower case otherwise.
func Verb(r *http.Request) string {
	if r.Method == http.MethodHead {
		return "get"
	}
	return strings.ToLower(r.Method)
}

// Handler returns h behind the guard. A request without a bearer token, or whose token
// the API server does not authenticate, gets 401 with WWW-Authenticate: Bearer; one
// whose user may not use the verb on the path (nonResourceURLs in an RBAC rule) gets
// 403 naming the user, the verb and the path; a review that fails gets 500 without
// its cause, which is logged. Only an allowed request reaches h.
func (g *Guard) Handler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, ok := bearer(r)
		if !ok {
			unauthorized(w)
			return
		}
		user, err := g.authenticate(r.Context(), token)
		if err != nil {
			g.log.Error(err, "authenticating a request", "path", r.URL.Path)
			http.Error(w, "authentication failed", http.StatusInternalServerError)
			return
		}
		if user == nil {
			unauthorized(w)
			return
		}
		verb := Verb(r)
		allowed, err := g.authorize(r.Context(), user, verb, r.URL.Path)
		if err != nil {
			g.log.Error(err, "authorizing a request", "user", user.Username, "verb", verb, "path", r.URL.Path)
			http.Error(w, "authorization failed", http.StatusInternalServerError)
			return
		}
		if !allowed {
			http.Error(w, fmt.Sprintf("user %q may not %s %s", user.Username, verb, r.URL.Path), http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// FilterProvider is a controller-runtime metrics FilterProvider
// (metricsserver.Options.FilterProvider) that puts /metrics, and every extra handler of
// the metrics server, behind a [Guard]: a scraper needs a bearer token whose user may
// get the path, as the RBAC rule nonResourceURLs ["/metrics"], verbs ["get"] allows.
func FilterProvider(cfg *rest.Config, httpClient *http.Client) (metricsserver.Filter, error) {
	return func(log logr.Logger, h http.Handler) (http.Handler, error) {
		g, err := New(cfg, httpClient, log)
		if err != nil {
			return nil, err
		}
		return g.Handler(h), nil
	}, nil
}

// unauthorized answers 401 asking for a bearer token.
func unauthorized(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="kubernetes"`)
	http.Error(w, "unauthorized: send a Kubernetes bearer token", http.StatusUnauthorized)
}

// bearer returns the request's bearer token, false when it has none or one that is
// too long.
func bearer(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	if token == "" || len(token) > MaxTokenBytes {
		return "", false
	}
	return token, true
}

// authenticate returns the user the token belongs to, nil when the API server does
// not authenticate it.
func (g *Guard) authenticate(ctx context.Context, token string) (*authenticationv1.UserInfo, error) {
	key := sha256.Sum256([]byte(token))
	now := g.now()
	g.mu.Lock()
	e, ok := g.authned[key]
	g.mu.Unlock()
	if ok && now.Before(e.expires) {
		return e.value, nil
	}
	ctx, cancel := context.WithTimeout(ctx, ReviewTimeout)
	defer cancel()
	review, err := g.tokens.Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("TokenReview: %w", err)
	}
	var user *authenticationv1.UserInfo
	ttl := DeniedTTL
	if review.Status.Authenticated {
		user, ttl = &review.Status.User, AuthenticatedTTL
	}
	g.mu.Lock()
	put(g.authned, key, entry[*authenticationv1.UserInfo]{value: user, expires: now.Add(ttl)}, now)
	g.mu.Unlock()
	return user, nil
}

// authorize reports whether user may use verb on the non-resource path.
func (g *Guard) authorize(ctx context.Context, user *authenticationv1.UserInfo, verb, path string) (bool, error) {
	key := strings.Join([]string{user.Username, user.UID, strings.Join(user.Groups, ","), fmt.Sprint(user.Extra), verb, path}, "\x00")
	now := g.now()
	g.mu.Lock()
	e, ok := g.authzed[key]
	g.mu.Unlock()
	if ok && now.Before(e.expires) {
		return e.value, nil
	}
	extra := make(map[string]authorizationv1.ExtraValue, len(user.Extra))
	for k, v := range user.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	ctx, cancel := context.WithTimeout(ctx, ReviewTimeout)
	defer cancel()
	review, err := g.reviews.Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user.Username, UID: user.UID, Groups: user.Groups, Extra: extra,
		NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: path, Verb: verb},
	}}, metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("SubjectAccessReview: %w", err)
	}
	allowed := review.Status.Allowed && !review.Status.Denied
	ttl := DeniedTTL
	if allowed {
		ttl = AllowedTTL
	}
	g.mu.Lock()
	put(g.authzed, key, entry[bool]{value: allowed, expires: now.Add(ttl)}, now)
	g.mu.Unlock()
	return allowed, nil
}

// put stores e under key, first dropping the expired entries when the cache is full
// and, when none had expired, every entry: the cache never holds more than
// MaxCacheEntries.
func put[K comparable, V any](m map[K]entry[V], key K, e entry[V], now time.Time) {
	if _, ok := m[key]; !ok && len(m) >= MaxCacheEntries {
		for k, old := range m {
			if !now.Before(old.expires) {
				delete(m, k)
			}
		}
		if len(m) >= MaxCacheEntries {
			clear(m)
		}
	}
	m[key] = e
}
