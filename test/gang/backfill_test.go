/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"maps"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// TestBackfill: a queue's head waits for capacity held by a running application, and a
// small application behind it would fit. In strict order (the default) the small one waits
// behind the head. With --gang-backfill it still waits while the only room for it is on a node
// the head can use (it could delay the head), and is admitted as soon as a node the head
// cannot use has room. A second small one, with a node of its own, waits too: it would take
// quota the head needs. The head is admitted once the capacity it waits for frees, and the
// second small one after it.
func TestBackfill(t *testing.T) {
	f := newFixture(t)
	bigOnly := map[string]string{"test.sparkop.dev/size": "big"}
	big := f.node("big", "5", bigOnly)
	small := f.node("small", "2", nil)
	// Quota for blocker, head and one small application (3 + 3 + 2 CPU), not two.
	queue := f.queue("q", schedv1alpha1.QueueSpec{Quota: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8")}})
	onBig := func(app *v1beta2.SparkApplication) *v1beta2.SparkApplication {
		maps.Copy(app.Spec.NodeSelector, bigOnly)
		return app
	}
	f.startOperator()

	// blocker takes 3 of big's 5 CPU; head needs 3 CPU on big, so it waits.
	f.create(onBig(f.app("blocker", queue, 2)))
	f.waitRunning("blocker")
	f.create(onBig(f.app("head", queue, 2)))
	f.waitWaiting("head", "no node fits")
	// 2 CPU: it fits on small, or in what is left on big.
	f.create(f.app("small", queue, 1))
	app := f.waitWaiting("small", "behind 1 application in queue "+queue)
	if why := waiting(app); strings.Contains(why, "cannot go first") {
		t.Errorf("strict order: small considered for going first: %q", why)
	}

	// Backfill, with small cordoned: the only room is on big, which the head can use.
	f.cordon(small, true)
	f.startOperator("--gang-backfill")
	f.waitWaiting("small", "behind 1 application in queue "+queue, "cannot go first", "on nodes the head cannot use")
	f.requireNotAdmitted("head")

	// A node the head's selector excludes: small goes first, there.
	f.cordon(small, false)
	app, pods := f.waitRunning("small")
	res, _ := reservationOf(f.c, app)
	if res.Driver != small || res.Executors[small] != 1 || len(res.Executors) != 1 {
		t.Errorf("small admitted onto driver %s, executors %v; want all on %s", res.Driver, res.Executors, small)
	}
	for _, p := range pods {
		if p.Spec.NodeName != small {
			t.Errorf("pod %s of small runs on %s, not %s", p.Name, p.Spec.NodeName, small)
		}
	}
	f.waitWaiting("head", "no node fits")

	// Room on a node the head cannot use, but not in the quota the head needs.
	f.node("small-2", "2", nil)
	f.create(f.app("small-2", queue, 1))
	f.waitWaiting("small-2", "behind 1 application in queue "+queue, "cannot go first: it would take quota the head "+f.ns+"/head needs")

	// The blocker goes: the head gets big, then small-2 its node.
	if err := f.c.Delete(f.ctx, f.get("blocker")); err != nil {
		t.Fatal(err)
	}
	app, _ = f.waitRunning("head")
	if res, _ := reservationOf(f.c, app); res.Driver != big {
		t.Errorf("head's driver planned on %s, want %s", res.Driver, big)
	}
	f.waitRunning("small-2")
}
