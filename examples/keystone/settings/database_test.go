package settings_test

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/c5c3/reconciler-sdk/examples/keystone/settings"
)

// TestConnectionURL checks the URL for typical databases.
func TestConnectionURL(t *testing.T) {
	tests := map[string]struct {
		db       settings.Database
		password string
		want     string
	}{
		"default port": {
			db:       settings.Database{Host: "mariadb.openstack.svc", Name: "keystone", User: "keystone"},
			password: "pw",
			want:     "mysql+pymysql://keystone:pw@mariadb.openstack.svc:3306/keystone",
		},
		"port and TLS": {
			db:       settings.Database{Host: "db", Port: 13306, Name: "ks_1", User: "ks", CAFile: "/etc/keystone/db-tls/ca.crt"},
			password: "pw",
			want:     "mysql+pymysql://ks:pw@db:13306/ks_1?ssl_ca=%2Fetc%2Fkeystone%2Fdb-tls%2Fca.crt",
		},
		"CA file with characters to encode": {
			db:       settings.Database{Host: "db", Name: "k", User: "k", CAFile: "/tls/a b&c=$d+.pem"},
			password: "pw",
			want:     "mysql+pymysql://k:pw@db:3306/k?ssl_ca=%2Ftls%2Fa+b%26c%3D%24d%2B.pem",
		},
		"IPv4": {
			db:       settings.Database{Host: "10.0.0.7", Name: "keystone", User: "keystone"},
			password: "pw",
			want:     "mysql+pymysql://keystone:pw@10.0.0.7:3306/keystone",
		},
		"IPv6 in brackets": {
			db:       settings.Database{Host: "fd00::7", Name: "keystone", User: "keystone"},
			password: "pw",
			want:     "mysql+pymysql://keystone:pw@[fd00::7]:3306/keystone",
		},
		"IPv4-mapped IPv6 in brackets": {
			db:       settings.Database{Host: "::ffff:10.0.0.7", Name: "keystone", User: "keystone"},
			password: "pw",
			want:     "mysql+pymysql://keystone:pw@[::ffff:10.0.0.7]:3306/keystone",
		},
		"user and password escaped": {
			db:       settings.Database{Host: "db", Name: "keystone", User: "key:stone@x"},
			password: `p@ss:w/o?r#d$%\ é~-._`,
			want:     "mysql+pymysql://key%3Astone%40x:p%40ss%3Aw%2Fo%3Fr%23d%24%25%5C%20%C3%A9~-._@db:3306/keystone",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := settings.ConnectionURL(tt.db, tt.password)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("ConnectionURL = %q, want %q", got, tt.want)
			}
			checkURLReadsBack(t, got, tt.db, tt.password)
		})
	}
}

