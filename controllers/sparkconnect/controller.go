/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package sparkconnect runs SparkConnects: for each, a Spark Connect server pod (a Spark driver
// in client mode), the Service clients connect to, and the ConfigMap holding the executor pod
// template; and it reports their state in the SparkConnect's status as the Kubeflow operator's
// clients read it.
package sparkconnect

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1alpha1"
	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/internal/nsfilter"
	"github.com/sparkop/spark-operator/internal/ssa"
	"github.com/sparkop/spark-operator/scheduler"
	"github.com/sparkop/spark-operator/sparkpod"
)

// ControllerName names the controller in the manager and as the reporter of its events.
const ControllerName = "spark-connect-controller"

// Event reasons.
const (
	ReasonServerPodCreated    = "ServerPodCreated"
	ReasonServiceCreated      = "ServiceCreated"
	ReasonStateChanged        = "StateChanged"
	ReasonInvalidSpec         = v1alpha1.ReasonInvalidSpec
	ReasonNameTaken           = "NameTaken"
	ReasonServerPodTerminated = "ServerPodTerminated"
	ReasonQueued              = v1alpha1.ReasonQueued
	ReasonRejected            = v1alpha1.ReasonRejected
	ReasonPreempted           = "Preempted"
	// ReasonBatchSchedulerNotEnabled: the scheduler that admitted a server is not enabled now.
	ReasonBatchSchedulerNotEnabled = "BatchSchedulerNotEnabled"
	// ReasonBatchSchedulerObjectsFailed: the objects the batch scheduler wants before the
	// server (scheduler.ObjectsForRun) could not be made; it is retried.
	ReasonBatchSchedulerObjectsFailed = "BatchSchedulerObjectsFailed"
)

// Reconciler runs SparkConnects.
type Reconciler struct {
	Client client.Client
	// APIReader reads what must not come from a lagging cache (whether a new server
	// submission is due, and the session as its batch scheduler last stored it).
	APIReader client.Reader
	Clock     clock.PassiveClock
	Recorder  events.EventRecorder
	// Namespaces, when set, limits the controller to namespaces whose labels match.
	Namespaces *nsfilter.Filter
	// Schedulers are the operator's batch schedulers; DefaultBatchScheduler is the one that
	// admits sessions (the SparkConnect API names none). Empty admits every session at once.
	Schedulers            *scheduler.Registry
	DefaultBatchScheduler string
	// QueuedRetryInterval is how soon a session held back by its batch scheduler is asked
	// about again, when the scheduler does not wake the sessions it holds (scheduler.Waking)
	// and its decision names no RetryAfter. Default 10s.
	QueuedRetryInterval time.Duration

	wakes wakeSource
}

// SetupWithManager registers the reconciler. Pods are mapped to their SparkConnect by the
// connect-name label: the server carries it, and the server passes it on to its executors.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Client == nil {
		r.Client = mgr.GetClient()
	}
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder(ControllerName)
	}
	if r.APIReader == nil {
		r.APIReader = mgr.GetAPIReader()
	}
	if r.Schedulers != nil {
		r.Schedulers.HandleWakes(scheduler.KindSession, &r.wakes)
		if err := r.Schedulers.SetupWithManager(mgr); err != nil {
			return err
		}
	}
	ofConnect := predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.GetLabels()[v1beta2.LabelLaunchedByOperator] == "true" && o.GetLabels()[v1alpha1.LabelConnectName] != ""
	})
	b := ctrl.NewControllerManagedBy(mgr)
	if r.Namespaces != nil {
		b = b.WithEventFilter(r.Namespaces.Predicate())
	}
	return b.
		Named("sparkconnect").
		// Annotations too: a batch scheduler marks a session it preempts (and the gang scheduler
		// stores its reservation) there.
		For(&v1alpha1.SparkConnect{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(byConnectName), builder.WithPredicates(ofConnect)).
		Owns(&corev1.Service{}, builder.WithPredicates(ofConnect)).
		Owns(&corev1.ConfigMap{}, builder.WithPredicates(ofConnect)).
		WatchesRawSource(&r.wakes).
		Complete(r)
}

func byConnectName(_ context.Context, o client.Object) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetLabels()[v1alpha1.LabelConnectName]}}}
}

