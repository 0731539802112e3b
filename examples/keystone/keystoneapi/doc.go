// Package keystoneapi is a minimal client of the Keystone v3 identity API, as much as
// the example Keystone operator needs to create or adopt the domain of a
// KeystoneIdentityBackend: it authenticates with the admin account, looks a domain up
// by name and creates one.
//
//	POST /v3/auth/tokens        [Client.Authenticate]: password authentication scoped
//	                            to the admin project; the token is the X-Subject-Token
//	                            header of the answer
//	GET  /v3/domains?name=<n>   [Client.GetDomainByName]
//	POST /v3/domains            [Client.CreateDomain]
//
// The client authenticates on its first call and keeps the token for the calls that
// follow; a call answered 401 with a kept token (the token expired or was revoked)
// authenticates once more and repeats the call. It speaks plain net/http and keeps no
// connection state of its own, so a short-lived Client per reconcile pass is cheap.
//
// # Errors
//
// Every error wraps one of the sentinels, to be told apart with errors.Is:
// [ErrUnauthorized] (401: the admin password or user is refused), [ErrForbidden] (403),
// [ErrNotFound] (no domain of that name), [ErrConflict] (409: a domain of that name
// exists), [ErrInvalidRequest] (400 and the other 4xx answers), [ErrUnavailable] (no
// answer, a transport error, 5xx) and [ErrUnexpectedResponse] (an answer that is not
// Keystone's: a missing token header, a body that does not decode). Options that cannot
// work wrap [ErrInvalidOptions]. The error text names the call ("POST /v3/domains") and
// the HTTP status, and carries Keystone's error message; it never carries the password
// or a token: the endpoint may not hold user information, and any occurrence of either
// secret in a text Keystone or the transport returns is replaced by "[redacted]".
//
// Package keystonetest is a stand-in of these three calls for tests.
package keystoneapi
