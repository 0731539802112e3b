package settings

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/c5c3/reconciler-sdk/database"
)

// The deprecated ConnectionURL is database.ConnectionURL, its errors wrapping both
// sentinels and never quoting the password.
func TestConnectionURLIsTheSDKs(t *testing.T) {
	tests := map[string]struct {
		reason   string
		db       Database
		password string
	}{
		"valid": {
			reason: "the SDK's URL", db: Database{Host: "db", Name: "keystone", User: "k", CAFile: "/ca.crt"}, password: "p@ss",
		},
		"invalid": {
			reason: "the SDK's refusal, as an invalid setting", db: Database{Host: "db"}, password: "hunter2",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			want, wantErr := database.ConnectionURL(tt.db, tt.password)
			got, err := ConnectionURL(tt.db, tt.password)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s: URL (-want +got):\n%s", tt.reason, diff)
			}
			if (wantErr == nil) != (err == nil) {
				t.Fatalf("%s: err = %v, want like %v", tt.reason, err, wantErr)
			}
			if err != nil && (!errors.Is(err, ErrInvalidSettings) || !errors.Is(err, database.ErrInvalidParams)) {
				t.Errorf("%s: err = %v, want it to wrap ErrInvalidSettings and database.ErrInvalidParams", tt.reason, err)
			}
			if err != nil && strings.Contains(err.Error(), tt.password) {
				t.Errorf("%s: the error quotes the password: %v", tt.reason, err)
			}
		})
	}
}
