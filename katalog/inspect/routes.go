package inspect

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/c5c3/reconciler-sdk/katalog"
)

// routes registers the JSON and HTML routes.
func (s *server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/katalog/{crd}/health", s.getOnly(jsonOut, s.serveHealth))
	mux.HandleFunc("/katalog/{crd}", s.getOnly(jsonOut, s.serveCRD))
	mux.HandleFunc("/katalog/{crd}/cr", s.getOnly(jsonOut, s.serveCRList))
	mux.HandleFunc("/katalog/{crd}/cr/{ns}/{name}", s.getOnly(jsonOut, s.serveCRDetail))
	mux.HandleFunc("/katalog/", s.getOnly(jsonOut, func(w http.ResponseWriter, r *http.Request) {
		s.fail(w, jsonOut, http.StatusNotFound, fmt.Sprintf("no route %s", r.URL.Path))
	}))
	mux.HandleFunc("/controlcenter/{$}", s.getOnly(htmlOut, s.pageIndex))
	mux.HandleFunc("/controlcenter/katalog/{crd}", s.getOnly(htmlOut, s.pageCRD))
	mux.HandleFunc("/controlcenter/katalog/{crd}/cr/{ns}/{name}", s.getOnly(htmlOut, s.pageCRDetail))
	mux.HandleFunc("/controlcenter/", s.getOnly(htmlOut, func(w http.ResponseWriter, r *http.Request) {
		s.fail(w, htmlOut, http.StatusNotFound, fmt.Sprintf("no page %s", r.URL.Path))
	}))
	return securityHeaders(mux)
}

// ContentSecurityPolicy is the Content-Security-Policy of every answer: the pages load
// nothing (no script, image, font or frame), style themselves with their inline
// stylesheet only, submit no form and may not be framed.
const ContentSecurityPolicy = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// securityHeaders sets, on every answer, the headers that keep a browser from framing
// a page (X-Frame-Options: DENY and frame-ancestors), from loading anything a value
// from the cluster might smuggle in (ContentSecurityPolicy), from guessing content
// types (nosniff), from sending the page's address elsewhere (Referrer-Policy) and
// from storing an answer (Cache-Control: no-store).
func securityHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hdr := w.Header()
		hdr.Set("X-Frame-Options", "DENY")
		hdr.Set("Content-Security-Policy", ContentSecurityPolicy)
		hdr.Set("X-Content-Type-Options", "nosniff")
		hdr.Set("Referrer-Policy", "no-referrer")
		hdr.Set("Cache-Control", "no-store")
		h.ServeHTTP(w, r)
	})
}

// output selects how answers and errors are written.
type output int

const (
	jsonOut output = iota
	htmlOut
)

// getOnly answers 405 to every method other than GET and HEAD.
func (s *server) getOnly(out output, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			s.fail(w, out, http.StatusMethodNotAllowed, fmt.Sprintf("method %s not allowed on %s; use GET or HEAD", r.Method, r.URL.Path))
			return
		}
		h(w, r)
	}
}

// lookup returns the CRD the {crd} path value names, or answers 404 naming it.
func (s *server) lookup(w http.ResponseWriter, r *http.Request, out output) (*katalog.CRD, bool) {
	name := r.PathValue("crd")
	crd, ok := s.byName[name]
	if !ok {
		s.fail(w, out, http.StatusNotFound, fmt.Sprintf("unknown CRD %q", name))
	}
	return crd, ok
}

// readCR reads the custom resource the {ns} and {name} path values name, answering 404
// naming it when it does not exist and 500 when it cannot be read.
func (s *server) readCR(ctx context.Context, w http.ResponseWriter, r *http.Request, out output, crd *katalog.CRD) (CRDetail, bool) {
	ns, name := r.PathValue("ns"), r.PathValue("name")
	u, err := s.getCR(ctx, crd, ns, name)
	switch {
	case apierrors.IsNotFound(err):
		s.fail(w, out, http.StatusNotFound, fmt.Sprintf("%s %s/%s (CRD %s) not found", crd.APITypes.Kind, ns, name, crd.Name))
		return CRDetail{}, false
	case err != nil:
		s.fail(w, out, http.StatusInternalServerError, err.Error())
		return CRDetail{}, false
	}
	return s.detail(ctx, crd, u), true
}

func (s *server) serveHealth(w http.ResponseWriter, r *http.Request) {
	crd, ok := s.lookup(w, r, jsonOut)
	if !ok {
		return
	}
	h := s.opts.Health.Health(crd.Name)
	code := http.StatusOK
	if !h.Healthy {
		code = http.StatusServiceUnavailable
	}
	writeJSON(w, code, HealthReport{CRD: crd.Name, Health: h})
}

func (s *server) serveCRD(w http.ResponseWriter, r *http.Request) {
	if crd, ok := s.lookup(w, r, jsonOut); ok {
		writeJSON(w, http.StatusOK, s.crdInfo(crd))
	}
}

func (s *server) serveCRList(w http.ResponseWriter, r *http.Request) {
	crd, ok := s.lookup(w, r, jsonOut)
	if !ok {
		return
	}
	pg, err := parsePage(r)
	if err != nil {
		s.fail(w, jsonOut, http.StatusBadRequest, err.Error())
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), ReadTimeout)
	defer cancel()
	items, err := s.listCRs(ctx, crd)
	if err != nil {
		s.fail(w, jsonOut, http.StatusInternalServerError, err.Error())
		return
	}
	items, next := pg.cut(items)
	writeJSON(w, http.StatusOK, CRList{CRD: crd.Name, Items: items, Continue: next})
}

func (s *server) serveCRDetail(w http.ResponseWriter, r *http.Request) {
	crd, ok := s.lookup(w, r, jsonOut)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), ReadTimeout)
	defer cancel()
	if d, ok := s.readCR(ctx, w, r, jsonOut, crd); ok {
		writeJSON(w, http.StatusOK, d)
	}
}

// fail writes an error answer: ErrorBody for JSON, the error page for HTML.
func (s *server) fail(w http.ResponseWriter, out output, code int, msg string) {
	if out == htmlOut {
		s.render(w, code, s.pages.err, errorPage{
			pageLayout: s.layout(http.StatusText(code), nil),
			Code:       code,
			Message:    msg,
		})
		return
	}
	writeJSON(w, code, ErrorBody{Error: msg})
}

// writeJSON writes v as indented JSON with the status code.
func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		http.Error(w, fmt.Sprintf("encode answer: %v", err), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write(append(b, '\n'))
}
