/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkapplication

import (
	"context"
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/controllers/uiresources"
	"github.com/sparkop/spark-operator/test/cluster"
)

// TestUIWritesOnePerApplication: a write begun for an application is not begun again while
// it is in flight, another application's is, and wait returns once the first is done.
func TestUIWritesOnePerApplication(t *testing.T) {
	u := newUIWrites(4)
	release := make(chan struct{})
	var calls atomic.Int32
	write := func(context.Context, *v1beta2.SparkApplication) error {
		calls.Add(1)
		<-release
		return nil
	}
	a := &v1beta2.SparkApplication{ObjectMeta: metav1.ObjectMeta{Name: "a", UID: "a"}}
	b := &v1beta2.SparkApplication{ObjectMeta: metav1.ObjectMeta{Name: "b", UID: "b"}}
	ctx := context.Background()
	u.start(ctx, a, write)
	u.start(ctx, a, write)
	u.start(ctx, b, write)
	cluster.Eventually(t, 5*time.Second, "the writes to begin", func() (bool, error) { return calls.Load() == 2, nil })

	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := u.wait(short, "a"); err == nil {
		t.Fatal("wait returned while a's write was in flight")
	}
	close(release)
	if err := u.wait(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if err := u.wait(ctx, "none"); err != nil {
		t.Fatalf("wait for an application with nothing in flight: %v", err)
	}
	// Done, a write for a may begin again.
	u.start(ctx, a, write)
	cluster.Eventually(t, 5*time.Second, "a's second write", func() (bool, error) { return calls.Load() == 3, nil })
}

// TestUIServiceWrittenBesideTheReconcile: with UI Services on, a running application's
// Service is made by the write beside the reconciles, and its status then says where the UI
// is, from the Service the cache shows.
func TestUIServiceWrittenBesideTheReconcile(t *testing.T) {
	ctx := context.Background()
	c := cluster.Client(t)
	ns := cluster.Namespace(t, c, "ui-writes")
	sub := &fakeSubmitter{c: c, calls: map[types.NamespacedName]int{}, gate: &gate{}}
	startManagerWith(t, []string{ns}, sub, Options{DriverPodGracePeriod: 2 * time.Second},
		func(r *Reconciler) { r.UI = uiresources.Options{ServiceEnabled: true} })
	e := &env{c: c, ns: ns, sub: sub}

	key := e.create(t, newApp(ns, "ui", driverAnnotations(annRunSeconds, "30")))
	app := e.waitFor(t, key, 30*time.Second, "the UI's address in the status", func(a *v1beta2.SparkApplication) bool {
		return a.Status.DriverInfo.WebUIAddress != ""
	})
	svc := &corev1.Service{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: app.UIServiceName()}, svc); err != nil {
		t.Fatal(err)
	}
	want := v1beta2.DriverInfo{
		WebUIServiceName: app.UIServiceName(),
		WebUIPort:        4040,
		WebUIAddress:     net.JoinHostPort(svc.Spec.ClusterIP, strconv.Itoa(4040)),
		PodName:          app.DriverPodName(),
	}
	if app.Status.DriverInfo != want {
		t.Errorf("status.driverInfo %+v, want %+v", app.Status.DriverInfo, want)
	}
	if !metav1.IsControlledBy(svc, app) {
		t.Errorf("the UI Service is not controlled by its application: %+v", svc.OwnerReferences)
	}
}
