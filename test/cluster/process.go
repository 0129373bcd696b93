package cluster

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ProcessRunning reports whether the process pid exists and has not exited: a zombie, which `down`
// does not wait for its adopter to reap, has.
func ProcessRunning(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	// The state is the field after the command name, which is in parentheses (and may hold
	// parentheses of its own).
	i := strings.LastIndex(string(stat), ") ")
	if i < 0 {
		return false
	}
	state := string(stat)[i+2:]
	return !strings.HasPrefix(state, "Z") && !strings.HasPrefix(state, "X")
}
