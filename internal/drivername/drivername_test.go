package drivername

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

func TestPrecedes(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	app := func(name string, created time.Time, podName string) *v1beta2.SparkApplication {
		a := &v1beta2.SparkApplication{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", CreationTimestamp: metav1.NewTime(created)}}
		if podName != "" {
			a.Spec.Driver.PodName = ptr.To(podName)
		}
		return a
	}
	tests := []struct {
		name string
		a, b *v1beta2.SparkApplication
		want bool
	}{
		{"created earlier", app("z", t0, "x"), app("a", t0.Add(time.Second), "x"), true},
		{"created later", app("a", t0.Add(time.Second), "x"), app("z", t0, "x"), false},
		{"same second, own default name", app("pi", t0, ""), app("a", t0, "pi-driver"), true},
		{"same second, the other's default name", app("a", t0, "pi-driver"), app("pi", t0, ""), false},
		{"same second, both explicit: name order", app("a", t0, "x"), app("b", t0, "x"), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Precedes(tc.a, tc.b); got != tc.want {
				t.Errorf("Precedes = %v, want %v", got, tc.want)
			}
		})
	}
}
