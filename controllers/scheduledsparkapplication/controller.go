/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package scheduledsparkapplication runs ScheduledSparkApplications: it creates a
// SparkApplication from the template each time the cron schedule is due, applies the
// concurrency policy, and keeps a bounded history of finished runs.
package scheduledsparkapplication

import (
	"context"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/internal/cronschedule"
	"github.com/sparkop/spark-operator/internal/nsfilter"
)

// Event reasons, part of what users see in `kubectl describe`.
const (
	ReasonRunCreated       = "RunCreated"
	ReasonRunSkipped       = "RunSkipped"
	ReasonRunReplaced      = "RunReplaced"
	ReasonRunDeleted       = "RunDeleted"
	ReasonFailedValidation = "FailedValidation"
)

// ControllerName names the controller in the manager and as the reporter of its events.
const ControllerName = "scheduled-spark-application-controller"

// Reconciler creates SparkApplications for ScheduledSparkApplications.
type Reconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
	// APIReader reads straight from the API server: status writes and run creation decide
	// on the latest object, never on a cache that may not yet show the last write.
	APIReader client.Reader
	Scheme    *runtime.Scheme
	// Clock is the only source of "now", so tests can step through schedules.
	Clock    clock.PassiveClock
	Recorder events.EventRecorder
	// Namespaces, when set, limits the controller to namespaces whose labels match.
	Namespaces *nsfilter.Filter
}

// SetupWithManager registers the reconciler. Status-only updates of a
// ScheduledSparkApplication are filtered out: they are the reconciler's own writes, and
// the RequeueAfter it returns already wakes it for the next run.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Client == nil {
		r.Client = mgr.GetClient()
	}
	if r.APIReader == nil {
		r.APIReader = mgr.GetAPIReader()
	}
	if r.Scheme == nil {
		r.Scheme = mgr.GetScheme()
	}
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder(ControllerName)
	}
	b := ctrl.NewControllerManagedBy(mgr)
	if r.Namespaces != nil {
		b = b.WithEventFilter(r.Namespaces.Predicate())
	}
	return b.
		Named(ControllerName).
		For(&v1beta2.ScheduledSparkApplication{},
			builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}))).
		Owns(&v1beta2.SparkApplication{}).
		Complete(r)
}

// +kubebuilder:rbac:groups=sparkoperator.k8s.io,resources=scheduledsparkapplications,verbs=get;list;watch
// +kubebuilder:rbac:groups=sparkoperator.k8s.io,resources=scheduledsparkapplications/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=sparkoperator.k8s.io,resources=sparkapplications,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile brings one ScheduledSparkApplication up to date: it starts the run that is due,
// prunes the history and writes the status. Being driven by the scheduled time rather than
// by what happened before, running it twice does no harm: a run's name is derived from its
// scheduled time, so a second attempt to create it finds it instead.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	logger := log.FromContext(ctx)
	if r.APIReader == nil {
		r.APIReader = r.Client
	}

	ssa := &v1beta2.ScheduledSparkApplication{}
	if err := r.Client.Get(ctx, req.NamespacedName, ssa); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !ssa.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	// The webhook may not be installed, so defaults are applied here too; on a copy, so
	// the stored spec is never rewritten by the controller.
	spec := ssa.DeepCopy()
	v1beta2.SetScheduledSparkApplicationDefaults(spec)

	now := r.Clock.Now()

	sched, err := cronschedule.ParseSchedule(ssa.Spec.Schedule, ssa.Spec.TimeZone)
	if err == nil && sched.Next(now).IsZero() {
		err = fmt.Errorf("schedule %q never fires after %s", ssa.Spec.Schedule, now.UTC().Format(time.RFC3339))
	}
	if err != nil {
		return ctrl.Result{}, r.failValidation(ctx, ssa, err)
	}

	runs, err := r.listRuns(ctx, ssa)
	if err != nil {
		return ctrl.Result{}, err
	}

	since := ssa.CreationTimestamp.Time
	if !ssa.Status.LastRun.IsZero() {
		since = ssa.Status.LastRun.Time
	}
	due, next := sched.Due(since, now)

	started, behind, err := r.startDue(ctx, ssa, spec.Spec.ConcurrencyPolicy, due, runs)
	if behind {
		return ctrl.Result{RequeueAfter: time.Second}, client.IgnoreNotFound(err)
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	if started != nil {
		runs = append(runs, *started)
	}

	runs, err = r.pruneHistory(ctx, ssa, runs,
		int(*spec.Spec.SuccessfulRunHistoryLimit), int(*spec.Spec.FailedRunHistoryLimit))
	if err != nil {
		return ctrl.Result{}, err
	}

	succeeded, failed := pastRunNames(runs)
	if _, err := r.writeStatus(ctx, ssa, func(st *v1beta2.ScheduledSparkApplicationStatus) {
		if started != nil && due.After(st.LastRun.Time) {
			st.LastRun = metav1.NewTime(due)
			st.LastRunName = started.Name
		}
		st.ScheduleState = v1beta2.ScheduleStateScheduled
		st.Reason = ""
		st.NextRun = metav1.NewTime(next)
		st.PastSuccessfulRunNames, st.PastFailedRunNames = succeeded, failed
	}); err != nil {
		return ctrl.Result{}, err
	}

	wait := next.Sub(now)
	if wait <= 0 {
		// The next time is computed strictly after now; this only guards rounding.
		wait = time.Second
	}
	logger.V(1).Info("scheduled", "nextRun", next, "requeueAfter", wait)
	return ctrl.Result{RequeueAfter: wait}, nil
}

