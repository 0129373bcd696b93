/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package gang is the embedded gang scheduler (spec.batchScheduler: gang): an application is
// submitted only when its queue has quota for its whole gang (driver plus initial executors)
// and the whole gang fits on the nodes now.
//
// It owns the runtime around the decision core (package core): the cache that builds
// snapshots from the cluster, the cycle loop that runs core.Schedule and acts on its outcome,
// the Reservation objects, holding room for admitted gangs (placeholders, the start gate,
// gated executors) and the status shown to users. It must not decide admission itself: every
// verdict comes from package core.
//
// Where things are:
//   - scheduler.go: the Scheduler, its Config, and the batch-scheduler interface it serves
//     (Admit, Release, validation); variant.go and external.go serve the other schedulers
//     built on it (the Kubernetes gang API, an external decider).
//   - cache.go, workloads.go, executors.go, snapshot.go: the cluster cache read into a world,
//     and the world into core's Snapshot.
//   - loop.go, cycle.go: the single cycle loop and one cycle, step by step.
//   - enforce.go: the enforcement modes and what each does in the cycle; plugin.go and
//     startgate.go hold the room (the pod scheduler's plug-in, holding drivers until the room
//     is held), and so do placeholders (below).
//   - ungate.go: the ungating loop, and which gated pods go onto which nodes, when. Releasing
//     them is package release's: the gang gate, the patch and its guards against a lagging
//     cache, and the record of the releases in flight.
//   - placeholders.go, placeholders_wanted.go, placeholder_swap.go: placeholder pods holding
//     the room: which ones the Reservations want, writing them, members taking their places.
//     Their building blocks are package placeholder's: what a placeholder pod looks like, its
//     PriorityClass, and the book of swaps and of placeholders written.
//   - reservation.go, reservations.go: the Reservation objects and their status.
//   - queues.go, reasons.go: Queue status and shown reasons, written from package status.
package gang

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	schedv1alpha1 "github.com/sparkop/spark-operator/apis/scheduling.sparkop.dev/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/scheduler/gang/core"
	"github.com/sparkop/spark-operator/scheduler/gang/placeholder"
	"github.com/sparkop/spark-operator/scheduler/gang/release"
	"github.com/sparkop/spark-operator/scheduler/gang/status"
	"github.com/sparkop/spark-operator/scheduler/reservation"
)

// Name is the value of spec.batchScheduler that selects the gang scheduler.
const Name = "gang"

// Config tunes the gang scheduler.
type Config struct {
	// Options are the decision core's: backfill and preemption.
	Options core.Options
	// ReservationTimeout is how long the node capacity planned for an admitted application's
	// member is kept while its pod is not bound; then it stops being kept (the queue's quota stays
	// taken until the run ends). Default 5 minutes.
	ReservationTimeout time.Duration
	// Default says the operator makes gang the scheduler of applications that name none.
	Default bool
	// DefaultVariant is the operator's default batch scheduler when it is a variant this core
	// serves (Serve; volcano, say): applications that name none are that variant's.
	DefaultVariant string
	// VariantsOnly makes the scheduler decide only for the variants it serves (Serve), not for
	// applications naming gang: the operator enables a variant without gang itself.
	VariantsOnly bool
	// Reader reads Queues for ValidateApplication (the webhook); the API reader is enough.
	Reader client.Reader
	Clock  clock.Clock
	// PreemptionWait bounds how long an admitted workload's driver waits for room on its
	// planned node, where pods of the applications it preempted are ending (startgate.go):
	// after it, counted from the admission, its reservation is removed and it is planned again.
	// Default 2 minutes: the pods' default grace period (30 seconds) with a wide margin.
	PreemptionWait time.Duration
	// StartBacklog paces the start of admitted workloads (startgate.go): a driver waits while this
	// many executors, or more, of drivers started recently are not released yet. 0: no pacing.
	StartBacklog int
	// SessionDemand, when set, makes SparkConnect sessions gang workloads too: those of an
	// operator whose default batch scheduler is gang (sessions name none). Nil when the
	// SparkConnect controller is off.
	SessionDemand SessionDemand
	// External, when set, serves spec.batchScheduler: external too (External()).
	External *ExternalConfig
	// Enforcement says how reserved capacity is kept from pods the gang scheduler did not
	// admit: advisory (not at all; the default), placeholders (placeholders.go) or plugin (the
	// pod scheduler holds it: cmd/spark-scheduler).
	Enforcement Enforcement
	// PlaceholderImage is the image of placeholder pods: a container that does nothing.
	// Default DefaultPlaceholderImage.
	PlaceholderImage string
}