// checkURLReadsBack decodes u as SQLAlchemy does (user and password percent-decoded,
// the query parsed as a form) and compares the parts with the input.
func checkURLReadsBack(t testing.TB, u string, db settings.Database, password string) {
	t.Helper()
	if strings.ContainsAny(u, "$\\\x00\n\r ") {
		t.Fatalf("URL %q contains a character oslo.config or SQLAlchemy would misread", u)
	}
	parsed, err := url.Parse(u)
	if err != nil {
		t.Fatalf("url.Parse: %v", err)
	}
	gotPassword, _ := parsed.User.Password()
	port := db.Port
	if port == 0 {
		port = settings.DefaultDatabasePort
	}
	got := []string{parsed.Scheme, parsed.User.Username(), gotPassword, parsed.Hostname(), parsed.Port(), parsed.Path, parsed.Query().Get("ssl_ca")}
	want := []string{"mysql+pymysql", db.User, password, db.Host, itoa(port), "/" + db.Name, db.CAFile}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("URL %q reads back (-want +got):\n%s", u, diff)
	}
	if at := strings.Count(u, "@"); at != 1 {
		t.Errorf("URL %q has %d \"@\"", u, at)
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// TestConnectionURLErrors checks every refused database, all problems at once, without
// the password.
func TestConnectionURLErrors(t *testing.T) {
	const secret = "hunter2-do-not-log"
	good := settings.Database{Host: "db", Name: "keystone", User: "keystone"}
	with := func(mod func(*settings.Database)) settings.Database {
		d := good
		mod(&d)
		return d
	}
	tests := map[string]struct {
		db       settings.Database
		password string
		want     []string
	}{
		"everything missing": {
			db:   settings.Database{},
			want: []string{`Database.Host "" is empty`, `Database.Name "" is empty`, `Database.User "" is empty`, `the password is empty`},
		},
		"host with a path":   {db: with(func(d *settings.Database) { d.Host = "db/x" }), password: secret, want: []string{`Database.Host "db/x" is neither an IP address nor a DNS name`}},
		"host with a user":   {db: with(func(d *settings.Database) { d.Host = "u@db" }), password: secret, want: []string{`Database.Host "u@db" is neither an IP address nor a DNS name`}},
		"host with a port":   {db: with(func(d *settings.Database) { d.Host = "db:3306" }), password: secret, want: []string{`Database.Host "db:3306" is neither an IP address nor a DNS name`}},
		"host label hyphen":  {db: with(func(d *settings.Database) { d.Host = "-db" }), password: secret, want: []string{`Database.Host "-db" is neither an IP address nor a DNS name`}},
		"host empty label":   {db: with(func(d *settings.Database) { d.Host = "db..svc" }), password: secret, want: []string{`Database.Host "db..svc" is neither an IP address nor a DNS name`}},
		"port range":         {db: with(func(d *settings.Database) { d.Port = 65536 }), password: secret, want: []string{`Database.Port 65536 is not a TCP port (1 to 65535)`}},
		"negative port":      {db: with(func(d *settings.Database) { d.Port = -1 }), password: secret, want: []string{`Database.Port -1 is not a TCP port (1 to 65535)`}},
		"name with a query":  {db: with(func(d *settings.Database) { d.Name = "keystone?x=1" }), password: secret, want: []string{`Database.Name "keystone?x=1" contains a character other than ASCII letters, digits and "_"`}},
		"name too long":      {db: with(func(d *settings.Database) { d.Name = strings.Repeat("k", 65) }), password: secret, want: []string{`Database.Name "` + strings.Repeat("k", 65) + `" is longer than 64 characters`}},
		"user not UTF-8":     {db: with(func(d *settings.Database) { d.User = "k\xff" }), password: secret, want: []string{`Database.User "k\xff" is not valid UTF-8`}},
		"password not UTF-8": {db: good, password: secret + "\xff", want: []string{`the password is not valid UTF-8`}},
		"CA file relative":   {db: with(func(d *settings.Database) { d.CAFile = "ca.crt" }), password: secret, want: []string{`Database.CAFile "ca.crt" is not an absolute path`}},
		"CA file control":    {db: with(func(d *settings.Database) { d.CAFile = "/ca\n.crt" }), password: secret, want: []string{`Database.CAFile "/ca\n.crt" contains a control character`}},
		"CA file not UTF-8":  {db: with(func(d *settings.Database) { d.CAFile = "/ca\xff" }), password: secret, want: []string{`Database.CAFile "/ca\xff" is not valid UTF-8`}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := settings.ConnectionURL(tt.db, tt.password)
			if !errors.Is(err, settings.ErrInvalidSettings) {
				t.Fatalf("err = %v, want ErrInvalidSettings", err)
			}
			if got != "" {
				t.Errorf("URL returned with the error: %q", got)
			}
			want := make([]string, len(tt.want))
			for i, w := range tt.want {
				want[i] = "invalid Keystone settings: " + w
			}
			if diff := cmp.Diff(want, problems(err)); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error quotes the password: %v", err)
			}
		})
	}
}

// FuzzConnectionURL checks that an accepted database and password give a URL that
// reads back to exactly them, and that no error ever quotes the password.
func FuzzConnectionURL(f *testing.F) {
	f.Add("db.svc", 3306, "keystone", "keystone", "pw", "")
	f.Add("fd00::1", 0, "k", "u:s@r", `p@$$\w/ord?#`, "/ca $&+.pem")
	f.Add("db", 1, "k_1", "ü", "\x00\n", "/x")
	f.Add("a@b", -1, "x?", "", "", "rel")
	f.Fuzz(func(t *testing.T, host string, port int, name, user, password, caFile string) {
		db := settings.Database{Host: host, Port: port, Name: name, User: user, CAFile: caFile}
		got, err := settings.ConnectionURL(db, password)
		if err != nil {
			if !errors.Is(err, settings.ErrInvalidSettings) || got != "" {
				t.Fatalf("err = %v with URL %q", err, got)
			}
			// The text depends on the kind of password only, never on its content.
			class := "x"
			switch {
			case password == "":
				class = ""
			case !utf8.ValidString(password):
				class = "\xff"
			}
			if _, other := settings.ConnectionURL(db, class); other == nil || other.Error() != err.Error() {
				t.Fatalf("error depends on the password:\n%v\n%v", err, other)
			}
			return
		}
		checkURLReadsBack(t, got, db, password)
	})
}
