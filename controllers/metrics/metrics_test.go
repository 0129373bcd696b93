/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package metrics

import (
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

func app(name, uid string) *v1beta2.SparkApplication {
	return &v1beta2.SparkApplication{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(uid)}}
}

// snapshot is every metric's value: counters and gauges by value, histograms by sample count
// and sum.
type snapshot map[string]float64

func scrape(t *testing.T, reg *prometheus.Registry) snapshot {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	s := snapshot{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				s[f.GetName()] = m.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				s[f.GetName()] = m.GetGauge().GetValue()
			case dto.MetricType_HISTOGRAM:
				s[f.GetName()+"_count"] = float64(m.GetHistogram().GetSampleCount())
				s[f.GetName()+"_sum"] = m.GetHistogram().GetSampleSum()
			case dto.MetricType_SUMMARY:
				s[f.GetName()+"_count"] = float64(m.GetSummary().GetSampleCount())
				s[f.GetName()+"_sum"] = m.GetSummary().GetSampleSum()
			}
		}
	}
	return s
}

func zero() snapshot {
	s := snapshot{}
	for _, n := range []string{SubmitTotal, SubmitFailedTotal, SuccessTotal, FailureTotal, Running,
		ExecutorRunning, ExecutorFailure, Count, SubmitCount, FailedSubmissionCount, RunningCount, SuccessCount,
		FailureCount, ExecutorRunningCount, ExecutorSuccessCount, ExecutorFailureCount} {
		s[n] = 0
	}
	for _, n := range []string{SubmitLatency, SubmitLatencyHistogram, StartLatency, StartLatencyHistogram, ExecutionTime,
		SuccessExecutionTime, FailureExecutionTime} {
		s[n+"_count"], s[n+"_sum"] = 0, 0
	}
	return s
}

