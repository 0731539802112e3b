package keystonetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
)

// The routes of the OS-FEDERATION objects, as [Server.Refuse] names them.
const (
	// RouteIdentityProvider is /v3/OS-FEDERATION/identity_providers/{idp}.
	RouteIdentityProvider = "/v3/OS-FEDERATION/identity_providers/{idp}"
	// RouteMapping is /v3/OS-FEDERATION/mappings/{id}.
	RouteMapping = "/v3/OS-FEDERATION/mappings/{id}"
	// RouteProtocol is /v3/OS-FEDERATION/identity_providers/{idp}/protocols/{protocol}.
	RouteProtocol = "/v3/OS-FEDERATION/identity_providers/{idp}/protocols/{protocol}"
)

// IdentityProvider is an identity provider of the stand-in's table.
type IdentityProvider struct {
	// ID is the provider's id, the {idp} of its URL.
	ID string `json:"id"`
	// DomainID is the ID of the provider's domain.
	DomainID string `json:"domain_id"`
	// Description of the provider.
	Description string `json:"description"`
	// RemoteIDs are the provider's remote ids.
	RemoteIDs []string `json:"remote_ids"`
	// Enabled reports whether the provider is enabled.
	Enabled bool `json:"enabled"`
}

// Mapping is a mapping of the stand-in's table.
type Mapping struct {
	// ID is the mapping's id.
	ID string `json:"id"`
	// Rules are the mapping's rules as they were sent.
	Rules json.RawMessage `json:"rules"`
}

// Protocol is a protocol of an identity provider of the stand-in's table.
type Protocol struct {
	// ID is the protocol's name.
	ID string `json:"id"`
	// MappingID is the id of the mapping the protocol applies.
	MappingID string `json:"mapping_id"`
}

// federation is the stand-in's OS-FEDERATION table.
type federation struct {
	idps      map[string]IdentityProvider
	mappings  map[string]Mapping
	protocols map[string]map[string]Protocol // by provider id, then protocol name
	refusals  map[string]refusal             // by "<METHOD> <route>"
}

// refusal is an answer Refuse injected.
type refusal struct {
	status  int
	message string
}

func newFederation() federation {
	return federation{idps: map[string]IdentityProvider{}, mappings: map[string]Mapping{},
		protocols: map[string]map[string]Protocol{}, refusals: map[string]refusal{}}
}

// routeFederation registers the OS-FEDERATION routes on mux.
func (s *Server) routeFederation(mux *http.ServeMux) {
	for _, m := range []string{http.MethodPut, http.MethodGet, http.MethodPatch, http.MethodDelete} {
		mux.HandleFunc(m+" "+RouteIdentityProvider, s.federated(m, RouteIdentityProvider, s.identityProvider))
		mux.HandleFunc(m+" "+RouteMapping, s.federated(m, RouteMapping, s.mapping))
		mux.HandleFunc(m+" "+RouteProtocol, s.federated(m, RouteProtocol, s.protocol))
	}
}

// Refuse makes every method call of route (RouteIdentityProvider, RouteMapping or
// RouteProtocol; method "PUT", "GET", "PATCH" or "DELETE") answer status with a
// Keystone error document carrying message, after the token is checked and before
// the table is read or changed; status 0 serves the call again.
func (s *Server) Refuse(method, route string, status int, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if status == 0 {
		delete(s.fed.refusals, method+" "+route)
		return
	}
	s.fed.refusals[method+" "+route] = refusal{status, message}
}

// IdentityProvider returns identity provider id and whether it exists.
func (s *Server) IdentityProvider(id string) (IdentityProvider, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.fed.idps[id]
	p.RemoteIDs = slices.Clone(p.RemoteIDs)
	return p, ok
}

// Mapping returns mapping id and whether it exists.
func (s *Server) Mapping(id string) (Mapping, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.fed.mappings[id]
	m.Rules = bytes.Clone(m.Rules)
	return m, ok
}

// Protocol returns protocol protocol of identity provider idp and whether it exists.
func (s *Server) Protocol(idp, protocol string) (Protocol, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.fed.protocols[idp][protocol]
	return p, ok
}

// SetProtocolMapping points protocol protocol of identity provider idp at mappingID
// in the table, as an administrator's change past the API would, without checking
// either; it reports whether the protocol exists.
func (s *Server) SetProtocolMapping(idp, protocol, mappingID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.fed.protocols[idp][protocol]
	if ok {
		p.MappingID = mappingID
		s.fed.protocols[idp][protocol] = p
	}
	return ok
}

// federated checks the token and the injected refusals of method on route, then calls
// serve holding s.mu.
func (s *Server) federated(method, route string, serve func(w http.ResponseWriter, r *http.Request)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if !s.authorized(w, r) {
			return
		}
		if f, ok := s.fed.refusals[method+" "+route]; ok {
			writeError(w, f.status, http.StatusText(f.status), f.message)
			return
		}
		serve(w, r)
	}
}

