package keystoneapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
)

// federationPrefix is the path of Keystone's OS-FEDERATION extension.
const federationPrefix = "/v3/OS-FEDERATION"

// IdentityProvider is a Keystone identity provider (OS-FEDERATION): the domain its
// federated users land in and the remote ids its assertions carry.
type IdentityProvider struct {
	// ID is the provider's id, chosen by the caller: the {idp} of its URL.
	ID string `json:"id,omitempty"`
	// DomainID is the ID of the domain the provider's users belong to. Keystone sets
	// it on creation only: an update cannot move a provider to another domain.
	DomainID string `json:"domain_id,omitempty"`
	// Description of the provider.
	Description string `json:"description"`
	// RemoteIDs are the values of the remote id attribute that identify the
	// provider's assertions; Keystone keeps each to one provider.
	RemoteIDs []string `json:"remote_ids"`
	// Enabled reports whether the provider's users may authenticate.
	Enabled bool `json:"enabled"`
}

// Mapping is a Keystone mapping (OS-FEDERATION): the rules that turn an assertion into
// a local user, groups and projects.
type Mapping struct {
	// ID is the mapping's id, chosen by the caller.
	ID string `json:"id,omitempty"`
	// Rules is the JSON list of the mapping's rules, in Keystone's shape
	// ([{"local": [...], "remote": [...]}, ...]). Keystone checks it against its
	// mapping schema and refuses a list it does not accept with 400.
	Rules json.RawMessage `json:"rules"`
}

// Protocol is the protocol of an identity provider (OS-FEDERATION): the
// authentication method (openid, saml2, ...) the provider's assertions arrive by and
// the mapping applied to them.
type Protocol struct {
	// ID is the protocol's name, the {protocol} of its URL.
	ID string `json:"id,omitempty"`
	// MappingID is the id of the mapping applied; it must name an existing mapping.
	MappingID string `json:"mapping_id"`
}

// identityProviderPath is the URL path of identity provider id.
func identityProviderPath(id string) string {
	return federationPrefix + "/identity_providers/" + id
}

// mappingPath is the URL path of mapping id.
func mappingPath(id string) string {
	return federationPrefix + "/mappings/" + id
}

// protocolPath is the URL path of protocol of identity provider idp.
func protocolPath(idp, protocol string) string {
	return identityProviderPath(idp) + "/protocols/" + protocol
}

// checkID refuses, before any request, an empty id or one holding '/', '?' or '#',
// which would name another URL (the URL's encoding escapes every other character).
func (c *Client) checkID(method, path, what, id string) error {
	if id == "" || strings.ContainsAny(id, "/?#") {
		return c.errorf(method, path, ErrInvalidRequest, "%s %q is empty or holds '/', '?' or '#'", what, id)
	}
	return nil
}

// CreateIdentityProvider creates the identity provider p (PUT
// /v3/OS-FEDERATION/identity_providers/{p.ID}) and returns it as Keystone stored it.
// A provider of that id that exists already, or a remote id another provider holds,
// is an error wrapping ErrConflict; a DomainID Keystone does not accept wraps
// ErrInvalidRequest or ErrNotFound, with Keystone's message.
func (c *Client) CreateIdentityProvider(ctx context.Context, p IdentityProvider) (*IdentityProvider, error) {
	path := identityProviderPath(p.ID)
	if err := c.checkID(http.MethodPut, path, "identity provider id", p.ID); err != nil {
		return nil, err
	}
	in := p
	in.ID = ""
	var out struct {
		IdentityProvider IdentityProvider `json:"identity_provider"`
	}
	body := struct {
		IdentityProvider IdentityProvider `json:"identity_provider"`
	}{in}
	if err := c.authed(ctx, http.MethodPut, path, nil, body, http.StatusCreated, &out); err != nil {
		return nil, err
	}
	return &out.IdentityProvider, nil
}

