/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package sparkapplication is the SparkApplication controller. Its reconciler follows each
// application through the v1beta2 state machine (states.go) from what its pods say
// (pods.go), and writes the outcome to the status subresource (status.go). It never submits:
// it records a submission in status and hands the application to the submission pool, whose
// handler (submit.go) creates the driver, so a slow submission never delays status updates.
package sparkapplication

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/controllers/uiresources"
	"github.com/sparkop/spark-operator/internal/nsfilter"
	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/submission"
)

// ControllerName names the controller, its event recorder and its logs.
const ControllerName = "spark-application-controller"

// Options tune the controller; zero values take the defaults.
type Options struct {
	// DriverPodGracePeriod is how long after a submission a missing driver pod is tolerated
	// (the cache may not show it yet) before the run is declared failed. Default 10s.
	DriverPodGracePeriod time.Duration
	// MaxTrackedExecutors caps status.executorState; the most recent executors are kept.
	// Default 1000.
	MaxTrackedExecutors int
	// SubmissionWorkers is the size of the submission pool SetupWithManager creates when Pool
	// is nil. Default 4.
	SubmissionWorkers int
	// QueuedRetryInterval is how soon an application held back by its batch scheduler is
	// offered to it again, for schedulers that do not wake the applications they hold
	// (scheduler.Waking) and whose decision names no RetryAfter. Default 10s.
	QueuedRetryInterval time.Duration
	// UnschedulableTimeout, when positive, fails a run whose driver pod the scheduler has
	// been unable to place for that long. Zero (the default) waits for as long as it takes.
	UnschedulableTimeout time.Duration
	// DriverStartTimeout, when positive, fails a run whose driver pod is on a node but cannot
	// start (its image cannot be pulled, its container cannot be created) for that long after
	// it was placed. Zero waits for as long as it takes; a failure that cannot mend (an invalid
	// image name) fails the run at once either way.
	DriverStartTimeout time.Duration
	// NodeLostTimeout, when positive, fails a run whose live driver pod is on a node that has
	// not been Ready for that long (its kubelet stopped answering), and deletes the pod. Zero
	// leaves a lost node to the node controller's eviction (DriverPodGracePeriod past it, the
	// run fails as lost), which never comes while every node of the zone is down.
	NodeLostTimeout time.Duration
	// NotPickedUpAfter is how long a driver pod may wait without any scheduler looking at it
	// (no PodScheduled condition: it names a scheduler that does not run) before the status
	// says so. Default 30s.
	NotPickedUpAfter time.Duration
	// ExecutorStateBatch is how long a change of executor states alone, or of where the UI is
	// (the application's state unchanged, nothing to tell in an event), may wait to be written,
	// so that the executors of a starting or ending run, whose pods change within moments of
	// each other, cost one status write instead of one each. Default 2s; negative writes each
	// at once.
	ExecutorStateBatch time.Duration
	// DefaultTimeToLive, when positive, is the time to live of a finished application that
	// sets no spec.timeToLiveSeconds (Kubeflow's --default-time-to-live-seconds): it is
	// deleted that long after it ended. Zero keeps such applications.
	DefaultTimeToLive time.Duration
}

// expiration is when the finished app is deleted: its termination time plus its
// spec.timeToLiveSeconds, or else plus DefaultTimeToLive; false when it is kept.
func (o *Options) expiration(app *v1beta2.SparkApplication) (time.Time, bool) {
	if app.Spec.TimeToLiveSeconds != nil || o.DefaultTimeToLive <= 0 {
		return app.ExpirationTime()
	}
	if !app.IsFinished() || app.Status.TerminationTime.IsZero() {
		return time.Time{}, false
	}
	return app.Status.TerminationTime.Add(o.DefaultTimeToLive), true
}

func (o *Options) setDefaults() {
	if o.DriverPodGracePeriod <= 0 {
		o.DriverPodGracePeriod = 10 * time.Second
	}
	if o.MaxTrackedExecutors <= 0 {
		o.MaxTrackedExecutors = 1000
	}
	if o.SubmissionWorkers <= 0 {
		o.SubmissionWorkers = 4
	}
	if o.QueuedRetryInterval <= 0 {
		o.QueuedRetryInterval = 10 * time.Second
	}
	if o.NotPickedUpAfter <= 0 {
		o.NotPickedUpAfter = 30 * time.Second
	}
	if o.ExecutorStateBatch == 0 {
		o.ExecutorStateBatch = 2 * time.Second
	}
}

