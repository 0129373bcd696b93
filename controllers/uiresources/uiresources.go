/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package uiresources keeps the Service and the optional Ingress that expose a SparkApplication's
// web UI in line with the application's spec.
package uiresources

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

const (
	// DefaultUIPort is Spark's default for spark.ui.port.
	DefaultUIPort int32 = 4040
	// DefaultUIPortName is the Service port name the Kubeflow operator used; dashboards and
	// service meshes configured for it keep working.
	DefaultUIPortName = "spark-driver-ui-port"

	sparkUIPortKey = "spark.ui.port"

	// RewriteTargetAnnotation is ingress-nginx's rewrite annotation. When it is among the
	// Ingress annotations and the URL has a path, the rule path gets capture groups so that
	// "/$2" strips the prefix before the request reaches the Spark UI.
	RewriteTargetAnnotation = "nginx.ingress.kubernetes.io/rewrite-target"
)

// ErrInvalidIngressURL is wrapped by the error Ensure returns for an ingress URL format that
// does not give a usable host and path. Retrying cannot fix it; the spec or flags must change.
var ErrInvalidIngressURL = errors.New("invalid Spark UI ingress URL format")

// Options are the operator-wide settings for UI resources.
type Options struct {
	// ServiceEnabled turns UI Services (and with them Ingresses) on.
	ServiceEnabled bool
	// IngressURLFormat, when not empty, makes Ensure create an Ingress as well. It may contain
	// {{$appName}} and {{$appNamespace}}.
	IngressURLFormat string
	// IngressClassName is the Ingress's spec.ingressClassName; empty leaves it unset.
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

// IngressName is the name of the application's UI Ingress.
func IngressName(app *v1beta2.SparkApplication) string {
	return v1beta2.ShortName(app.Name, "-ui-ingress")
}

// UIPort is the port the Spark UI listens on in the driver: spark.ui.port from sparkConf, or
// Spark's default. A value Spark would not bind as given (0 means random, others are invalid)
// falls back to the default, as the Kubeflow operator did, rather than producing a Service
// the API server rejects.
func UIPort(app *v1beta2.SparkApplication) int32 {
	s, ok := app.Spec.SparkConf[sparkUIPortKey]
	if !ok {
		return DefaultUIPort
	}
	p, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
	if err != nil || p < 1 || p > 65535 {
		return DefaultUIPort
	}
	return int32(p)
}

// ServicePort is the UI Service's port: sparkUIOptions.servicePort, else the UI port.
func ServicePort(app *v1beta2.SparkApplication) int32 {
	if o := app.Spec.SparkUIOptions; o != nil && o.ServicePort != nil && *o.ServicePort > 0 && *o.ServicePort <= 65535 {
		return *o.ServicePort
	}
	return UIPort(app)
}

// ServicePortName is the UI Service port's name.
func ServicePortName(app *v1beta2.SparkApplication) string {
	if o := app.Spec.SparkUIOptions; o != nil && o.ServicePortName != nil && *o.ServicePortName != "" {
		return *o.ServicePortName
	}
	return DefaultUIPortName
}

var (
	appNamePlaceholder      = regexp.MustCompile(`{{\s*\$appName\s*}}`)
	appNamespacePlaceholder = regexp.MustCompile(`{{\s*\$appNamespace\s*}}`)
)

// IngressURL expands format for app. A format without a scheme gets "http://", or "https://"
// when tls is set, so that "host/path" parses as a host and a path.
func IngressURL(format string, app *v1beta2.SparkApplication, tls bool) (*url.URL, error) {
	s := strings.TrimSpace(format)
	s = appNamePlaceholder.ReplaceAllLiteralString(s, app.Name)
	s = appNamespacePlaceholder.ReplaceAllLiteralString(s, app.Namespace)
	if s == "" {
		return nil, fmt.Errorf("%w: empty", ErrInvalidIngressURL)
	}
	if strings.Contains(s, "{{") || strings.Contains(s, "}}") {
		return nil, fmt.Errorf("%w %q: unknown placeholder (only {{$appName}} and {{$appNamespace}} are supported)", ErrInvalidIngressURL, format)
	}
	if !strings.Contains(s, "://") {
		if tls {
			s = "https://" + s
		} else {
			s = "http://" + s
		}
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("%w %q: %v", ErrInvalidIngressURL, format, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("%w %q: scheme must be http or https", ErrInvalidIngressURL, format)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return nil, fmt.Errorf("%w %q: only a host and a path are allowed", ErrInvalidIngressURL, format)
	}
	if u.Port() != "" {
		return nil, fmt.Errorf("%w %q: an Ingress host cannot carry a port", ErrInvalidIngressURL, format)
	}
	host := u.Hostname()
	if host == "" && (u.Path == "" || u.Path == "/") {
		return nil, fmt.Errorf("%w %q: neither a host nor a path", ErrInvalidIngressURL, format)
	}
	if host != "" {
		check := validation.IsDNS1123Subdomain
		if strings.HasPrefix(host, "*.") {
			check = validation.IsWildcardDNS1123Subdomain
		}
		if msgs := check(host); len(msgs) > 0 {
			return nil, fmt.Errorf("%w %q: host %q: %s", ErrInvalidIngressURL, format, host, strings.Join(msgs, "; "))
		}
	}
	return u, nil
}

// Ensure makes the UI Service, and the Ingress when opts.IngressURLFormat is set, match app,
// creating or updating them as needed. With opts.ServiceEnabled false it does nothing.
func Ensure(ctx context.Context, c client.Client, scheme *runtime.Scheme, app *v1beta2.SparkApplication, opts Options) (Info, error) {
	if !opts.ServiceEnabled || app == nil {
		return Info{}, nil
	}
	// Validate the URL before writing anything, so a bad format leaves no half-made resources.
	var (
		ingURL  *url.URL
		ingress *networkingv1.Ingress
	)
	if opts.IngressURLFormat != "" {
		tls := ingressTLS(app, opts)
		u, err := IngressURL(opts.IngressURLFormat, app, len(tls) > 0)
		if err != nil {
			return Info{}, err
		}
		ingURL = u
		ingress = desiredIngress(app, opts, u, tls)
	}

	svc, err := ensureService(ctx, c, scheme, app, desiredService(app))
	if err != nil {
		return Info{}, err
	}
	info := Info{ServiceName: svc.Name, Port: ServicePort(app)}
	if ip := svc.Spec.ClusterIP; ip != "" && ip != corev1.ClusterIPNone {
		info.Address = net.JoinHostPort(ip, strconv.Itoa(int(info.Port)))
	}
	if ingress == nil {
		return info, nil
	}
	if err := ensureIngress(ctx, c, scheme, app, ingress); err != nil {
		return info, err
	}
	info.IngressName = ingress.Name
	info.IngressAddress = ingURL.String()
	return info, nil
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

func desiredService(app *v1beta2.SparkApplication) *corev1.Service {
	labels := map[string]string{}
	var annotations map[string]string
	svcType := corev1.ServiceTypeClusterIP
	if o := app.Spec.SparkUIOptions; o != nil {
		maps.Copy(labels, o.ServiceLabels)
		if len(o.ServiceAnnotations) > 0 {
			annotations = maps.Clone(o.ServiceAnnotations)
		}
		if o.ServiceType != nil && *o.ServiceType != "" {
			svcType = *o.ServiceType
		}
	}
	// The operator's own labels win: its caches and cleanup select on them.
	maps.Copy(labels, resourceLabels(app))
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name:        app.UIServiceName(),
			Namespace:   app.Namespace,
			Labels:      labels,
			Annotations: annotations,
		},
		Spec: corev1.ServiceSpec{
			Type:     svcType,
			Selector: selector(app),
			Ports: []corev1.ServicePort{{
				Name:       ServicePortName(app),
				Protocol:   corev1.ProtocolTCP,
				Port:       ServicePort(app),
				TargetPort: intstr.FromInt32(UIPort(app)),
			}},
		},
	}
}

func ingressTLS(app *v1beta2.SparkApplication, opts Options) []networkingv1.IngressTLS {
	if o := app.Spec.SparkUIOptions; o != nil && len(o.IngressTLS) > 0 {
		return o.IngressTLS
	}
	return opts.IngressTLS
}

func desiredIngress(app *v1beta2.SparkApplication, opts Options, u *url.URL, tls []networkingv1.IngressTLS) *networkingv1.Ingress {
	annotations := maps.Clone(opts.IngressAnnotations)
	if o := app.Spec.SparkUIOptions; o != nil && len(o.IngressAnnotations) > 0 {
		if annotations == nil {
			annotations = map[string]string{}
		}
		maps.Copy(annotations, o.IngressAnnotations)
	}
	if len(annotations) == 0 {
		annotations = nil
	}

	path := strings.TrimSuffix(u.Path, "/")
	pathType := networkingv1.PathTypePrefix
	switch {
	case path == "":
		path = "/"
	case annotations[RewriteTargetAnnotation] != "":
		// The regex form is what ingress-nginx needs for rewrite-target "/$2"; regex paths
		// are only valid as ImplementationSpecific.
		path += "(/|$)(.*)"
		pathType = networkingv1.PathTypeImplementationSpecific
	}

	ing := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{
			Name:        IngressName(app),
			Namespace:   app.Namespace,
			Labels:      resourceLabels(app),
			Annotations: annotations,
		},
		Spec: networkingv1.IngressSpec{
			TLS: tls,
			Rules: []networkingv1.IngressRule{{
				Host: u.Hostname(),
				IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
					Paths: []networkingv1.HTTPIngressPath{{
						Path:     path,
						PathType: &pathType,
						Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
							Name: app.UIServiceName(),
							Port: networkingv1.ServiceBackendPort{Number: ServicePort(app)},
						}},
					}},
				}},
			}},
		},
	}
	if opts.IngressClassName != "" {
		class := opts.IngressClassName
		ing.Spec.IngressClassName = &class
	}
	return ing
}

