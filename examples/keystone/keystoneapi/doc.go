// Package keystoneapi is a minimal client of the Keystone v3 identity API, as much as
// the example Keystone operator needs to create or adopt the domain of a
// KeystoneIdentityBackend and its federation objects: it authenticates with the admin
// account, looks a domain up by name and creates one, and creates, reads, updates and
// deletes identity providers, mappings and protocols (OS-FEDERATION).
//
//	POST /v3/auth/tokens        [Client.Authenticate]: password authentication scoped
//	                            to the admin project; the token is the X-Subject-Token
//	                            header of the answer
//	GET  /v3/domains?name=<n>   [Client.GetDomainByName]
//	POST /v3/domains            [Client.CreateDomain]
//
//	/v3/OS-FEDERATION/identity_providers/{idp}                     PUT [Client.CreateIdentityProvider],
//	                                                               GET, PATCH, DELETE (its protocols too)
//	/v3/OS-FEDERATION/mappings/{id}                                PUT [Client.CreateMapping], GET, PATCH, DELETE
//	/v3/OS-FEDERATION/identity_providers/{idp}/protocols/{name}    PUT [Client.CreateProtocol], GET, PATCH, DELETE
//
// The federation objects are named by the caller; an id that is empty or holds '/',
// '?' or '#' is refused before any request ([ErrInvalidRequest]).
//
// The client authenticates on its first call and keeps the token for the calls that
// follow; a call answered 401 with a kept token (the token expired or was revoked)
// authenticates once more and repeats the call. It speaks plain net/http and keeps no
// connection state of its own, so a short-lived Client per reconcile pass is cheap.
//
// # Where requests go
//
// Every request carries the admin password or a token, so the client is confined:
//
//   - It follows no redirect, to another host or the same one
//     (outbound.RefuseRedirects): a 3xx answer is an error wrapping
//     [ErrUnexpectedResponse] and outbound.ErrRedirectRefused, and nothing is sent to
//     where it points.
//   - It dials through an outbound.Policy ([Options.Policy]; the zero value refuses
//     loopback, link-local, unspecified and multicast addresses after name
//     resolution, and uses no proxy). A refused destination is an error wrapping
//     [ErrUnavailable] and outbound.ErrRefused, before any byte is sent. Tests against
//     an httptest server allow loopback explicitly with outbound.LoopbackPrefixes.
//   - [Options.Transport] supplies TLS settings and timeouts only: the client uses a
//     clone of it that dials through the policy (outbound.Policy.GuardTransport).
//
// # Errors
//
// Every error wraps one of the sentinels, to be told apart with errors.Is:
// [ErrUnauthorized] (401: the admin password or user is refused), [ErrForbidden] (403),
// [ErrNotFound] (no object of that name, 404), [ErrConflict] (409: an object of that
// name exists, or a remote id belongs to another identity provider), [ErrInvalidRequest] (400 and the other 4xx answers), [ErrUnavailable] (no
// answer, a transport error, 5xx) and [ErrUnexpectedResponse] (an answer that is not
// Keystone's: a missing token header, a body that does not decode). Options that cannot
// work wrap [ErrInvalidOptions]. The error text names the call ("POST /v3/domains") and
// the HTTP status, and carries Keystone's error message; it never carries the password
// or a token: the endpoint may not hold user information, and any occurrence of either
// secret in a text Keystone or the transport returns is replaced by "[redacted]". Nor
// does it carry a URL's user information, query or fragment: endpoints are quoted
// through outbound.Redact, and a transport error is reduced to its cause (the
// *url.Error around it, which quotes the whole request URL, is dropped). A transport
// error stays reachable with errors.As ([Error] wraps it next to the sentinel).
//
// Package keystonetest is a stand-in of these calls for tests.
package keystoneapi
