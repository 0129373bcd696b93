/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package helm

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkop/spark-operator/test/cluster"
)

// rolledTag is the second tag the package's cluster gives the operator's image (TestMain's
// Then): the same image, so that an upgrade changes the image without building another.
func rolledTag(ref string) string { return ref + "-rolled" }

// creations is what createAlong made: the applications created, and the creations the API
// server refused.
type creations struct {
	names, refused []string
}

// createPace and createWorkers make createAlong's load: an application every createPace at
// most, up to createWorkers creations in flight at once (each may wait on a busy API server), a
// steady stream through the webhook for as long as the pods roll.
const (
	createPace    = 500 * time.Millisecond
	createWorkers = 4
)

// createAlong creates applications in ns at createPace until rolled is closed and it has tried
// at least atLeast.
func (r *release) createAlong(ns string, rolled <-chan struct{}, atLeast int) creations {
	var (
		mu   sync.Mutex
		out  creations
		next int
		wg   sync.WaitGroup
	)
	tick := time.NewTicker(createPace)
	defer tick.Stop()
	// take is the next application's name, or false once enough were made after the roll.
	take := func() (string, bool) {
		mu.Lock()
		defer mu.Unlock()
		select {
		case <-rolled:
			if next >= atLeast {
				return "", false
			}
		default:
		}
		next++
		return fmt.Sprintf("roll-%03d", next-1), true
	}
	for range createWorkers {
		wg.Go(func() {
			for range tick.C {
				name, ok := take()
				if !ok {
					return
				}
				err := r.c.Create(context.Background(), r.simulatedDriver(ns, name))
				mu.Lock()
				if err != nil {
					out.refused = append(out.refused, fmt.Sprintf("%s at %s: %v", name, time.Now().Format(time.StampMilli), err))
				} else {
					out.names = append(out.names, name)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return out
}

// upgradeImageUnderLoad runs `helm upgrade` to the operator's image under its second tag while
// applications are created in ns all along, at least atLeast, until every pod of the release
// runs the new image and the old pods are gone. None may be refused, and the webhook's Service
// must have a ready endpoint throughout. It returns the applications created.
func (r *release) upgradeImageUnderLoad(t *testing.T, ns string, atLeast int) []string {
	t.Helper()
	ref, err := cluster.RepoCommand("hack/operator-image.sh", "ref")
	if err != nil {
		t.Fatal(err)
	}
	newRef := rolledTag(ref)
	endpoints := recordReadyEndpoints(t, r.cs, r.namespace, r.webhookName())
	rolled := make(chan struct{})
	stop := sync.OnceFunc(func() { close(rolled) })
	defer stop()
	made := make(chan creations, 1)
	go func() { made <- r.createAlong(ns, rolled, atLeast) }()

	start := time.Now()
	out, err := helm(t, "upgrade", r.name, chartDir, "--kubeconfig", r.kubeconfig, "--namespace", r.namespace,
		"--reuse-values", "--set", "image.tag="+newRef[strings.LastIndex(newRef, ":")+1:], "--wait", "--timeout", "10m")
	if err == nil {
		r.waitOnlyImage(t, newRef)
	}
	stop()
	res := <-made
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, r.diagnostics())
	}
	t.Logf("rolled in %s; %d applications created meanwhile", time.Since(start).Round(time.Second), len(res.names)+len(res.refused))
	for i, e := range res.refused {
		if i == 10 {
			t.Errorf("and %d more refused", len(res.refused)-i)
			break
		}
		t.Errorf("refused during the upgrade: %s", e)
	}
	endpoints.requireNeverNone(t, r.webhookName())
	return res.names
}

// waitOnlyImage waits until the release's namespace has no pod but its Deployments' pods
// running image, the old ones gone (not merely terminating).
func (r *release) waitOnlyImage(t *testing.T, image string) {
	t.Helper()
	var other []string
	defer func() {
		if t.Failed() {
			t.Logf("pods of another image or terminating: %v", other)
		}
	}()
	cluster.Eventually(t, 5*time.Minute, "only pods of "+image, func() (bool, error) {
		pods, err := r.cs.CoreV1().Pods(r.namespace).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		other = other[:0]
		for _, p := range pods.Items {
			if p.Spec.Containers[0].Image != image || p.DeletionTimestamp != nil {
				other = append(other, p.Name+" "+p.Spec.Containers[0].Image)
			}
		}
		return len(other) == 0 && len(pods.Items) == 4, nil
	})
}