// MetricsRecorder receives the application lifecycle metrics. *metrics.Recorder implements it;
// a nil Metrics field records nothing.
type MetricsRecorder interface {
	Created(app *v1beta2.SparkApplication)
	Submitted(app *v1beta2.SparkApplication, latency time.Duration)
	SubmissionFailed(app *v1beta2.SparkApplication)
	Started(app *v1beta2.SparkApplication, latency time.Duration)
	Finished(app *v1beta2.SparkApplication, state v1beta2.ApplicationStateType, executionTime time.Duration)
	AppStateChanged(app *v1beta2.SparkApplication, from, to v1beta2.ApplicationStateType)
	ExecutorStates(app *v1beta2.SparkApplication, running, failed, completed int)
	// Forget drops what is kept about a deleted application: it leaves the running gauges.
	Forget(app *v1beta2.SparkApplication)
}

// Reconciler runs SparkApplications.
type Reconciler struct {
	// Client reads from the manager's cache, which holds only pods labelled
	// v1beta2.LabelLaunchedByOperator, and writes to the API server.
	Client client.Client
	// UIClient writes UI Services and Ingresses (beside the reconciles); Client when nil.
	UIClient client.Client
	// APIReader reads straight from the API server: status writes and the submission pool
	// must decide on the latest object, not on a possibly stale cache.
	APIReader client.Reader
	Scheme    *runtime.Scheme
	// Recorder is the manager's mgr.GetEventRecorder(ControllerName).
	Recorder events.EventRecorder
	Clock    clock.Clock
	// Pool runs submissions. When nil, SetupWithManager creates one with r.Submit as handler;
	// a pool made elsewhere must have r.Submit as its handler.
	Pool *submission.Pool
	// Submitters by mode; DefaultMode is used unless the application's
	// v1beta2.AnnotationSubmitter annotation names another.
	Submitters  map[submission.Mode]submission.Submitter
	DefaultMode submission.Mode
	// Schedulers holds the enabled batch schedulers; an application naming none uses
	// DefaultBatchScheduler, and one naming a scheduler that is not enabled is refused.
	Schedulers            *scheduler.Registry
	DefaultBatchScheduler string
	UI                    uiresources.Options
	// DriverPDB lets applications ask for a PodDisruptionBudget protecting their driver
	// (spec.driverPodDisruptionBudget); off, the field has no effect.
	DriverPDB bool
	Metrics   MetricsRecorder
	// Namespaces, when set, limits the controller to namespaces whose labels match.
	Namespaces *nsfilter.Filter
	Options    Options
	// RateLimiter, when set, paces the requeues of the controller's queue instead of
	// controller-runtime's default limiter.
	RateLimiter workqueue.TypedRateLimiter[reconcile.Request]

	// nodes is what the cluster's nodes can allocate, read through APIReader for drivers the
	// scheduler cannot place.
	nodes nodeCapacity
	// nodeReady is the Ready condition of the nodes of drivers that are not Ready
	// (Options.NodeLostTimeout).
	nodeReady nodeReadiness
	// executorWrites holds back writes of executor states alone (Options.ExecutorStateBatch).
	executorWrites executorBatch
	// uiWrites writes UI Services and Ingresses beside the reconciles.
	uiWrites *uiWrites
	// recorded hands the pool the applications whose new submission a reconcile just recorded.
	recorded recordedRuns
}

// uiWriteConcurrency bounds the UI resources written at once.
const uiWriteConcurrency = 16

// SetupWithManager registers the controller and the submission pool with mgr. The pool only
// runs on the leader.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.setDefaults()
	if r.Pool == nil {
		r.Pool = submission.NewPool(r.Options.SubmissionWorkers, r.Submit)
	}
	if err := mgr.Add(r.Pool); err != nil {
		return fmt.Errorf("adding the submission pool: %w", err)
	}
	if err := r.setupSchedulers(mgr); err != nil {
		return err
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &corev1.Pod{}, indexPodsByApp, podApp); err != nil {
		return fmt.Errorf("indexing pods by application: %w", err)
	}
	launched := predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.GetLabels()[v1beta2.LabelLaunchedByOperator] == "true" && o.GetLabels()[v1beta2.LabelAppName] != ""
	})
	b := ctrl.NewControllerManagedBy(mgr)
	if r.Namespaces != nil {
		b = b.WithEventFilter(r.Namespaces.Predicate())
	}
	if r.RateLimiter != nil {
		b = b.WithOptions(controller.Options{RateLimiter: r.RateLimiter})
	}
	return b.
		Named("sparkapplication").
		For(&v1beta2.SparkApplication{}, builder.WithPredicates(predicate.Funcs{
			// On start every application arrives as a create; a finished one with nothing
			// left to do stays out of the queue, so the applications that are waiting for
			// submission never wait behind thousands of finished ones.
			CreateFunc: func(e ctrlevent.CreateEvent) bool {
				app, ok := e.Object.(*v1beta2.SparkApplication)
				return !ok || !settled(app, r.Options.DefaultTimeToLive > 0)
			},
		})).
		Watches(&v1beta2.SparkApplication{}, stateChanges()).
		Watches(&v1beta2.SparkApplication{}, r.forgetDeleted()).
		Watches(&corev1.Pod{}, podEvents(), builder.WithPredicates(launched)).
		// A UI Service or Ingress written beside the reconciles (uiWrites) brings its
		// application back once the cache has it, for the status to say where the UI is.
		Owns(&corev1.Service{}, builder.WithPredicates(launched)).
		Owns(&networkingv1.Ingress{}, builder.WithPredicates(launched)).
		Complete(r)
}

