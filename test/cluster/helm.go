package cluster

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// buildHelm builds the pinned helm once per test binary (a no-op when it is built already).
var buildHelm = sync.OnceValue(func() error {
	_, err := Script(context.Background(), "", "build", "--with-helm")
	return err
})

// Helm runs the pinned helm (hack/local-cluster.sh builds it) with args in the repository's root,
// with homes of its own, and returns what it printed; on failure the error carries its stderr.
func Helm(t testing.TB, args ...string) (string, error) {
	t.Helper()
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if err := buildHelm(); err != nil {
		t.Fatal(err)
	}
	cache := os.Getenv("SPARKOP_CACHE") // as hack/local-cluster.sh reads it
	if cache == "" {
		cache = filepath.Join(root, ".cache")
	}
	cmd := exec.Command(filepath.Join(cache, "bin", "helm"), args...)
	cmd.Dir = root
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("helm %s: %w\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}
