/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

// Package uinames says what a SparkApplication's driver-facing Services and Ingresses are
// called and where they point: names, ports and the UI ingress URL. The controller that applies
// them (controllers/uiresources) and the validating webhook that checks the URL format both read
// it here.
package uinames

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

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

// ErrInvalidIngressURL is wrapped by the error uiresources.Ensure returns for an ingress URL format that
// does not give a usable host and path. Retrying cannot fix it; the spec or flags must change.
var ErrInvalidIngressURL = errors.New("invalid Spark UI ingress URL format")

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

// DriverIngressServiceName is the Service of the spec.driverIngressOptions entry for port:
// "<app>-driver-<port>", the Kubeflow operator's name, shortened like the UI Service's when
// it would be too long.
func DriverIngressServiceName(app *v1beta2.SparkApplication, port int32) string {
	return v1beta2.ShortName(app.Name, fmt.Sprintf("-driver-%d", port))
}

// DriverIngressName is the Ingress of the spec.driverIngressOptions entry for port:
// "<app>-ing-<port>", as the Kubeflow operator names it.
func DriverIngressName(app *v1beta2.SparkApplication, port int32) string {
	return v1beta2.ShortName(app.Name, fmt.Sprintf("-ing-%d", port))
}
