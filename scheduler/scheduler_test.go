package scheduler

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/sparkpod"
)

type named string

func (n named) Name() string { return string(n) }
func (named) Admit(context.Context, *v1beta2.SparkApplication, sparkpod.Demand) (Decision, error) {
	return Decision{Reason: "held"}, nil
}
func (named) Release(context.Context, *v1beta2.SparkApplication) error { return nil }

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
	d, err := AdmitAll{}.Admit(context.Background(), app, sparkpod.Demand{})
	if err != nil || !d.Admit {
		t.Fatalf("decision = %+v, %v; want admitted", d, err)
	}
	if diff := cmp.Diff(before, app); diff != "" {
		t.Errorf("AdmitAll changed the application:\n%s", diff)
	}
}