// +kubebuilder:rbac:groups=sparkoperator.k8s.io,resources=sparkconnects,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=sparkoperator.k8s.io,resources=sparkconnects/status,verbs=get;update
// +kubebuilder:rbac:groups="",resources=pods;services;configmaps,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile makes sure the SparkConnect's ConfigMap, server pod and Service exist, and writes
// what it observed of them and of the executors into the status. It creates only what is
// missing and writes only what differs from the spec, so running it twice does no harm.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	conn := &v1alpha1.SparkConnect{}
	if err := r.Client.Get(ctx, req.NamespacedName, conn); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !conn.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil // owner references remove the rest
	}
	obs, svcName, err := r.ensureObjects(ctx, conn)
	if err != nil {
		return ctrl.Result{}, err
	}
	executors := &corev1.PodList{}
	if err := r.Client.List(ctx, executors, client.InNamespace(conn.Namespace), client.MatchingLabels(conn.ExecutorSelector())); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing executors: %w", err)
	}

	v := decide(conn.Status.State, obs)
	status := *conn.Status.DeepCopy()
	status.State = v.state
	meta.SetStatusCondition(&status.Conditions, metav1.Condition{
		Type: v1alpha1.ConditionServerPodReady, Status: v.status, Reason: v.reason, Message: v.message,
		ObservedGeneration: conn.Generation,
	})
	status.Server = v1alpha1.SparkConnectServerStatus{ServiceName: svcName, SubmissionID: conn.Status.Server.SubmissionID,
		BatchScheduler: conn.Status.Server.BatchScheduler}
	if obs.admittedBy != "" {
		status.Server.BatchScheduler = obs.admittedBy
	}
	if obs.server != nil {
		status.Server.PodName, status.Server.PodIP = obs.server.Name, obs.server.Status.PodIP
	} else if obs.replaced != nil {
		status.Server.PodName = obs.replaced.Name // still there: its submission has started
	}
	status.Executors = executorCounts(executors.Items)
	if status.StartTime.IsZero() {
		status.StartTime = metav1.NewTime(r.Clock.Now())
	}
	written, err := r.writeStatus(ctx, conn, status)
	if err != nil {
		return ctrl.Result{}, err
	}
	if prev := meta.FindStatusCondition(conn.Status.Conditions, v1alpha1.ConditionServerPodReady); written && v.reason == ReasonQueued &&
		(prev == nil || prev.Reason != v.reason || prev.Message != v.message) {
		r.Recorder.Eventf(conn, nil, corev1.EventTypeNormal, ReasonQueued, "Schedule", "%s", v.message)
	}
	if written && v.state != conn.Status.State {
		typ := corev1.EventTypeNormal
		if v.state == v1alpha1.SparkConnectStateFailed || v.state == v1alpha1.SparkConnectStateNotReady {
			typ = corev1.EventTypeWarning
		}
		var related runtime.Object // a nil *Pod would not be a nil Object
		if obs.server != nil {
			related = obs.server
		}
		r.Recorder.Eventf(conn, related, typ, ReasonStateChanged, "Observe", "%s: %s", v.state, v.message)
	}
	// A held session is asked about again when its scheduler says, or after the retry
	// interval unless its scheduler wakes it.
	return ctrl.Result{RequeueAfter: obs.retryAfter}, nil
}