// GetIdentityProvider returns identity provider id (GET
// /v3/OS-FEDERATION/identity_providers/{id}), or an error wrapping ErrNotFound when
// Keystone holds none.
func (c *Client) GetIdentityProvider(ctx context.Context, id string) (*IdentityProvider, error) {
	path := identityProviderPath(id)
	if err := c.checkID(http.MethodGet, path, "identity provider id", id); err != nil {
		return nil, err
	}
	var out struct {
		IdentityProvider IdentityProvider `json:"identity_provider"`
	}
	if err := c.authed(ctx, http.MethodGet, path, nil, nil, http.StatusOK, &out); err != nil {
		return nil, err
	}
	return &out.IdentityProvider, nil
}

// UpdateIdentityProvider sets the description, remote ids and enabled flag of
// identity provider p.ID to p's (PATCH /v3/OS-FEDERATION/identity_providers/{p.ID};
// p.DomainID is not sent: Keystone does not move a provider to another domain) and
// returns it as Keystone stored it. A missing provider wraps ErrNotFound, a remote id
// another provider holds ErrConflict.
func (c *Client) UpdateIdentityProvider(ctx context.Context, p IdentityProvider) (*IdentityProvider, error) {
	path := identityProviderPath(p.ID)
	if err := c.checkID(http.MethodPatch, path, "identity provider id", p.ID); err != nil {
		return nil, err
	}
	in := p
	in.ID, in.DomainID = "", ""
	var out struct {
		IdentityProvider IdentityProvider `json:"identity_provider"`
	}
	body := struct {
		IdentityProvider IdentityProvider `json:"identity_provider"`
	}{in}
	if err := c.authed(ctx, http.MethodPatch, path, nil, body, http.StatusOK, &out); err != nil {
		return nil, err
	}
	return &out.IdentityProvider, nil
}

// DeleteIdentityProvider deletes identity provider id and, as Keystone does, its
// protocols (DELETE /v3/OS-FEDERATION/identity_providers/{id}). A missing provider
// wraps ErrNotFound.
func (c *Client) DeleteIdentityProvider(ctx context.Context, id string) error {
	path := identityProviderPath(id)
	if err := c.checkID(http.MethodDelete, path, "identity provider id", id); err != nil {
		return err
	}
	return c.authed(ctx, http.MethodDelete, path, nil, nil, http.StatusNoContent, nil)
}

// CreateMapping creates mapping m (PUT /v3/OS-FEDERATION/mappings/{m.ID}) and returns
// it as Keystone stored it. Rules Keystone's mapping schema refuses wrap
// ErrInvalidRequest with Keystone's message; a mapping of that id that exists already
// wraps ErrConflict.
func (c *Client) CreateMapping(ctx context.Context, m Mapping) (*Mapping, error) {
	return c.writeMapping(ctx, http.MethodPut, http.StatusCreated, m)
}

// GetMapping returns mapping id (GET /v3/OS-FEDERATION/mappings/{id}), or an error
// wrapping ErrNotFound when Keystone holds none.
func (c *Client) GetMapping(ctx context.Context, id string) (*Mapping, error) {
	path := mappingPath(id)
	if err := c.checkID(http.MethodGet, path, "mapping id", id); err != nil {
		return nil, err
	}
	var out struct {
		Mapping Mapping `json:"mapping"`
	}
	if err := c.authed(ctx, http.MethodGet, path, nil, nil, http.StatusOK, &out); err != nil {
		return nil, err
	}
	return &out.Mapping, nil
}

// UpdateMapping replaces the rules of mapping m.ID with m.Rules (PATCH
// /v3/OS-FEDERATION/mappings/{m.ID}) and returns it as Keystone stored it; errors as
// CreateMapping's, a missing mapping wrapping ErrNotFound.
func (c *Client) UpdateMapping(ctx context.Context, m Mapping) (*Mapping, error) {
	return c.writeMapping(ctx, http.MethodPatch, http.StatusOK, m)
}

// writeMapping sends m's rules with method and expects want.
func (c *Client) writeMapping(ctx context.Context, method string, want int, m Mapping) (*Mapping, error) {
	path := mappingPath(m.ID)
	if err := c.checkID(method, path, "mapping id", m.ID); err != nil {
		return nil, err
	}
	if len(m.Rules) == 0 || !json.Valid(m.Rules) {
		return nil, c.errorf(method, path, ErrInvalidRequest, "the rules are not JSON")
	}
	type rules struct {
		Rules json.RawMessage `json:"rules"`
	}
	var out struct {
		Mapping Mapping `json:"mapping"`
	}
	body := struct {
		Mapping rules `json:"mapping"`
	}{rules{m.Rules}}
	if err := c.authed(ctx, method, path, nil, body, want, &out); err != nil {
		return nil, err
	}
	return &out.Mapping, nil
}

