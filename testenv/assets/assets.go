package assets

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// CoreBinaries are the binaries every envtest run needs. A directory from
// $KUBEBUILDER_ASSETS or setup-envtest is used when it holds these.
var CoreBinaries = []string{"kube-apiserver", "etcd"}

// AllBinaries are the binaries [Build] produces: [CoreBinaries] plus kubectl and the
// real-controller binaries kube-controller-manager, kube-scheduler and kwok. The cache
// directory is used only when it holds all of them.
var AllBinaries = []string{"kube-apiserver", "etcd", "kubectl", "kube-controller-manager", "kube-scheduler", "kwok"}

// DefaultSetupEnvtestTimeout bounds each setup-envtest call when
// $SETUP_ENVTEST_TIMEOUT is unset.
const DefaultSetupEnvtestTimeout = 60 * time.Second

var (
	// ErrNotFound reports that no source but a build could provide the binaries: the
	// error names each place looked at and what it lacks.
	ErrNotFound = errors.New("envtest binaries not found")
	// ErrNoGo reports that the go command needed by [Build] is not on PATH.
	ErrNoGo = errors.New("go is not on PATH; cannot build envtest binaries")
	// ErrBuild reports that a step of [Build] failed; the error names the step.
	ErrBuild = errors.New("envtest build failed")
	// ErrIncomplete reports that [Build] finished without every one of
	// [AllBinaries]; the error names the missing ones. Nothing is written to the cache.
	ErrIncomplete = errors.New("envtest build incomplete")
	// ErrVersion reports an [Options.Version] that is not a Kubernetes release
	// such as 1.37.2 (no leading v).
	ErrVersion = errors.New("invalid Kubernetes version")
)

// Source says where [Find] or [Ensure] got the directory from.
type Source string

// The sources, in the order [Find] and [Ensure] try them.
const (
	// SourceAssets is an existing [Options.Assets] ($KUBEBUILDER_ASSETS) holding
	// [CoreBinaries].
	SourceAssets Source = "KUBEBUILDER_ASSETS"
	// SourceCache is [Options.CacheDir] holding [AllBinaries].
	SourceCache Source = "cache"
	// SourceSetupEnvtest is a directory printed by [Options.SetupEnvtest] holding
	// [CoreBinaries].
	SourceSetupEnvtest Source = "setup-envtest"
	// SourceBuild is a fresh [Build] from the Go module proxy, published into
	// [Options.CacheDir].
	SourceBuild Source = "build"
)

// Options says which binaries to provide and where to look for them. The zero value
// is not usable: start from [DefaultOptions].
type Options struct {
	// Version is the Kubernetes release without a leading v, e.g. "1.37.2".
	Version string
	// KWOKVersion is the kwok release [Build] installs, e.g. "v0.8.0".
	KWOKVersion string
	// CacheRoot holds one directory per Version; see [Options.CacheDir].
	CacheRoot string
	// Assets is an existing directory to use when it holds [CoreBinaries]
	// (usually $KUBEBUILDER_ASSETS); empty skips that source.
	Assets string
	// SetupEnvtest is the setup-envtest command to ask; empty skips that source.
	SetupEnvtest string
	// SetupEnvtestTimeout bounds each setup-envtest call; zero means
	// [DefaultSetupEnvtestTimeout].
	SetupEnvtestTimeout time.Duration
	// Go is the go command [Build] runs (a name looked up on PATH, or a path);
	// empty means "go".
	Go string
	// Log receives progress lines and the output of the commands run; nil discards them.
	Log io.Writer
}

// DefaultCacheRoot returns ${XDG_CACHE_HOME:-$HOME/.cache}/reconciler-sdk/envtest, the
// cache root that package testenv also looks in.
func DefaultCacheRoot() string {
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, _ := os.UserHomeDir()
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "reconciler-sdk", "envtest")
}

// DefaultOptions returns the options hack/envtest.sh has always used, read from the
// environment: Version from $ENVTEST_K8S_VERSION (else [KubernetesVersion]), KWOKVersion
// [KWOKVersion], CacheRoot [DefaultCacheRoot], Assets $KUBEBUILDER_ASSETS, SetupEnvtest
// the setup-envtest on PATH unless $ENVTEST_SKIP_DOWNLOAD is non-empty,
// SetupEnvtestTimeout $SETUP_ENVTEST_TIMEOUT seconds (else 60), Go "go" and Log
// os.Stderr. It fails only when $SETUP_ENVTEST_TIMEOUT is not a whole number of seconds.
func DefaultOptions() (Options, error) {
	o := Options{
		Version:             KubernetesVersion,
		KWOKVersion:         KWOKVersion,
		CacheRoot:           DefaultCacheRoot(),
		Assets:              os.Getenv("KUBEBUILDER_ASSETS"),
		SetupEnvtestTimeout: DefaultSetupEnvtestTimeout,
		Go:                  "go",
		Log:                 os.Stderr,
	}
	if v := os.Getenv("ENVTEST_K8S_VERSION"); v != "" {
		o.Version = v
	}
	if os.Getenv("ENVTEST_SKIP_DOWNLOAD") == "" {
		if p, err := exec.LookPath("setup-envtest"); err == nil {
			o.SetupEnvtest = p
		}
	}
	if v := os.Getenv("SETUP_ENVTEST_TIMEOUT"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return o, fmt.Errorf("envtest: SETUP_ENVTEST_TIMEOUT=%q is not a positive number of seconds", v)
		}
		o.SetupEnvtestTimeout = time.Duration(n) * time.Second
	}
	return o, nil
}

