/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/examples/external-scheduler/sjf"
	"github.com/sparkop/spark-operator/scheduler/external"
	"github.com/sparkop/spark-operator/scheduler/gang"
	"github.com/sparkop/spark-operator/test/cluster"
)

// recordingScheduler serves the example scheduler (shortest job first) and keeps what it
// answered, so the test can tell that every admission came from it.
type recordingScheduler struct {
	requests atomic.Int32
	mu       sync.Mutex
	admitted map[string]int // application → times the scheduler admitted it
	badReq   atomic.Value   // why a request did not read, if one did not
}

func (s *recordingScheduler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req external.Request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.APIVersion != external.APIVersion {
		s.badReq.Store("request did not read or has the wrong version")
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	s.requests.Add(1)
	answer := sjf.Decide(&req)
	s.mu.Lock()
	for _, a := range answer.Admit {
		s.admitted[a.Name]++
	}
	s.mu.Unlock()
	_ = json.NewEncoder(w).Encode(answer)
}

// TestExternalScheduler: the gang load of TestGangScheduling (20 applications, 3 fit at once)
// through spec.batchScheduler: external and the example scheduler: all complete, none ran in
// part, never more running than fit, and every admission was the external scheduler's.
func TestExternalScheduler(t *testing.T) {
	ctx := context.Background()
	r := newRun(t, true)
	queue := &schedv1alpha1.Queue{ObjectMeta: metav1.ObjectMeta{Name: r.ns}}
	if err := r.c.Create(ctx, queue); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.c.Delete(context.Background(), queue) })
	sched := &recordingScheduler{admitted: map[string]int{}}
	srv := httptest.NewServer(sched)
	t.Cleanup(srv.Close)
	r.startOperator("--enable-gang-scheduler", "--external-scheduler-url="+srv.URL, "--external-scheduler-interval=1s")
	for i := range apps {
		app := r.app(i)
		app.Spec.BatchScheduler = ptr.To(gang.ExternalName)
		if err := r.c.Create(ctx, app); err != nil {
			t.Fatal(err)
		}
	}
	cluster.Eventually(t, 5*time.Minute, "all applications to finish", func() (bool, error) {
		return r.step(ctx)
	})
	var list v1beta2.SparkApplicationList
	if err := r.c.List(ctx, &list, client.InNamespace(r.ns)); err != nil {
		t.Fatal(err)
	}
	sched.mu.Lock()
	defer sched.mu.Unlock()
	for _, app := range list.Items {
		if app.Status.AppState.State != v1beta2.ApplicationStateCompleted {
			t.Errorf("%s: %s %s", app.Name, app.Status.AppState.State, app.Status.AppState.ErrorMessage)
		}
		if sched.admitted[app.Name] == 0 {
			t.Errorf("%s ran without the external scheduler admitting it", app.Name)
		}
	}
	if why := sched.badReq.Load(); why != nil {
		t.Errorf("the operator sent a request the scheduler could not read: %v", why)
	}
	for app, why := range r.play.Partial() {
		t.Errorf("%s ran in part through the external scheduler: %s", app, why)
	}
	t.Logf("external: %d requests, at most %d running", sched.requests.Load(), r.play.PeakDrivers())
}

// TestExternalSchedulerIsChecked: an answer that overcommits a node or names an unknown
// application is refused (a warning event, the reason in the status) and the application stays
// queued; an answer that does not come in time admits nothing; a sound answer admits it.
func TestExternalSchedulerIsChecked(t *testing.T) {
	f := newFixture(t)
	n1, n2 := f.node("n1", "2", nil), f.node("n2", "2", nil)
	q := f.queue("q", schedv1alpha1.QueueSpec{})
	var mode atomic.Value
	mode.Store("overcommit")
	released := make(chan struct{}) // lets go of a request still held when the test ends
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req external.Request
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		answer := external.Response{APIVersion: external.APIVersion}
		switch mode.Load() {
		case "overcommit":
			// The gang (3 CPU) put on n1 (2 CPU), and an application that does not exist.
			answer.Admit = []external.Admission{
				{Workload: external.Workload{Namespace: f.ns, Name: "ghost"}, Placement: external.Placement{Driver: n1}},
				{Workload: external.Workload{Namespace: f.ns, Name: "big"}, Placement: external.Placement{Driver: n1, Executors: map[string]int32{n1: 2}}},
			}
		case "slow":
			// No answer until the operator gives up: its timeout ends the request.
			select {
			case <-r.Context().Done():
			case <-released:
			}
			return
		case "sound":
			answer = sjf.Decide(&req)
		}
		_ = json.NewEncoder(w).Encode(answer)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(released) }) // before srv.Close, which waits for the requests
	f.startOperator("--external-scheduler-url="+srv.URL, "--external-scheduler-timeout=1s", "--external-scheduler-interval=1s")
	app := f.app("big", q, 2)
	app.Spec.BatchScheduler = ptr.To(gang.ExternalName)
	f.create(app)

	f.waitWaiting("big", "the external scheduler's admission was refused", "node "+n1+" has no room for 2 executors")
	f.waitFor("a warning event about the refused admission", func() (bool, error) {
		var events corev1.EventList
		if err := f.c.List(f.ctx, &events, client.InNamespace(f.ns)); err != nil {
			return false, err
		}
		for _, e := range events.Items {
			if e.Reason == "ExternalAdmissionRefused" && e.InvolvedObject.Name == "big" && e.Type == corev1.EventTypeWarning &&
				strings.Contains(e.Message, "no room for 2 executors") {
				return true, nil
			}
		}
		return false, nil
	})
	f.requireNotAdmitted("big")

	mode.Store("slow")
	f.waitWaiting("big", "the external scheduler gave no usable answer", "Timeout")
	f.requireNotAdmitted("big")

	mode.Store("sound")
	_, pods := f.waitRunning("big")
	for _, p := range pods {
		if p.Spec.NodeName != n1 && p.Spec.NodeName != n2 {
			t.Errorf("pod %s runs on %q, not on the pool's nodes", p.Name, p.Spec.NodeName)
		}
	}
}