// startDue starts the run due at due (none when due is zero or ssa is suspended) under policy,
// returning it (nil when the policy let none start). behind is true when the cache has not
// seen the last status write yet: it would take a run already started (and perhaps already
// pruned) for due and start it again, so nothing is started and the caller tries again.
func (r *Reconciler) startDue(ctx context.Context, ssa *v1beta2.ScheduledSparkApplication, policy v1beta2.ConcurrencyPolicy,
	due time.Time, runs []v1beta2.SparkApplication) (started *v1beta2.SparkApplication, behind bool, err error) {
	if due.IsZero() || ssa.IsSuspended() {
		return nil, false, nil
	}
	if current, err := r.lastRunCurrent(ctx, ssa); err != nil || !current {
		return nil, true, err
	}
	started, err = r.startRun(ctx, ssa, policy, due, runs)
	return started, false, err
}

// failValidation records why the schedule cannot be used. No run is started and nothing
// is requeued: only an edit of the spec can fix it, and that triggers a reconcile.
func (r *Reconciler) failValidation(ctx context.Context, ssa *v1beta2.ScheduledSparkApplication, cause error) error {
	msg := cause.Error()
	changed, err := r.writeStatus(ctx, ssa, func(st *v1beta2.ScheduledSparkApplicationStatus) {
		st.ScheduleState = v1beta2.ScheduleStateFailedValidation
		st.Reason = msg
		st.NextRun = metav1.Time{}
	})
	if err != nil {
		return err
	}
	// Only on a change, so a resync does not repeat the same warning.
	if changed {
		r.Recorder.Eventf(ssa, nil, corev1.EventTypeWarning, ReasonFailedValidation, "Validate", "%s", msg)
	}
	return nil
}

// listRuns returns the SparkApplications this object created and still controls. The
// owner check keeps out runs of an earlier object of the same name.
func (r *Reconciler) listRuns(ctx context.Context, ssa *v1beta2.ScheduledSparkApplication) ([]v1beta2.SparkApplication, error) {
	list := &v1beta2.SparkApplicationList{}
	if err := r.Client.List(ctx, list, client.InNamespace(ssa.Namespace),
		client.MatchingLabels{v1beta2.LabelScheduledAppName: ssa.Name}); err != nil {
		return nil, fmt.Errorf("listing runs: %w", err)
	}
	var runs []v1beta2.SparkApplication
	for _, app := range list.Items {
		if ref := metav1.GetControllerOf(&app); ref != nil && ref.UID == ssa.UID {
			runs = append(runs, app)
		}
	}
	return runs, nil
}