func (r *Reconciler) setDefaults() {
	r.Options.setDefaults()
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	if r.Schedulers == nil {
		r.Schedulers = scheduler.NewRegistry()
	}
	if r.DefaultMode == "" {
		r.DefaultMode = submission.ModeNative
	}
	if r.APIReader == nil {
		r.APIReader = r.Client
	}
	if r.UIClient == nil {
		r.UIClient = r.Client
	}
	if r.uiWrites == nil {
		r.uiWrites = newUIWrites(uiWriteConcurrency)
	}
}

// settled reports whether no reconcile has anything to do for app until it changes: it has
// finished, has no time to live to enforce (its own, or a default one), and its spec is the one
// it ran (an edit asks for a rerun). Its update events still reach the controller.
func settled(app *v1beta2.SparkApplication, defaultTTL bool) bool {
	if !app.IsFinished() || app.Spec.TimeToLiveSeconds != nil || defaultTTL || !app.DeletionTimestamp.IsZero() {
		return false
	}
	hash := app.Status.LastSubmittedSpecHash
	return hash == "" || hash == specHash(&app.Spec)
}

// indexPodsByApp indexes the operator's pods by their application, so that a reconcile reads
// its application's pods rather than every pod of the namespace, which a label selector alone
// scans (with 1,000 applications, over a quarter of the operator's CPU went to that).
const indexPodsByApp = v1beta2.LabelAppName

func podApp(o client.Object) []string {
	if name := o.GetLabels()[v1beta2.LabelAppName]; name != "" {
		return []string{name}
	}
	return nil
}

// podToApp maps a pod the operator launched to its application.
func podToApp(_ context.Context, o client.Object) []reconcile.Request {
	name := o.GetLabels()[v1beta2.LabelAppName]
	if name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
}

// Reconcile reads the application and its pods, lets the state machine take one step, writes
// the status if the step changed it, and then does what must only follow a successful write:
// events, metrics, and handing the application to the submission pool.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	r.setDefaults()
	app := &v1beta2.SparkApplication{}
	if err := r.Client.Get(ctx, req.NamespacedName, app); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !app.DeletionTimestamp.IsZero() {
		// Owner references remove the pods and UI resources.
		return ctrl.Result{}, nil
	}
	from := app.Status.AppState.State
	res, written, err := r.reconcileApp(ctx, req, app)
	if err != nil || written == nil {
		return res, err
	}
	if to := written.Status.AppState.State; to != from && (to == v1beta2.ApplicationStateSucceeding || to == v1beta2.ApplicationStateFailing) {
		// The run just ended: what follows (COMPLETED, FAILED, a rerun) is taken at once,
		// without a trip through the queue, which under load is most of the time a user waits
		// to see it. Releasing what its batch scheduler held (an API request) waits for it.
		ended := written
		res, written, err = r.reconcileApp(ctx, req, ended)
		if err != nil || written == nil || !holdsNothing(written.Status.AppState.State) {
			// What follows is not written, or is a rerun (which waits for an admission of its
			// own, and releases nothing): the ended run's hold goes now.
			return res, errors.Join(err, r.release(ctx, ended, true))
		}
		from = ended.Status.AppState.State
	}
	// Also when nothing was written: a release that failed is retried by the next reconcile.
	if err := r.release(ctx, written, written.Status.AppState.State != from); err != nil {
		return ctrl.Result{}, err
	}
	return res, nil
}

