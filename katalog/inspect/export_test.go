package inspect

import (
	"net/http"
	"time"
)

// NewAt is New with a fixed clock, so that tests can assert ages.
func NewAt(opts Options, now time.Time) (http.Handler, error) {
	return newHandler(opts, func() time.Time { return now })
}
