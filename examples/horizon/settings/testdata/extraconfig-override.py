# Rendered by the horizon operator; do not edit.
import os

DEBUG = False
ALLOWED_HOSTS = ["*"]
TIME_ZONE = "UTC"

SECRET_KEY = os.environ["HORIZON_SECRET_KEY"]
SESSION_ENGINE = "django.contrib.sessions.backends.signed_cookies"

CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
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
        "level": "INFO",
    },
}

COMPRESS_OFFLINE = True
COMPRESS_ENABLED = True

# ExtraConfig, applied last: overrides the settings above.
API_RESULT_LIMIT = 1_000
DEBUG = True
DROPDOWN_MAX_ITEMS = -30
HORIZON_CONFIG_EXTRA = {"password_autocomplete": "off", "modal_backdrop": ("static", 1)}
IMAGE_CUSTOM_PROPERTY_TITLE = {'architecture': r'CPU \ arch', 'x': b'\x00'}
OPENSTACK_ENDPOINT_TYPE = "publicURL"
OPENSTACK_NEUTRON_NETWORK = {'enable_router': False, 'enable_quotas': True}
SESSION_TIMEOUT = 3600