// reconcileApp takes one step of app, as read, and returns app as it is now (written, or as
// read when the step changed nothing); nil when the step ended early (the cache is behind, the
// application is gone, or a write waits), leaving nothing else to do.
func (r *Reconciler) reconcileApp(ctx context.Context, req ctrl.Request, app *v1beta2.SparkApplication) (ctrl.Result, *v1beta2.SparkApplication, error) {
	s, err := r.observe(ctx, app)
	if err != nil {
		return ctrl.Result{}, nil, err
	}
	if err := s.run(ctx); err != nil {
		if errors.Is(err, errStale) {
			// The cache lags the API server; the watch brings the newer object.
			return ctrl.Result{RequeueAfter: time.Second}, nil, nil
		}
		return ctrl.Result{}, nil, err
	}
	if s.deleted {
		return ctrl.Result{}, nil, nil
	}
	syncConditions(&s.app.Status, s.now)
	switch wait := r.holdExecutorWrite(app, s); {
	case wait == untilStateChange:
		return ctrl.Result{RequeueAfter: s.requeueAfter}, nil, nil
	case wait > 0:
		return ctrl.Result{RequeueAfter: wait}, nil, nil
	}

	written := app
	// Nothing to write means nothing to read from the API server either: a step that
	// changes nothing costs only cache reads.
	if !statusEqual(&s.app.Status, &app.Status) {
		var err error
		written, err = r.updateStatus(ctx, req.NamespacedName, app, func(latest *v1beta2.SparkApplication) error {
			if latest.UID != app.UID {
				return errSkip
			}
			if !statusEqual(&latest.Status, &app.Status) {
				return errStale
			}
			latest.Status = *s.app.Status.DeepCopy()
			return nil
		})
		switch {
		case errors.Is(err, errStale):
			// The watch brings the newer status; this is only a backstop.
			return ctrl.Result{RequeueAfter: time.Second}, nil, nil
		case errors.Is(err, errSkip), apierrors.IsNotFound(err):
			return ctrl.Result{}, nil, nil
		case err != nil:
			return ctrl.Result{}, nil, err
		}
	}
	r.afterWrite(ctx, s, written)
	return ctrl.Result{RequeueAfter: s.requeueAfter}, written, nil
}

// afterWrite performs the effects of a step that must not happen unless its status was
// stored: otherwise a failed write would repeat them.
func (r *Reconciler) afterWrite(ctx context.Context, s *step, app *v1beta2.SparkApplication) {
	for _, e := range s.events {
		r.event(app, e.warning, e.reason, e.action, e.note)
	}
	from, to := s.from, app.Status.AppState.State
	if from != to {
		r.stateEvent(app, to)
		r.metrics(func(m MetricsRecorder) { m.AppStateChanged(app, from, to) })
		if to == v1beta2.ApplicationStateRunning && from == v1beta2.ApplicationStateSubmitted && app.Status.ExecutionAttempts == 1 {
			latency := s.now.Sub(app.CreationTimestamp.Time)
			r.metrics(func(m MetricsRecorder) { m.Started(app, latency) })
		}
		if endsRun(from, to) {
			r.finished(ctx, app)
		}
	}
	if s.recorded && s.from == v1beta2.ApplicationStateNew && app.Status.SubmissionAttempts == 0 && app.Status.ExecutionAttempts == 0 {
		// The first submission recorded (not one after a resume): the application starts to run.
		r.metrics(func(m MetricsRecorder) { m.Created(app) })
	}
	if s.executorsChanged {
		running, failed, completed := countExecutors(app.Status.ExecutorState)
		r.metrics(func(m MetricsRecorder) { m.ExecutorStates(app, running, failed, completed) })
	}
	if s.enqueue {
		if s.recorded {
			r.recorded.put(app, s.now)
		}
		r.Pool.Enqueue(client.ObjectKeyFromObject(app))
	}
}

// stateEvent records the events the Kubeflow operator records on an application's change to
// COMPLETED, FAILED or PENDING_RERUN.
func (r *Reconciler) stateEvent(app *v1beta2.SparkApplication, to v1beta2.ApplicationStateType) {
	switch to {
	case v1beta2.ApplicationStateCompleted:
		r.event(app, false, ReasonCompleted, "Monitor", "the application completed")
	case v1beta2.ApplicationStateFailed:
		msg := app.Status.AppState.ErrorMessage
		if msg == "" {
			msg = "the application failed"
		}
		r.event(app, true, ReasonFailed, "Monitor", msg)
	case v1beta2.ApplicationStatePendingRerun:
		r.event(app, false, ReasonPendingRerun, "Monitor", "the application is submitted again")
	}
}

