/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/scheduler/gang"
	"github.com/sparkop/spark-operator/test/cluster"
)

// reservationObject waits for app's Reservation for its current run, without playing Spark.
func (f *fixture) reservationObject(app string) *schedv1alpha1.Reservation {
	f.t.Helper()
	res := &schedv1alpha1.Reservation{}
	cluster.Eventually(f.t, 60*time.Second, app+"'s Reservation", func() (bool, error) {
		err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: app}, res)
		return err == nil && res.Spec.Run == f.get(app).Status.SubmissionID, client.IgnoreNotFound(err)
	})
	return res
}

// placeholders lists the scenario's placeholder pods.
func (f *fixture) placeholders() []corev1.Pod {
	f.t.Helper()
	var list corev1.PodList
	if err := f.c.List(f.ctx, &list, client.InNamespace(f.ns), client.HasLabels{gang.LabelPlaceholder}); err != nil {
		f.t.Fatal(err)
	}
	return list.Items
}

// TestReservationGoesWithItsApplication: an application's Reservation is owned by it, and its
// placeholders by the Reservation, so deleting the application while the operator is down
// deletes them all: the kube-controller-manager's garbage collector does it.
func TestReservationGoesWithItsApplication(t *testing.T) {
	f := newFixture(t)
	f.node("a", "4", nil)
	f.startOperator("--gang-enforcement=placeholders")
	f.create(f.app("owned", "default", 2))
	res := f.reservationObject("owned")
	if diff := cmp.Diff([]string{"driver", "executor-1", "executor-2"}, memberNames(res)); diff != "" {
		t.Errorf("members (-want +got):\n%s", diff)
	}
	// Spark is not played: the executors' placeholder (one for the node both are planned on)
	// stays.
	cluster.Eventually(t, 60*time.Second, "the executors' placeholder, owned by the Reservation", func() (bool, error) {
		phs := f.placeholders()
		for _, p := range phs {
			if len(p.OwnerReferences) != 1 || p.OwnerReferences[0].UID != res.UID {
				return false, fmt.Errorf("placeholder %s is owned by %v, not the Reservation", p.Name, p.OwnerReferences)
			}
		}
		return len(phs) == 1 && phs[0].Name == "owned-ph-executors-1-2", nil
	})

	f.op.Stop()
	if err := f.c.Delete(f.ctx, f.get("owned")); err != nil {
		t.Fatal(err)
	}
	cluster.Eventually(t, 60*time.Second, "the Reservation and its placeholders deleted with the application", func() (bool, error) {
		err := f.c.Get(f.ctx, client.ObjectKeyFromObject(res), &schedv1alpha1.Reservation{})
		return apierrors.IsNotFound(err) && len(f.placeholders()) == 0, client.IgnoreNotFound(err)
	})
}

// TestLegacyReservationMigrated: a reservation an earlier release left in the application's
// annotation is read once by the operator that starts next: written as the Reservation object,
// the same plan, and the annotation removed.
func TestLegacyReservationMigrated(t *testing.T) {
	f := newFixture(t)
	f.node("a", "4", nil)
	f.startOperator()
	f.create(f.app("legacy", "default", 2))
	res := f.reservationObject("legacy")
	f.op.Stop()

	// What the earlier release stored instead of the object.
	executors := map[string]int32{}
	var driver string
	for _, m := range res.Spec.Members {
		if m.Role == schedv1alpha1.MemberRoleDriver {
			driver = m.Node
		} else {
			executors[m.Node]++
		}
	}
	legacy, err := json.Marshal(map[string]any{"submissionID": res.Spec.Run, "queue": res.Spec.Queue, "driver": driver,
		"executors": executors, "admitted": res.Spec.Admitted.Time})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.c.Delete(f.ctx, res); err != nil {
		t.Fatal(err)
	}
	cluster.Eventually(t, 30*time.Second, "the Reservation gone", func() (bool, error) {
		err := f.c.Get(f.ctx, client.ObjectKeyFromObject(res), &schedv1alpha1.Reservation{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{gang.AnnotationAdmission: string(legacy)}}})
	if err := f.c.Patch(f.ctx, f.get("legacy"), client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}

	f.startOperator()
	migrated := &schedv1alpha1.Reservation{}
	cluster.Eventually(t, 60*time.Second, "the annotation migrated to a Reservation", func() (bool, error) {
		if _, ok := f.get("legacy").Annotations[gang.AnnotationAdmission]; ok {
			return false, nil
		}
		err := f.c.Get(f.ctx, client.ObjectKeyFromObject(res), migrated)
		return err == nil, client.IgnoreNotFound(err)
	})
	if migrated.UID == res.UID {
		t.Fatal("the Reservation was not written again")
	}
	if diff := cmp.Diff(res.Spec, migrated.Spec); diff != "" {
		t.Errorf("migrated plan (-before +after):\n%s", diff)
	}
}

// TestDriverPlannedAgainWhenItsRoomIsTaken: a pod the gang scheduler does not count (pending,
// nominated by kube-scheduler to the only node) holds its room, so the driver's placeholder
// finds no room there: the application is planned again at once (not after
// --gang-preemption-wait), says why, and starts once the room is free.
func TestDriverPlannedAgainWhenItsRoomIsTaken(t *testing.T) {
	f := newFixture(t)
	node := f.node("a", "2", nil)
	// The squatter: gated, so it never binds; nominated to the node, which kube-scheduler
	// then keeps for it from pods of its priority or lower.
	squatter := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "squatter"},
		Spec: corev1.PodSpec{
			SchedulingGates: []corev1.PodSchedulingGate{{Name: "test.sparkop.dev/hold"}},
			NodeSelector:    map[string]string{poolKey: f.ns},
			Tolerations:     []corev1.Toleration{{Key: poolKey, Operator: corev1.TolerationOpEqual, Value: f.ns, Effect: corev1.TaintEffectNoSchedule}},
			Containers: []corev1.Container{{Name: "c", Image: "busybox",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}}},
		},
	}
	if err := f.c.Create(f.ctx, squatter); err != nil {
		t.Fatal(err)
	}
	nominate := []byte(fmt.Sprintf(`{"status":{"nominatedNodeName":%q}}`, node))
	if err := f.c.Status().Patch(f.ctx, squatter, client.RawPatch(types.MergePatchType, nominate)); err != nil {
		t.Fatal(err)
	}
	f.startOperator("--gang-enforcement=placeholders", "--gang-preemption-wait=10m")
	f.create(f.app("driven", "default", 1)) // 1 + 1 CPU

	f.waitFor("the application planned again", func() (bool, error) {
		return strings.Contains(waiting(f.get("driven")), "planned again: the room planned on "+node+" was taken"), nil
	})
	if pods := f.pods("driven"); len(pods) != 0 {
		t.Fatalf("the application started although its room was taken: %d pods", len(pods))
	}
	if err := f.c.Delete(f.ctx, squatter); err != nil {
		t.Fatal(err)
	}
	f.waitFor("the application running on "+node, func() (bool, error) {
		res, ok := reservationOf(f.c, f.get("driven"))
		if !ok {
			return false, nil
		}
		obj := &schedv1alpha1.Reservation{}
		if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: "driven"}, obj); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return res.Driver == node && f.membersOnPlan("driven", obj) == 2, nil
	})
}

func memberNames(res *schedv1alpha1.Reservation) []string {
	var names []string
	for _, m := range res.Spec.Members {
		names = append(names, m.Name)
	}
	return names
}