// claim sets app as the controller of existing, which must be controlled by app already or by
// an earlier SparkApplication of the same name (deleted and recreated before the garbage
// collector caught up). Anything else is not the operator's to take over.
func claim(existing client.Object, app *v1beta2.SparkApplication, scheme *runtime.Scheme) (changed bool, err error) {
	ref := metav1.GetControllerOfNoCopy(existing)
	if ref != nil && ref.UID == app.UID {
		return false, nil
	}
	if ref == nil || ref.Kind != "SparkApplication" || ref.Name != app.Name ||
		!strings.HasPrefix(ref.APIVersion, v1beta2.GroupName+"/") {
		return false, fmt.Errorf("%s %s/%s exists and is not controlled by SparkApplication %s",
			kindOf(existing), existing.GetNamespace(), existing.GetName(), app.Name)
	}
	refs := existing.GetOwnerReferences()[:0:0]
	for _, r := range existing.GetOwnerReferences() {
		if r.UID != ref.UID {
			refs = append(refs, r)
		}
	}
	existing.SetOwnerReferences(refs)
	return true, controllerutil.SetControllerReference(app, existing, scheme)
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

// mergeInto adds want's entries to have and reports whether anything changed. Keys others put
// there (cloud load-balancer controllers annotate Services) are left alone.
func mergeInto(have *map[string]string, want map[string]string) bool {
	changed := false
	for k, v := range want {
		if cur, ok := (*have)[k]; ok && cur == v {
			continue
		}
		if *have == nil {
			*have = map[string]string{}
		}
		(*have)[k] = v
		changed = true
	}
	return changed
}

func ensureService(ctx context.Context, c client.Client, scheme *runtime.Scheme, app *v1beta2.SparkApplication, want *corev1.Service) (*corev1.Service, error) {
	if err := controllerutil.SetControllerReference(app, want, scheme); err != nil {
		return nil, err
	}
	have := &corev1.Service{}
	err := c.Get(ctx, client.ObjectKeyFromObject(want), have)
	if apierrors.IsNotFound(err) {
		err = c.Create(ctx, want)
		if err == nil {
			return want, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("creating UI service %s/%s: %w", want.Namespace, want.Name, err)
		}
		err = c.Get(ctx, client.ObjectKeyFromObject(want), have)
	}
	if err != nil {
		return nil, fmt.Errorf("getting UI service %s/%s: %w", want.Namespace, want.Name, err)
	}

	changed, err := claim(have, app, scheme)
	if err != nil {
		return nil, err
	}
	changed = mergeInto(&have.Labels, want.Labels) || changed
	changed = mergeInto(&have.Annotations, want.Annotations) || changed
	if have.Spec.Type != want.Spec.Type {
		have.Spec.Type = want.Spec.Type
		changed = true
	}
	if !equality.Semantic.DeepEqual(have.Spec.Selector, want.Spec.Selector) {
		have.Spec.Selector = want.Spec.Selector
		changed = true
	}
	if ports := mergePorts(have.Spec.Ports, want.Spec.Ports, want.Spec.Type); !equality.Semantic.DeepEqual(ports, have.Spec.Ports) {
		have.Spec.Ports = ports
		changed = true
	}
	if !changed {
		return have, nil
	}
	if err := c.Update(ctx, have); err != nil {
		return nil, fmt.Errorf("updating UI service %s/%s: %w", have.Namespace, have.Name, err)
	}
	return have, nil
}

// mergePorts returns want with the node ports already allocated in have kept, so that an
// unchanged NodePort or LoadBalancer Service is not rewritten (and its port not reallocated)
// on every call.
func mergePorts(have, want []corev1.ServicePort, svcType corev1.ServiceType) []corev1.ServicePort {
	out := make([]corev1.ServicePort, len(want))
	copy(out, want)
	if svcType != corev1.ServiceTypeNodePort && svcType != corev1.ServiceTypeLoadBalancer {
		return out
	}
	for i := range out {
		for _, h := range have {
			if h.Port == out[i].Port && h.Protocol == out[i].Protocol {
				out[i].NodePort = h.NodePort
			}
		}
	}
	return out
}

func ensureIngress(ctx context.Context, c client.Client, scheme *runtime.Scheme, app *v1beta2.SparkApplication, want *networkingv1.Ingress) error {
	if err := controllerutil.SetControllerReference(app, want, scheme); err != nil {
		return err
	}
	have := &networkingv1.Ingress{}
	err := c.Get(ctx, client.ObjectKeyFromObject(want), have)
	if apierrors.IsNotFound(err) {
		err = c.Create(ctx, want)
		if err == nil {
			return nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating UI ingress %s/%s: %w", want.Namespace, want.Name, err)
		}
		err = c.Get(ctx, client.ObjectKeyFromObject(want), have)
	}
	if err != nil {
		return fmt.Errorf("getting UI ingress %s/%s: %w", want.Namespace, want.Name, err)
	}
	changed, err := claim(have, app, scheme)
	if err != nil {
		return err
	}
	changed = mergeInto(&have.Labels, want.Labels) || changed
	changed = mergeInto(&have.Annotations, want.Annotations) || changed
	if !equality.Semantic.DeepEqual(have.Spec, want.Spec) {
		have.Spec = want.Spec
		changed = true
	}
	if !changed {
		return nil
	}
	if err := c.Update(ctx, have); err != nil {
		return fmt.Errorf("updating UI ingress %s/%s: %w", have.Namespace, have.Name, err)
	}
	return nil
}

// Delete removes the application's UI Service and Ingress. Objects of that name that app does
// not control are left alone; ones already gone are not an error.
func Delete(ctx context.Context, c client.Client, app *v1beta2.SparkApplication) error {
	if app == nil {
		return nil
	}
	var errs []error
	for _, obj := range []client.Object{
		&networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: app.Namespace, Name: IngressName(app)}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: app.Namespace, Name: app.UIServiceName()}},
	} {
		if err := deleteOwned(ctx, c, app, obj); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func deleteOwned(ctx context.Context, c client.Client, app *v1beta2.SparkApplication, obj client.Object) error {
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("getting %s %s/%s: %w", kindOf(obj), obj.GetNamespace(), obj.GetName(), err)
	}
	ref := metav1.GetControllerOfNoCopy(obj)
	if ref == nil || ref.Kind != "SparkApplication" || ref.Name != app.Name ||
		(app.UID != "" && ref.UID != app.UID) {
		return nil
	}
	// The UID precondition keeps a replacement created since the Get from being deleted.
	uid := obj.GetUID()
	err := c.Delete(ctx, obj, client.Preconditions{UID: &uid}, client.PropagationPolicy(metav1.DeletePropagationBackground))
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("deleting %s %s/%s: %w", kindOf(obj), obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}