// decodeObject decodes the request body {"<name>": {...}} into the raw fields of the
// object, answering 400 as Keystone's schema validation does when it is not one.
func decodeObject(w http.ResponseWriter, r *http.Request, name string) (map[string]json.RawMessage, bool) {
	var body map[string]map[string]json.RawMessage
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body[name] == nil {
		writeError(w, http.StatusBadRequest, "Bad Request", fmt.Sprintf("Invalid input for field '%s': the request body holds no %s object.", name, name))
		return nil, false
	}
	return body[name], true
}

// unexpected answers 400 naming a field of object name the schema does not allow, as Keystone's
// additionalProperties check does, and reports whether it did.
func unexpected(w http.ResponseWriter, name string, obj map[string]json.RawMessage, allowed ...string) bool {
	var extra []string
	for k := range obj {
		if !slices.Contains(allowed, k) {
			extra = append(extra, "'"+k+"'")
		}
	}
	if len(extra) == 0 {
		return false
	}
	sort.Strings(extra)
	verb := "was"
	if len(extra) > 1 {
		verb = "were"
	}
	writeError(w, http.StatusBadRequest, "Bad Request", fmt.Sprintf(
		"Invalid input for field/attribute %s. Additional properties are not allowed (%s %s unexpected)", name, strings.Join(extra, ", "), verb))
	return true
}

func (s *Server) identityProvider(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("idp")
	p, exists := s.fed.idps[id]
	notFound := func() {
		writeError(w, http.StatusNotFound, "Not Found", fmt.Sprintf("Could not find Identity Provider: %s.", id))
	}
	switch r.Method {
	case http.MethodGet:
		if !exists {
			notFound()
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"identity_provider": p})
	case http.MethodDelete:
		if !exists {
			notFound()
			return
		}
		delete(s.fed.idps, id)
		delete(s.fed.protocols, id)
		w.WriteHeader(http.StatusNoContent)
	case http.MethodPut, http.MethodPatch:
		obj, ok := decodeObject(w, r, "identity_provider")
		if !ok {
			return
		}
		allowed := []string{"description", "remote_ids", "enabled"}
		if r.Method == http.MethodPut {
			allowed = append(allowed, "domain_id")
			if exists {
				writeError(w, http.StatusConflict, "Conflict", fmt.Sprintf("Conflict occurred attempting to store identity_provider - Duplicate entry found with ID %s.", id))
				return
			}
			p = IdentityProvider{ID: id, Enabled: true}
		} else if !exists {
			notFound()
			return
		}
		if unexpected(w, "identity_provider", obj, allowed...) {
			return
		}
		next := p
		if err := decodeFields(obj, map[string]any{"description": &next.Description, "remote_ids": &next.RemoteIDs,
			"enabled": &next.Enabled, "domain_id": &next.DomainID}); err != nil {
			writeError(w, http.StatusBadRequest, "Bad Request", "Invalid input for field/attribute identity_provider: "+err.Error())
			return
		}
		if r.Method == http.MethodPut && !slices.ContainsFunc(s.domains, func(d Domain) bool { return d.ID == next.DomainID }) {
			writeError(w, http.StatusNotFound, "Not Found", fmt.Sprintf("Could not find domain: %s.", next.DomainID))
			return
		}
		for _, rid := range next.RemoteIDs {
			for other, o := range s.fed.idps {
				if other != id && slices.Contains(o.RemoteIDs, rid) {
					writeError(w, http.StatusConflict, "Conflict", fmt.Sprintf("Duplicate remote ID: %s", rid))
					return
				}
			}
		}
		if next.RemoteIDs == nil {
			next.RemoteIDs = []string{}
		}
		s.fed.idps[id] = next
		status := http.StatusOK
		if r.Method == http.MethodPut {
			status = http.StatusCreated
		}
		writeJSON(w, status, map[string]any{"identity_provider": next})
	}
}