// Scheduler is the embedded gang scheduler: scheduler.Interface with its own cycle loop. It
// admits an application once the last cycle reserved room for its whole gang, holds it with
// the cycle's reason otherwise, and wakes it when a cycle admits it.
type Scheduler struct {
	cfg      Config
	client   client.Client // writes reservations, queue status, the default queue
	cluster  cache.Cache   // pods of the whole cluster, nodes, PriorityClasses, Queues
	apps     client.Reader // SparkApplications (the manager's cache)
	api      client.Reader // the API server: whole pods (the manager's cache trims them)
	waker    scheduler.Waker
	recorder events.EventRecorder
	kick     chan struct{}

	ungateKick chan struct{}
	ungating   ungating // executors being let go (ungate.go)
	seen       seenExecutors

	mu   sync.Mutex
	last core.Outcome // of the last cycle
	// judged is what the last cycle decided for: each workload's run and spec. Its verdict
	// (rejected, or why it waits) holds only for that same run and spec.
	judged   map[core.Key]judgement
	reported map[core.Key]core.Reason // reason last handed to a held workload
	// held are the admitted workloads the last cycle's start gate holds back (see startgate.go),
	// with why.
	held map[core.Key]string
	// replanned are the workloads whose wait for room outlasted PreemptionWait, planned again,
	// with why, until a cycle admits their run again (see startgate.go).
	replanned map[core.Key]replanned
	reasons   status.ReasonRefresh // keeps held workloads' shown reasons current
	// reasonsDue is the cycle asked for when the next out-of-date reason is due.
	reasonsDue followUp
	demands    demandMemo // applications' demands by spec generation
	ext        externalCycles

	// served are the spec.batchScheduler names it decides for: gang's, its variants' and
	// external's; ownPlacement those of variants that place their runs' pods their own way
	// (not gated for the core to release), whose room placeholders do not hold.
	served       map[string]bool
	ownPlacement map[string]bool
	// foreignQueues are the names of variants whose applications name another scheduler's
	// queue (ForeignPlacement): the core admits them in its default queue, or, where the
	// variant tells the queue's limits (queueLimits), in a queue standing for that one.
	foreignQueues map[string]bool
	queueLimits   map[string]ForeignQueueLimits
	setUp         sync.Once
	setErr        error
	// stored are the reservations the cycle loop stored, until the cluster cache shows them:
	// Admit reads them there first.
	stored map[core.Key]Reservation
	// released are the Reservation objects Release deleted, by uid, with when: until the
	// cluster cache shows them gone, releasing their workload again deletes nothing.
	released map[types.UID]time.Time
	// placeholders remembers placeholder writes the cluster cache may not show yet.
	placeholders placeholder.Book[pendingSwap]
	// statusWrites paces the reservations' status writes (reservations.go).
	statusWrites statusPacing
	// reads bounds the reads through the cluster cache that no caller's context bounds: it
	// ends when the cache stops (stoppingCache).
	reads     context.Context
	stopReads context.CancelFunc
}

var (
	_ scheduler.Interface            = (*Scheduler)(nil)
	_ scheduler.WithManager          = (*Scheduler)(nil)
	_ scheduler.Waking               = (*Scheduler)(nil)
	_ scheduler.Queueing             = (*Scheduler)(nil)
	_ scheduler.Pending              = (*Scheduler)(nil)
	_ scheduler.ApplicationValidator = (*Scheduler)(nil)
	_ scheduler.PodPlacer            = (*Scheduler)(nil)
)