func TestRecorder(t *testing.T) {
	a, b := app("a", "1"), app("b", "2")
	aAgain := app("a", "3") // a recreated under the same name
	tests := []struct {
		name  string
		steps func(r *Recorder)
		want  map[string]float64 // differences from zero()
	}{
		{name: "nothing", steps: func(*Recorder) {}},
		{
			name: "submissions",
			steps: func(r *Recorder) {
				r.Submitted(a, 250*time.Millisecond)
				r.Submitted(b, -time.Second)
				r.SubmissionFailed(a)
			},
			want: map[string]float64{SubmitTotal: 2, SubmitFailedTotal: 1, SubmitLatency + "_count": 2, SubmitLatency + "_sum": 0.25,
				SubmitCount: 2, FailedSubmissionCount: 1, SubmitLatencyHistogram + "_count": 2, SubmitLatencyHistogram + "_sum": 0.25},
		},
		{
			name: "a full run",
			steps: func(r *Recorder) {
				r.AppStateChanged(a, v1beta2.ApplicationStateNew, v1beta2.ApplicationStateSubmitted)
				r.AppStateChanged(a, v1beta2.ApplicationStateSubmitted, v1beta2.ApplicationStateRunning)
				r.Started(a, 3*time.Second)
				r.AppStateChanged(a, v1beta2.ApplicationStateRunning, v1beta2.ApplicationStateSucceeding)
				r.Finished(a, v1beta2.ApplicationStateCompleted, 10*time.Second)
				done := a.DeepCopy()
				done.Status.LastSubmissionAttemptTime = metav1.NewTime(time.Unix(100, 0))
				done.Status.TerminationTime = metav1.NewTime(time.Unix(112, 0))
				r.AppStateChanged(done, v1beta2.ApplicationStateSucceeding, v1beta2.ApplicationStateCompleted)
			},
			want: map[string]float64{SuccessTotal: 1, StartLatency + "_count": 1, StartLatency + "_sum": 3,
				StartLatencyHistogram + "_count": 1, StartLatencyHistogram + "_sum": 3,
				ExecutionTime + "_count": 1, ExecutionTime + "_sum": 10,
				SuccessCount: 1, SuccessExecutionTime + "_count": 1, SuccessExecutionTime + "_sum": 12},
		},
		{
			name: "running gauge counts each app once",
			steps: func(r *Recorder) {
				r.AppStateChanged(a, v1beta2.ApplicationStateSubmitted, v1beta2.ApplicationStateRunning)
				r.AppStateChanged(a, v1beta2.ApplicationStateSubmitted, v1beta2.ApplicationStateRunning)
				r.AppStateChanged(b, v1beta2.ApplicationStateSubmitted, v1beta2.ApplicationStateRunning)
				r.AppStateChanged(aAgain, v1beta2.ApplicationStateSubmitted, v1beta2.ApplicationStateRunning)
				r.AppStateChanged(b, v1beta2.ApplicationStateRunning, v1beta2.ApplicationStateRunning)
			},
			want: map[string]float64{Running: 3, RunningCount: 3},
		},
		{
			name: "leaving running, finishing and forgetting",
			steps: func(r *Recorder) {
				for _, x := range []*v1beta2.SparkApplication{a, b, aAgain} {
					r.AppStateChanged(x, v1beta2.ApplicationStateSubmitted, v1beta2.ApplicationStateRunning)
				}
				r.AppStateChanged(a, v1beta2.ApplicationStateRunning, v1beta2.ApplicationStateFailing)
				r.AppStateChanged(a, v1beta2.ApplicationStateRunning, v1beta2.ApplicationStateFailing)
				r.Finished(b, v1beta2.ApplicationStateFailed, time.Minute)
				r.Forget(aAgain)
				r.Forget(aAgain)
			},
			want: map[string]float64{FailureTotal: 1, ExecutionTime + "_count": 1, ExecutionTime + "_sum": 60},
		},
		{
			name: "created, and failed as Kubeflow counts it",
			steps: func(r *Recorder) {
				r.Created(a)
				r.AppStateChanged(a, v1beta2.ApplicationStateFailing, v1beta2.ApplicationStateFailed)
			},
			want: map[string]float64{Count: 1, FailureCount: 1},
		},
		{
			name: "finished in a non-final state is ignored",
			steps: func(r *Recorder) {
				r.Finished(a, v1beta2.ApplicationStateUnknown, time.Minute)
			},
		},
		{
			name: "executors",
			steps: func(r *Recorder) {
				r.ExecutorStates(a, 3, 0, 0)
				r.ExecutorStates(b, 2, 1, 0)
				r.ExecutorStates(a, 2, 1, 0)
				r.ExecutorStates(a, 2, 1, 0)
				r.ExecutorStates(b, 0, 3, 0)
			},
			want: map[string]float64{ExecutorRunning: 2, ExecutorFailure: 4, ExecutorRunningCount: 2, ExecutorFailureCount: 4},
		},
		{
			name: "executors of a rerun and of forgotten apps",
			steps: func(r *Recorder) {
				r.ExecutorStates(a, 4, 2, 0)
				r.ExecutorStates(a, 1, 0, 0) // the rerun starts from zero failures
				r.ExecutorStates(a, 1, 1, 0)
				r.ExecutorStates(b, 5, 0, 0)
				r.Forget(b)
				r.ExecutorStates(aAgain, -1, -1, 0)
			},
			want: map[string]float64{ExecutorRunning: 1, ExecutorFailure: 3, ExecutorRunningCount: 1, ExecutorFailureCount: 3},
		},
		{
			name: "completed executors",
			steps: func(r *Recorder) {
				r.ExecutorStates(a, 2, 0, 1)
				r.ExecutorStates(a, 0, 0, 3)
			},
			want: map[string]float64{ExecutorSuccessCount: 3},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			r := NewRecorder(reg)
			tc.steps(r)
			want := zero()
			for k, v := range tc.want {
				want[k] = v
			}
			if d := cmp.Diff(want, scrape(t, reg)); d != "" {
				t.Errorf("metrics (-want +got):\n%s", d)
			}
		})
	}
}

