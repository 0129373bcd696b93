/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package uiresources keeps the Services and Ingresses that expose a SparkApplication's driver
// in line with the application's spec: the web UI's Service and optional Ingress, and one
// Service (with an optional Ingress) per entry of spec.driverIngressOptions. They are written
// with server-side apply, so keys that others add (cloud load-balancer controllers annotate
// Services) and values the API server allocates (node ports) are left alone.
package uiresources

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	networkingv1ac "k8s.io/client-go/applyconfigurations/networking/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/internal/ssa"
	"github.com/sparkop/spark-operator/internal/uinames"
)

// Options are the operator-wide settings for UI resources.
type Options struct {
	// ServiceEnabled turns UI Services (and with them Ingresses) on.
	ServiceEnabled bool
	// IngressURLFormat, when not empty, makes Ensure create an Ingress as well. It may contain
	// {{$appName}} and {{$appNamespace}}.
	IngressURLFormat string
	// IngressClassName is the spec.ingressClassName of every Ingress (UI and
	// driverIngressOptions); empty leaves it unset.
	IngressClassName string
	// IngressAnnotations are defaults; an application's sparkUIOptions.ingressAnnotations
	// override them key by key.
	IngressAnnotations map[string]string
	// IngressTLS is used when the application sets no sparkUIOptions.ingressTLS.
	IngressTLS []networkingv1.IngressTLS
}

// Info describes the UI resources, for status.driverInfo.
type Info struct {
	ServiceName string
	Port        int32
	// Address is "<cluster IP>:<port>", empty while no cluster IP is assigned.
	Address        string
	IngressName    string
	IngressAddress string
}

// FieldOwner is the server-side apply field manager of everything this package writes.
const FieldOwner = ssa.FieldOwner

// AppliedAnnotation holds a hash of what the operator last applied to a Service or Ingress.
// Ensure runs on every reconcile of a live run; with it, an object already as wanted is read
// from the cache and not applied again, so a steady run costs no API request.
const AppliedAnnotation = ssa.AppliedAnnotation

// driverIngressPortName is the Service port's name: servicePortName, else the Kubeflow
// operator's default.
func driverIngressPortName(o *v1beta2.DriverIngressConfiguration) string {
	if o.ServicePortName != "" {
		return o.ServicePortName
	}
	return fmt.Sprintf("driver-ing-%d", o.ServicePort)
}

// Ensure makes the application's driver-facing Services and Ingresses match app: with
// opts.ServiceEnabled the UI Service (and the UI Ingress when opts.IngressURLFormat is set),
// and, whatever the options, those of spec.driverIngressOptions. It returns where the UI is.
// Every URL is checked before anything is written, so a bad format leaves nothing half made.
func Ensure(ctx context.Context, c client.Client, app *v1beta2.SparkApplication, opts Options) (Info, error) {
	info, _, err := ensure(ctx, c, app, opts, func(o object) (bool, error) { return true, o.apply(ctx, c) })
	return info, err
}

// Observe reports whether the application's driver-facing objects are as Ensure would make
// them, reading only through c (the manager's cache) and writing nothing, so that a reconcile
// can tell in microseconds whether a write (a Service's creation takes seconds on a busy API
// server) is due. The Info is complete only when they are.
func Observe(ctx context.Context, c client.Reader, app *v1beta2.SparkApplication, opts Options) (Info, bool, error) {
	return ensure(ctx, c, app, opts, func(o object) (bool, error) { return o.current(ctx, c) })
}

// object is one Service or Ingress to keep: applied, or checked against the cache.
type object struct {
	apply   func(ctx context.Context, c client.Client) error
	current func(ctx context.Context, c client.Reader) (bool, error)
}

func objectOf[T ssa.Config[T]](cfg T, stored client.Object, owns ssa.Owner) object {
	return object{
		apply: func(ctx context.Context, c client.Client) error {
			_, err := ssa.Apply(ctx, c, nil, cfg, stored, owns)
			return err
		},
		current: func(ctx context.Context, c client.Reader) (bool, error) {
			return ssa.Current(ctx, c, cfg, stored, owns)
		},
	}
}