// New returns a gang scheduler; it runs once SetupWithManager has added it to a manager, and
// validates applications without one.
func New(cfg Config) *Scheduler {
	if cfg.ReservationTimeout <= 0 {
		cfg.ReservationTimeout = reservation.DefaultTimeout
	}
	if cfg.PreemptionWait <= 0 {
		cfg.PreemptionWait = 2 * time.Minute
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Default {
		cfg.DefaultVariant = Name
	}
	if cfg.Enforcement == "" {
		cfg.Enforcement = EnforcementAdvisory
	}
	if cfg.PlaceholderImage == "" {
		cfg.PlaceholderImage = DefaultPlaceholderImage
	}
	s := &Scheduler{cfg: cfg, kick: make(chan struct{}, 1), ungateKick: make(chan struct{}, 1), ungating: newUngating(),
		reported: map[core.Key]core.Reason{}, judged: map[core.Key]judgement{}, replanned: map[core.Key]replanned{}, stored: map[core.Key]Reservation{},
		released: map[types.UID]time.Time{}, served: map[string]bool{}, ownPlacement: map[string]bool{}, foreignQueues: map[string]bool{},
		queueLimits: map[string]ForeignQueueLimits{}}
	s.reads, s.stopReads = context.WithCancel(context.Background())
	s.placeholders.Clock = cfg.Clock
	if !cfg.VariantsOnly {
		s.served[Name] = true
	}
	if e := cfg.External; e != nil && e.Interval <= 0 {
		e.Interval = 5 * time.Second
	}
	return s
}

func (s *Scheduler) Name() string { return Name }

// WakesHeldWorkloads is true: a cycle that admits a held workload, or changes its reason,
// wakes it (loop.go), so the controllers never poll the workloads it holds.
func (s *Scheduler) WakesHeldWorkloads() bool { return true }

// QueuesWorkloads is true: workloads wait in its Queues (queues.go), so an application that
// Kueue queues too is refused by the webhook.
func (s *Scheduler) QueuesWorkloads() bool { return true }

// isGang reports whether app is this scheduler's: it names gang, a variant it serves or
// external (when that is served), or names none while gang is the operator's default.
func (s *Scheduler) isGang(app *v1beta2.SparkApplication) bool {
	return s.served[s.schedulerOf(app)]
}

// schedulerOf is the name app is scheduled under: the one it names, else the operator's
// default ("" when that is none), or Kueue's when Kueue queues it (scheduler.NameOf).
func (s *Scheduler) schedulerOf(app *v1beta2.SparkApplication) string {
	return scheduler.NameOf(app, s.cfg.DefaultVariant, s.cfg.Default, s.served[scheduler.KueueName])
}

// sessions reports whether SparkConnect sessions are this scheduler's: they name no batch
// scheduler, so they are when gang, or a variant it serves, is the operator's default and the
// controller runs.
func (s *Scheduler) sessions() bool {
	return (s.cfg.Default || s.served[s.cfg.DefaultVariant]) && s.cfg.SessionDemand != nil
}

// Admit admits w when it holds a reservation for its current run (unless the last cycle's
// start gate holds its driver back, see startgate.go), rejects it when the last cycle found it can
// never fit, and holds it with the last cycle's reason otherwise. A verdict
// of the last cycle counts only if that cycle judged the same run and spec: a workload rerun,
// resubmitted or edited since is judged again, never rejected (or held) for what it was.
func (s *Scheduler) Admit(_ context.Context, w scheduler.Workload) (scheduler.Decision, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := w.Key
	if r, ok := s.reservationLocked(w); ok && r.SubmissionID == w.Run {
		if s.held == nil {
			// No cycle has run in this process yet to tell whether its driver may start:
			// the first one wakes it.
			s.trigger()
			return scheduler.Decision{Reason: "admitted; waiting for the gang scheduler's first cycle"}, nil
		}
		if why, held := s.held[key]; held {
			s.reported[key] = core.PlainReason(why)
			return scheduler.Decision{Reason: why}, nil
		}
		return scheduler.Decision{Admit: true, Pods: r.Pods(s.cfg.Enforcement)}, nil
	}
	current := s.judged[key] == judgementOf(w)
	if why, ok := s.last.Rejected[key]; ok && current {
		return scheduler.Decision{Reject: true, Reason: why}, nil
	}
	why, ok := s.last.Waiting[key]
	if !ok || !current {
		// Not judged by a cycle yet as it is now (just created, rerun or edited): ask for
		// one, which wakes it if admitted or rejected.
		why = core.PlainReason(status.NotJudgedYet)
		s.trigger()
	}
	s.reported[w.Key] = why
	return scheduler.Decision{Reason: why.Message}, nil
}

// PendingReason: a new run is held until a cycle judges it.
func (s *Scheduler) PendingReason() string { return status.NotJudgedYet }

// replanned is a run planned again after waiting for room too long, and why.
type replanned struct {
	run, why string
}

// judgement identifies what a cycle judged a workload as: its run and its spec's generation.
type judgement struct {
	submission string
	generation int64
}

func judgementOf(w scheduler.Workload) judgement {
	return judgement{submission: w.Run, generation: w.Object.GetGeneration()}
}

// Release removes w's reservation: deletes its Reservation object (the garbage collector then
// deletes its placeholders, as the next cycle does) and any legacy annotation. A reservation
// that no longer holds counts for nothing in any case (see liveReservation); removing it keeps
// the cluster truthful and is a no-op when there is none.
//
// An ended application is released by each reconcile that follows (every change of its pods
// makes one), and until the cluster cache shows its Reservation gone, each would delete it
// again for a 404: so a Reservation deleted here is not deleted again (for releasedKept).
func (s *Scheduler) Release(ctx context.Context, w scheduler.Workload) error {
	if s.client == nil {
		return nil
	}
	now := s.cfg.Clock.Now()
	s.mu.Lock()
	res, stored := s.stored[w.Key]
	delete(s.stored, w.Key)
	s.mu.Unlock()
	name := client.ObjectKey{Namespace: w.Key.Namespace, Name: ReservationName(w.Key)}
	remove, uid := stored, res.UID
	if !stored {
		var obj schedv1alpha1.Reservation
		if err := s.cluster.Get(ctx, name, &obj); err == nil && ownedBy(&obj, w.Object.GetUID()) {
			s.mu.Lock()
			_, deleted := s.released[obj.UID]
			s.mu.Unlock()
			remove, uid = !deleted, obj.UID
		}
	}
	if remove {
		obj := &schedv1alpha1.Reservation{ObjectMeta: metav1.ObjectMeta{Namespace: name.Namespace, Name: name.Name}}
		err := s.client.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground))
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("removing the reservation of %s: %w", w.Key, err)
		}
		if uid != "" {
			s.mu.Lock()
			s.released[uid] = now
			s.mu.Unlock()
		}
	}
	if _, ok := w.Object.GetAnnotations()[AnnotationAdmission]; ok {
		if err := s.dropLegacy(ctx, w.Object); err != nil {
			return fmt.Errorf("removing the reservation of %s: %w", w.Key, err)
		}
	}
	s.trigger()
	return nil
}

