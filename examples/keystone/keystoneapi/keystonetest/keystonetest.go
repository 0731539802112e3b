package keystonetest

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
)

// The account the stand-in accepts, as keystone-manage bootstrap creates it.
const (
	// DefaultDomain is the domain of the admin user and project.
	DefaultDomain = "Default"
	// AdminProject is the project the admin token is scoped to.
	AdminProject = "admin"
)

// Domain is a domain of the stand-in's table.
type Domain struct {
	// ID is the domain's ID, generated on creation.
	ID string `json:"id"`
	// Name is the domain's unique name.
	Name string `json:"name"`
	// Description of the domain.
	Description string `json:"description"`
	// Enabled reports whether the domain is enabled.
	Enabled bool `json:"enabled"`
}

// Server is the running stand-in. Its methods are safe for concurrent use with the
// requests it serves.
type Server struct {
	// Server is the HTTP server; URL is the Keystone endpoint to give a client.
	*httptest.Server

	mu            sync.Mutex
	adminUser     string
	adminPassword string
	tokens        map[string]bool
	domains       []Domain
	unavailable   bool
	createStatus  int
	calls         map[string]int
	fed           federation
}

// New starts a stand-in that accepts adminUser with adminPassword, holding the domain
// "Default" only, on a loopback address over plain HTTP. Close it when done
// (t.Cleanup(s.Close)). A client reaches it only with loopback allowed
// (outbound.LoopbackPrefixes).
func New(adminUser, adminPassword string) *Server {
	s := newServer(adminUser, adminPassword)
	s.Server = httptest.NewServer(s.handler())
	return s
}

// NewTLS is New over HTTPS, with httptest's self-signed certificate: a client verifies
// it with the transport of s.Client() (s.Client().Transport.(*http.Transport)).
func NewTLS(adminUser, adminPassword string) *Server {
	s := newServer(adminUser, adminPassword)
	s.Server = httptest.NewTLSServer(s.handler())
	return s
}

func newServer(adminUser, adminPassword string) *Server {
	return &Server{adminUser: adminUser, adminPassword: adminPassword, tokens: map[string]bool{},
		calls: map[string]int{}, fed: newFederation(), domains: []Domain{{ID: "default", Name: DefaultDomain, Enabled: true}}}
}

// handler serves the domain and OS-FEDERATION calls and counts every request.
func (s *Server) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v3/auth/tokens", s.authenticate)
	mux.HandleFunc("GET /v3/domains", s.listDomains)
	mux.HandleFunc("POST /v3/domains", s.createDomain)
	s.routeFederation(mux)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.calls[r.Method+" "+r.URL.Path]++
		down := s.unavailable
		s.mu.Unlock()
		if down {
			writeError(w, http.StatusServiceUnavailable, "Service Unavailable", "the stand-in is switched off")
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// SetAdminPassword changes the password the stand-in accepts and revokes every token
// it issued.
func (s *Server) SetAdminPassword(password string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.adminPassword = password
	clear(s.tokens)
}

// SetUnavailable makes every call answer 503 (true) or be served again (false).
func (s *Server) SetUnavailable(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unavailable = down
}

// SetCreateStatus makes POST /v3/domains answer status with a Keystone error document
// instead of creating the domain; 0 creates again.
func (s *Server) SetCreateStatus(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.createStatus = status
}

// AddDomain puts a domain into the table, as if it had been created earlier, and
// returns it with its ID.
func (s *Server) AddDomain(name, description string, enabled bool) Domain {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := Domain{ID: newID(), Name: name, Description: description, Enabled: enabled}
	s.domains = append(s.domains, d)
	return d
}

// Domain returns the domain named name and whether it exists.
func (s *Server) Domain(name string) (Domain, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.domains, func(d Domain) bool { return d.Name == name })
	if i < 0 {
		return Domain{}, false
	}
	return s.domains[i], true
}

// Calls returns how often "<METHOD> <path>" was called ("POST /v3/domains").
func (s *Server) Calls(call string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[call]
}

func (s *Server) authenticate(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Auth struct {
			Identity struct {
				Methods  []string `json:"methods"`
				Password struct {
					User struct {
						Name     string                `json:"name"`
						Domain   struct{ Name string } `json:"domain"`
						Password string                `json:"password"`
					} `json:"user"`
				} `json:"password"`
			} `json:"identity"`
			Scope struct {
				Project struct {
					Name   string                `json:"name"`
					Domain struct{ Name string } `json:"domain"`
				} `json:"project"`
			} `json:"scope"`
		} `json:"auth"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		writeError(w, http.StatusBadRequest, "Bad Request", "the request body is not JSON")
		return
	}
	id, scope := body.Auth.Identity, body.Auth.Scope.Project
	s.mu.Lock()
	defer s.mu.Unlock()
	if !slices.Equal(id.Methods, []string{"password"}) || id.Password.User.Name != s.adminUser ||
		id.Password.User.Domain.Name != DefaultDomain || id.Password.User.Password != s.adminPassword {
		writeError(w, http.StatusUnauthorized, "Unauthorized", "The request you have made requires authentication.")
		return
	}
	if scope.Name != AdminProject || scope.Domain.Name != DefaultDomain {
		writeError(w, http.StatusUnauthorized, "Unauthorized", "The request you have made requires authentication.")
		return
	}
	token := newID()
	s.tokens[token] = true
	w.Header().Set("X-Subject-Token", token)
	writeJSON(w, http.StatusCreated, map[string]any{"token": map[string]any{
		"methods": []string{"password"}, "project": map[string]any{"name": AdminProject}}})
}

// authorized answers 401 and returns false unless the request carries a live token.
// The caller holds s.mu.
func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	if !s.tokens[r.Header.Get("X-Auth-Token")] {
		writeError(w, http.StatusUnauthorized, "Unauthorized", "The request you have made requires authentication.")
		return false
	}
	return true
}

func (s *Server) listDomains(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.authorized(w, r) {
		return
	}
	out := []Domain{}
	name, filtered := r.URL.Query()["name"]
	for _, d := range s.domains {
		if !filtered || d.Name == name[0] {
			out = append(out, d)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"domains": out})
}

func (s *Server) createDomain(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Domain *struct {
			Name        string `json:"name"`
			Description string `json:"description"`
			Enabled     *bool  `json:"enabled"`
		} `json:"domain"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.Domain == nil || body.Domain.Name == "" {
		writeError(w, http.StatusBadRequest, "Bad Request", "Invalid input for field 'domain'.")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.authorized(w, r) {
		return
	}
	if s.createStatus != 0 {
		writeError(w, s.createStatus, http.StatusText(s.createStatus), "the stand-in refuses to create domains")
		return
	}
	if slices.ContainsFunc(s.domains, func(d Domain) bool { return d.Name == body.Domain.Name }) {
		writeError(w, http.StatusConflict, "Conflict", fmt.Sprintf("Duplicate entry found with name %s.", body.Domain.Name))
		return
	}
	d := Domain{ID: newID(), Name: body.Domain.Name, Description: body.Domain.Description, Enabled: true}
	if body.Domain.Enabled != nil {
		d.Enabled = *body.Domain.Enabled
	}
	s.domains = append(s.domains, d)
	writeJSON(w, http.StatusCreated, map[string]any{"domain": d})
}

// writeError writes Keystone's error document.
func writeError(w http.ResponseWriter, status int, title, message string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"code": status, "title": title, "message": message}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// newID returns a random 32-hex-digit ID, the shape of Keystone's IDs.
func newID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