// ensure builds the objects app wants and hands each to do, which applies or checks it; ok is
// whether do found each as wanted (Ensure's always are, once applied).
func ensure(ctx context.Context, c client.Reader, app *v1beta2.SparkApplication, opts Options,
	do func(object) (bool, error)) (Info, bool, error) {
	if app == nil {
		return Info{}, true, nil
	}
	var (
		info     Info
		uiSvc    *corev1ac.ServiceApplyConfiguration
		uiStored = &corev1.Service{}
		objects  []object
	)
	owns := owner(app)
	if opts.ServiceEnabled {
		uiSvc = desiredService(app, app.UIServiceName(), uinames.ServicePortName(app), uinames.ServicePort(app), uinames.UIPort(app), uiServiceOptions(app))
		objects = append(objects, objectOf(uiSvc, uiStored, owns))
		info = Info{ServiceName: app.UIServiceName(), Port: uinames.ServicePort(app)}
		if opts.IngressURLFormat != "" {
			tls := ingressTLS(app, opts)
			u, err := uinames.IngressURL(opts.IngressURLFormat, app, len(tls) > 0)
			if err != nil {
				return Info{}, false, err
			}
			ing := desiredIngress(app, uinames.IngressName(app), app.UIServiceName(), uinames.ServicePort(app),
				uiIngressAnnotations(app, opts), opts.IngressClassName, u, tls)
			objects = append(objects, objectOf(ing, &networkingv1.Ingress{}, owns))
			info.IngressName = uinames.IngressName(app)
			info.IngressAddress = u.String()
		}
	}
	for i := range app.Spec.DriverIngressOptions {
		o := &app.Spec.DriverIngressOptions[i]
		name := uinames.DriverIngressServiceName(app, o.ServicePort)
		svc := desiredService(app, name, driverIngressPortName(o), o.ServicePort, o.ServicePort,
			serviceOptions{labels: o.ServiceLabels, annotations: o.ServiceAnnotations, serviceType: o.ServiceType})
		objects = append(objects, objectOf(svc, &corev1.Service{}, owns))
		if o.IngressURLFormat == "" {
			continue
		}
		u, err := uinames.IngressURL(o.IngressURLFormat, app, len(o.IngressTLS) > 0)
		if err != nil {
			return Info{}, false, fmt.Errorf("driverIngressOptions[%d]: %w", i, err)
		}
		ing := desiredIngress(app, uinames.DriverIngressName(app, o.ServicePort), name, o.ServicePort,
			o.IngressAnnotations, opts.IngressClassName, u, o.IngressTLS)
		objects = append(objects, objectOf(ing, &networkingv1.Ingress{}, owns))
	}

	for _, o := range objects {
		switch ok, err := do(o); {
		case err != nil:
			return Info{}, false, err
		case !ok:
			return Info{}, false, nil
		}
	}
	if uiSvc != nil {
		// An apply answered with the stored Service; a skipped one left the cached copy.
		ip := uiStored.Spec.ClusterIP
		if uiSvc.Spec != nil && uiSvc.Spec.ClusterIP != nil {
			ip = *uiSvc.Spec.ClusterIP
		}
		if ip != "" && ip != corev1.ClusterIPNone {
			info.Address = net.JoinHostPort(ip, strconv.Itoa(int(info.Port)))
		}
	}
	return info, true, nil
}

// owner tells what an existing Service or Ingress of a name to write is to app: its own when
// app controls it; stale when an earlier SparkApplication of the same name (deleted and
// recreated before the garbage collector caught up) does, so it is deleted first and the new
// one starts clean; anything else is not the application's to write.
func owner(app *v1beta2.SparkApplication) ssa.Owner {
	return ssa.Owner{
		Name: "SparkApplication " + app.Name,
		Of: func(existing client.Object) ssa.Ownership {
			ref := metav1.GetControllerOfNoCopy(existing)
			switch {
			case ref == nil || !isSparkApplication(ref, app.Name):
				return ssa.Foreign
			case ref.UID != app.UID:
				return ssa.Stale
			}
			return ssa.Owned
		},
	}
}