func TestExposition(t *testing.T) {
	reg := prometheus.NewRegistry()
	r := NewRecorder(reg)
	r.Submitted(app("a", "1"), time.Second)
	r.ExecutorStates(app("a", "1"), 2, 1, 0)
	want := `
# HELP spark_application_submit_total SparkApplications submitted successfully.
# TYPE spark_application_submit_total counter
spark_application_submit_total 1
# HELP spark_executor_failure_total Executor pods that failed.
# TYPE spark_executor_failure_total counter
spark_executor_failure_total 1
# HELP spark_executor_running Executor pods currently running, over all SparkApplications.
# TYPE spark_executor_running gauge
spark_executor_running 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		SubmitTotal, ExecutorFailure, ExecutorRunning); err != nil {
		t.Error(err)
	}
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		if !slices.Contains(KubeflowNames, p.Metric) {
			t.Errorf("lint: %s: %s", p.Metric, p.Text)
		}
	}
	if got, want := testutil.CollectAndCount(reg), len(OwnNames)+len(KubeflowNames); got != want {
		t.Errorf("%d metrics, want %d", got, want)
	}
}

func TestNilRecorder(t *testing.T) {
	var r *Recorder
	a := app("a", "1")
	r.Submitted(a, time.Second)
	r.SubmissionFailed(a)
	r.Started(a, time.Second)
	r.Finished(a, v1beta2.ApplicationStateCompleted, time.Second)
	r.AppStateChanged(a, "", v1beta2.ApplicationStateRunning)
	r.ExecutorStates(a, 1, 1, 0)
	r.Forget(a)
	// A nil application must not panic either.
	NewRecorder(prometheus.NewRegistry()).ExecutorStates(nil, 1, 0, 0)
}

// TestSharedRegistry checks that a second Recorder on the same registry neither fails nor
// splits the metrics, which is what happens with controller-runtime's global registry.
// TestOptions checks Kubeflow's --metrics-prefix and --metrics-labels: every spark_ metric
// is prefixed, and Kubeflow's names carry the labels, taken from the application.
func TestOptions(t *testing.T) {
	reg := prometheus.NewRegistry()
	r := NewRecorderWith(reg, Options{Prefix: "my_", Labels: []string{"app_type", "namespace", "example.com/team"}})
	x := app("a", "1")
	x.Labels = map[string]string{"app_type": "etl", "example.com/team": "data"}
	r.Submitted(x, time.Second)
	r.Submitted(app("b", "2"), time.Second)
	want := `
# HELP my_spark_application_submit_count SparkApplications submitted successfully (as spark_application_submit_total).
# TYPE my_spark_application_submit_count counter
my_spark_application_submit_count{app_type="Unknown",example_com_team="Unknown",namespace="ns"} 1
my_spark_application_submit_count{app_type="etl",example_com_team="data",namespace="ns"} 1
# HELP my_spark_application_submit_total SparkApplications submitted successfully.
# TYPE my_spark_application_submit_total counter
my_spark_application_submit_total 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "my_"+SubmitCount, "my_"+SubmitTotal); err != nil {
		t.Error(err)
	}
	for _, o := range []Options{{Prefix: "1x"}, {Prefix: "a-b"}, {StartLatencyBuckets: []float64{2, 1}}, {SubmitLatencyBuckets: []float64{1, 1}}} {
		if o.Validate() == nil {
			t.Errorf("%+v: valid, want an error", o)
		}
	}
	if err := (Options{Prefix: "my_", StartLatencyBuckets: []float64{30, 60}}).Validate(); err != nil {
		t.Error(err)
	}
}

func TestSharedRegistry(t *testing.T) {
	reg := prometheus.NewRegistry()
	r1, r2 := NewRecorder(reg), NewRecorder(reg)
	r1.Submitted(app("a", "1"), time.Second)
	r2.Submitted(app("b", "2"), time.Second)
	if got := scrape(t, reg); got[SubmitTotal] != 2 {
		t.Errorf("submit total %v, want 2", got[SubmitTotal])
	}
}

func TestControllerRuntimeRegistry(t *testing.T) {
	r := NewRecorder(crmetrics.Registry)
	r.Submitted(app("a", "1"), time.Second)
	families, err := crmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range families {
		if strings.HasPrefix(f.GetName(), "spark_") {
			names = append(names, f.GetName())
		}
	}
	sort.Strings(names)
	want := append(slices.Clone(OwnNames), KubeflowNames...)
	sort.Strings(want)
	if d := cmp.Diff(want, names); d != "" {
		t.Errorf("spark metrics on controller-runtime's registry (-want +got):\n%s", d)
	}
}

func TestConcurrentUse(t *testing.T) {
	reg := prometheus.NewRegistry()
	r := NewRecorder(reg)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x := app("app", string(rune('a'+i)))
			for range 100 {
				r.AppStateChanged(x, v1beta2.ApplicationStateSubmitted, v1beta2.ApplicationStateRunning)
				r.ExecutorStates(x, 2, 0, 0)
			}
		}()
	}
	wg.Wait()
	got := scrape(t, reg)
	if got[Running] != 8 || got[ExecutorRunning] != 16 {
		t.Errorf("running %v, executors %v; want 8 and 16", got[Running], got[ExecutorRunning])
	}
}
