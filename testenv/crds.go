package testenv

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
)

// CRDSource names CRD manifests inside a Go module at an exact version.
type CRDSource struct {
	// Module is the Go module path, e.g. "github.com/cert-manager/cert-manager".
	Module string
	// Version is the exact module version, e.g. "v1.20.2".
	Version string
	// Files are manifest paths relative to the module root.
	Files []string
}

// DefaultCRDs returns the upstream CRDs that the kit installs unless
// [Options.CRDSources] says otherwise.
func DefaultCRDs() []CRDSource {
	return []CRDSource{
		{Module: ESOModule, Version: ESOVersion, Files: []string{
			"config/crds/bases/external-secrets.io_externalsecrets.yaml",
			"config/crds/bases/external-secrets.io_secretstores.yaml",
			"config/crds/bases/external-secrets.io_clustersecretstores.yaml",
			"config/crds/bases/external-secrets.io_pushsecrets.yaml",
		}},
		{Module: CertManagerModule, Version: CertManagerVersion, Files: []string{
			"deploy/crds/cert-manager.io_certificates.yaml",
		}},
		{Module: MariaDBOperatorModule, Version: MariaDBOperatorVersion, Files: []string{
			"config/crd/bases/k8s.mariadb.com_mariadbs.yaml",
			"config/crd/bases/k8s.mariadb.com_databases.yaml",
			"config/crd/bases/k8s.mariadb.com_users.yaml",
			"config/crd/bases/k8s.mariadb.com_grants.yaml",
		}},
		{Module: GatewayAPIModule, Version: GatewayAPIVersion, Files: []string{
			"config/crd/standard/gateway.networking.k8s.io_gatewayclasses.yaml",
			"config/crd/standard/gateway.networking.k8s.io_gateways.yaml",
			"config/crd/standard/gateway.networking.k8s.io_httproutes.yaml",
		}},
		{Module: VPAModule, Version: VPAVersion, Files: []string{
			"deploy/vpa-v1-crd-gen.yaml",
		}},
	}
}

// moduleDownload is the part of `go mod download -json` output the kit reads.
type moduleDownload struct {
	Path    string
	Version string
	Dir     string
	Error   string
}

// ResolveCRDPaths returns the absolute paths of the manifests of sources, downloading
// the modules into the module cache when needed. It runs the go command once, outside
// any module, so it works the same from this repository and from a downstream module.
func ResolveCRDPaths(sources []CRDSource) ([]string, error) {
	return resolveModuleFiles("CRD manifest", sources)
}

// resolveModuleFiles is [ResolveCRDPaths] for any kind of file kept in a Go module
// (CRD manifests, kwok Stage documents); what names the kind in error texts.
func resolveModuleFiles(what string, sources []CRDSource) ([]string, error) {
	if len(sources) == 0 {
		return nil, nil
	}
	args := []string{"mod", "download", "-json"}
	for _, s := range sources {
		args = append(args, s.Module+"@"+s.Version)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	dirs := map[string]string{}
	var modErrs []error
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var m moduleDownload
		if derr := dec.Decode(&m); derr == io.EOF {
			break
		} else if derr != nil {
			return nil, fmt.Errorf("testenv: parse `go %v` output: %w (stderr: %s)", args, derr, stderr.String())
		}
		if m.Error != "" {
			modErrs = append(modErrs, fmt.Errorf("%s@%s: %s", m.Path, m.Version, m.Error))
			continue
		}
		dirs[m.Path+"@"+m.Version] = m.Dir
	}
	if len(modErrs) > 0 {
		return nil, fmt.Errorf("testenv: download modules of %ss: %w", what, errors.Join(modErrs...))
	}
	if err != nil {
		return nil, fmt.Errorf("testenv: `go %v`: %w (stderr: %s)", args, err, stderr.String())
	}
	var paths []string
	for _, s := range sources {
		dir, ok := dirs[s.Module+"@"+s.Version]
		if !ok {
			return nil, fmt.Errorf("testenv: go mod download reported no directory for %s@%s", s.Module, s.Version)
		}
		for _, f := range s.Files {
			p := filepath.Join(dir, filepath.FromSlash(f))
			if _, err := os.Stat(p); err != nil {
				return nil, fmt.Errorf("testenv: %s %s of %s@%s: %w", what, f, s.Module, s.Version, err)
			}
			paths = append(paths, p)
		}
	}
	return paths, nil
}
