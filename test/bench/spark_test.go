/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler/gang"
)

var t0 = time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)

func stepApp(name string, executors int32, work string) v1beta2.SparkApplication {
	app := v1beta2.SparkApplication{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{annotationWork: work}}}
	app.Spec.Executor.Instances = ptr.To(executors)
	return app
}

func stepPod(app, role, name, node string, phase corev1.PodPhase, cpu string, created time.Time, conds ...corev1.PodCondition) corev1.Pod {
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(created),
			Labels: map[string]string{v1beta2.LabelAppName: app, v1beta2.SparkRoleLabel: role}},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}},
		Status: corev1.PodStatus{Phase: phase, Conditions: conds},
	}
}

func driverOf(app string, phase corev1.PodPhase) corev1.Pod {
	return stepPod(app, v1beta2.SparkRoleDriver, app+"-driver", "n1", phase, "1", t0)
}

func executorOf(app string, id string, node string, phase corev1.PodPhase, created time.Time, conds ...corev1.PodCondition) corev1.Pod {
	return stepPod(app, v1beta2.SparkRoleExecutor, app+"-exec-"+id, node, phase, "2", created, conds...)
}

var unschedulableCond = corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}

func TestJobsStep(t *testing.T) {
	node := corev1.Node{Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10")}}}
	type want struct {
		Actions []actionKind
		Obs     observation
		Working float64 // the share of CPU at work (capacity.working)
		Peak    int
		Ever    []string
	}
	cases := []struct {
		name    string
		started bool
		done    float64 // executor-seconds done before the step
		pods    []corev1.Pod
		want    want
	}{{
		name: "a running driver gets its executors",
		pods: []corev1.Pod{driverOf("a", corev1.PodRunning)},
		want: want{Actions: []actionKind{startExecutors}, Obs: observation{stuck: 1, cpuShare: 0.1}},
	}, {
		name: "a pending driver waits",
		pods: []corev1.Pod{driverOf("a", corev1.PodPending)},
		want: want{Obs: observation{unstarted: 1}},
	}, {
		name:    "running executors progress the job",
		started: true,
		pods: []corev1.Pod{driverOf("a", corev1.PodRunning),
			executorOf("a", "1", "n1", corev1.PodRunning, t0), executorOf("a", "2", "n1", corev1.PodRunning, t0)},
		want: want{Obs: observation{progress: true, cpuShare: 0.5}, Working: 0.5},
	}, {
		name:    "a job whose work is done is ended",
		started: true,
		done:    99,
		pods: []corev1.Pod{driverOf("a", corev1.PodRunning),
			executorOf("a", "1", "n1", corev1.PodRunning, t0), executorOf("a", "2", "n1", corev1.PodRunning, t0)},
		want: want{Actions: []actionKind{endJob}, Obs: observation{progress: true, cpuShare: 0.5}, Working: 0.5},
	}, {
		name:    "an unschedulable executor is a partial start at once",
		started: true,
		pods: []corev1.Pod{driverOf("a", corev1.PodRunning),
			executorOf("a", "1", "n1", corev1.PodRunning, t0), executorOf("a", "2", "", corev1.PodPending, t0.Add(30*time.Second), unschedulableCond)},
		want: want{Obs: observation{progress: true, partial: 1, unschedulable: 1, cpuShare: 0.3}, Working: 0.3, Peak: 1, Ever: []string{"a"}},
	}, {
		name:    "an executor unbound within the grace is not",
		started: true,
		pods: []corev1.Pod{driverOf("a", corev1.PodRunning),
			executorOf("a", "1", "", corev1.PodPending, t0.Add(31*time.Second)), executorOf("a", "2", "", corev1.PodPending, t0.Add(31*time.Second))},
		want: want{Obs: observation{stuck: 1, cpuShare: 0.1}},
	}, {
		name:    "an executor unbound beyond the grace is, and its driver makes no progress",
		started: true,
		pods: []corev1.Pod{driverOf("a", corev1.PodRunning),
			executorOf("a", "1", "", corev1.PodPending, t0), executorOf("a", "2", "", corev1.PodPending, t0)},
		want: want{Obs: observation{stuck: 1, partial: 1, cpuShare: 0.1}, Peak: 1, Ever: []string{"a"}},
	}, {
		name:    "a finished driver's executors do not count",
		started: true,
		pods: []corev1.Pod{driverOf("a", corev1.PodSucceeded),
			executorOf("a", "1", "", corev1.PodPending, t0, unschedulableCond)},
		want: want{},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := newJobs()
			j.byApp["a"] = &job{started: tc.started, progress: tc.done}
			apps := []v1beta2.SparkApplication{stepApp("a", 2, "100")}
			now := t0.Add(40 * time.Second)
			acts, obs := j.step(now, time.Second, apps, tc.pods, []corev1.Node{node})
			got := want{Obs: obs, Working: obs.capacity.working, Peak: j.partialPeak}
			for _, a := range acts {
				got.Actions = append(got.Actions, a.kind)
			}
			for app := range j.everPartial {
				got.Ever = append(got.Ever, app)
			}
			// TestCapacityShares checks where the capacity went.
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{}, observation{}), cmpopts.IgnoreFields(observation{}, "capacity")); diff != "" {
				t.Errorf("step (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCapacityShares(t *testing.T) {
	node := corev1.Node{Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10")}}}
	// admitted marks app admitted with executors planned; the cases' reservations are made of
	// the marks.
	const plan = "test.sparkop.dev/plan"
	admitted := func(app v1beta2.SparkApplication, executors map[string]int32) v1beta2.SparkApplication {
		data, err := json.Marshal(executors)
		if err != nil {
			t.Fatal(err)
		}
		app.Annotations[plan] = string(data)
		return app
	}
	// stepApp's pods ask for 1 CPU each (no cores set): the reservation counts by the demand.
	// other is a pod of no application, of 2 CPU, labelled key=value.
	other := func(name, key, value, node string, phase corev1.PodPhase) corev1.Pod {
		p := stepPod("", "", name, node, phase, "2", t0)
		p.Labels = map[string]string{key: value}
		return p
	}
	cases := []struct {
		name  string
		apps  []v1beta2.SparkApplication
		pods  []corev1.Pod
		ended bool
		want  capacityShares
	}{{
		name: "nothing admitted: all free",
		apps: []v1beta2.SparkApplication{stepApp("a", 2, "100")},
		want: capacityShares{free: 1},
	}, {
		name: "admitted, no pod yet: the driver and both executors reserved",
		apps: []v1beta2.SparkApplication{admitted(stepApp("a", 2, "100"), map[string]int32{"n1": 2})},
		want: capacityShares{reserved: 0.3, free: 0.7},
	}, {
		name: "driver bound, starting; executors reserved",
		apps: []v1beta2.SparkApplication{admitted(stepApp("a", 2, "100"), map[string]int32{"n1": 2})},
		pods: []corev1.Pod{driverOf("a", corev1.PodPending)},
		want: capacityShares{starting: 0.1, reserved: 0.2, free: 0.7},
	}, {
		name: "driver running without executors: idle; one executor bound, the other reserved",
		apps: []v1beta2.SparkApplication{admitted(stepApp("a", 2, "100"), map[string]int32{"n1": 2})},
		pods: []corev1.Pod{driverOf("a", corev1.PodRunning), executorOf("a", "1", "n1", corev1.PodPending, t0)},
		want: capacityShares{idle: 0.1, starting: 0.2, reserved: 0.1, free: 0.6},
	}, {
		name:  "a job ended keeps nothing reserved for executors gone",
		apps:  []v1beta2.SparkApplication{admitted(stepApp("a", 2, "100"), map[string]int32{"n1": 2})},
		pods:  []corev1.Pod{driverOf("a", corev1.PodRunning)},
		ended: true,
		want:  capacityShares{idle: 0.1, free: 0.9},
	}, {
		name: "the competing load's running pods are its share, not the applications' idle; its pending ones nothing",
		apps: []v1beta2.SparkApplication{stepApp("a", 2, "100")},
		pods: []corev1.Pod{other("load-1", labelLoad, "competing", "n1", corev1.PodRunning), other("load-2", labelLoad, "competing", "", corev1.PodPending)},
		want: capacityShares{competing: 0.2, free: 0.8},
	}, {
		name: "a placeholder bound holds an executor's reserved room: counted once, as the placeholder's",
		apps: []v1beta2.SparkApplication{admitted(stepApp("a", 2, "100"), map[string]int32{"n1": 2})},
		pods: []corev1.Pod{driverOf("a", corev1.PodRunning), other("a-ph-executors-1-1", gang.LabelPlaceholder, "a", "n1", corev1.PodRunning)},
		want: capacityShares{idle: 0.1, placeholders: 0.2, free: 0.7},
	}, {
		name: "a placeholder bound, not running yet: starting, and the room it holds not reserved twice",
		apps: []v1beta2.SparkApplication{admitted(stepApp("a", 2, "100"), map[string]int32{"n1": 2})},
		pods: []corev1.Pod{driverOf("a", corev1.PodRunning), other("a-ph-executors-1-1", gang.LabelPlaceholder, "a", "n1", corev1.PodPending)},
		want: capacityShares{idle: 0.1, starting: 0.2, free: 0.7},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := newJobs()
			j.reservations = map[string]gang.Reservation{}
			for _, a := range tc.apps {
				if v, ok := a.Annotations[plan]; ok {
					var executors map[string]int32
					if err := json.Unmarshal([]byte(v), &executors); err != nil {
						t.Fatal(err)
					}
					j.reservations[a.Name] = gang.Reservation{SubmissionID: a.Status.SubmissionID, Driver: "n1", Executors: executors}
				}
			}
			j.byApp["a"] = &job{started: true, ended: tc.ended}
			_, obs := j.step(t0.Add(40*time.Second), time.Second, tc.apps, tc.pods, []corev1.Node{node})
			if diff := cmp.Diff(tc.want, obs.capacity, cmp.AllowUnexported(capacityShares{}), cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("capacity (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStages(t *testing.T) {
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	j := newJobs()
	// Admitted: queued 10 s, then 2 s to its driver. Not admitted: 4 s from creation to its
	// driver. Held: admitted, its room held 1 s after, its driver 4 s after. Unfinished: left
	// out.
	j.byApp["gang"] = &job{seen: at(0), admitted: at(10), driverCreated: at(12), driverBound: at(13), driverRunning: at(14),
		allRunning: at(16), endAsked: at(46), finished: at(50)}
	j.byApp["nogang"] = &job{seen: at(0), driverCreated: at(4), driverBound: at(5), driverRunning: at(6),
		allRunning: at(8), endAsked: at(38), finished: at(42)}
	j.byApp["held"] = &job{seen: at(0), admitted: at(10), held: at(11), driverCreated: at(14), driverBound: at(15), driverRunning: at(16),
		allRunning: at(18), endAsked: at(48), finished: at(52)}
	j.byApp["unfinished"] = &job{seen: at(0), admitted: at(100), driverCreated: at(200)}
	j.capacity, j.seconds = capacityShares{working: 4, idle: 1, competing: 0.5, placeholders: 0.5, starting: 1, reserved: 2, free: 1}, 10
	want := "stages_s queued=10.0 to_driver=3.3 to_held=1.0 to_bound=1.0 to_running=1.0 to_executors=2.0 work=30.0 to_finished=4.0" +
		" cpu working=0.400 idle=0.100 competing=0.050 placeholders=0.050 starting=0.100 reserved=0.200 free=0.100"
	if got := j.stages(); got != want {
		t.Errorf("stages:\n got %q\nwant %q", got, want)
	}
	// The applications' work alone, and the cluster's: theirs and the competing load's.
	if apps, cluster := j.utilisation(); math.Abs(apps-0.4) > 1e-9 || math.Abs(cluster-0.45) > 1e-9 {
		t.Errorf("utilisation = %.3f, %.3f; want 0.400, 0.450", apps, cluster)
	}
}

func TestJobsFinish(t *testing.T) {
	j := newJobs()
	app := stepApp("a", 1, "10")
	app.Status.AppState.State = v1beta2.ApplicationStateCompleted
	_, obs := j.step(t0, time.Second, []v1beta2.SparkApplication{app}, nil, nil)
	if obs.finished != 1 {
		t.Errorf("finished = %d, want 1", obs.finished)
	}
	// An action that failed is asked for again; one that succeeded is not.
	j.byApp["b"] = &job{busy: true}
	j.done(action{kind: startExecutors, app: "b"}, false)
	if jb := j.byApp["b"]; jb.busy || jb.started {
		t.Errorf("after a failed start: %+v", *jb)
	}
	j.byApp["b"].busy = true
	j.done(action{kind: startExecutors, app: "b"}, true)
	if jb := j.byApp["b"]; jb.busy || !jb.started {
		t.Errorf("after a start: %+v", *jb)
	}
}

func TestUnschedulableSummary(t *testing.T) {
	j := newJobs()
	if got := j.unschedulableSummary(); got != "" {
		t.Fatalf("no unschedulable executor: got %q, want nothing", got)
	}
	noRoom := unschedulableCond
	noRoom.Message = "0/1 nodes are available: 1 Insufficient cpu."
	apps := []v1beta2.SparkApplication{stepApp("a", 2, "100")}
	j.byApp["a"] = &job{started: true}
	driver := driverOf("a", corev1.PodRunning)
	j.step(t0.Add(time.Second), time.Second, apps, []corev1.Pod{driver,
		executorOf("a", "1", "", corev1.PodPending, t0, noRoom), executorOf("a", "2", "", corev1.PodPending, t0, noRoom)}, nil)
	j.step(t0.Add(4*time.Second), time.Second, apps, []corev1.Pod{driver,
		executorOf("a", "1", "n1", corev1.PodPending, t0, noRoom), executorOf("a", "2", "", corev1.PodPending, t0, noRoom)}, nil)
	want := "unschedulable executors=2 bound_after_s=3.0 bound_after_max_s=3.0\n  2× " + noRoom.Message + "\n  pods: a-exec-1 a-exec-2"
	if got := j.unschedulableSummary(); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestParseStatCPU(t *testing.T) {
	cases := []struct {
		stat    string
		want    float64
		wantErr bool
	}{
		// utime 250 and stime 50 ticks: 3 s.
		{stat: "4242 (kube-scheduler) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 50 0 0 20 0 12 0 100 0 0", want: 3},
		{stat: "7 (a (odd) name) R 1 7 7 0 -1 0 0 0 0 0 100 100 0 0 20 0 1 0 1 0 0", want: 2},
		{stat: "7 (short) R 1", wantErr: true},
		{stat: "no parentheses", wantErr: true},
	}
	for _, tc := range cases {
		got, err := parseStatCPU(tc.stat)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("parseStatCPU(%q) = %v, %v; want %v (error %v)", tc.stat, got, err, tc.want, tc.wantErr)
		}
	}
}

// TestCPUMeter: the meter reads the pid files beside the kubeconfig and the operator's pid, and
// reports what each used over the run.
func TestCPUMeter(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "pids"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pids", "kube-scheduler.pid"), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := startCPUMeter(filepath.Join(dir, "kubeconfig"), os.Getpid())
	for deadline := time.Now().Add(300 * time.Millisecond); time.Now().Before(deadline); {
	}
	used := m.finish()
	if used["kube-scheduler"] <= 0 || used["operator"] <= 0 {
		t.Errorf("used %v, want both processes (this one) to have used CPU", used)
	}
	if got := sumOf(used, schedulerComponentsOf("volcano")); got != used["kube-scheduler"] {
		t.Errorf("volcano's schedulers used %v, want kube-scheduler's %v (its others are not running)", got, used["kube-scheduler"])
	}
}
