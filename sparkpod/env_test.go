package sparkpod

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func TestEnsureEnvJudgesByTheLastDefinition(t *testing.T) {
	conf := func(v string) corev1.EnvVar { return corev1.EnvVar{Name: "SPARK_CONF_DIR", Value: v} }
	other := corev1.EnvVar{Name: "OTHER", Value: "x"}
	tests := []struct {
		name string
		have []corev1.EnvVar
		want []corev1.EnvVar
	}{
		{name: "absent", have: nil, want: []corev1.EnvVar{conf("/etc/spark/conf")}},
		{name: "already last", have: []corev1.EnvVar{conf("/etc/spark/conf"), other},
			want: []corev1.EnvVar{conf("/etc/spark/conf"), other}},
		{name: "early match overridden later", have: []corev1.EnvVar{conf("/etc/spark/conf"), conf("/opt/spark/conf")},
			want: []corev1.EnvVar{conf("/etc/spark/conf"), conf("/opt/spark/conf"), conf("/etc/spark/conf")}},
		{name: "another value", have: []corev1.EnvVar{conf("/opt/spark/conf")},
			want: []corev1.EnvVar{conf("/opt/spark/conf"), conf("/etc/spark/conf")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &corev1.Container{Env: tt.have}
			ensureEnv(c, conf("/etc/spark/conf"))
			ensureEnv(c, conf("/etc/spark/conf")) // idempotent
			if diff := cmp.Diff(tt.want, c.Env); diff != "" {
				t.Errorf("env (-want +got):\n%s", diff)
			}
		})
	}
}
