package scheduler

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta/testrestmapper"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1alpha1"
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

func TestSessionWorkload(t *testing.T) {
	withTemplatePC := func(pc string) *corev1.PodTemplateSpec {
		return &corev1.PodTemplateSpec{Spec: corev1.PodSpec{PriorityClassName: pc}}
	}
	tests := []struct {
		name      string
		spec      v1alpha1.SparkConnectSpec
		queue, pc string
	}{
		{name: "no options: no queue, no priority class"},
		{name: "queue and options' priority class win", queue: "q", pc: "high", spec: v1alpha1.SparkConnectSpec{
			BatchSchedulerOptions: &v1alpha1.BatchSchedulerOptions{Queue: ptr.To("q"), PriorityClassName: ptr.To("high")},
			Server:                v1alpha1.ServerSpec{SparkPodSpec: v1alpha1.SparkPodSpec{Template: withTemplatePC("low")}},
		}},
		{name: "the server template's priority class", pc: "low", spec: v1alpha1.SparkConnectSpec{
			Server: v1alpha1.ServerSpec{SparkPodSpec: v1alpha1.SparkPodSpec{Template: withTemplatePC("low")}},
		}},
		{name: "a queue alone", queue: "q", spec: v1alpha1.SparkConnectSpec{
			BatchSchedulerOptions: &v1alpha1.BatchSchedulerOptions{Queue: ptr.To("q")},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn := &v1alpha1.SparkConnect{Spec: tt.spec}
			conn.Name, conn.Namespace, conn.Status.Server.SubmissionID = "sc", "ns", "s1"
			w := SessionWorkload(conn)
			want := Workload{Key: WorkloadKey{Kind: KindSession, NamespacedName: types.NamespacedName{Namespace: "ns", Name: "sc"}},
				Object: conn, Run: "s1", Queue: tt.queue, PriorityClassName: tt.pc}
			if diff := cmp.Diff(want, w); diff != "" {
				t.Error(diff)
			}
		})
	}
}

// waking is a scheduler that says whether it wakes what it holds, without a manager.
type waking struct {
	named
	wakes bool
}

func (w waking) WakesHeldWorkloads() bool { return w.wakes }

// managed has a manager (it watches the cluster) but does not say it wakes what it holds.
type managed struct{ named }

func (managed) SetupWithManager(manager.Manager, Waker) error { return nil }

func TestRetryAfter(t *testing.T) {
	const interval = 10 * time.Second
	type want struct {
		After time.Duration
		Retry bool
	}
	tests := []struct {
		name string
		s    Interface
		d    Decision
		want want
	}{
		{name: "a scheduler that does not wake: the interval", s: named("x"), want: want{interval, true}},
		{name: "a scheduler with a manager is not taken to wake", s: managed{"x"}, want: want{interval, true}},
		{name: "one that says it does not wake", s: waking{"x", false}, want: want{interval, true}},
		{name: "one that wakes: never", s: waking{"x", true}, want: want{0, false}},
		{name: "the decision's time wins", s: named("x"), d: Decision{RetryAfter: time.Minute}, want: want{time.Minute, true}},
		{name: "also over waking", s: waking{"x", true}, d: Decision{RetryAfter: time.Second}, want: want{time.Second, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			after, retry := RetryAfter(tt.s, tt.d, interval)
			if diff := cmp.Diff(tt.want, want{after, retry}); diff != "" {
				t.Error(diff)
			}
		})
	}
}

// objectsFor is a scheduler that wants the given objects for each run.
type objectsFor struct {
	named
	objs func(w Workload) []client.Object
	err  error
}

func (o objectsFor) RunObjects(_ context.Context, w Workload, _ Decision) ([]client.Object, error) {
	if o.err != nil {
		return nil, o.err
	}
	return o.objs(w), nil
}

