package webhook

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/c5c3/reconciler-sdk/examples/horizon/settings"
)

// TestSettingsPath checks the translation of the Go field a settings.Render error names
// into the Horizon field, including the fallbacks the Horizon's own settings never
// produce.
func TestSettingsPath(t *testing.T) {
	prefix := settings.ErrInvalidSettings.Error() + ": "
	tests := map[string]struct {
		msg, want string
	}{
		"a top-level field":       {prefix + `Settings.KeystoneURL "" is empty`, "spec.keystoneEndpoint"},
		"a nested field":          {prefix + `Settings.WebSSO.KeystoneURL "x"`, "spec.websso.keystoneURL"},
		"an index":                {prefix + `Settings.MultiDomain.Domains[12].ID ""`, "spec.multiDomain.domains[12].id"},
		"a map key":               {prefix + `Settings.WebSSO.IDPMapping["a\"b"].IDP ""`, `spec.websso.idpMapping[a"b].idp`},
		"an extraConfig key":      {prefix + `Settings.ExtraConfig["SESSION_TIMEOUT"]: x`, "spec.extraConfig.SESSION_TIMEOUT"},
		"a field no Horizon sets": {prefix + `Settings.AllowedHosts[0] "\xff"`, "spec"},
		"an unknown nested field": {prefix + `Settings.WebSSO.Unknown[0] ""`, "spec.websso"},
		"an index out of range":   {prefix + `Settings.MemcachedServers[99999999999999999999] ""`, "spec.memcachedServers"},
		"a key that is not Go":    {prefix + `Settings.WebSSO.IDPMapping["\q"].IDP ""`, "spec.websso.idpMapping"},
		"no field at all":         {prefix + "something else", "spec"},
		"another error":           {"boom: Settings.Image", "spec"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := settingsPath(field.NewPath("spec"), tc.msg).String(); got != tc.want {
				t.Errorf("settingsPath(%q) = %s, want %s", tc.msg, got, tc.want)
			}
		})
	}
}

// TestRenderErrorsSplitsOnlyJoins checks that one error wrapping several (fmt.Errorf
// with two %w) stays one problem, while errors.Join gives one problem per part.
func TestRenderErrorsSplitsOnlyJoins(t *testing.T) {
	one := fmt.Errorf("%w: Settings.Image %q: %w", settings.ErrInvalidSettings, "x", errors.New("cause"))
	two := errors.Join(
		fmt.Errorf("%w: Settings.Image %q", settings.ErrInvalidSettings, "x"),
		fmt.Errorf("%w: Settings.TimeZone %q", settings.ErrInvalidSettings, "y"))
	tests := map[string]struct {
		err  error
		want []string
	}{
		"one error with two causes": {one, []string{`spec.image: Invalid value: invalid Horizon settings: Settings.Image "x": cause`}},
		"two joined errors": {two, []string{
			`spec.image: Invalid value: invalid Horizon settings: Settings.Image "x"`,
			`spec.timeZone: Invalid value: invalid Horizon settings: Settings.TimeZone "y"`,
		}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, e := range renderErrors(field.NewPath("spec"), tc.err) {
				got = append(got, e.Error())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
