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

OPENSTACK_KEYSTONE_MULTIDOMAIN_SUPPORT = True
