package testenv

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

var userSeq atomic.Int64

// ClientAs returns a client that authenticates as a new user (named after name, made
// unique) who holds exactly the rules of roles, bound cluster-wide, and nothing else:
// not even the discovery rights the system:authenticated group grants are needed by
// the SDK's client. Use it to prove that a flow runs with the least privilege its
// package documents. It is a client on [Env.ConfigAs]; the roles and bindings are
// removed when the test ends.
func (e *Env) ClientAs(t testing.TB, name string, roles ...*rbacv1.ClusterRole) client.Client {
	t.Helper()
	cfg := e.ConfigAs(t, name, roles...)
	c, err := client.New(cfg, client.Options{Scheme: e.Scheme})
	if err != nil {
		t.Fatalf("testenv: client for user %s: %v", name, err)
	}
	return c
}

// LoadClusterRoles reads the ClusterRoles of a multi-document YAML file, such as the
// ones controller-gen generates from +kubebuilder:rbac markers. Documents of other kinds
// are an error.
func LoadClusterRoles(path string) ([]*rbacv1.ClusterRole, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("testenv: read ClusterRoles: %w", err)
	}
	reader := utilyaml.NewYAMLReader(bufioReader(data))
	var roles []*rbacv1.ClusterRole
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("testenv: read ClusterRoles from %s: %w", path, err)
		}
		if len(strings.TrimSpace(string(doc))) == 0 {
			continue
		}
		role := &rbacv1.ClusterRole{}
		if err := yaml.UnmarshalStrict(doc, role); err != nil {
			return nil, fmt.Errorf("testenv: %s: %w", path, err)
		}
		if role.Kind != "ClusterRole" {
			return nil, fmt.Errorf("testenv: %s: a %q document where a ClusterRole was expected", path, role.Kind)
		}
		roles = append(roles, role)
	}
	if len(roles) == 0 {
		return nil, fmt.Errorf("testenv: %s holds no ClusterRole", path)
	}
	return roles, nil
}

func bufioReader(data []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(data)) }