// ensureObjects creates what is missing of the ConfigMap, the server pod and the Service. The
// Service follows spec.server.service, written with server-side apply (internal/ssa), so what
// others add to it survives; once created, the server pod is left as it is (a pod cannot be
// changed): spec changes reach the next server pod. A server pod is created only once the
// session's batch scheduler admits it (startServer).
func (r *Reconciler) ensureObjects(ctx context.Context, conn *v1alpha1.SparkConnect) (observation, string, error) {
	want, err := sparkpod.ConnectServerPod(conn, sparkpod.RoleScheduling{})
	if err != nil {
		r.warn(conn, ReasonInvalidSpec, err.Error())
		return observation{invalid: err.Error()}, "", nil
	}

	obs := observation{}
	pod := &corev1.Pod{}
	err = r.Client.Get(ctx, client.ObjectKeyFromObject(want), pod)
	switch {
	case apierrors.IsNotFound(err):
		if obs, err = r.startServer(ctx, conn); err != nil {
			return observation{}, "", err
		}
	case err != nil:
		return observation{}, "", fmt.Errorf("reading the server pod: %w", err)
	case !metav1.IsControlledBy(pod, conn):
		msg := fmt.Sprintf("pod %s exists and does not belong to this SparkConnect; delete or rename it", pod.Name)
		r.warn(conn, ReasonNameTaken, msg)
		return observation{invalid: msg}, "", nil
	case !pod.DeletionTimestamp.IsZero():
		// Being deleted: its run is over. A new one is created once it is gone (its deletion
		// wakes us).
		obs.replaced = pod
		if err := r.release(ctx, conn); err != nil {
			return observation{}, "", err
		}
	case terminated(pod):
		obs.server = pod
		if err := r.release(ctx, conn); err != nil {
			return observation{}, "", err
		}
	case preempted(conn):
		// Its batch scheduler stops this server for a workload of higher priority; the next
		// one queues again.
		if err := r.Client.Delete(ctx, pod, client.Preconditions{UID: &pod.UID}); client.IgnoreNotFound(err) != nil {
			return observation{}, "", fmt.Errorf("deleting the preempted server pod: %w", err)
		}
		r.Recorder.Eventf(conn, pod, corev1.EventTypeWarning, ReasonPreempted, "Preempt",
			"preempted by its batch scheduler for a workload of higher priority; the server is stopped and the session queued again")
		obs.replaced = pod
	default:
		obs.server = pod
		if err := r.followSpec(ctx, conn); err != nil {
			return observation{}, "", err
		}
	}

	// A server created by an earlier reconcile whose status write failed: its pod names the
	// scheduler that admitted it.
	if obs.server != nil && obs.admittedBy == "" && conn.Status.Server.BatchScheduler == "" {
		obs.admittedBy = obs.server.Annotations[scheduler.AnnotationAdmittedBy]
	}

	svc := sparkpod.ConnectService(conn)
	cfg, err := ssa.Service(svc)
	if err != nil {
		return observation{}, "", err
	}
	have := &corev1.Service{}
	wrote, err := ssa.Apply(ctx, r.Client, r.APIReader, cfg, have, ssa.ControlledBy(conn, "SparkConnect"))
	var taken *ssa.NotOwnedError
	switch {
	case errors.As(err, &taken):
		msg := fmt.Sprintf("Service %s exists and does not belong to this SparkConnect; delete it or name another in spec.server.service", svc.Name)
		r.warn(conn, ReasonNameTaken, msg)
		return observation{invalid: msg}, "", nil
	case err != nil:
		return observation{}, "", err
	case wrote && have.UID == "":
		r.Recorder.Eventf(conn, svc, corev1.EventTypeNormal, ReasonServiceCreated, "Create", "Created Service %s", svc.Name)
	}
	return obs, svc.Name, nil
}

// startServer starts the session's next server: a new submission (recorded in the status
// before anything else) when the last one's server existed, admitted by the session's batch
// scheduler, with its pod settings on the server pod and in the executor pod template. Until
// admitted, nothing is created and the observation says why it waits.
func (r *Reconciler) startServer(ctx context.Context, conn *v1alpha1.SparkConnect) (observation, error) {
	// The cache may lag behind this controller's own writes: what decides whether a new
	// submission is due is read from the API server.
	fresh := &v1alpha1.SparkConnect{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(conn), fresh); err != nil {
		return observation{}, client.IgnoreNotFound(err)
	}
	if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: conn.Namespace, Name: conn.ServerPodName()}, &corev1.Pod{}); err == nil {
		return observation{}, fmt.Errorf("server pod %s exists but is not in the cache yet", conn.ServerPodName())
	} else if !apierrors.IsNotFound(err) {
		return observation{}, fmt.Errorf("reading the server pod: %w", err)
	}
	*conn = *fresh
	if conn.Status.Server.SubmissionID == "" || conn.Status.Server.PodName != "" || preempted(conn) {
		// The last server is gone (or there was none): what its batch scheduler held for it is
		// released, and the next server is a new submission.
		if err := r.release(ctx, conn); err != nil {
			return observation{}, err
		}
		status := *conn.Status.DeepCopy()
		status.Server.SubmissionID, status.Server.PodName, status.Server.PodIP = string(uuid.NewUUID()), "", ""
		status.Server.BatchScheduler = "" // not admitted yet
		if _, err := r.writeStatus(ctx, conn, status); err != nil {
			return observation{}, err
		}
		conn.Status = status
	}

	decision, err := r.decide(ctx, conn)
	if err != nil {
		return observation{}, err
	}
	switch {
	case decision.Reject:
		return observation{rejected: decision.Reason}, nil
	case !decision.Admit:
		obs := observation{queued: decision.Reason}
		if after, retry := scheduler.RetryAfter(decision.sched, decision.Decision, r.queuedRetryInterval()); retry {
			obs.retryAfter = after
		}
		return obs, nil
	}
	want, err := sparkpod.ConnectServerPod(conn, decision.Pods)
	if err != nil {
		return observation{invalid: err.Error()}, nil
	}
	cm, err := sparkpod.ConnectExecutorTemplateConfigMap(conn, decision.Pods.Executor)
	if err != nil {
		return observation{invalid: err.Error()}, nil
	}
	// What the scheduler needs of its own before the server exists (a PodGroup, say), owned
	// by the session. A failure is retried: no server starts without them.
	if err := scheduler.EnsureRunObjects(ctx, r.Client, decision.sched, decision.w, decision.Decision); err != nil {
		r.Recorder.Eventf(conn, nil, corev1.EventTypeWarning, ReasonBatchSchedulerObjectsFailed, "Create", "%s", err.Error())
		return observation{}, err
	}
	if cm != nil {
		if err := r.ensureConfigMap(ctx, conn, cm); err != nil {
			return observation{}, err
		}
	}
	if want.Annotations == nil {
		want.Annotations = map[string]string{}
	}
	want.Annotations[scheduler.AnnotationAdmittedBy] = decision.sched.Name()
	if err := r.Client.Create(ctx, want); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return observation{}, fmt.Errorf("server pod %s exists but is not in the cache yet: %w", want.Name, err)
		}
		return observation{}, fmt.Errorf("creating the server pod: %w", err)
	}
	r.Recorder.Eventf(conn, want, corev1.EventTypeNormal, ReasonServerPodCreated, "Create", "Created server pod %s (submission %s)",
		want.Name, conn.Status.Server.SubmissionID)
	return observation{server: want, created: true, admittedBy: decision.sched.Name()}, nil
}