// DeleteMapping deletes mapping id (DELETE /v3/OS-FEDERATION/mappings/{id}). A missing
// mapping wraps ErrNotFound.
func (c *Client) DeleteMapping(ctx context.Context, id string) error {
	path := mappingPath(id)
	if err := c.checkID(http.MethodDelete, path, "mapping id", id); err != nil {
		return err
	}
	return c.authed(ctx, http.MethodDelete, path, nil, nil, http.StatusNoContent, nil)
}

// CreateProtocol creates protocol p.ID of identity provider idp, applying mapping
// p.MappingID (PUT /v3/OS-FEDERATION/identity_providers/{idp}/protocols/{p.ID}), and
// returns it as Keystone stored it. A missing provider wraps ErrNotFound, a mapping id
// that names no mapping ErrInvalidRequest (Keystone answers 400), a protocol that
// exists already ErrConflict.
func (c *Client) CreateProtocol(ctx context.Context, idp string, p Protocol) (*Protocol, error) {
	return c.writeProtocol(ctx, http.MethodPut, http.StatusCreated, idp, p)
}

// GetProtocol returns protocol protocol of identity provider idp (GET
// /v3/OS-FEDERATION/identity_providers/{idp}/protocols/{protocol}), or an error
// wrapping ErrNotFound when Keystone holds no such provider or protocol.
func (c *Client) GetProtocol(ctx context.Context, idp, protocol string) (*Protocol, error) {
	path := protocolPath(idp, protocol)
	if err := c.checkIDs(http.MethodGet, path, idp, protocol); err != nil {
		return nil, err
	}
	var out struct {
		Protocol Protocol `json:"protocol"`
	}
	if err := c.authed(ctx, http.MethodGet, path, nil, nil, http.StatusOK, &out); err != nil {
		return nil, err
	}
	return &out.Protocol, nil
}

// UpdateProtocol points protocol p.ID of identity provider idp at mapping p.MappingID
// (PATCH /v3/OS-FEDERATION/identity_providers/{idp}/protocols/{p.ID}); errors as
// CreateProtocol's, a missing protocol wrapping ErrNotFound.
func (c *Client) UpdateProtocol(ctx context.Context, idp string, p Protocol) (*Protocol, error) {
	return c.writeProtocol(ctx, http.MethodPatch, http.StatusOK, idp, p)
}

// writeProtocol sends p's mapping id with method and expects want.
func (c *Client) writeProtocol(ctx context.Context, method string, want int, idp string, p Protocol) (*Protocol, error) {
	path := protocolPath(idp, p.ID)
	if err := c.checkIDs(method, path, idp, p.ID); err != nil {
		return nil, err
	}
	type mapped struct {
		MappingID string `json:"mapping_id"`
	}
	var out struct {
		Protocol Protocol `json:"protocol"`
	}
	body := struct {
		Protocol mapped `json:"protocol"`
	}{mapped{p.MappingID}}
	if err := c.authed(ctx, method, path, nil, body, want, &out); err != nil {
		return nil, err
	}
	return &out.Protocol, nil
}

// DeleteProtocol deletes protocol protocol of identity provider idp (DELETE
// /v3/OS-FEDERATION/identity_providers/{idp}/protocols/{protocol}). A missing provider
// or protocol wraps ErrNotFound.
func (c *Client) DeleteProtocol(ctx context.Context, idp, protocol string) error {
	path := protocolPath(idp, protocol)
	if err := c.checkIDs(http.MethodDelete, path, idp, protocol); err != nil {
		return err
	}
	return c.authed(ctx, http.MethodDelete, path, nil, nil, http.StatusNoContent, nil)
}

// checkIDs is checkID for a provider id and a protocol name.
func (c *Client) checkIDs(method, path, idp, protocol string) error {
	if err := c.checkID(method, path, "identity provider id", idp); err != nil {
		return err
	}
	return c.checkID(method, path, "protocol", protocol)
}