func isSparkApplication(ref *metav1.OwnerReference, name string) bool {
	return ref.Kind == "SparkApplication" && ref.Name == name && strings.HasPrefix(ref.APIVersion, v1beta2.GroupName+"/")
}

func ownerReference(app *v1beta2.SparkApplication) *metav1ac.OwnerReferenceApplyConfiguration {
	return metav1ac.OwnerReference().
		WithAPIVersion(v1beta2.GroupVersion.String()).
		WithKind("SparkApplication").
		WithName(app.Name).
		WithUID(app.UID).
		WithController(true).
		WithBlockOwnerDeletion(true)
}

func resourceLabels(app *v1beta2.SparkApplication) map[string]string {
	return map[string]string{
		v1beta2.LabelAppName:            app.Name,
		v1beta2.LabelLaunchedByOperator: "true",
	}
}

// selector picks the driver of the current run. The Spark application ID is the most precise
// key, but it is only known once the driver has reported it; until then the submission ID,
// which the operator puts on the driver pod, keeps pods of an older attempt out.
func selector(app *v1beta2.SparkApplication) map[string]string {
	if id := app.Status.SparkApplicationID; id != "" {
		return map[string]string{
			v1beta2.SparkAppSelectorLabel: id,
			v1beta2.SparkRoleLabel:        v1beta2.SparkRoleDriver,
		}
	}
	return map[string]string{
		v1beta2.LabelAppName:      app.Name,
		v1beta2.LabelSubmissionID: app.Status.SubmissionID,
		v1beta2.SparkRoleLabel:    v1beta2.SparkRoleDriver,
	}
}

// serviceOptions are the user's settings for one Service.
type serviceOptions struct {
	labels, annotations map[string]string
	serviceType         *corev1.ServiceType
}

func uiServiceOptions(app *v1beta2.SparkApplication) serviceOptions {
	o := app.Spec.SparkUIOptions
	if o == nil {
		return serviceOptions{}
	}
	return serviceOptions{labels: o.ServiceLabels, annotations: o.ServiceAnnotations, serviceType: o.ServiceType}
}

// desiredService is a Service of one port in front of the current run's driver.
func desiredService(app *v1beta2.SparkApplication, name, portName string, port, targetPort int32, o serviceOptions) *corev1ac.ServiceApplyConfiguration {
	labels := maps.Clone(o.labels)
	if labels == nil {
		labels = map[string]string{}
	}
	// The operator's own labels win: its caches and cleanup select on them.
	maps.Copy(labels, resourceLabels(app))
	svcType := corev1.ServiceTypeClusterIP
	if o.serviceType != nil && *o.serviceType != "" {
		svcType = *o.serviceType
	}
	svc := corev1ac.Service(name, app.Namespace).
		WithLabels(labels).
		WithOwnerReferences(ownerReference(app)).
		WithSpec(corev1ac.ServiceSpec().
			WithType(svcType).
			WithSelector(selector(app)).
			WithPorts(corev1ac.ServicePort().
				WithName(portName).
				WithProtocol(corev1.ProtocolTCP).
				WithPort(port).
				WithTargetPort(intstr.FromInt32(targetPort))))
	if len(o.annotations) > 0 {
		svc.WithAnnotations(o.annotations)
	}
	return svc
}

func ingressTLS(app *v1beta2.SparkApplication, opts Options) []networkingv1.IngressTLS {
	if o := app.Spec.SparkUIOptions; o != nil && len(o.IngressTLS) > 0 {
		return o.IngressTLS
	}
	return opts.IngressTLS
}

// uiIngressAnnotations are the operator's defaults overridden key by key by the application's
// sparkUIOptions.ingressAnnotations.
func uiIngressAnnotations(app *v1beta2.SparkApplication, opts Options) map[string]string {
	annotations := maps.Clone(opts.IngressAnnotations)
	if o := app.Spec.SparkUIOptions; o != nil && len(o.IngressAnnotations) > 0 {
		if annotations == nil {
			annotations = map[string]string{}
		}
		maps.Copy(annotations, o.IngressAnnotations)
	}
	return annotations
}

