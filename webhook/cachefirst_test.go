package webhook

import (
	"context"
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

func TestCacheFirst(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := v1beta2.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	app := func(name string) *v1beta2.SparkApplication {
		return &v1beta2.SparkApplication{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
	}
	broken := errors.New("cache unavailable")
	cache := fake.NewClientBuilder().WithScheme(scheme).WithObjects(app("cached")).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if key.Name == "broken" {
				return broken
			}
			return c.Get(ctx, key, obj, opts...)
		},
	}).Build()
	api := fake.NewClientBuilder().WithScheme(scheme).WithObjects(app("cached"), app("new"), app("broken")).Build()
	r := CacheFirst{Cache: cache, API: api}

	tests := []struct {
		name    string
		wantErr func(error) bool
	}{
		{name: "cached", wantErr: func(err error) bool { return err == nil }},
		{name: "new", wantErr: func(err error) bool { return err == nil }}, // not cached yet: asks the API server
		{name: "missing", wantErr: apierrors.IsNotFound},
		{name: "broken", wantErr: func(err error) bool { return errors.Is(err, broken) }}, // no silent fallback
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := r.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: tt.name}, &v1beta2.SparkApplication{})
			if !tt.wantErr(err) {
				t.Errorf("Get(%s) err = %v", tt.name, err)
			}
		})
	}
}
