/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// CPU seconds of the processes a run exercises: the operator, and the local cluster's
// components, which hack/local-cluster.sh records in pid files beside the kubeconfig
// (<state>/pids/<component>.pid).

// clockTicks is the kernel's USER_HZ, the unit of /proc/<pid>/stat's times: 100 on Linux for
// every architecture the project builds for.
const clockTicks = 100

// schedulerComponents are, per --scheduler, the processes that schedule its applications: the
// cluster's pod scheduler (kube-scheduler, or spark-scheduler in its place) and the batch
// scheduler's own. The embedded schedulers' deciding is the operator's.
var schedulerComponents = map[string][]string{
	"volcano":        {"kube-scheduler", "vc-scheduler", "vc-controller-manager"},
	"yunikorn":       {"kube-scheduler", "yunikorn-scheduler"},
	"kube-scheduler": {"kube-scheduler", "kube-scheduler-plugins", "scheduler-plugins-controller"},
	"kueue":          {"kube-scheduler", "kueue"},
	"kueue-alone":    {"kube-scheduler", "kueue"},
}

func schedulerComponentsOf(sched string) []string {
	if c, ok := schedulerComponents[sched]; ok {
		return c
	}
	return []string{"kube-scheduler"}
}

// cpuMeter samples the CPU seconds of processes by name, so that a process's use up to its
// end is known (the operator's is read once more as it stops, and sampled meanwhile).
type cpuMeter struct {
	mu    sync.Mutex
	pids  map[string]int
	start map[string]float64
	last  map[string]float64
	stop  chan struct{}
	done  chan struct{}
}

// startCPUMeter starts measuring the operator (pid) and the cluster components of the state
// folder of kubeconfig, from now.
func startCPUMeter(kubeconfig string, operatorPID int) *cpuMeter {
	m := &cpuMeter{pids: clusterPIDs(filepath.Join(filepath.Dir(kubeconfig), "pids")),
		start: map[string]float64{}, last: map[string]float64{}, stop: make(chan struct{}), done: make(chan struct{})}
	m.pids["operator"] = operatorPID
	m.sample()
	for name, s := range m.last {
		m.start[name] = s
	}
	go func() {
		defer close(m.done)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-m.stop:
				m.sample()
				return
			case <-tick.C:
				m.sample()
			}
		}
	}()
	return m
}

// clusterPIDs reads the pid files of dir by component; none when there are none.
func clusterPIDs(dir string) map[string]int {
	pids := map[string]int{}
	files, _ := filepath.Glob(filepath.Join(dir, "*.pid"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			pids[strings.TrimSuffix(filepath.Base(f), ".pid")] = pid
		}
	}
	return pids
}

func (m *cpuMeter) sample() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for name, pid := range m.pids {
		if s, err := processCPUSeconds(pid); err == nil {
			m.last[name] = s
		}
	}
}

// finish stops sampling and returns the CPU seconds each process used since the start.
func (m *cpuMeter) finish() map[string]float64 {
	close(m.stop)
	<-m.done
	m.mu.Lock()
	defer m.mu.Unlock()
	used := map[string]float64{}
	for name, s := range m.last {
		if s0, ok := m.start[name]; ok {
			used[name] = s - s0
		}
	}
	return used
}

// cpuLine lists the figures of used, by name.
func cpuLine(used map[string]float64) string {
	names := make([]string, 0, len(used))
	for name := range used {
		names = append(names, name)
	}
	slices.Sort(names)
	var b strings.Builder
	b.WriteString("cpu_s")
	for _, name := range names {
		fmt.Fprintf(&b, " %s=%.1f", name, used[name])
	}
	return b.String()
}

// sumOf adds the figures of used for names.
func sumOf(used map[string]float64, names []string) float64 {
	total := 0.0
	for _, n := range names {
		total += used[n]
	}
	return total
}

// processCPUSeconds reads the user and system CPU time of pid and all its threads.
func processCPUSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseStatCPU(string(b))
}

// parseStatCPU reads utime and stime (fields 14 and 15) of a /proc/<pid>/stat line. The
// command name (field 2) is in parentheses and may hold spaces: fields are counted after its
// closing one.
func parseStatCPU(stat string) (float64, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("unreadable stat %q", stat)
	}
	fields := strings.Fields(stat[i+1:])
	// fields[0] is field 3 (state): utime is field 14, stime field 15.
	if len(fields) < 13 {
		return 0, fmt.Errorf("short stat %q", stat)
	}
	utime, err1 := strconv.ParseFloat(fields[11], 64)
	stime, err2 := strconv.ParseFloat(fields[12], 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("unreadable times in stat %q", stat)
	}
	return (utime + stime) / clockTicks, nil
}