// CacheDir returns CacheRoot/Version, the directory [Build] publishes into.
func (o Options) CacheDir() string { return filepath.Join(o.CacheRoot, o.Version) }

// Missing returns the names that are not executable regular files in dir, in the
// order given; nil when all are there.
func Missing(dir string, names []string) []string {
	var missing []string
	for _, n := range names {
		fi, err := os.Stat(filepath.Join(dir, n))
		if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			missing = append(missing, n)
		}
	}
	return missing
}

// Ensure returns the absolute directory (symbolic links resolved) of the first source
// that provides the binaries, in this order: [Find]'s sources, then [Build]. With a
// nil error the directory holds at least [CoreBinaries] (all of [AllBinaries] from the
// cache or a build).
func Ensure(ctx context.Context, o Options) (string, Source, error) {
	dir, src, err := Find(ctx, o)
	if err == nil || !errors.Is(err, ErrNotFound) {
		return dir, src, err
	}
	dir, err = Build(ctx, o)
	if err != nil {
		return "", "", err
	}
	return dir, SourceBuild, nil
}

// Find returns the absolute directory (symbolic links resolved) of the first source
// that provides the binaries without building them: [Options.Assets] holding
// [CoreBinaries], then [Options.CacheDir] holding [AllBinaries] (an incomplete cache is
// passed over), then the directory [Options.SetupEnvtest] prints for Version holding
// [CoreBinaries]. When none does, the error wraps [ErrNotFound] and names what each
// source lacks.
func Find(ctx context.Context, o Options) (string, Source, error) {
	if err := checkVersion(o.Version); err != nil {
		return "", "", err
	}
	logf := logger(o.Log)
	var tried []string
	if o.Assets != "" {
		m := Missing(o.Assets, CoreBinaries)
		if m == nil {
			dir, err := absDir(o.Assets)
			return dir, SourceAssets, err
		}
		tried = append(tried, fmt.Sprintf("KUBEBUILDER_ASSETS %s lacks %s", o.Assets, strings.Join(m, ", ")))
	}
	cache := o.CacheDir()
	m := Missing(cache, AllBinaries)
	if m == nil {
		dir, err := absDir(cache)
		return dir, SourceCache, err
	}
	tried = append(tried, fmt.Sprintf("cache %s lacks %s", cache, strings.Join(m, ", ")))
	if o.SetupEnvtest != "" {
		timeout := o.SetupEnvtestTimeout
		if timeout <= 0 {
			timeout = DefaultSetupEnvtestTimeout
		}
		logf("trying setup-envtest (timeout %s)", timeout)
		dir := setupEnvtest(ctx, o, timeout)
		if dir != "" {
			if m := Missing(dir, CoreBinaries); m == nil {
				abs, err := absDir(dir)
				return abs, SourceSetupEnvtest, err
			}
		}
		logf("setup-envtest could not provide %s", o.Version)
		tried = append(tried, fmt.Sprintf("setup-envtest could not provide %s", o.Version))
	} else {
		tried = append(tried, "setup-envtest not used")
	}
	return "", "", fmt.Errorf("envtest: %w for Kubernetes %s: %s", ErrNotFound, o.Version, strings.Join(tried, "; "))
}

// setupEnvtest asks setup-envtest for Version, installed only first (-i), then with
// a download; each call is bounded by timeout and its stderr discarded. It returns the
// directory printed by the first call that succeeds, or "".
func setupEnvtest(ctx context.Context, o Options, timeout time.Duration) string {
	binDir := filepath.Join(o.CacheRoot, "setup-envtest")
	for _, args := range setupEnvtestArgs(o.Version, binDir) {
		cctx, cancel := context.WithTimeout(ctx, timeout)
		out, err := exec.CommandContext(cctx, o.SetupEnvtest, args...).Output()
		cancel()
		if err == nil {
			return strings.TrimRight(string(out), "\n")
		}
	}
	return ""
}

// setupEnvtestArgs are the two setup-envtest calls [Find] makes, in order.
func setupEnvtestArgs(version, binDir string) [][]string {
	return [][]string{
		{"use", "-i", version, "--bin-dir", binDir, "-p", "path"},
		{"use", version, "--bin-dir", binDir, "-p", "path"},
	}
}

var versionRE = regexp.MustCompile(`^1\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`)

func checkVersion(v string) error {
	if !versionRE.MatchString(v) {
		return fmt.Errorf("envtest: %w %q: want a release such as %s, without a leading v", ErrVersion, v, KubernetesVersion)
	}
	return nil
}

// absDir is `cd dir && pwd -P`.
func absDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("envtest: %s: %w", dir, err)
	}
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("envtest: %s: %w", dir, err)
	}
	return resolved, nil
}

func logger(w io.Writer) func(format string, args ...any) {
	if w == nil {
		w = io.Discard
	}
	return func(format string, args ...any) {
		_, _ = fmt.Fprintf(w, "envtest: "+format+"\n", args...)
	}
}