// RunName is the name of the SparkApplication of the run scheduled at t. Being a function
// of the scheduled time is what makes creating a run idempotent.
func RunName(scheduledName string, t time.Time) string {
	return v1beta2.ShortName(scheduledName, fmt.Sprintf("-%d", t.Unix()))
}

// startRun applies the concurrency policy to the run due at due and creates it. It returns
// the run, or nil when the policy skipped it.
func (r *Reconciler) startRun(ctx context.Context, ssa *v1beta2.ScheduledSparkApplication, policy v1beta2.ConcurrencyPolicy, due time.Time, runs []v1beta2.SparkApplication) (*v1beta2.SparkApplication, error) {
	name := RunName(ssa.Name, due)
	var active []*v1beta2.SparkApplication
	for i := range runs {
		if runs[i].Name == name {
			// Created by an earlier reconcile whose status write was lost.
			return &runs[i], nil
		}
		if !runs[i].IsFinished() {
			active = append(active, &runs[i])
		}
	}

	switch policy {
	case v1beta2.ConcurrencyForbid:
		if len(active) > 0 {
			// The time stays due, so the run starts as soon as the active one finishes
			// (its update wakes this reconciler) unless a later time is due by then.
			r.Recorder.Eventf(ssa, active[0], corev1.EventTypeNormal, ReasonRunSkipped, "Skip",
				"Skipped the run scheduled at %s: %s is still running (concurrencyPolicy Forbid)",
				due.UTC().Format(time.RFC3339), active[0].Name)
			return nil, nil
		}
	case v1beta2.ConcurrencyReplace:
		for _, app := range active {
			err := r.Client.Delete(ctx, app, client.PropagationPolicy(metav1.DeletePropagationBackground))
			if client.IgnoreNotFound(err) != nil {
				return nil, fmt.Errorf("deleting run %s to replace it: %w", app.Name, err)
			}
			r.Recorder.Eventf(ssa, app, corev1.EventTypeNormal, ReasonRunReplaced, "Replace",
				"Deleted the unfinished run %s to start the run scheduled at %s (concurrencyPolicy Replace)",
				app.Name, due.UTC().Format(time.RFC3339))
		}
	}

	app, err := r.newRun(ssa, name)
	if err != nil {
		return nil, err
	}
	if err := r.Client.Create(ctx, app); err != nil {
		if apierrors.IsAlreadyExists(err) {
			// Our cache had not seen it yet; the name says it is this very run.
			return app, nil
		}
		return nil, fmt.Errorf("creating run %s: %w", name, err)
	}
	r.Recorder.Eventf(ssa, app, corev1.EventTypeNormal, ReasonRunCreated, "Create",
		"Created SparkApplication %s for the run scheduled at %s", name, due.UTC().Format(time.RFC3339))
	return app, nil
}

// newRun builds the SparkApplication of one run. It carries the ScheduledSparkApplication's
// labels, as the Kubeflow operator's runs did, so selectors written for them keep working.
func (r *Reconciler) newRun(ssa *v1beta2.ScheduledSparkApplication, name string) (*v1beta2.SparkApplication, error) {
	labels := make(map[string]string, len(ssa.Labels)+1)
	for k, v := range ssa.Labels {
		labels[k] = v
	}
	labels[v1beta2.LabelScheduledAppName] = ssa.Name
	app := &v1beta2.SparkApplication{
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: ssa.Namespace,
			Labels:    labels,
		},
		Spec: *ssa.Spec.Template.DeepCopy(),
	}
	if err := controllerutil.SetControllerReference(ssa, app, r.Scheme); err != nil {
		return nil, fmt.Errorf("setting owner of run %s: %w", name, err)
	}
	return app, nil
}

