package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// SlotsEnv names the variable that says how many shared clusters test processes may use side by
// side: `make test` runs that many test packages at once (go test -p N), and each test process
// takes one cluster for itself, so no package's pods ever take room another package's test
// planned for. Unset or 1: the one shared cluster, in hack/local-cluster.sh's default folder.
const SlotsEnv = "SPARKOP_TEST_CLUSTERS"

var slot struct {
	dir  string
	lock *os.File
	err  error
}

// sharedStateDir returns the state folder of the shared cluster this test process uses ("" for
// the script's default). With SlotsEnv above 1 it takes the first free slot: slot 0 is the
// default folder, slot k its sibling with "-k" appended. The slot is held, by a lock on a file,
// until the process exits; when every slot is taken it waits for one.
func sharedStateDir() (string, error) {
	shared.slotOnce.Do(func() { slot.dir, slot.lock, slot.err = takeSlot() })
	return slot.dir, slot.err
}

func takeSlot() (string, *os.File, error) {
	n := 1
	if v := os.Getenv(SlotsEnv); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			return "", nil, fmt.Errorf("%s=%q: want a number of clusters, 1 or more", SlotsEnv, v)
		}
	}
	if n == 1 {
		return "", nil, nil
	}
	base, err := defaultStateDir()
	if err != nil {
		return "", nil, err
	}
	locks := base + "-slots"
	if err := os.MkdirAll(locks, 0o755); err != nil {
		return "", nil, err
	}
	open := func(k int) (*os.File, error) {
		return os.OpenFile(filepath.Join(locks, fmt.Sprintf("%d.lock", k)), os.O_CREATE|os.O_RDWR, 0o644)
	}
	for k := 0; k < n; k++ {
		f, err := open(k)
		if err != nil {
			return "", nil, err
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err == nil {
			return slotDir(base, k), f, nil
		}
		_ = f.Close()
	}
	// Every slot is taken (more test processes than slots): wait for one.
	k := os.Getpid() % n
	f, err := open(k)
	if err != nil {
		return "", nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		_ = f.Close()
		return "", nil, fmt.Errorf("waiting for shared cluster slot %d: %w", k, err)
	}
	return slotDir(base, k), f, nil
}

func slotDir(base string, k int) string {
	if k == 0 {
		return base
	}
	return fmt.Sprintf("%s-%d", base, k)
}

// defaultStateDir is hack/local-cluster.sh's default state folder: LOCAL_CLUSTER_DIR, or
// local-cluster in SPARKOP_CACHE, or in the repository's .cache.
func defaultStateDir() (string, error) {
	if dir := os.Getenv("LOCAL_CLUSTER_DIR"); dir != "" {
		return filepath.Abs(dir)
	}
	cache := os.Getenv("SPARKOP_CACHE")
	if cache == "" {
		root, err := RepoRoot()
		if err != nil {
			return "", err
		}
		cache = filepath.Join(root, ".cache")
	}
	return filepath.Join(cache, "local-cluster"), nil
}
