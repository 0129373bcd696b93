/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package native

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/submission"
)

// Submitter creates drivers natively. It implements submission.Submitter.
type Submitter struct {
	Client client.Client
	// Reader serves the reads of an interrupted attempt (the existing driver, its ConfigMap).
	// It should read the API server, not a cache: the operator caches pods trimmed of their
	// spec and no unlabelled ConfigMaps. Client is used when nil.
	Reader  client.Reader
	Options Options
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

var _ submission.Submitter = (*Submitter)(nil)

func (s *Submitter) reader() client.Reader {
	if s.Reader != nil {
		return s.Reader
	}
	return s.Client
}

// Submit creates the driver pod and then, owned by it, the ConfigMaps and the Service. The
// pod goes first because the others need its UID for their owner reference; creating it is
// also the idempotency check, so the happy path makes no reads.
func (s *Submitter) Submit(ctx context.Context, app *v1beta2.SparkApplication, attempt submission.Attempt) (submission.Result, error) {
	if s.Client == nil {
		return submission.Result{}, errors.New("native submitter has no Kubernetes client")
	}
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	objs, err := Build(app, attempt, s.Options, NewIDs(now()))
	if err != nil {
		return submission.Result{}, err
	}
	err = s.Client.Create(ctx, objs.Pod)
	if apierrors.IsAlreadyExists(err) {
		return s.resume(ctx, app, attempt, objs)
	}
	if err != nil {
		return submission.Result{}, fmt.Errorf("creating driver pod %s/%s: %w", objs.Pod.Namespace, objs.Pod.Name, err)
	}
	objs.SetPodOwner(objs.Pod.UID)
	if err := s.createDependents(ctx, objs); err != nil {
		if ctx.Err() != nil {
			// Cut short (the operator stopping, a leader handing over): the pod stays, as if
			// the process had died here, and the next call for this attempt resumes it. Deleting
			// it would start a second driver of the same attempt, which may have started already.
			return submission.Result{}, err
		}
		// Without its ConfigMap the driver cannot start; removing the pod (and with it, through
		// the owner references, whatever was created) leaves the attempt clean to retry.
		pod := objs.Pod
		if derr := s.Client.Delete(context.WithoutCancel(ctx), pod, client.Preconditions{UID: &pod.UID}); derr != nil && !apierrors.IsNotFound(derr) {
			err = fmt.Errorf("%w (and deleting driver pod %s: %v)", err, pod.Name, derr)
		}
		return submission.Result{}, err
	}
	return submission.Result{SparkApplicationID: objs.AppID, DriverPodName: objs.Pod.Name}, nil
}

// createDependents creates the Service and ConfigMaps concurrently: they are independent, and
// one round trip instead of three is most of a native submission's latency.
func (s *Submitter) createDependents(ctx context.Context, objs *Objects) error {
	list := []client.Object{objs.Service, objs.ConfigMap}
	if objs.PodTemplate != nil {
		list = append(list, objs.PodTemplate)
	}
	errs := make([]error, len(list))
	var wg sync.WaitGroup
	for i, obj := range list[1:] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i+1] = s.createOwned(ctx, obj)
		}()
	}
	errs[0] = s.createOwned(ctx, list[0])
	wg.Wait()
	return errors.Join(errs...)
}

func (s *Submitter) createOwned(ctx context.Context, obj client.Object) error {
	err := s.Client.Create(ctx, obj)
	if err == nil || apierrors.IsAlreadyExists(err) {
		return nil
	}
	return fmt.Errorf("creating %T %s/%s: %w", obj, obj.GetNamespace(), obj.GetName(), err)
}

// resume handles a driver pod that already exists. If it belongs to this attempt, an earlier
// call created it and may have been interrupted before the ConfigMaps and the Service; those
// are recreated under the names the pod already refers to, so the call ends as a whole one.
func (s *Submitter) resume(ctx context.Context, app *v1beta2.SparkApplication, attempt submission.Attempt, fresh *Objects) (submission.Result, error) {
	pod := &corev1.Pod{}
	key := client.ObjectKey{Namespace: fresh.Pod.Namespace, Name: fresh.Pod.Name}
	if err := s.reader().Get(ctx, key, pod); err != nil {
		return submission.Result{}, fmt.Errorf("reading existing driver pod %s: %w", key, err)
	}
	if got := pod.Labels[v1beta2.LabelSubmissionID]; got != attempt.SubmissionID {
		return submission.Result{}, &submission.Error{Message: fmt.Sprintf(
			"driver pod %s already exists for submission %q, not %q", key, got, attempt.SubmissionID)}
	}
	appID := pod.Labels[v1beta2.SparkAppSelectorLabel]
	result := submission.Result{SparkApplicationID: appID, DriverPodName: pod.Name}

	ids, ok := idsOf(pod, NewIDs(time.Now()))
	if !ok {
		// Not a pod this package built; nothing to complete.
		return result, nil
	}
	existing := &corev1.ConfigMap{}
	err := s.reader().Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: ids.configMapName}, existing)
	switch {
	case err == nil:
		if props, perr := ParseProperties(existing.Data[propertiesKey]); perr == nil {
			if host, _, _ := strings.Cut(props[keyDriverHost], "."); host != "" {
				ids.ServiceName = host
			}
		}
	case !apierrors.IsNotFound(err):
		return submission.Result{}, fmt.Errorf("reading ConfigMap of driver pod %s: %w", key, err)
	}
	objs, err := Build(app, attempt, s.Options, ids.IDs)
	if err != nil {
		return submission.Result{}, err
	}
	objs.SetPodOwner(pod.UID)
	if err := s.createDependents(ctx, objs); err != nil {
		return submission.Result{}, err
	}
	return result, nil
}

type recoveredIDs struct {
	IDs
	configMapName string
}

// idsOf recovers, from a driver pod built by this package, the IDs that name its dependents.
func idsOf(pod *corev1.Pod, fresh IDs) (recoveredIDs, bool) {
	r := recoveredIDs{IDs: fresh}
	r.AppID = pod.Labels[v1beta2.SparkAppSelectorLabel]
	r.SubmitTime = pod.CreationTimestamp.Time
	for _, v := range pod.Spec.Volumes {
		switch {
		case v.Name == confVolumeName && v.ConfigMap != nil:
			r.configMapName = v.ConfigMap.Name
			id := strings.TrimSuffix(strings.TrimPrefix(v.ConfigMap.Name, "spark-drv-"), "-conf-map")
			r.ConfigMapID = id
		case v.Name == templateVolumeName && v.ConfigMap != nil:
			r.TemplateConfigMapName = v.ConfigMap.Name
		}
	}
	for _, c := range pod.Spec.Containers {
		if c.Name != v1beta2.SparkDriverContainerName {
			continue
		}
		for _, e := range c.Env {
			if e.Name == "SPARK_LOCAL_DIRS" {
				r.LocalDirID = strings.TrimPrefix(e.Value, defaultLocalDirBase)
			}
		}
	}
	return r, r.AppID != "" && r.configMapName != "" && r.ConfigMapID != r.configMapName
}
