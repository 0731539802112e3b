// Package settings renders keystone.conf and the domain-specific identity files of
// Keystone, the OpenStack identity service, for the example Keystone operator. The
// controller maps its custom resource to [Settings], calls [Render] and stores the text
// in an immutable ConfigMap mounted into the Keystone pods. The package is pure Go,
// talks to no API server, and writes every file through package config (RenderINI,
// Merge, LiftSections), so whatever it accepts oslo.config reads back unchanged.
//
// # keystone.conf
//
// [Render] writes a comment line and then these options (section, option: field):
//
//	[DEFAULT]          debug                            Settings.Debug (always)
//	[DEFAULT]          public_endpoint                  Settings.PublicEndpoint (when set)
//	[cache]            enabled = true,                  Settings.MemcachedServers (when set)
//	                   backend = dogpile.cache.pymemcache,
//	                   memcache_servers
//	[credential]       key_repository                   Settings.CredentialKeyRepository
//	[fernet_receipts]  key_repository, max_active_keys  Settings.FernetKeyRepository, Settings.MaxActiveKeys
//	[fernet_tokens]    key_repository, max_active_keys  Settings.FernetKeyRepository, Settings.MaxActiveKeys
//	[identity]         domain_specific_drivers_enabled  Settings.IdentityDomains (when set)
//	                   = true, domain_config_dir
//	[oslo_policy]      policy_file                      Settings.PolicyFile (when set)
//	[token]            expiration                       Settings.TokenExpiration
//	[token]            allow_expired_window             Settings.AllowExpiredWindow
//	[token]            provider = fernet                (always)
//
// The key repositories, MaxActiveKeys, TokenExpiration and AllowExpiredWindow are
// always rendered, with Keystone's defaults when the field is empty or 0, so the file
// states the values the operator's key rotation has to respect. Fernet receipts (the
// multi-factor authentication receipts) share the token keys, as in Keystone's default
// layout. Settings.ExtraConfig, the operator's escape hatch, is merged last with
// config.Merge and replaces any of these options.
//
// # The database connection
//
// The file holds no [database] connection and therefore no password. oslo.config reads
// every option from an environment variable OS_<GROUP>__<OPTION> before it reads the
// configuration files, so the controller stores database.ConnectionURL (a
// mysql+pymysql:// URL with user and password percent-encoded and, for a database with
// TLS, the CA and client certificate files) in a Secret (database.EnsureConnectionSecret)
// and sets [ConnectionEnv],
// OS_DATABASE__CONNECTION, from it in every Keystone container and keystone-manage
// Job. keystone.conf then fits a ConfigMap (config.CreateImmutableConfigMap);
// ExtraConfig cannot set [database] connection. Were the URL written into the file, the
// file would be a secret as a whole and would have to be stored with
// config.CreateImmutableSecret.
//
// # Domain-specific identity backends
//
// With Settings.IdentityDomains set, Keystone loads one file per domain from
// [DomainConfigDir], /etc/keystone/domains. [DomainConfig] renders that file,
// keystone.<domain>.conf, from INI sections such as [identity] driver = ldap and an
// [ldap] section. It usually carries a bind password and goes into a Secret.
//
// # Safety of input
//
// Every problem is refused with an error that wraps [ErrInvalidSettings] and names the
// Go field or parameter, all problems of one call at once. Errors never quote a
// password, an ExtraConfig value or a value of a domain file. Typed fields must be
// plain text without "$", since oslo.config substitutes "$name" with another option;
// ExtraConfig and domain sections are raw oslo.config values, where [EscapeValue]
// writes a literal, and their section names other than DEFAULT must be lower case,
// since oslo.config lower-cases them and would merge "[Token]" into "[token]". Domain names are restricted to the characters of a Secret key and
// may not contain "..", so a domain file name can never leave its directory.
package settings
