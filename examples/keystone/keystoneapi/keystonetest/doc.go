// Package keystonetest is a stand-in of the Keystone v3 API for tests: an
// httptest.Server that answers the calls package keystoneapi makes (POST
// /v3/auth/tokens, GET /v3/domains?name=, POST /v3/domains and the OS-FEDERATION
// calls) from in-memory tables, for one admin account whose password a test can
// change. [New] serves plain HTTP, [NewTLS] HTTPS with httptest's certificate; both
// listen on loopback, which a keystoneapi client reaches only with loopback allowed in
// its outbound policy (outbound.LoopbackPrefixes).
//
// It checks what Keystone checks for these calls: the password method with the admin
// user, its domain and password, scoped to the admin project; X-Auth-Token on the domain
// and federation calls, which must be a token it issued and has not revoked (changing
// the admin password revokes every token, as Keystone revokes a user's tokens on a
// password change); a unique domain name (409 on a second create). Tests switch it to
// answer 503 to everything, or a chosen status to domain creates, and read the domains
// and the number of calls back.
//
// It serves the OS-FEDERATION identity providers, mappings and protocols (PUT, GET,
// PATCH, DELETE) from tables of their own, with Keystone's checks: an object created
// twice and a remote id another provider holds answer 409; a provider's domain must
// exist (404) and its domain_id cannot be changed (400); mapping rules outside
// Keystone's mapping schema answer 400 with the schema validator's messages; a protocol
// of a missing provider answers 404, one naming a missing mapping 400 ("Invalid mapping
// id: ..."); deleting a provider deletes its protocols. Tests inject a refusal of one
// verb of one route with [Server.Refuse] and read the objects back
// ([Server.IdentityProvider], [Server.Mapping], [Server.Protocol]).
package keystonetest
