package inspect_test

import (
	"context"
	"flag"
	"image/png"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

var updateScreenshot = flag.Bool("update-screenshot", false,
	"write the browser test's screenshot to docs/katalog-inspector.png instead of a temporary directory")

// screenshotDoc is where -update-screenshot writes the screenshot of the detail page.
const screenshotDoc = "../../docs/katalog-inspector.png"

// chromiumPath finds the browser; the test fails rather than skips without it.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("chromium is not installed, and the browser test of the Control Center needs it: " +
		"make test installs it when run as root (hack/testdeps.sh), or: sudo apt-get install -y chromium")
	return ""
}

// chromium runs headless Chromium with args and returns what it wrote to stdout.
func chromium(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	base := []string{"--headless", "--disable-gpu", "--no-sandbox", "--disable-dev-shm-usage",
		"--hide-scrollbars", "--no-first-run", "--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, chromiumPath(t), append(base, args...)...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\nstderr:\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

// section returns the DOM text from the first open up to and including
// the first close after it; it fails the test when there is none.
func section(t *testing.T, dom, open, close string) string {
	t.Helper()
	i := strings.Index(dom, open)
	if i < 0 {
		t.Fatalf("the DOM has no %s:\n%s", open, dom)
	}
	j := strings.Index(dom[i:], close)
	if j < 0 {
		t.Fatalf("the DOM does not close %s", open)
	}
	return dom[i : i+j+len(close)]
}

// The detail page as a browser renders it: the DOM holds the conditions table, the
// child resource cards with their readiness and the events table, the values from the
// cluster stay text, and the page reads well at 1280 pixels and at a phone's width.
func TestDetailPageInBrowser(t *testing.T) {
	srv := httptest.NewServer(newHandler(t))
	defer srv.Close()
	url := srv.URL + "/controlcenter/katalog/widget/cr/shop/web"

	dom := chromium(t, "--dump-dom", url)

	conds := section(t, dom, `<table id="conditions">`, "</table>")
	if rows := strings.Count(conds, "<tr>") - 1; rows != 2 { // minus the header row
		t.Errorf("conditions table has %d rows, want 2:\n%s", rows, conds)
	}
	for _, re := range []string{
		`<td>Ready</td>\s*<td><span class="badge ok">True</span></td>\s*<td>Reconciled</td>\s*<td class="msg">all children are ready</td>`,
		`<td>DatabaseReady</td>\s*<td><span class="badge bad">False</span></td>\s*<td>Pending</td>\s*<td class="msg">&lt;b&gt;waiting&lt;/b&gt; for db</td>`,
	} {
		if !regexp.MustCompile(re).MatchString(conds) {
			t.Errorf("conditions table lacks a row matching %s:\n%s", re, conds)
		}
	}

	cards := section(t, dom, `<div class="cards" id="children">`, "<h2>Recent events</h2>")
	for _, re := range []string{
		`<div class="card ok">\s*<div class="kind">Deployment</div>\s*<div class="name">web</div>\s*<div><span class="badge ok">Ready</span> 2/2 available</div>`,
		`<div class="card bad">\s*<div class="kind">Deployment</div>\s*<div class="name">web-worker</div>\s*<div><span class="badge bad">Not ready</span> 1/3 available</div>`,
		`<div class="kind">Service</div>\s*<div class="name">web</div>\s*<div><span class="badge ok">Ready</span> exists</div>`,
		`<div class="kind">Secret</div>\s*<div class="name">web-credentials</div>`,
		`<div class="kind">Job</div>\s*<div class="name">web-migrate</div>\s*<div><span class="badge ok">Ready</span> 1/1 succeeded</div>`,
	} {
		if !regexp.MustCompile(re).MatchString(cards) {
			t.Errorf("child cards lack one matching %s:\n%s", re, cards)
		}
	}
	if n := strings.Count(cards, `<div class="kind">`); n != 5 {
		t.Errorf("%d child cards, want 5 (not the ConfigMaps the widget does not control)", n)
	}

	events := section(t, dom, `<table id="events">`, "</table>")
	if rows := strings.Count(events, "<tr>") - 1; rows != 2 {
		t.Errorf("events table has %d rows, want 2:\n%s", rows, events)
	}
	if !regexp.MustCompile(`(?s)ValidationWarning.*spec\.image uses &lt;i&gt;latest&lt;/i&gt;.*<td class="num">3</td>.*Created.*created Deployment shop/web`).MatchString(events) {
		t.Errorf("events table does not list the warning (3 times) before the older Created event:\n%s", events)
	}

	if strings.Contains(dom, "<script") || strings.Contains(dom, "<b>") || strings.Contains(dom, "<i>") {
		t.Errorf("a value from the cluster became markup in the DOM")
	}
	if !strings.Contains(dom, `<meta http-equiv="refresh" content="10">`) {
		t.Errorf("the page does not reload itself every 10 s")
	}

	out := filepath.Join(t.TempDir(), "katalog-inspector.png")
	if *updateScreenshot {
		out = screenshotDoc
	}
	for _, shot := range []struct {
		path          string
		width, height int
	}{
		{out, 1280, 900},
		{filepath.Join(t.TempDir(), "katalog-inspector-narrow.png"), 390, 844},
	} {
		chromium(t, "--screenshot="+shot.path, "--window-size="+strconv.Itoa(shot.width)+","+strconv.Itoa(shot.height), url)
		f, err := os.Open(shot.path)
		if err != nil {
			t.Fatalf("chromium wrote no screenshot: %v", err)
		}
		cfg, err := png.DecodeConfig(f)
		_ = f.Close()
		if err != nil {
			t.Fatalf("screenshot %s: %v", shot.path, err)
		}
		if cfg.Width != shot.width || cfg.Height != shot.height {
			t.Errorf("screenshot %s is %dx%d, want %dx%d", shot.path, cfg.Width, cfg.Height, shot.width, shot.height)
		}
		t.Logf("screenshot: %s", shot.path)
	}
}
