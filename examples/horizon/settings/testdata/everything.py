# Rendered by the horizon operator; do not edit.
import os

DEBUG = True
ALLOWED_HOSTS = ["dashboard.example.org", ".example.org"]
TIME_ZONE = "Europe/Berlin"

SECRET_KEY = os.environ["HORIZON_SECRET_KEY"]
SESSION_ENGINE = "django.contrib.sessions.backends.signed_cookies"

CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.memcached.PyMemcacheCache",
        "LOCATION": ["memcached:11211"],
        "KEY_PREFIX": "horizon-60f1b7d6c862",
    },
}

OPENSTACK_KEYSTONE_URL = "http://keystone.openstack.svc:5000/v3"
OPENSTACK_ENDPOINT_TYPE = "internalURL"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
        },
    },
    "root": {
        "handlers": ["console"],
        "level": "DEBUG",
    },
}

COMPRESS_OFFLINE = True
COMPRESS_ENABLED = True

SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

WEBSSO_ENABLED = True
WEBSSO_CHOICES = (
    ("credentials", "Keystone Credentials"),
    ("oidc", "OpenID Connect"),
    ("saml2", "Security Assertion Markup Language"),
)
WEBSSO_INITIAL_CHOICE = "oidc"
WEBSSO_IDP_MAPPING = {
    "oidc": ("corp-oidc", "openid"),
    "saml2": ("corp-saml", "saml2"),
}
WEBSSO_KEYSTONE_URL = "https://keystone.example.org/v3"
WEBSSO_USE_HTTP_REFERER = False

OPENSTACK_KEYSTONE_MULTIDOMAIN_SUPPORT = True
OPENSTACK_KEYSTONE_DEFAULT_DOMAIN = "Default"
OPENSTACK_KEYSTONE_DOMAIN_DROPDOWN = True
OPENSTACK_KEYSTONE_DOMAIN_CHOICES = (
    ("Default", "Default"),
    ("corp", "Corporate LDAP"),
)

# ExtraConfig, applied last: overrides the settings above.
SESSION_TIMEOUT = 7200
TIME_ZONE = "UTC"