// pruneHistory deletes the oldest finished runs beyond the limits and returns the runs left.
func (r *Reconciler) pruneHistory(ctx context.Context, ssa *v1beta2.ScheduledSparkApplication, runs []v1beta2.SparkApplication, keepSucceeded, keepFailed int) ([]v1beta2.SparkApplication, error) {
	sortNewestFirst(runs)
	var kept []v1beta2.SparkApplication
	var doomed []v1beta2.SparkApplication
	succeeded, failed := 0, 0
	for _, app := range runs {
		switch app.Status.AppState.State {
		case v1beta2.ApplicationStateCompleted:
			succeeded++
			if succeeded > keepSucceeded {
				doomed = append(doomed, app)
				continue
			}
		case v1beta2.ApplicationStateFailed:
			failed++
			if failed > keepFailed {
				doomed = append(doomed, app)
				continue
			}
		}
		kept = append(kept, app)
	}
	// Oldest first, so an interrupted prune still leaves the newest history.
	for i := len(doomed) - 1; i >= 0; i-- {
		app := &doomed[i]
		err := r.Client.Delete(ctx, app, client.PropagationPolicy(metav1.DeletePropagationBackground))
		if client.IgnoreNotFound(err) != nil {
			return nil, fmt.Errorf("deleting old run %s: %w", app.Name, err)
		}
		r.Recorder.Eventf(ssa, app, corev1.EventTypeNormal, ReasonRunDeleted, "Delete",
			"Deleted %s run %s beyond the run history limit", app.Status.AppState.State, app.Name)
	}
	return kept, nil
}

// sortNewestFirst orders runs by creation, newest first. Names break ties because creation
// timestamps have one-second resolution, and a run's name grows with its scheduled time.
func sortNewestFirst(runs []v1beta2.SparkApplication) {
	sort.SliceStable(runs, func(i, j int) bool {
		ti, tj := runs[i].CreationTimestamp.Time, runs[j].CreationTimestamp.Time
		if !ti.Equal(tj) {
			return ti.After(tj)
		}
		return runs[i].Name > runs[j].Name
	})
}

// pastRunNames lists the kept finished runs, newest first, as the status reports them.
func pastRunNames(runs []v1beta2.SparkApplication) (succeeded, failed []string) {
	for _, app := range runs {
		switch app.Status.AppState.State {
		case v1beta2.ApplicationStateCompleted:
			succeeded = append(succeeded, app.Name)
		case v1beta2.ApplicationStateFailed:
			failed = append(failed, app.Name)
		}
	}
	return succeeded, failed
}

// lastRunCurrent reports whether the API server's status.lastRun is still the one ssa was
// read with, that is, whether the run ssa takes for due has not been started already.
func (r *Reconciler) lastRunCurrent(ctx context.Context, ssa *v1beta2.ScheduledSparkApplication) (bool, error) {
	latest := &v1beta2.ScheduledSparkApplication{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(ssa), latest); err != nil {
		return false, err
	}
	return latest.UID == ssa.UID && latest.Status.LastRun.Equal(&ssa.Status.LastRun), nil
}

// writeStatus applies mutate to the status of the latest object, read from the API server,
// and stores it through the status subresource; a conflict starts over with a fresh read. The
// new status is always computed from the object it is written to, so a decision taken on a
// stale read cannot put back what a later write replaced: mutate only moves lastRun forward.
// It reports whether anything changed.
func (r *Reconciler) writeStatus(ctx context.Context, ssa *v1beta2.ScheduledSparkApplication,
	mutate func(*v1beta2.ScheduledSparkApplicationStatus)) (bool, error) {
	cached := ssa.Status.DeepCopy()
	mutate(cached)
	if equality.Semantic.DeepEqual(ssa.Status, *cached) {
		// Nothing to write as far as this reconcile knows, so no read either; a write it
		// has not seen yet brings another reconcile.
		return false, nil
	}
	changed := false
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		latest := &v1beta2.ScheduledSparkApplication{}
		if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(ssa), latest); err != nil {
			return err
		}
		if latest.UID != ssa.UID {
			return apierrors.NewNotFound(v1beta2.GroupVersion.WithResource("scheduledsparkapplications").GroupResource(), ssa.Name)
		}
		before := latest.Status.DeepCopy()
		mutate(&latest.Status)
		if equality.Semantic.DeepEqual(*before, latest.Status) {
			changed = false
			return nil
		}
		changed = true
		return r.Client.Status().Update(ctx, latest)
	})
	if client.IgnoreNotFound(err) != nil {
		return false, fmt.Errorf("updating status: %w", err)
	}
	return changed && err == nil, nil
}
