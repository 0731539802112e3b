package database

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"path"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
)

// DefaultPort is the MySQL port [ConnectionURL] uses when Connection.Port is 0.
const DefaultPort = 3306

// ConnectionDataKey is the key of the URL in a connection Secret when
// ConnectionSecretParams.DataKey is empty.
const ConnectionDataKey = "connection"

// ConnectionEnv is the environment variable oslo.config reads [database] connection
// from; set it from the connection Secret with [ConnectionEnvVar].
const ConnectionEnv = "OS_DATABASE__CONNECTION"

// maxDatabaseName is MySQL's length limit of a database name.
const maxDatabaseName = 64

// Connection is where a client reaches its database with PyMySQL. It holds no
// password: that is an argument of [ConnectionURL] and [EnsureConnectionSecret].
type Connection struct {
	// Host is the server's DNS name or IP address.
	Host string
	// Port is the server's TCP port; [DefaultPort] when 0.
	Port int
	// Name is the database: 1 to 64 ASCII letters, digits, "_" and "-".
	Name string
	// User is the account the client logs in as.
	User string
	// CAFile is the absolute path, in the client's pods, of the PEM file of the CA that
	// signed the server's certificate; set, the connection uses TLS. Empty: no TLS.
	CAFile string
	// CertFile and KeyFile are the absolute paths of the client certificate and its
	// key, for an account that requires one (X509); both or neither, and only with
	// CAFile.
	CertFile, KeyFile string
}

// ConnectionURL returns the SQLAlchemy URL of conn for [database] connection:
//
//	mysql+pymysql://<user>:<password>@<host>:<port>/<name>[?ssl_ca=…[&ssl_cert=…&ssl_key=…]]
//
// See "Connection URL and Secret" in the package documentation for the escaping and the
// validation. Errors wrap [ErrInvalidParams], name the field, never quote the password,
// and report every problem at once; on error the URL is "".
func ConnectionURL(conn Connection, password string) (string, error) {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: connection: "+format, append([]any{ErrInvalidParams}, args...)...))
	}
	host := conn.Host
	switch ip := net.ParseIP(conn.Host); {
	case conn.Host == "":
		bad("Host is empty")
	case ip != nil && strings.Contains(conn.Host, ":"):
		host = "[" + conn.Host + "]"
	case ip == nil && !isHostName(conn.Host):
		bad("Host %q is neither an IP address nor a DNS name", conn.Host)
	}
	port := conn.Port
	if port == 0 {
		port = DefaultPort
	}
	if port < 1 || port > 65535 {
		bad("Port %d is not a TCP port (1 to 65535)", conn.Port)
	}
	switch {
	case conn.Name == "":
		bad("Name is empty")
	case len(conn.Name) > maxDatabaseName:
		bad("Name %q is longer than %d characters", conn.Name, maxDatabaseName)
	case strings.IndexFunc(conn.Name, func(r rune) bool { return !isAlnum(r) && r != '_' && r != '-' }) >= 0:
		bad("Name %q contains a character other than ASCII letters, digits, \"_\" and \"-\"", conn.Name)
	}
	switch {
	case conn.User == "":
		bad("User is empty")
	case !utf8.ValidString(conn.User):
		bad("User %q is not valid UTF-8", conn.User)
	}
	switch {
	case password == "":
		bad("the password is empty")
	case !utf8.ValidString(password):
		bad("the password is not valid UTF-8")
	}
	var query []string
	for _, f := range []struct{ field, param, value string }{
		{"CAFile", "ssl_ca", conn.CAFile}, {"CertFile", "ssl_cert", conn.CertFile}, {"KeyFile", "ssl_key", conn.KeyFile},
	} {
		if f.value == "" {
			continue
		}
		switch {
		case !utf8.ValidString(f.value):
			bad("%s %q is not valid UTF-8", f.field, f.value)
		case strings.IndexFunc(f.value, unicode.IsControl) >= 0:
			bad("%s %q contains a control character", f.field, f.value)
		case !path.IsAbs(f.value):
			bad("%s %q is not an absolute path", f.field, f.value)
		}
		query = append(query, f.param+"="+url.QueryEscape(f.value))
	}
	switch {
	case (conn.CertFile == "") != (conn.KeyFile == ""):
		bad("CertFile and KeyFile go together: set both or neither")
	case conn.CertFile != "" && conn.CAFile == "":
		bad("CertFile needs CAFile: a client certificate is only presented to a server it verifies")
	}
	if err := errors.Join(errs...); err != nil {
		return "", err
	}
	u := "mysql+pymysql://" + escapeUserInfo(conn.User) + ":" + escapeUserInfo(password) + "@" +
		host + ":" + strconv.Itoa(port) + "/" + conn.Name
	if len(query) > 0 {
		u += "?" + strings.Join(query, "&")
	}
	return u, nil
}

// ConnectionSecretParams are the connection Secret of [EnsureConnectionSecret], or of
// [ProvisionFlow] with ProvisionParams.Connection.
type ConnectionSecretParams struct {
	// Name is the Secret's name, in the owner's namespace. Required.
	Name string
	// DataKey holds the URL; [ConnectionDataKey] when empty.
	DataKey string
	// ConfigKey, when set, also holds the URL as an oslo.config file,
	// "[database]\nconnection = <url>\n", for pods that read a configuration directory.
	ConfigKey string
	// Labels are set on the Secret.
	Labels map[string]string
	// Connection is the server and database. Under ProvisionParams, empty fields are
	// taken from the provisioned objects (see [ProvisionParams].Connection).
	Connection Connection
}

