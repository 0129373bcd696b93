/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/sparkop/spark-operator/scheduler/gang/core"
)

// Another scheduler's queue limits, counted by the core.
//
// An application of a ForeignPlacement names the other scheduler's queue, and that scheduler
// enforces the queue's limit pod by pod: admitted by the nodes' fit alone, a run could start
// with its driver and find no room in its queue for its executors. So an integration that
// knows its queues' limits tells the core (ForeignQueueLimits), and the core admits the run
// in a queue of its own standing for the other scheduler's, with that limit as its quota: a
// run starts only while its whole gang fits the nodes and what is left of the queue. The
// integration reads the limit; the core decides.

// ForeignQueueLimits is implemented by a ForeignPlacement whose scheduler limits what a queue's
// pods may hold at once (Volcano's capability, YuniKorn's max).
type ForeignQueueLimits interface {
	// QueueLimits are the limits binding the queue named (batchSchedulerOptions.queue, "" for
	// none): the queue's own first, then those of its ancestors, each a parent of the one
	// before. None: the queue limits nothing, and its applications are admitted by the nodes'
	// fit alone. Asked in every cycle that has the queue's applications: read from a cache,
	// or not more often than every few seconds.
	QueueLimits(ctx context.Context, queue string) ([]ForeignQueue, error)
}

// ForeignQueue is a queue of another scheduler, as the core counts it.
type ForeignQueue struct {
	// Name is the queue's name in its scheduler (a YuniKorn queue's full path).
	Name string
	// Max is what the queue's pods may request at once, per resource, as Kubernetes names
	// them; a resource not listed is not limited by this queue.
	Max corev1.ResourceList
}

// ForeignQueueName is the name of the core's queue that stands for another scheduler's:
// "<scheduler>_<queue>", a name no Queue object can have (a Queue's name is a DNS subdomain),
// that is a label value (the pods' scheduling.sparkop.dev/queue); a queue name that would not
// make one is replaced by a hash of it.
func ForeignQueueName(batchScheduler, queue string) string {
	name := batchScheduler + "_" + queue
	if len(validation.IsValidLabelValue(name)) == 0 {
		return name
	}
	sum := sha256.Sum256([]byte(queue))
	return batchScheduler + "_" + hex.EncodeToString(sum[:8])
}

// foreignQueues are the core's queues standing for other schedulers' in one read of the world.
type foreignQueues struct {
	// queues are the core's queues by name; named the queue each (scheduler, queue) of the
	// workloads maps to, "" for one that limits nothing.
	queues map[string]core.Queue
	named  map[[2]string]string
}

// queueOf is the core's queue for the workloads of batchScheduler naming queue: "" (the default
// queue) unless the scheduler limits it (ForeignQueueLimits), then the one standing for it.
// Where its limits cannot be read, that queue is missing from the cycle, so its waiting
// workloads wait (saying the queue does not exist) and the others go on; the error is logged.
func (s *Scheduler) queueOf(ctx context.Context, f *foreignQueues, batchScheduler, queue string) string {
	limits, ok := s.queueLimits[batchScheduler]
	if !ok {
		return ""
	}
	k := [2]string{batchScheduler, queue}
	if name, ok := f.named[k]; ok {
		return name
	}
	if f.named == nil {
		f.named, f.queues = map[[2]string]string{}, map[string]core.Queue{}
	}
	chain, err := limits.QueueLimits(ctx, queue)
	if err != nil {
		log.FromContext(ctx).Error(err, "reading the limits of another scheduler's queue; its applications wait", "scheduler", batchScheduler, "queue", queue)
		f.named[k] = ForeignQueueName(batchScheduler, queue)
		return f.named[k]
	}
	f.named[k] = ""
	for i := len(chain) - 1; i >= 0; i-- {
		q := core.Queue{Name: ForeignQueueName(batchScheduler, chain[i].Name), Quota: chain[i].Max, NoBorrowing: true}
		if i+1 < len(chain) {
			q.Parent = ForeignQueueName(batchScheduler, chain[i+1].Name)
		}
		f.queues[q.Name] = q
		f.named[k] = q.Name
	}
	return f.named[k]
}

// LimitsTTL is how long an integration may use what it read of its queues' limits
// (Remembered): the cycles that ask it come on every pod event.
const LimitsTTL = 2 * time.Second

// Remembered keeps, by key, what a read returned, for LimitsTTL (apimachinery's expiring
// cache): an integration's QueueLimits reads the other scheduler's configuration through it,
// so that the cycles, which run on every pod event, read it at most every LimitsTTL, and see a
// change within that (or the next cycle, at most 30 s later, when nothing happens). Its zero
// value is ready; an error is not kept.
type Remembered[T any] struct {
	once sync.Once
	c    *cache.Expiring
}

// Get is what read returned for key less than LimitsTTL ago, or what it returns now.
func (r *Remembered[T]) Get(key string, read func() (T, error)) (T, error) {
	r.once.Do(func() { r.c = cache.NewExpiring() })
	if v, ok := r.c.Get(key); ok {
		return v.(T), nil
	}
	v, err := read()
	if err == nil {
		r.c.Set(key, v, LimitsTTL)
	}
	return v, err
}
