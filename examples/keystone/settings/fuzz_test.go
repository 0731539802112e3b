package settings_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/c5c3/reconciler-sdk/examples/keystone/settings"
)

// FuzzRender feeds arbitrary strings and numbers into every kind of field and checks
// that Render never panics, is deterministic, refuses with ErrInvalidSettings, no
// output and an error text that does not depend on the ExtraConfig value's content,
// and that an accepted input reads back, as oslo.config parses it, to exactly the
// options the fields and the ExtraConfig entry say, with no "$" outside that entry.
func FuzzRender(f *testing.F) {
	f.Add("https://keystone.example.org", "memcached:11211", "/keys/fernet", "corp", "policy.yaml", "ldap", "url", "ldap://x", 3, 3600, 172800)
	f.Add("", "", "", "", "", "", "", "", 0, 0, 0)
	f.Add("http://k\n[database]\nconnection = x", "a,b", "rel", "../x", "$x", "database", "connection", "secret", -1, -1, -1)
	f.Add("https://k/$a", "m:1", "/k/../x", "a/b", "p\r", "a]b", "k\nj", "v\r", 1, 0, 0)
	f.Add("https://k", "m:1", "/etc/keystone/credential-keys", "x", "p", "DEFAULT", "debug", "  \"quoted\"  ", 0, 0, 0)
	f.Add("https://k", "m:1", "/k", "x", "p", "s", "k", "first\n    indented\nlast", 0, 0, 0)
	f.Add("https://k", "m:1", "/k", "x", "p", "s", "k", "a\n\nb", 0, 0, 0)
	f.Add("https://k", "m:1", "/k", "x", "p", "s", "#k", "\xff", 0, 0, 0)
	f.Fuzz(func(t *testing.T, endpoint, memcached, repo, domain, policy, section, key, value string, maxKeys, expiration, window int) {
		in := settings.Settings{
			Debug:                   len(value)%2 == 1,
			PublicEndpoint:          endpoint,
			MemcachedServers:        []string{memcached},
			FernetKeyRepository:     repo,
			CredentialKeyRepository: "/etc/keystone/credential-keys",
			MaxActiveKeys:           maxKeys,
			TokenExpiration:         expiration,
			AllowExpiredWindow:      window,
			IdentityDomains:         []string{domain},
			PolicyFile:              policy,
			ExtraConfig:             map[string]map[string]string{section: {key: value}},
		}
		out, err := settings.Render(in)
		again, err2 := settings.Render(in)
		if out != again || (err == nil) != (err2 == nil) || err != nil && err.Error() != err2.Error() {
			t.Fatalf("not deterministic: %v / %v", err, err2)
		}
		if err != nil {
			if !errors.Is(err, settings.ErrInvalidSettings) {
				t.Fatalf("error %v does not wrap ErrInvalidSettings", err)
			}
			if out != "" {
				t.Fatalf("output returned with error %v", err)
			}
			masked := in
			masked.ExtraConfig = map[string]map[string]string{section: {key: mask(value)}}
			if _, other := settings.Render(masked); other == nil || other.Error() != err.Error() {
				t.Fatalf("error depends on the ExtraConfig value's content:\n%v\n%v", err, other)
			}
			return
		}

		if maxKeys < 0 || expiration < 0 || window < 0 || domain == "" || strings.Contains(domain, "..") ||
			strings.ContainsAny(endpoint+memcached+repo+policy, "$\n\r\x00") || strings.ContainsRune(memcached, ',') ||
			strings.EqualFold(section, "database") && strings.EqualFold(key, "connection") ||
			section != "DEFAULT" && strings.ToLower(section) != section {
			t.Fatalf("invalid input accepted:\n%s", out)
		}
		parsed, err := parseOslo(out)
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		want := minimalOptions()
		want["DEFAULT"]["debug"] = strconv.FormatBool(in.Debug)
		if endpoint != "" {
			want["DEFAULT"]["public_endpoint"] = endpoint
		}
		want["cache"] = map[string]string{"enabled": "true", "backend": "dogpile.cache.pymemcache", "memcache_servers": memcached}
		if repo != "" {
			want["fernet_tokens"]["key_repository"] = repo
			want["fernet_receipts"]["key_repository"] = repo
		}
		if maxKeys != 0 {
			want["fernet_tokens"]["max_active_keys"] = strconv.Itoa(maxKeys)
			want["fernet_receipts"]["max_active_keys"] = strconv.Itoa(maxKeys)
		}
		if expiration != 0 {
			want["token"]["expiration"] = strconv.Itoa(expiration)
		}
		if window != 0 {
			want["token"]["allow_expired_window"] = strconv.Itoa(window)
		}
		want["identity"] = map[string]string{"domain_specific_drivers_enabled": "true", "domain_config_dir": "/etc/keystone/domains"}
		if policy != "" {
			want["oslo_policy"] = map[string]string{"policy_file": policy}
		}
		if want[section] == nil {
			want[section] = map[string]string{}
		}
		want[section][key] = value
		if diff := cmp.Diff(want, single(t, parsed)); diff != "" {
			t.Fatalf("read back (-want +got):\n%s\n%s", diff, out)
		}
		if strings.Count(out, "$") > strings.Count(value, "$") {
			t.Fatalf("a typed field rendered \"$\":\n%s", out)
		}
	})
}

// mask replaces every printable ASCII character of v with "v", keeping white space,
// control characters, line structure and UTF-8 validity: what makes a value
// representable or not.
func mask(v string) string {
	b := []byte(v)
	for i, c := range b {
		if c > ' ' && c < 0x7f {
			b[i] = 'v'
		}
	}
	return string(b)
}
