package settings_test

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/c5c3/reconciler-sdk/examples/horizon/settings"
)

// ExampleRender renders the settings of a dashboard behind a Gateway with web single
// sign-on and one ExtraConfig override, and prints the lines after the always-rendered
// part; then it shows an ExtraConfig value that tries to run code being refused.
func ExampleRender() {
	s := settings.Settings{
		KeystoneURL:      "http://keystone.openstack.svc:5000/v3",
		Image:            "registry.example/openstack/horizon:2025.1",
		MemcachedServers: []string{"memcached:11211"},
		Gateway:          true,
		WebSSO: &settings.WebSSO{
			Enabled: true,
			Choices: []settings.Choice{
				{ID: "credentials", Label: "Keystone Credentials"},
				{ID: "oidc", Label: `Corporate "SSO"`},
			},
			IDPMapping: map[string]settings.IDPMapping{"oidc": {IDP: "corp", Protocol: "openid"}},
		},
		ExtraConfig: map[string]string{"SESSION_TIMEOUT": "3600"},
	}
	out, err := settings.Render(s)
	if err != nil {
		panic(err)
	}
	_, tail, _ := strings.Cut(string(out), "COMPRESS_ENABLED = True\n")
	fmt.Print(tail)

	s.ExtraConfig = map[string]string{"SESSION_TIMEOUT": `__import__("os").system("id")`}
	_, err = settings.Render(s)
	fmt.Println(errors.Is(err, settings.ErrInvalidSettings))
	fmt.Println(err)
	// Output:
	//
	// SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
	//
	// WEBSSO_ENABLED = True
	// WEBSSO_CHOICES = (
	//     ("credentials", "Keystone Credentials"),
	//     ("oidc", "Corporate \"SSO\""),
	// )
	// WEBSSO_IDP_MAPPING = {
	//     "oidc": ("corp", "openid"),
	// }
	// WEBSSO_USE_HTTP_REFERER = False
	//
	// # ExtraConfig, applied last: overrides the settings above.
	// SESSION_TIMEOUT = 3600
	// true
	// invalid Horizon settings: Settings.ExtraConfig["SESSION_TIMEOUT"]: the value is not a single-line Python literal: not a literal: a name (only True, False and None are literals) at byte 0
}

// ExampleDeclaredSettings shows how a webhook refuses an extraConfig key that would
// override a typed setting.
func ExampleDeclaredSettings() {
	s := settings.Settings{
		KeystoneURL: "http://keystone.openstack.svc:5000/v3",
		WebSSO: &settings.WebSSO{
			Enabled: true,
			Choices: []settings.Choice{{ID: "credentials", Label: "Keystone Credentials"}},
		},
		ExtraConfig: map[string]string{"WEBSSO_CHOICES": `(("oidc", "OIDC"),)`, "SESSION_TIMEOUT": "3600"},
	}
	declared := settings.DeclaredSettings(s)
	keys := make([]string, 0, len(s.ExtraConfig))
	for k := range s.ExtraConfig {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if field, ok := declared[k]; ok {
			fmt.Printf("extraConfig.%s: re-declares the setting of %s\n", k, field)
		}
	}
	// Output:
	// extraConfig.WEBSSO_CHOICES: re-declares the setting of websso.choices
}
