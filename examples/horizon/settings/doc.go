// Package settings renders the local_settings.py of Horizon, the OpenStack dashboard,
// for the example Horizon operator. The controller maps its custom resource to
// [Settings], calls [Render] and stores the bytes in an immutable ConfigMap mounted into
// the dashboard pods. The package is pure Go and talks to no API server.
//
// # The rendered file
//
// Horizon's settings module imports local_settings.py after its own defaults, so the file
// is a list of plain assignments that override those defaults. [Render] always writes,
// in this order:
//
//   - the comment "# Rendered by the horizon operator; do not edit." and "import os";
//   - DEBUG (Settings.Debug), ALLOWED_HOSTS (Settings.AllowedHosts, ["*"] when empty)
//     and TIME_ZONE (Settings.TimeZone, "UTC" when empty);
//   - SECRET_KEY = os.environ["HORIZON_SECRET_KEY"] ([SecretKeyEnv]): the key is read
//     from the pod's environment at import time and is never part of the file, and
//     SESSION_ENGINE = "django.contrib.sessions.backends.signed_cookies", so sessions
//     live in cookies signed with that key and need no shared session store;
//   - CACHES with the single cache "default": PyMemcacheCache with LOCATION =
//     Settings.MemcachedServers, or LocMemCache when there are none, and in both cases
//     KEY_PREFIX = [KeyPrefix](Settings.Image), "horizon-" and 12 hex digits of the
//     image's SHA-256, so a new image never reads entries cached by an older one;
//   - OPENSTACK_KEYSTONE_URL (Settings.KeystoneURL) and OPENSTACK_ENDPOINT_TYPE =
//     "internalURL", so the dashboard talks to the services' cluster-internal endpoints;
//   - LOGGING, a logging.config.dictConfig dict: version 1, disable_existing_loggers
//     False, one handler "console" (a logging.StreamHandler, which writes to stderr) and
//     the root logger on it at level INFO, or DEBUG with Settings.Debug;
//   - COMPRESS_OFFLINE = True and COMPRESS_ENABLED = True: django-compressor serves
//     CSS and JavaScript bundles compressed ahead of time (manage.py compress, run when
//     the image is built or before the dashboard starts), never on request.
//
// Then, only when asked for:
//
//   - SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") with
//     Settings.Gateway, a 2-tuple as Django requires;
//   - the web single sign-on block with an enabled Settings.WebSSO: WEBSSO_ENABLED =
//     True, WEBSSO_CHOICES (a tuple of (id, label) pairs, in order),
//     WEBSSO_INITIAL_CHOICE, WEBSSO_IDP_MAPPING (a dict of choice ID to
//     (identity provider, protocol), sorted), WEBSSO_KEYSTONE_URL, and always
//     WEBSSO_USE_HTTP_REFERER = False: OPENSTACK_KEYSTONE_URL is the cluster-local
//     Service, and with True openstack_auth would validate the token against the
//     Keystone URL of the browser's Referer, resolved from inside the pod;
//   - the multi-domain block with an enabled Settings.MultiDomain:
//     OPENSTACK_KEYSTONE_MULTIDOMAIN_SUPPORT = True,
//     OPENSTACK_KEYSTONE_DEFAULT_DOMAIN, OPENSTACK_KEYSTONE_DOMAIN_DROPDOWN = True and
//     OPENSTACK_KEYSTONE_DOMAIN_CHOICES (a tuple of (id, label) pairs, in order);
//   - Settings.ExtraConfig, one NAME = value line per entry in sorted order of names,
//     last, so each entry overrides any earlier assignment of its name.
//
// An optional setting whose field is empty (or, for the drop-down, false) is omitted, not
// rendered empty: an empty string, tuple or dict would replace Horizon's default with a
// value that means nothing. A disabled block renders nothing at all, so Settings with a
// nil WebSSO and with a disabled one render the same bytes.
//
// # Safety of user input
//
// Every string from [Settings] is written as an escaped Python string literal, so no
// input can end its literal or start a statement. ExtraConfig values are Python source
// and must be a single-line literal that ast.literal_eval accepts (the exact subset is
// documented on [Render]): they can set any value but cannot call anything or add a
// statement. SECRET_KEY cannot be set through ExtraConfig. Invalid input is refused with
// errors that wrap [ErrInvalidSettings] and name the Go field.
//
// # Typed settings and ExtraConfig
//
// [DeclaredSettings] lists the setting names that the WebSSO and MultiDomain blocks of a
// [Settings] render, each with the custom resource field that produces it (for example
// "WEBSSO_CHOICES" → "websso.choices"). [Render] lets ExtraConfig override them like any
// other setting; an admission webhook uses DeclaredSettings to refuse an extraConfig key
// that would silently override a typed field, naming both.
package settings