// releasedKept is how long Release remembers a Reservation it deleted: the cluster cache shows
// a deletion well within it, and should it not, another delete is only a 404.
const releasedKept = time.Minute

// forgetReleased forgets the Reservations Release deleted more than releasedKept before now.
func (s *Scheduler) forgetReleased(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for uid, at := range s.released {
		if now.Sub(at) >= releasedKept || now.Before(at) {
			delete(s.released, uid)
		}
	}
}

// dropLegacy removes the annotation a release before the Reservation API kept a reservation in.
func (s *Scheduler) dropLegacy(ctx context.Context, obj client.Object) error {
	patch := []byte(fmt.Sprintf(`{"metadata":{"annotations":{%q:null}}}`, AnnotationAdmission))
	err := s.client.Patch(ctx, obj.DeepCopyObject().(client.Object), client.RawPatch(types.MergePatchType, patch))
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

// reservationLocked is w's reservation: the one the cycle loop stored last if the cluster cache
// does not show it yet, else the cache's, else a legacy annotation not migrated yet. The caller
// holds s.mu.
func (s *Scheduler) reservationLocked(w scheduler.Workload) (Reservation, bool) {
	if r, ok := s.stored[w.Key]; ok && r.SubmissionID == w.Run {
		return r, true
	}
	if s.cluster != nil {
		var obj schedv1alpha1.Reservation
		if err := s.cluster.Get(s.reads, client.ObjectKey{Namespace: w.Key.Namespace, Name: ReservationName(w.Key)}, &obj); err == nil {
			if r, ok := reservationFrom(&obj, w.Object); ok {
				return r, true
			}
		}
	}
	return legacyReservation(w.Object)
}

// ValidateApplication refuses an application naming a queue that does not exist; when the
// Queue cannot be read (any error but NotFound) it refuses it with an internal error, which
// the webhook makes retryable.
func (s *Scheduler) ValidateApplication(ctx context.Context, app *v1beta2.SparkApplication) field.ErrorList {
	if s.cfg.Reader == nil {
		return nil
	}
	name := scheduler.ApplicationWorkload(app).Queue
	if name == "" {
		name = schedv1alpha1.DefaultQueueName
	}
	p := field.NewPath("spec", "batchSchedulerOptions", "queue")
	switch err := s.cfg.Reader.Get(ctx, client.ObjectKey{Name: name}, &schedv1alpha1.Queue{}); {
	case err == nil:
	case apierrors.IsNotFound(err):
		// The default queue is created by the operator when it starts.
		if name != schedv1alpha1.DefaultQueueName {
			return field.ErrorList{field.NotFound(p, name)}
		}
	default:
		// Not the application's fault (the API server busy, say), but the queue may not exist:
		// refused as an internal error, which the client retries.
		return field.ErrorList{field.InternalError(p, fmt.Errorf("could not read Queue %s to check it exists: %w", name, err))}
	}
	return nil
}

// SetupWithManager adds the cluster cache and the cycle loop to mgr, once: the core and each
// variant it serves (Serve) are registered under their own names, and the registry sets each
// up.
func (s *Scheduler) SetupWithManager(mgr manager.Manager, wake scheduler.Waker) error {
	s.setUp.Do(func() { s.setErr = s.setupWithManager(mgr, wake) })
	return s.setErr
}

func (s *Scheduler) setupWithManager(mgr manager.Manager, wake scheduler.Waker) error {
	c, err := newClusterCache(mgr)
	if err != nil {
		return fmt.Errorf("creating the gang scheduler's cache: %w", err)
	}
	if err := c.IndexField(context.Background(), &corev1.Pod{}, indexGated, func(o client.Object) []string {
		if p, ok := o.(*corev1.Pod); ok && release.Gated(p) {
			return []string{"true"}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("indexing gated executors: %w", err)
	}
	s.cluster, s.client, s.apps, s.api, s.waker = c, mgr.GetClient(), mgr.GetCache(), mgr.GetAPIReader(), wake
	s.recorder = mgr.GetEventRecorder("gang-scheduler")
	if err := mgr.Add(stoppingCache{Cache: c, stopped: s.stopReads}); err != nil {
		return err
	}
	return mgr.Add(&loop{s: s, mgr: mgr})
}

// trigger asks for a cycle; requests made while one is pending are merged into it.
func (s *Scheduler) trigger() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}
