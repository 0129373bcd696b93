package scheduler

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/sparkpod"
)

type named string

func (n named) Name() string { return string(n) }
func (named) Admit(context.Context, Workload) (Decision, error) {
	return Decision{Reason: "held"}, nil
}
func (named) Release(context.Context, Workload) error { return nil }

func TestRegistry(t *testing.T) {
	r := NewRegistry(AdmitAll{}, named("volcano"))
	tests := []struct {
		name    string
		want    string
		wantErr string
	}{
		{name: "default", want: DefaultName},
		{name: "volcano", want: "volcano"},
		{name: "yunikorn", wantErr: `batch scheduler "yunikorn" is not enabled in this operator (enabled: [default volcano])`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := r.Get(tt.name)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Name() != tt.want {
				t.Errorf("got %s, want %s", s.Name(), tt.want)
			}
		})
	}
	if diff := cmp.Diff([]string{"default", "volcano"}, r.Names()); diff != "" {
		t.Error(diff)
	}
}

func TestAdmitAllAdmitsWithoutChanges(t *testing.T) {
	app := &v1beta2.SparkApplication{}
	app.Name = "a"
	before := app.DeepCopy()
	d, err := AdmitAll{}.Admit(context.Background(), Workload{Object: app, Demand: sparkpod.Demand{}})
	if err != nil || !d.Admit {
		t.Fatalf("decision = %+v, %v; want admitted", d, err)
	}
	if diff := cmp.Diff(before, app); diff != "" {
		t.Errorf("AdmitAll changed the application:\n%s", diff)
	}
}

// wakes records the workloads it is asked to wake and to refresh.
type wakes struct{ woken, refreshed []WorkloadKey }

func (w *wakes) Wake(keys ...WorkloadKey)    { w.woken = append(w.woken, keys...) }
func (w *wakes) Refresh(keys ...WorkloadKey) { w.refreshed = append(w.refreshed, keys...) }

func TestRegistryWakesEachKindsController(t *testing.T) {
	r := NewRegistry()
	apps, sessions := &wakes{}, &wakes{}
	r.HandleWakes(KindApplication, apps)
	r.HandleWakes(KindSession, sessions)
	app := WorkloadKey{Kind: KindApplication, NamespacedName: types.NamespacedName{Namespace: "ns", Name: "x"}}
	session := WorkloadKey{Kind: KindSession, NamespacedName: app.NamespacedName}
	other := WorkloadKey{Kind: "Other", NamespacedName: app.NamespacedName}
	r.Wake(app, session, other, session)
	r.Refresh(session, other, app)
	want := map[*wakes]wakes{
		apps:     {woken: []WorkloadKey{app}, refreshed: []WorkloadKey{app}},
		sessions: {woken: []WorkloadKey{session, session}, refreshed: []WorkloadKey{session}},
	}
	for w, name := range map[*wakes]string{apps: "applications", sessions: "sessions"} {
		if diff := cmp.Diff(want[w], *w, cmp.AllowUnexported(wakes{})); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
}

func TestWorkloadKeys(t *testing.T) {
	nn := types.NamespacedName{Namespace: "ns", Name: "x"}
	tests := []struct {
		key  WorkloadKey
		want string
	}{
		{WorkloadKey{Kind: KindApplication, NamespacedName: nn}, "ns/x"},
		{WorkloadKey{Kind: KindSession, NamespacedName: nn}, "ns/x (SparkConnect)"},
	}
	for _, tt := range tests {
		if got := tt.key.String(); got != tt.want {
			t.Errorf("%#v: %q, want %q", tt.key, got, tt.want)
		}
	}
	if tests[0].key == tests[1].key {
		t.Error("an application and a session of the same name have the same key")
	}
}

func TestApplicationWorkload(t *testing.T) {
	tests := []struct {
		name      string
		app       *v1beta2.SparkApplication
		queue, pc string
	}{
		{name: "no options", app: &v1beta2.SparkApplication{}},
		{name: "queue and options' priority class win", queue: "q", pc: "high", app: &v1beta2.SparkApplication{Spec: v1beta2.SparkApplicationSpec{
			BatchSchedulerOptions: &v1beta2.BatchSchedulerConfiguration{Queue: ptr.To("q"), PriorityClassName: ptr.To("high")},
			Driver:                v1beta2.DriverSpec{SparkPodSpec: v1beta2.SparkPodSpec{PriorityClassName: ptr.To("low")}},
		}}},
		{name: "driver's priority class", pc: "low", app: &v1beta2.SparkApplication{Spec: v1beta2.SparkApplicationSpec{
			Driver: v1beta2.DriverSpec{SparkPodSpec: v1beta2.SparkPodSpec{PriorityClassName: ptr.To("low")}},
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.app.Name, tt.app.Namespace, tt.app.Status.SubmissionID = "a", "ns", "s1"
			w := ApplicationWorkload(tt.app)
			want := Workload{Key: WorkloadKey{Kind: KindApplication, NamespacedName: types.NamespacedName{Namespace: "ns", Name: "a"}},
				Object: tt.app, Run: "s1", Queue: tt.queue, PriorityClassName: tt.pc}
			if diff := cmp.Diff(want, w); diff != "" {
				t.Error(diff)
			}
		})
	}
}
