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

// Own is a cluster of a test package's own (a real node, a feature gate the shared cluster lacks),
// in a temporary folder: started by the first test that asks for it, stopped by Main when the
// package's tests end. A failed run prints the end of the logs named in Logs first.
type Own struct {
	// Prefix names the temporary folder.
	Prefix string
	// Args are hack/local-cluster.sh up's flags.
	Args []string
	// Then, if set, runs once the cluster is up (to import an image, say).
	Then func(ctx context.Context, state string) error
	// Logs are the components whose logs a failed run prints (their file names, without .log).
	Logs []string

	once              sync.Once
	state, kubeconfig string
	err               error
}

// Kubeconfig returns the cluster's kubeconfig path, starting it the first time. A cluster that
// cannot start fails the test.
func (o *Own) Kubeconfig(t testing.TB) string {
	t.Helper()
	o.once.Do(func() {
		dir, err := os.MkdirTemp("", o.Prefix)
		if err != nil {
			o.err = err
			return
		}
		o.state = filepath.Join(dir, "cluster")
		ctx := context.Background()
		if o.kubeconfig, o.err = Up(ctx, o.state, o.Args...); o.err == nil && o.Then != nil {
			o.err = o.Then(ctx, o.state)
		}
	})
	if o.err != nil {
		t.Fatalf("local cluster (%s): %v", strings.Join(o.Args, " "), o.err)
	}
	return o.kubeconfig
}

// State is the cluster's state folder, empty until it was started.
func (o *Own) State() string { return o.state }

// Main runs the package's tests (call it from TestMain), then prints the logs if they failed and
// stops the cluster.
func (o *Own) Main(m *testing.M) {
	code := m.Run()
	if o.state != "" {
		if code != 0 {
			o.printLogs()
		}
		_ = Down(context.Background(), o.state)
		_ = os.RemoveAll(filepath.Dir(o.state))
	}
	os.Exit(code)
}

func (o *Own) printLogs() {
	for _, name := range o.Logs {
		b, err := os.ReadFile(filepath.Join(o.state, "logs", name+".log"))
		if err != nil {
			continue
		}
		fmt.Printf("===== %s.log (last 30 lines)\n%s\n", name, Tail(string(b), 30))
	}
}

// RepoCommand runs a script of the repository (a path from its root) and returns the last line
// it printed; on failure the error carries the end of what it said.
func RepoCommand(script string, args ...string) (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	var stderr bytes.Buffer
	cmd := exec.Command(filepath.Join(root, script), args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s: %v\n%s", script, err, Tail(stderr.String(), 30))
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1], nil
}
