// Package keystonetest is a stand-in of the Keystone v3 API for tests: an
// httptest.Server that answers the three calls package keystoneapi makes
// (POST /v3/auth/tokens, GET /v3/domains?name=, POST /v3/domains) from an in-memory
// domain table, for one admin account whose password a test can change. [New] serves
// plain HTTP, [NewTLS] HTTPS with httptest's certificate; both listen on loopback,
// which a keystoneapi client reaches only with loopback allowed in its outbound policy
// (outbound.LoopbackPrefixes).
//
// It checks what Keystone checks for these calls: the password method with the admin
// user, its domain and password, scoped to the admin project; X-Auth-Token on the domain
// calls, which must be a token it issued and has not revoked (changing the admin
// password revokes every token, as Keystone revokes a user's tokens on a password
// change); a unique domain name (409 on a second create). Tests switch it to answer
// 503 to everything, or a chosen status to creates, and read the domains and the
// number of calls back.
package keystonetest
