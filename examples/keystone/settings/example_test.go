package settings_test

import (
	"errors"
	"fmt"

	"github.com/c5c3/reconciler-sdk/examples/keystone/settings"
)

// ExampleRender renders keystone.conf for a Keystone with memcached, one LDAP domain
// and an ExtraConfig override, then shows that ExtraConfig cannot carry the database
// connection.
func ExampleRender() {
	s := settings.Settings{
		PublicEndpoint:   "https://keystone.example.org",
		MemcachedServers: []string{"memcached-0.memcached:11211", "memcached-1.memcached:11211"},
		TokenExpiration:  7200,
		IdentityDomains:  []string{"corp"},
		ExtraConfig: map[string]map[string]string{
			"security_compliance": {"lockout_failure_attempts": "5"},
		},
	}
	out, err := settings.Render(s)
	if err != nil {
		panic(err)
	}
	fmt.Print(out)

	s.ExtraConfig = map[string]map[string]string{"database": {"connection": "mysql+pymysql://keystone:secret@db/keystone"}}
	_, err = settings.Render(s)
	fmt.Println(errors.Is(err, settings.ErrInvalidSettings))
	fmt.Println(err)
	// Output:
	// # Rendered by the keystone operator; do not edit.
	// [DEFAULT]
	// debug = false
	// public_endpoint = https://keystone.example.org
	//
	// [cache]
	// backend = dogpile.cache.pymemcache
	// enabled = true
	// memcache_servers = memcached-0.memcached:11211,memcached-1.memcached:11211
	//
	// [credential]
	// key_repository = /etc/keystone/credential-keys
	//
	// [fernet_receipts]
	// key_repository = /etc/keystone/fernet-keys
	// max_active_keys = 3
	//
	// [fernet_tokens]
	// key_repository = /etc/keystone/fernet-keys
	// max_active_keys = 3
	//
	// [identity]
	// domain_config_dir = /etc/keystone/domains
	// domain_specific_drivers_enabled = true
	//
	// [security_compliance]
	// lockout_failure_attempts = 5
	//
	// [token]
	// allow_expired_window = 172800
	// expiration = 7200
	// provider = fernet
	// true
	// invalid Keystone settings: Settings.ExtraConfig["database"]["connection"]: the connection is read from the environment variable OS_DATABASE__CONNECTION, which overrides the file
}

// ExampleDomainConfig renders the file of an LDAP-backed domain, with the bind
// password escaped for oslo.config, and shows a domain name that would leave the
// directory being refused.
func ExampleDomainConfig() {
	password, err := settings.EscapeValue("pa$$word")
	if err != nil {
		panic(err)
	}
	sections := map[string]map[string]string{
		"identity": {"driver": "ldap"},
		"ldap": {
			"url":      "ldaps://ldap.example.org",
			"user":     "cn=keystone,ou=services,dc=example,dc=org",
			"password": password,
			"suffix":   "dc=example,dc=org",
		},
	}
	name, content, err := settings.DomainConfig("corp", sections)
	if err != nil {
		panic(err)
	}
	fmt.Println(name)
	fmt.Print(content)

	_, _, err = settings.DomainConfig("../corp", sections)
	fmt.Println(err)
	// Output:
	// keystone.corp.conf
	// # Rendered by the keystone operator for the domain corp; do not edit.
	// [identity]
	// driver = ldap
	//
	// [ldap]
	// password = pa$$$$word
	// suffix = dc=example,dc=org
	// url = ldaps://ldap.example.org
	// user = cn=keystone,ou=services,dc=example,dc=org
	// invalid Keystone settings: domain "../corp" contains ".."
}