// followSpec brings the executor template ConfigMap up to date with the spec while a server
// runs, for the next server (the running one read its template when it started), with the
// settings of the running server's admission. Without an admission it is left as it is.
func (r *Reconciler) followSpec(ctx context.Context, conn *v1alpha1.SparkConnect) error {
	decision := scheduler.Decision{Admit: true}
	if conn.Status.Server.SubmissionID != "" { // else a server started before submissions were recorded
		var err error
		a, err := r.decide(ctx, conn)
		if err != nil || !a.Admit {
			return err
		}
		decision = a.Decision
	}
	cm, err := sparkpod.ConnectExecutorTemplateConfigMap(conn, decision.Pods.Executor)
	if err != nil || cm == nil {
		return nil // reported when the next server is made
	}
	return r.ensureConfigMap(ctx, conn, cm)
}

// ensureConfigMap writes the executor template ConfigMap with server-side apply (internal/ssa):
// created when missing, written when it differs from want, left alone when it is not conn's.
func (r *Reconciler) ensureConfigMap(ctx context.Context, conn *v1alpha1.SparkConnect, want *corev1.ConfigMap) error {
	_, err := ssa.Apply(ctx, r.Client, r.APIReader, ssa.ConfigMap(want), &corev1.ConfigMap{}, ssa.ControlledBy(conn, "SparkConnect"))
	return err
}

// warn records a warning event; repeats are folded into one event series by the recorder.
func (r *Reconciler) warn(conn *v1alpha1.SparkConnect, reason, msg string) {
	r.Recorder.Eventf(conn, nil, corev1.EventTypeWarning, reason, "Validate", "%s", msg)
}

// writeStatus stores status through the status subresource, with lastUpdateTime, unless it is
// what is stored already. On a conflict it re-reads the object: only the operator writes this
// status, and the observation it was computed from still holds.
func (r *Reconciler) writeStatus(ctx context.Context, conn *v1alpha1.SparkConnect, status v1alpha1.SparkConnectStatus) (bool, error) {
	same := func(have v1alpha1.SparkConnectStatus) bool {
		status.LastUpdateTime = have.LastUpdateTime
		return equality.Semantic.DeepEqual(have, status)
	}
	if same(conn.Status) {
		return false, nil
	}
	latest := conn.DeepCopy()
	written := false
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := r.Client.Get(ctx, client.ObjectKeyFromObject(conn), latest); err != nil {
			return err
		}
		if same(latest.Status) {
			return nil
		}
		latest.Status = status
		latest.Status.LastUpdateTime = metav1.NewTime(r.Clock.Now())
		if err := r.Client.Status().Update(ctx, latest); err != nil {
			return err
		}
		written = true
		return nil
	})
	if client.IgnoreNotFound(err) != nil {
		return false, fmt.Errorf("updating status: %w", err)
	}
	if written {
		log.FromContext(ctx).V(1).Info("status written", "state", status.State, "executors", status.Executors)
	}
	return written, nil
}
