package nsfilter

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func TestAllows(t *testing.T) {
	reader := fake.NewClientBuilder().WithObjects(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "spark", Labels: map[string]string{"spark": "enabled"}}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "other"}},
	).Build()
	tests := []struct {
		name      string
		filter    *Filter
		namespace string
		want      bool
	}{
		{name: "nil filter allows all", filter: nil, namespace: "other", want: true},
		{name: "empty selector allows all", filter: &Filter{Reader: reader, Selector: labels.Everything()}, namespace: "other", want: true},
		{name: "matching labels", filter: &Filter{Reader: reader, Selector: labels.SelectorFromSet(labels.Set{"spark": "enabled"})}, namespace: "spark", want: true},
		{name: "other labels", filter: &Filter{Reader: reader, Selector: labels.SelectorFromSet(labels.Set{"spark": "enabled"})}, namespace: "other", want: false},
		{name: "unknown namespace", filter: &Filter{Reader: reader, Selector: labels.SelectorFromSet(labels.Set{"spark": "enabled"})}, namespace: "gone", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.filter.Allows(context.Background(), tt.namespace); got != tt.want {
				t.Errorf("Allows(%q) = %v, want %v", tt.namespace, got, tt.want)
			}
		})
	}
}
