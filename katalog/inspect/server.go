package inspect

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/c5c3/reconciler-sdk/httpauth"
)

// DefaultBindAddress is where NewServer listens when ServerOptions.BindAddress is
// empty: port 8080 of the loopback interface, reachable from the pod itself only
// (kubectl port-forward reaches it).
const DefaultBindAddress = "127.0.0.1:8080"

// The limits of the inspector's HTTP server.
const (
	// ServerReadHeaderTimeout bounds reading a request's header.
	ServerReadHeaderTimeout = 5 * time.Second
	// ServerReadTimeout bounds reading a whole request.
	ServerReadTimeout = 10 * time.Second
	// ServerWriteTimeout bounds a request from the end of its header to the end of
	// the answer: the reads (ReadTimeout), a review of the client's token and access,
	// and rendering.
	ServerWriteTimeout = 30 * time.Second
	// ServerIdleTimeout closes a kept-alive connection that sends nothing for this long.
	ServerIdleTimeout = 60 * time.Second
	// ServerMaxHeaderBytes bounds a request's header.
	ServerMaxHeaderBytes = 64 << 10
	// serverShutdownTimeout bounds the graceful stop.
	serverShutdownTimeout = 5 * time.Second
)

// ServerOptions configure NewServer.
type ServerOptions struct {
	// BindAddress is host:port to listen on; empty means DefaultBindAddress. On a
	// loopback address (127.0.0.0/8, ::1) the inspector answers plain HTTP to every
	// request; on any other address (an empty host is every interface) it serves
	// HTTPS, and only to a client whose bearer token the API server authenticates and
	// whose user may get the request's path (see package httpauth and the package
	// documentation).
	BindAddress string
	// Config reaches the API server for those reviews, as the operator: required
	// unless BindAddress is a loopback address.
	Config *rest.Config
	// HTTPClient is the client for Config (mgr.GetHTTPClient()); nil builds one.
	HTTPClient *http.Client
	// CertDir holds the certificate tls.crt and key tls.key of the HTTPS server,
	// reloaded when they change; empty means a self-signed certificate.
	CertDir string
	// Logger receives the errors of the reviews and of serving.
	Logger logr.Logger
}

// Server serves the inspector as a manager Runnable: it starts and stops with the
// manager, on every replica (it needs no leader election).
type Server struct {
	listener net.Listener
	server   *http.Server
	secure   bool
	watch    func(context.Context) error
	log      logr.Logger
}

var (
	_ manager.Runnable               = (*Server)(nil)
	_ manager.LeaderElectionRunnable = (*Server)(nil)
)

// NewServer binds opts.BindAddress at once, so that a taken port fails the start, and
// serves h under /katalog/ and /controlcenter/; / redirects to /controlcenter/. It
// fails with ErrInvalidOptions for a non-loopback address without opts.Config, and
// with the listener's error naming the address.
func NewServer(h http.Handler, opts ServerOptions) (*Server, error) {
	addr := opts.BindAddress
	if addr == "" {
		addr = DefaultBindAddress
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, fmt.Errorf("%w: BindAddress %q: want host:port: %w", ErrInvalidOptions, addr, err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("inspector address %q: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/katalog/", h)
	mux.Handle("/controlcenter/", h)
	mux.Handle("/{$}", http.RedirectHandler("/controlcenter/", http.StatusFound))
	s := &Server{listener: ln, watch: func(context.Context) error { return nil }, log: opts.Logger}
	var handler http.Handler = mux
	if !loopback(ln.Addr()) {
		if err := s.secureWith(opts, &handler); err != nil {
			_ = ln.Close()
			return nil, err
		}
	}
	s.server = &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: ServerReadHeaderTimeout,
		ReadTimeout:       ServerReadTimeout,
		WriteTimeout:      ServerWriteTimeout,
		IdleTimeout:       ServerIdleTimeout,
		MaxHeaderBytes:    ServerMaxHeaderBytes,
	}
	return s, nil
}

// secureWith puts *h behind authentication and authorization and the listener behind
// TLS.
func (s *Server) secureWith(opts ServerOptions, h *http.Handler) error {
	if opts.Config == nil {
		return fmt.Errorf("%w: the inspector listens on %s, beyond the loopback interface, and needs Config to authenticate and authorize its clients",
			ErrInvalidOptions, s.listener.Addr())
	}
	g, err := httpauth.New(opts.Config, opts.HTTPClient, opts.Logger)
	if err != nil {
		return err
	}
	cfg, watch, err := httpauth.TLSConfig(opts.CertDir)
	if err != nil {
		return fmt.Errorf("inspector: %w", err)
	}
	*h = g.Handler(*h)
	s.listener = tls.NewListener(s.listener, cfg)
	s.secure, s.watch = true, watch
	return nil
}

// loopback reports whether addr is an IP address of the loopback interface.
func loopback(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

// Addr returns the address the inspector listens on.
func (s *Server) Addr() string { return s.listener.Addr().String() }

// Secure reports whether the inspector serves HTTPS behind authentication and
// authorization: whether it listens beyond the loopback interface.
func (s *Server) Secure() bool { return s.secure }

// URL returns the inspector's base URL: https://ADDR when Secure, http://ADDR
// otherwise.
func (s *Server) URL() string {
	if s.secure {
		return "https://" + s.Addr()
	}
	return "http://" + s.Addr()
}

// Close stops listening; use it when the Server is never started.
func (s *Server) Close() error { return s.listener.Close() }

// Start serves until ctx ends, then shuts the server down.
func (s *Server) Start(ctx context.Context) error {
	done := make(chan error, 1)
	go func() { done <- s.server.Serve(s.listener) }()
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go func() {
		if err := s.watch(watchCtx); err != nil {
			s.log.Error(err, "watching the inspector's certificate", "address", s.Addr())
		}
	}()
	select {
	case err := <-done:
		return fmt.Errorf("inspector on %s: %w", s.Addr(), err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), serverShutdownTimeout)
	defer cancel()
	if err := s.server.Shutdown(shutdown); err != nil {
		return fmt.Errorf("stopping the inspector on %s: %w", s.Addr(), err)
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("inspector on %s: %w", s.Addr(), err)
	}
	return nil
}

// NeedLeaderElection is false: every replica serves the inspector.
func (s *Server) NeedLeaderElection() bool { return false }
