package inspect

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"time"
)

//go:embed templates/*.html
var templateFS embed.FS

// pages are the parsed HTML templates, one per page, each with the shared layout.
type pages struct {
	index, crd, detail, err *template.Template
}

// parsePages parses each page together with the layout.
func parsePages() (pages, error) {
	parse := func(name string) (*template.Template, error) {
		t, err := template.New("layout.html").Funcs(template.FuncMap{
			"badge": badge,
			"path":  url.PathEscape,
		}).ParseFS(templateFS, "templates/layout.html", "templates/"+name)
		if err != nil {
			return nil, fmt.Errorf("parse page %s: %w", name, err)
		}
		return t, nil
	}
	var p pages
	var err error
	for _, pg := range []struct {
		t    **template.Template
		name string
	}{{&p.index, "index.html"}, {&p.crd, "crd.html"}, {&p.detail, "detail.html"}, {&p.err, "error.html"}} {
		if *pg.t, err = parse(pg.name); err != nil {
			return pages{}, err
		}
	}
	return p, nil
}

// badge is the CSS class of a status word: ok for True and ready, bad for False,
// unknown otherwise.
func badge(v any) string {
	switch v {
	case "True", true:
		return "ok"
	case "False", false:
		return "bad"
	default:
		return "unknown"
	}
}

// pageLayout is what the shared layout of every page shows.
type pageLayout struct {
	Title string
	// Refresh is the reload period in seconds; 0 turns reloading off.
	Refresh int
	Crumbs  []crumb
	// Now is when the page was rendered.
	Now string
}

// crumb is one link of the breadcrumb trail.
type crumb struct {
	Label, Href string
}

func (s *server) layout(title string, crumbs []crumb) pageLayout {
	refresh := 0
	if s.opts.Refresh > 0 {
		refresh = max(int(s.opts.Refresh/time.Second), 1)
	}
	return pageLayout{
		Title:   title,
		Refresh: refresh,
		Crumbs:  append([]crumb{{Label: "Control Center", Href: "/controlcenter/"}}, crumbs...),
		Now:     s.now().UTC().Format(time.RFC3339),
	}
}

type indexRow struct {
	Info      CRDInfo
	Count     int
	CountErr  string
	LastSince string
}

type indexPage struct {
	pageLayout
	Rows []indexRow
}

type crdPage struct {
	pageLayout
	Info      CRDInfo
	LastSince string
	Items     []CRSummary
	// Total is the number of custom resources, Next the link to the next page ("" on
	// the last), First the link to the first page ("" on it).
	Total       int
	Next, First string
	Err         string
}

type detailPage struct {
	pageLayout
	D CRDetail
}

type errorPage struct {
	pageLayout
	Code    int
	Message string
}

func (s *server) pageIndex(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), ReadTimeout)
	defer cancel()
	data := indexPage{pageLayout: s.layout("Katalog", nil)}
	for _, crd := range s.opts.CRDs {
		row := indexRow{Info: s.crdInfo(crd)}
		row.LastSince = s.age(row.Info.Health.LastReconcile)
		items, err := s.listCRs(ctx, crd)
		if err != nil {
			row.CountErr = err.Error()
		}
		row.Count = len(items)
		data.Rows = append(data.Rows, row)
	}
	s.render(w, http.StatusOK, s.pages.index, data)
}

func (s *server) pageCRD(w http.ResponseWriter, r *http.Request) {
	crd, ok := s.lookup(w, r, htmlOut)
	if !ok {
		return
	}
	pg, err := parsePage(r)
	if err != nil {
		s.fail(w, htmlOut, http.StatusBadRequest, err.Error())
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), ReadTimeout)
	defer cancel()
	self := "/controlcenter/katalog/" + url.PathEscape(crd.Name)
	data := crdPage{
		pageLayout: s.layout(crd.Name, []crumb{{Label: crd.Name, Href: self}}),
		Info:       s.crdInfo(crd),
	}
	data.LastSince = s.age(data.Info.Health.LastReconcile)
	items, err := s.listCRs(ctx, crd)
	if err != nil {
		data.Err = err.Error()
	}
	data.Total = len(items)
	var next string
	data.Items, next = pg.cut(items)
	if next != "" {
		data.Next = self + "?" + pg.query(next)
	}
	if pg.after != "" {
		data.First = self + "?" + pg.query("")
	}
	s.render(w, http.StatusOK, s.pages.crd, data)
}

func (s *server) pageCRDetail(w http.ResponseWriter, r *http.Request) {
	crd, ok := s.lookup(w, r, htmlOut)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), ReadTimeout)
	defer cancel()
	d, ok := s.readCR(ctx, w, r, htmlOut, crd)
	if !ok {
		return
	}
	crdHref := "/controlcenter/katalog/" + url.PathEscape(crd.Name)
	data := detailPage{
		pageLayout: s.layout(d.Namespace+"/"+d.Name, []crumb{
			{Label: crd.Name, Href: crdHref},
			{Label: d.Namespace + "/" + d.Name, Href: crdHref + "/cr/" + url.PathEscape(d.Namespace) + "/" + url.PathEscape(d.Name)},
		}),
		D: d,
	}
	s.render(w, http.StatusOK, s.pages.detail, data)
}

// render executes t into a buffer first, so that a failing template yields a clean 500
// rather than half a page.
func (s *server) render(w http.ResponseWriter, code int, t *template.Template, data any) {
	var buf bytes.Buffer
	if err := t.Execute(&buf, data); err != nil {
		http.Error(w, fmt.Sprintf("render page: %v", err), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
}