func TestEnsureRunObjects(t *testing.T) {
	app := &v1beta2.SparkApplication{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "app", UID: "uid-app"}}
	app.Status.SubmissionID = "s1"
	conn := &v1alpha1.SparkConnect{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "sc", UID: "uid-sc"}}
	cm := func(name, ns string) client.Object {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	}
	owner := func(kind, apiVersion, name, uid string) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: name, UID: types.UID(uid)}}
	}
	tests := []struct {
		name     string
		s        Interface
		w        Workload
		existing []client.Object
		want     []metav1.OwnerReference // of ConfigMap ns/pg, nil: none created
		wantErr  string
	}{
		{name: "a scheduler without the capability creates nothing", s: named("x"), w: ApplicationWorkload(app)},
		{name: "an application's object, owned by it", w: ApplicationWorkload(app),
			s:    objectsFor{named: "x", objs: func(w Workload) []client.Object { return []client.Object{cm("pg", "")} }},
			want: owner("SparkApplication", "sparkoperator.k8s.io/v1beta2", "app", "uid-app")},
		{name: "a session's object, owned by it", w: SessionWorkload(conn),
			s:    objectsFor{named: "x", objs: func(w Workload) []client.Object { return []client.Object{cm("pg", "ns")} }},
			want: owner("SparkConnect", "sparkoperator.k8s.io/v1alpha1", "sc", "uid-sc")},
		{name: "one that exists is left as it is", w: ApplicationWorkload(app), existing: []client.Object{cm("pg", "ns")},
			s: objectsFor{named: "x", objs: func(w Workload) []client.Object { return []client.Object{cm("pg", "")} }}},
		{name: "another namespace is refused", w: ApplicationWorkload(app), wantErr: "is in namespace other",
			s: objectsFor{named: "x", objs: func(w Workload) []client.Object { return []client.Object{cm("pg", "other")} }}},
		{name: "a cluster-scoped object is refused", w: ApplicationWorkload(app), wantErr: "is cluster-scoped",
			s: objectsFor{named: "x", objs: func(w Workload) []client.Object {
				return []client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "n"}}}
			}}},
		{name: "an unnamed object is refused", w: ApplicationWorkload(app), wantErr: "has no name",
			s: objectsFor{named: "x", objs: func(w Workload) []client.Object { return []client.Object{cm("", "")} }}},
		{name: "the scheduler's error", w: ApplicationWorkload(app), wantErr: "batch scheduler x: objects for the run of ns/app: no",
			s: objectsFor{named: "x", err: errors.New("no")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scheme := runtime.NewScheme()
			_ = clientgoscheme.AddToScheme(scheme)
			c := fake.NewClientBuilder().WithScheme(scheme).WithRESTMapper(testrestmapper.TestOnlyStaticRESTMapper(scheme)).
				WithObjects(tt.existing...).Build()
			err := EnsureRunObjects(context.Background(), c, tt.s, tt.w, Decision{Admit: true})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// Twice: a retry or a restart creates nothing more and fails on nothing.
			if err := EnsureRunObjects(context.Background(), c, tt.s, tt.w, Decision{Admit: true}); err != nil {
				t.Fatalf("second time: %v", err)
			}
			got := &corev1.ConfigMap{}
			err = c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "pg"}, got)
			if tt.want == nil && len(tt.existing) == 0 {
				if !apierrors.IsNotFound(err) {
					t.Fatalf("ConfigMap pg: %v, want none", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got.OwnerReferences); diff != "" {
				t.Errorf("owners (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUnavailable: a scheduler the cluster cannot run rejects every workload with its reason,
// under its own name, so that applications naming it fail saying why.
func TestUnavailable(t *testing.T) {
	u := Unavailable{SchedulerName: "kubernetes", Why: "needs the Workload API"}
	r := NewRegistry(AdmitAll{}, u)
	got, err := r.Get("kubernetes")
	if err != nil {
		t.Fatal(err)
	}
	d, err := got.Admit(context.Background(), Workload{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Decision{Reject: true, Reason: "needs the Workload API"}, d); diff != "" {
		t.Errorf("decision (-want +got):\n%s", diff)
	}
	if err := got.Release(context.Background(), Workload{}); err != nil {
		t.Errorf("Release: %v", err)
	}
}