// desiredIngress routes u to port of the Service named service.
func desiredIngress(app *v1beta2.SparkApplication, name, service string, port int32, annotations map[string]string,
	class string, u *url.URL, tls []networkingv1.IngressTLS) *networkingv1ac.IngressApplyConfiguration {
	path := strings.TrimSuffix(u.Path, "/")
	pathType := networkingv1.PathTypePrefix
	switch {
	case path == "":
		path = "/"
	case annotations[uinames.RewriteTargetAnnotation] != "":
		// The regex form is what ingress-nginx needs for rewrite-target "/$2"; regex paths
		// are only valid as ImplementationSpecific.
		path += "(/|$)(.*)"
		pathType = networkingv1.PathTypeImplementationSpecific
	}
	spec := networkingv1ac.IngressSpec().WithRules(networkingv1ac.IngressRule().
		WithHost(u.Hostname()).
		WithHTTP(networkingv1ac.HTTPIngressRuleValue().WithPaths(networkingv1ac.HTTPIngressPath().
			WithPath(path).
			WithPathType(pathType).
			WithBackend(networkingv1ac.IngressBackend().WithService(networkingv1ac.IngressServiceBackend().
				WithName(service).
				WithPort(networkingv1ac.ServiceBackendPort().WithNumber(port)))))))
	for _, t := range tls {
		entry := networkingv1ac.IngressTLS().WithHosts(t.Hosts...)
		if t.SecretName != "" {
			entry.WithSecretName(t.SecretName)
		}
		spec.WithTLS(entry)
	}
	if class != "" {
		spec.WithIngressClassName(class)
	}
	ing := networkingv1ac.Ingress(name, app.Namespace).
		WithLabels(resourceLabels(app)).
		WithOwnerReferences(ownerReference(app)).
		WithSpec(spec)
	if len(annotations) > 0 {
		ing.WithAnnotations(annotations)
	}
	return ing
}

func kindOf(o client.Object) string {
	switch o.(type) {
	case *corev1.Service:
		return "Service"
	case *networkingv1.Ingress:
		return "Ingress"
	}
	return "object"
}

// Delete removes every Service and Ingress the application controls, found by the labels the
// operator put on them rather than by the names the spec gives now: a spec edited since they
// were made (another port in driverIngressOptions) names different ones. Objects app does not
// control, the driver's own Service among them, are left alone; ones already gone are not an
// error.
func Delete(ctx context.Context, c client.Client, app *v1beta2.SparkApplication) error {
	if app == nil {
		return nil
	}
	var errs []error
	for _, list := range []client.ObjectList{&networkingv1.IngressList{}, &corev1.ServiceList{}} {
		if err := c.List(ctx, list, client.InNamespace(app.Namespace), client.MatchingLabels(resourceLabels(app))); err != nil {
			errs = append(errs, err)
			continue
		}
		var objs []client.Object
		switch l := list.(type) {
		case *networkingv1.IngressList:
			for i := range l.Items {
				objs = append(objs, &l.Items[i])
			}
		case *corev1.ServiceList:
			for i := range l.Items {
				objs = append(objs, &l.Items[i])
			}
		}
		for _, obj := range objs {
			if err := deleteOwned(ctx, c, app, obj); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

func deleteOwned(ctx context.Context, c client.Client, app *v1beta2.SparkApplication, obj client.Object) error {
	ref := metav1.GetControllerOfNoCopy(obj)
	if ref == nil || !isSparkApplication(ref, app.Name) || (app.UID != "" && ref.UID != app.UID) || !obj.GetDeletionTimestamp().IsZero() {
		return nil
	}
	// The UID precondition keeps a replacement created since the List from being deleted.
	uid := obj.GetUID()
	err := c.Delete(ctx, obj, client.Preconditions{UID: &uid}, client.PropagationPolicy(metav1.DeletePropagationBackground))
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("deleting %s %s/%s: %w", kindOf(obj), obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}
