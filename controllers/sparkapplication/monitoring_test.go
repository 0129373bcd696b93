package sparkapplication

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/test/cluster"
)

func TestMetricsConfigMapData(t *testing.T) {
	tests := []struct {
		name       string
		monitoring *v1beta2.MonitoringSpec
		want       map[string]string // nil: no ConfigMap
	}{
		{name: "no monitoring"},
		{name: "files in the image only", monitoring: &v1beta2.MonitoringSpec{
			MetricsPropertiesFile: ptr.To("/opt/m.properties"),
			Prometheus:            &v1beta2.PrometheusSpec{JmxExporterJar: "/j.jar", ConfigFile: ptr.To("/opt/p.yaml")},
		}},
		{name: "inline metrics properties", monitoring: &v1beta2.MonitoringSpec{MetricsProperties: ptr.To("*.sink.x=y")},
			want: map[string]string{"metrics.properties": "*.sink.x=y"}},
		{name: "inline exporter configuration", monitoring: &v1beta2.MonitoringSpec{
			Prometheus: &v1beta2.PrometheusSpec{JmxExporterJar: "/j.jar", Configuration: ptr.To("rules: []")},
		}, want: map[string]string{"prometheus.yaml": "rules: []"}},
		{name: "a file wins over inline text", monitoring: &v1beta2.MonitoringSpec{
			MetricsProperties: ptr.To("ignored"), MetricsPropertiesFile: ptr.To("/opt/m.properties"),
			Prometheus: &v1beta2.PrometheusSpec{Configuration: ptr.To("rules: []")},
		}, want: map[string]string{"prometheus.yaml": "rules: []"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := newApp("ns", "app")
			app.Spec.Monitoring = tt.monitoring
			var got map[string]string
			if cm := metricsConfigMap(app); cm != nil {
				got = cm.Data
				if cm.Name != "app-prom-conf" || cm.Labels[v1beta2.LabelLaunchedByOperator] != "true" {
					t.Errorf("ConfigMap %s with labels %v", cm.Name, cm.Labels)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("data (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMetricsConfigMapCreatedBeforeTheDriver: inline monitoring configuration reaches the
// cluster as the application's ConfigMap, owned by it, and a changed configuration replaces it
// on the next run.
func TestMetricsConfigMapCreatedBeforeTheDriver(t *testing.T) {
	c := cluster.Client(t)
	ctx := context.Background()
	e := &env{c: c, ns: cluster.Namespace(t, c, "sparkapp-metrics"),
		sub: &fakeSubmitter{c: c, calls: map[types.NamespacedName]int{}, gate: &gate{}}}
	startManager(t, []string{e.ns}, e.sub, Options{DriverPodGracePeriod: 5 * time.Second})

	app := newApp(e.ns, "monitored", func(a *v1beta2.SparkApplication) {
		a.Spec.Monitoring = &v1beta2.MonitoringSpec{MetricsProperties: ptr.To("*.sink.jmx.class=JmxSink")}
	})
	key := e.create(t, app)
	e.waitState(t, key, v1beta2.ApplicationStateRunning, 20*time.Second)

	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: app.MetricsConfigMapName()}, cm); err != nil {
		t.Fatalf("metrics ConfigMap: %v", err)
	}
	if got := cm.Data["metrics.properties"]; got != "*.sink.jmx.class=JmxSink" {
		t.Errorf("metrics.properties = %q", got)
	}
	if !metav1.IsControlledBy(cm, app) {
		t.Errorf("the ConfigMap is not owned by the application: %v", cm.OwnerReferences)
	}

	// A changed configuration reruns the application and rewrites the ConfigMap.
	if err := c.Get(ctx, key, app); err != nil {
		t.Fatal(err)
	}
	app.Spec.Monitoring.MetricsProperties = ptr.To("*.sink.console.class=ConsoleSink")
	if err := c.Update(ctx, app); err != nil {
		t.Fatal(err)
	}
	cluster.Eventually(t, 30*time.Second, "the ConfigMap to follow the spec", func() (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(cm), cm)
		return err == nil && cm.Data["metrics.properties"] == "*.sink.console.class=ConsoleSink", client.IgnoreNotFound(err)
	})
}

// TestMetricsConfigMapApplied: the metrics ConfigMap is written with server-side apply. It
// carries the operator's labels and the application as its controller; written again for an
// unchanged spec, it costs no write and keeps its resourceVersion; a changed configuration is
// written, and what another controller added stays; a ConfigMap of the name that is not the
// application's is left alone.
func TestMetricsConfigMapApplied(t *testing.T) {
	ctx := context.Background()
	c := cluster.Client(t)
	ns := cluster.Namespace(t, c, "sparkapp-metrics-apply")
	writes := cluster.CountWrites(c)
	r := &Reconciler{Client: writes, APIReader: c, Scheme: cluster.Scheme}

	app := newApp(ns, "monitored", func(a *v1beta2.SparkApplication) {
		a.Spec.Monitoring = &v1beta2.MonitoringSpec{MetricsProperties: ptr.To("*.sink.jmx.class=JmxSink")}
	})
	if err := c.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{}
	get := func() {
		t.Helper()
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: app.MetricsConfigMapName()}, cm); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.ensureMetricsConfigMap(ctx, app); err != nil {
		t.Fatal(err)
	}
	get()
	if cm.Data["metrics.properties"] != "*.sink.jmx.class=JmxSink" || !metav1.IsControlledBy(cm, app) ||
		cm.Labels[v1beta2.LabelAppName] != app.Name || cm.Labels[v1beta2.LabelLaunchedByOperator] != "true" {
		t.Errorf("metrics ConfigMap: data %v, labels %v, owners %+v", cm.Data, cm.Labels, cm.OwnerReferences)
	}

	// Another controller annotates it.
	cm.Annotations["example.com/note"] = "kept"
	if err := c.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	get()
	version := cm.ResourceVersion
	writes.Reset()
	if err := r.ensureMetricsConfigMap(ctx, app); err != nil {
		t.Fatal(err)
	}
	get()
	if writes.Writes() != 0 || cm.ResourceVersion != version {
		t.Errorf("unchanged configuration: %d writes, resourceVersion %s -> %s; want none", writes.Writes(), version, cm.ResourceVersion)
	}

	app.Spec.Monitoring.MetricsProperties = ptr.To("*.sink.console.class=ConsoleSink")
	if err := r.ensureMetricsConfigMap(ctx, app); err != nil {
		t.Fatal(err)
	}
	get()
	if cm.Data["metrics.properties"] != "*.sink.console.class=ConsoleSink" || cm.Annotations["example.com/note"] != "kept" ||
		!metav1.IsControlledBy(cm, app) || cm.Labels[v1beta2.LabelLaunchedByOperator] != "true" {
		t.Errorf("after a change: data %v, annotations %v, labels %v, owners %+v", cm.Data, cm.Annotations, cm.Labels, cm.OwnerReferences)
	}

	// A ConfigMap of the name that someone else made stays as it is.
	other := newApp(ns, "other", func(a *v1beta2.SparkApplication) {
		a.Spec.Monitoring = &v1beta2.MonitoringSpec{MetricsProperties: ptr.To("*.sink.x=y")}
	})
	if err := c.Create(ctx, other); err != nil {
		t.Fatal(err)
	}
	theirs := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: other.MetricsConfigMapName()}, Data: map[string]string{"mine": "yes"}}
	if err := c.Create(ctx, theirs); err != nil {
		t.Fatal(err)
	}
	if err := r.ensureMetricsConfigMap(ctx, other); err == nil || !strings.Contains(err.Error(), "not controlled by SparkApplication other") {
		t.Errorf("over someone else's ConfigMap: %v, want an error saying it is not the application's", err)
	}
	after := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(theirs), after); err != nil {
		t.Fatal(err)
	}
	if after.ResourceVersion != theirs.ResourceVersion {
		t.Errorf("someone else's ConfigMap was written: %v", after.Data)
	}
}
