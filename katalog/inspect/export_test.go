package inspect

import (
	"net/http"
	"time"
)

// NewAt is New with a fixed clock, so that tests can assert ages.
func NewAt(opts Options, now time.Time) (http.Handler, error) {
	return newHandler(opts, func() time.Time { return now })
}

// HTTPServerOf returns the http.Server a Server serves with, so that tests can read its
// limits.
func HTTPServerOf(s *Server) *http.Server { return s.server }