// Connected is the answer of [EnsureConnectionSecret].
type Connected struct {
	// Key is the connection Secret's namespace/name.
	Key client.ObjectKey
	// Version is the Secret's resourceVersion after the apply: it changes exactly when
	// the Secret was written, so a pod-template annotation of it rolls the pods that read
	// the URL from the environment. It is not derived from the content.
	Version string
}

// EnsureConnectionSecret applies the Secret p.Name holding [ConnectionURL](p.Connection,
// password) under p.DataKey (and, with p.ConfigKey, the oslo.config snippet), controlled
// by owner through apply.EnsureObject (see "Objects of others" in the package
// documentation). Invalid input wraps [ErrInvalidParams] before any API call; no error
// quotes the password or the URL.
func EnsureConnectionSecret(ctx context.Context, c client.Client, scheme *runtime.Scheme, owner client.Object,
	p ConnectionSecretParams, password string) (Connected, error) {
	if isNil(owner) {
		return Connected{}, fmt.Errorf("connection Secret %q: %w", p.Name, apply.ErrNilOwner)
	}
	key := client.ObjectKey{Namespace: owner.GetNamespace(), Name: p.Name}
	if err := p.validate(); err != nil {
		return Connected{}, fmt.Errorf("connection Secret %s: %w", key, err)
	}
	u, err := ConnectionURL(p.Connection, password)
	if err != nil {
		return Connected{}, fmt.Errorf("connection Secret %s: %w", key, err)
	}
	secret := p.desired(key, u)
	if err := apply.EnsureObject(ctx, c, scheme, owner, secret, apply.FieldManager); err != nil {
		return Connected{}, redact(fmt.Errorf("connection Secret %s: %w", key, err), password, u)
	}
	return Connected{Key: key, Version: secret.ResourceVersion}, nil
}

// ConnectionEnvVar is the [ConnectionEnv] variable of a container, read from key (empty:
// [ConnectionDataKey]) of the connection Secret secretName.
func ConnectionEnvVar(secretName, key string) corev1.EnvVar {
	if key == "" {
		key = ConnectionDataKey
	}
	return corev1.EnvVar{Name: ConnectionEnv, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: secretName}, Key: key,
	}}}
}

// validate checks what EnsureConnectionSecret needs besides the URL.
func (p ConnectionSecretParams) validate() error {
	var errs []error
	if p.Name == "" {
		errs = append(errs, fmt.Errorf("%w: connection Secret: Name is empty", ErrInvalidParams))
	} else if msgs := validation.IsDNS1123Subdomain(p.Name); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("%w: connection Secret: Name %q: %s", ErrInvalidParams, p.Name, strings.Join(msgs, "; ")))
	}
	for _, k := range []struct{ field, key string }{{"DataKey", p.DataKey}, {"ConfigKey", p.ConfigKey}} {
		if k.key == "" {
			continue
		}
		if msgs := validation.IsConfigMapKey(k.key); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("%w: connection Secret: %s %q: %s", ErrInvalidParams, k.field, k.key, strings.Join(msgs, "; ")))
		}
	}
	if p.ConfigKey != "" && p.ConfigKey == p.dataKey() {
		errs = append(errs, fmt.Errorf("%w: connection Secret: ConfigKey %q is the DataKey", ErrInvalidParams, p.ConfigKey))
	}
	return errors.Join(errs...)
}

func (p ConnectionSecretParams) dataKey() string {
	if p.DataKey == "" {
		return ConnectionDataKey
	}
	return p.DataKey
}

// desired is the connection Secret holding u.
func (p ConnectionSecretParams) desired(key client.ObjectKey, u string) *corev1.Secret {
	data := map[string][]byte{p.dataKey(): []byte(u)}
	if p.ConfigKey != "" {
		data[p.ConfigKey] = []byte("[database]\nconnection = " + u + "\n")
	}
	var labels map[string]string
	if len(p.Labels) > 0 {
		labels = make(map[string]string, len(p.Labels))
		for k, v := range p.Labels {
			labels[k] = v
		}
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace, Labels: labels},
		Type:       corev1.SecretTypeOpaque,
		Data:       data,
	}
}

// redactedError hides secrets from an error's text; errors.Is and errors.As still see
// the wrapped error.
type redactedError struct {
	err     error
	secrets []string
}

func (e *redactedError) Error() string {
	msg := e.err.Error()
	for _, s := range e.secrets {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, "xxxxx")
		}
	}
	return msg
}

func (e *redactedError) Unwrap() error { return e.err }

// redact wraps err so that its text quotes none of the URL, the password and its
// escaped form, should an API error ever echo the Secret's data.
func redact(err error, password, u string) error {
	return &redactedError{err: err, secrets: []string{u, password, escapeUserInfo(password)}}
}

// escapeUserInfo percent-encodes every byte of s except ASCII letters, digits and
// "-._~" (the unreserved characters of RFC 3986).
func escapeUserInfo(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isAlnum(rune(c)) || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
			continue
		}
		const hexDigits = "0123456789ABCDEF"
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&0xf])
	}
	return b.String()
}

// isHostName reports whether h is a DNS name: dot-separated labels of 1 to 63 ASCII
// letters, digits and inner hyphens, at most 253 characters.
func isHostName(h string) bool {
	if len(h) > 253 {
		return false
	}
	for label := range strings.SplitSeq(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if !isAlnum(r) && r != '-' {
				return false
			}
		}
	}
	return true
}

func isAlnum(r rune) bool {
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
}
