package settings

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"path"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// DefaultDatabasePort is the MySQL port [ConnectionURL] uses when Database.Port is 0.
const DefaultDatabasePort = 3306

// maxDatabaseName is MySQL's length limit of a database name.
const maxDatabaseName = 64

// Database is where Keystone keeps its data: a MySQL or MariaDB database reached with
// PyMySQL. It holds no credential; the password is a separate argument of
// [ConnectionURL].
type Database struct {
	// Host is the server's DNS name or IP address. Required.
	Host string
	// Port is the server's TCP port; [DefaultDatabasePort] when 0.
	Port int
	// Name is the database, 1 to 64 ASCII letters, digits and "_". Required.
	Name string
	// User is the account Keystone logs in as. Required.
	User string
	// CAFile is the path, inside the Keystone containers, of the PEM file of the CA
	// that signed the server's certificate. When set, the connection uses TLS and
	// PyMySQL verifies the certificate and that it names Host. Must be an absolute
	// path. Empty means no TLS.
	CAFile string
}

// ConnectionURL returns the SQLAlchemy URL of db for [database] connection:
//
//	mysql+pymysql://<user>:<password>@<host>:<port>/<name>[?ssl_ca=<CAFile>]
//
// User and password are percent-encoded except for ASCII letters, digits and "-._~",
// which SQLAlchemy decodes again; CAFile is query-encoded. An IPv6 Host is written in
// brackets. The URL therefore never contains "$", "@", "/" or "?" from the user or
// the password, and oslo.config reads it back unchanged (it would substitute a "$").
//
// The URL holds the password: the controller stores it in a Secret and sets
// [ConnectionEnv] from it in every Keystone container and keystone-manage Job; it never
// belongs in keystone.conf, a log, an event or a condition. Errors wrap
// [ErrInvalidSettings], name the Database field and never quote the password; all
// problems are reported at once. On error the URL is "".
func ConnectionURL(db Database, password string) (string, error) {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalidSettings}, args...)...))
	}
	host := db.Host
	switch ip := net.ParseIP(db.Host); {
	case db.Host == "":
		bad("Database.Host %q is empty", db.Host)
	case ip != nil && strings.Contains(db.Host, ":"):
		host = "[" + db.Host + "]"
	case ip == nil && !isHostName(db.Host):
		bad("Database.Host %q is neither an IP address nor a DNS name", db.Host)
	}
	port := intOrDefault(db.Port, DefaultDatabasePort)
	if port < 1 || port > 65535 {
		bad("Database.Port %d is not a TCP port (1 to 65535)", db.Port)
	}
	switch {
	case db.Name == "":
		bad("Database.Name %q is empty", db.Name)
	case len(db.Name) > maxDatabaseName:
		bad("Database.Name %q is longer than %d characters", db.Name, maxDatabaseName)
	case strings.IndexFunc(db.Name, func(r rune) bool { return !isAlnum(r) && r != '_' }) >= 0:
		bad("Database.Name %q contains a character other than ASCII letters, digits and \"_\"", db.Name)
	}
	switch {
	case db.User == "":
		bad("Database.User %q is empty", db.User)
	case !utf8.ValidString(db.User):
		bad("Database.User %q is not valid UTF-8", db.User)
	}
	switch {
	case password == "":
		bad("the password is empty")
	case !utf8.ValidString(password):
		bad("the password is not valid UTF-8")
	}
	query := ""
	if db.CAFile != "" {
		switch {
		case !utf8.ValidString(db.CAFile):
			bad("Database.CAFile %q is not valid UTF-8", db.CAFile)
		case strings.IndexFunc(db.CAFile, unicode.IsControl) >= 0:
			bad("Database.CAFile %q contains a control character", db.CAFile)
		case !path.IsAbs(db.CAFile):
			bad("Database.CAFile %q is not an absolute path", db.CAFile)
		}
		query = "?ssl_ca=" + url.QueryEscape(db.CAFile)
	}
	if err := errors.Join(errs...); err != nil {
		return "", err
	}
	return "mysql+pymysql://" + escapeUserInfo(db.User) + ":" + escapeUserInfo(password) + "@" +
		host + ":" + strconv.Itoa(port) + "/" + db.Name + query, nil
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