// decodeFields decodes the fields of obj that into names into their targets.
func decodeFields(obj map[string]json.RawMessage, into map[string]any) error {
	for name, target := range into {
		raw, ok := obj[name]
		if !ok {
			continue
		}
		if err := json.Unmarshal(raw, target); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

func (s *Server) mapping(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	m, exists := s.fed.mappings[id]
	notFound := func() {
		writeError(w, http.StatusNotFound, "Not Found", fmt.Sprintf("Could not find mapping: %s.", id))
	}
	switch r.Method {
	case http.MethodGet:
		if !exists {
			notFound()
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"mapping": m})
	case http.MethodDelete:
		if !exists {
			notFound()
			return
		}
		delete(s.fed.mappings, id)
		w.WriteHeader(http.StatusNoContent)
	case http.MethodPut, http.MethodPatch:
		obj, ok := decodeObject(w, r, "mapping")
		if !ok {
			return
		}
		if r.Method == http.MethodPut && exists {
			writeError(w, http.StatusConflict, "Conflict", fmt.Sprintf("Conflict occurred attempting to store mapping - Duplicate entry found with ID %s.", id))
			return
		}
		if r.Method == http.MethodPatch && !exists {
			notFound()
			return
		}
		if msg := mappingSchemaErrors(obj); msg != "" {
			writeError(w, http.StatusBadRequest, "Bad Request", msg)
			return
		}
		m = Mapping{ID: id, Rules: bytes.Clone(obj["rules"])}
		s.fed.mappings[id] = m
		status := http.StatusOK
		if r.Method == http.MethodPut {
			status = http.StatusCreated
		}
		writeJSON(w, status, map[string]any{"mapping": m})
	}
}

// mappingSchemaErrors checks a mapping object against the part of Keystone's mapping
// schema (keystone.federation.utils.MAPPING_SCHEMA) the stand-in knows: rules is a
// list of objects, each with exactly local (a list of objects) and remote (a non-empty
// list of objects, each with a string type and only the keys type, any_one_of,
// not_any_of, regex, blacklist and whitelist). It returns the messages Keystone's
// validator would, one a line, or "".
func mappingSchemaErrors(obj map[string]json.RawMessage) string {
	var msgs []string
	add := func(format string, args ...any) { msgs = append(msgs, fmt.Sprintf(format, args...)) }
	raw, ok := obj["rules"]
	if !ok {
		return "'rules' is a required property\n"
	}
	for k := range obj {
		if k != "rules" {
			add("Additional properties are not allowed ('%s' was unexpected)", k)
		}
	}
	var rules []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &rules); err != nil {
		add("%s is not of type 'array' of objects", string(raw))
	}
	for _, rule := range rules {
		for k := range rule {
			if k != "local" && k != "remote" {
				add("Additional properties are not allowed ('%s' was unexpected)", k)
			}
		}
		for _, req := range []string{"local", "remote"} {
			if _, ok := rule[req]; !ok {
				add("'%s' is a required property", req)
			}
		}
		if l, ok := rule["local"]; ok {
			var local []map[string]json.RawMessage
			if json.Unmarshal(l, &local) != nil {
				add("%s is not of type 'array'", string(l))
			}
		}
		r, ok := rule["remote"]
		if !ok {
			continue
		}
		var remote []map[string]json.RawMessage
		if json.Unmarshal(r, &remote) != nil {
			add("%s is not of type 'array'", string(r))
			continue
		}
		if len(remote) == 0 {
			add("[] is too short")
		}
		for _, e := range remote {
			var typ string
			if t, ok := e["type"]; !ok {
				add("'type' is a required property")
			} else if json.Unmarshal(t, &typ) != nil {
				add("%s is not of type 'string'", string(t))
			}
			for k := range e {
				if !slices.Contains([]string{"type", "any_one_of", "not_any_of", "regex", "blacklist", "whitelist"}, k) {
					add("Additional properties are not allowed ('%s' was unexpected)", k)
				}
			}
		}
	}
	if len(msgs) == 0 {
		return ""
	}
	sort.Strings(msgs)
	return strings.Join(msgs, "\n") + "\n"
}

func (s *Server) protocol(w http.ResponseWriter, r *http.Request) {
	idp, name := r.PathValue("idp"), r.PathValue("protocol")
	if _, ok := s.fed.idps[idp]; !ok {
		writeError(w, http.StatusNotFound, "Not Found", fmt.Sprintf("Could not find Identity Provider: %s.", idp))
		return
	}
	p, exists := s.fed.protocols[idp][name]
	notFound := func() {
		writeError(w, http.StatusNotFound, "Not Found", fmt.Sprintf("Could not find federated protocol %s for Identity Provider: %s.", name, idp))
	}
	switch r.Method {
	case http.MethodGet:
		if !exists {
			notFound()
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"protocol": p})
	case http.MethodDelete:
		if !exists {
			notFound()
			return
		}
		delete(s.fed.protocols[idp], name)
		w.WriteHeader(http.StatusNoContent)
	case http.MethodPut, http.MethodPatch:
		obj, ok := decodeObject(w, r, "protocol")
		if !ok {
			return
		}
		if r.Method == http.MethodPut && exists {
			writeError(w, http.StatusConflict, "Conflict", fmt.Sprintf("Conflict occurred attempting to store federation_protocol - Duplicate entry found with ID %s.", name))
			return
		}
		if r.Method == http.MethodPatch && !exists {
			notFound()
			return
		}
		if unexpected(w, "protocol", obj, "mapping_id") {
			return
		}
		var mappingID string
		if err := decodeFields(obj, map[string]any{"mapping_id": &mappingID}); err != nil || mappingID == "" {
			writeError(w, http.StatusBadRequest, "Bad Request", "'mapping_id' is a required property")
			return
		}
		if _, ok := s.fed.mappings[mappingID]; !ok {
			writeError(w, http.StatusBadRequest, "Bad Request", fmt.Sprintf("Invalid mapping id: %s", mappingID))
			return
		}
		p = Protocol{ID: name, MappingID: mappingID}
		if s.fed.protocols[idp] == nil {
			s.fed.protocols[idp] = map[string]Protocol{}
		}
		s.fed.protocols[idp][name] = p
		status := http.StatusOK
		if r.Method == http.MethodPut {
			status = http.StatusCreated
		}
		writeJSON(w, status, map[string]any{"protocol": p})
	}
}