// endsRun tells whether a change of state ends a run, so that each run's end is counted once:
// SUCCEEDING or FAILING (a rerun follows), or COMPLETED or FAILED when not reached through them.
func endsRun(from, to v1beta2.ApplicationStateType) bool {
	switch to {
	case v1beta2.ApplicationStateSucceeding, v1beta2.ApplicationStateFailing:
		return true
	case v1beta2.ApplicationStateCompleted, v1beta2.ApplicationStateFailed:
		return from != v1beta2.ApplicationStateSucceeding && from != v1beta2.ApplicationStateFailing
	}
	return false
}

// finished records the end of a run. (What its batch scheduler held is released by release,
// on every reconcile of a state that holds nothing.)
func (r *Reconciler) finished(ctx context.Context, app *v1beta2.SparkApplication) {
	var execTime time.Duration
	if !app.Status.LastSubmissionAttemptTime.IsZero() && !app.Status.TerminationTime.IsZero() {
		execTime = app.Status.TerminationTime.Sub(app.Status.LastSubmissionAttemptTime.Time)
	}
	r.metrics(func(m MetricsRecorder) { m.Finished(app, app.Status.AppState.State, execTime) })
}

// batchSchedulerName is the batch scheduler that admits app (scheduler.Registry.NameOf): the
// one it names, else the operator's default; Kueue's applications may go to scheduler.KueueName.
func (r *Reconciler) batchSchedulerName(app *v1beta2.SparkApplication) string {
	return r.Schedulers.NameOf(app, r.DefaultBatchScheduler)
}

// forgetDeleted takes a deleted application out of the metrics, running gauges included (its
// executors' too): one deleted while it ran never reports an end. The delete event carries the
// object as it was last seen.
func (r *Reconciler) forgetDeleted() handler.EventHandler {
	return handler.Funcs{
		DeleteFunc: func(_ context.Context, e ctrlevent.DeleteEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if app, ok := e.Object.(*v1beta2.SparkApplication); ok {
				r.metrics(func(m MetricsRecorder) { m.Forget(app) })
			}
		},
	}
}

func (r *Reconciler) metrics(f func(MetricsRecorder)) {
	if r.Metrics != nil {
		f(r.Metrics)
	}
}

func (r *Reconciler) event(app *v1beta2.SparkApplication, warning bool, reason, action, note string) {
	if r.Recorder == nil {
		return
	}
	typ := corev1.EventTypeNormal
	if warning {
		typ = corev1.EventTypeWarning
	}
	r.Recorder.Eventf(app, nil, typ, reason, action, "%s", note)
}

// observe gathers what the state machine decides on: the application and the pods of its
// current submission. Drivers are found by their labels (the application and the submission
// ID the operator put on them), never by the name the spec gives now: a spec edited mid-run
// names the next run's driver, not the one running, and the running one must still be seen to
// be stopped before the next starts.
func (r *Reconciler) observe(ctx context.Context, app *v1beta2.SparkApplication) (*step, error) {
	s := &step{
		r:        r,
		app:      app.DeepCopy(),
		observed: app,
		from:     app.Status.AppState.State,
		now:      r.Clock.Now(),
	}
	drivers := &corev1.PodList{}
	if err := r.Client.List(ctx, drivers, client.InNamespace(app.Namespace), client.MatchingFields{indexPodsByApp: app.Name},
		client.MatchingLabels{v1beta2.LabelAppName: app.Name, v1beta2.SparkRoleLabel: v1beta2.SparkRoleDriver}); err != nil {
		return nil, err
	}
	for i := range drivers.Items {
		pod := &drivers.Items[i]
		if ofSubmission(pod, app.Status.SubmissionID) && (s.driver == nil || pod.Name == app.Status.DriverInfo.PodName) {
			if s.driver != nil {
				s.staleDrivers = append(s.staleDrivers, s.driver)
			}
			s.driver = pod
			continue
		}
		s.staleDrivers = append(s.staleDrivers, pod)
	}
	if app.Status.SubmissionID != "" && !app.IsFinished() {
		// A finished run's executors no longer matter.
		pods := &corev1.PodList{}
		if err := r.Client.List(ctx, pods, client.InNamespace(app.Namespace), client.MatchingFields{indexPodsByApp: app.Name},
			client.MatchingLabels{
				v1beta2.LabelAppName:      app.Name,
				v1beta2.LabelSubmissionID: app.Status.SubmissionID,
				v1beta2.SparkRoleLabel:    v1beta2.SparkRoleExecutor,
			}); err != nil {
			return nil, err
		}
		s.executors = pods.Items
	}
	return s, nil
}
