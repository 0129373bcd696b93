/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package validation

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/sparkop/spark-operator/internal/uinames"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
)

// validateDriverIngressOptions refuses what would make two entries write the same Service or
// Ingress (the same servicePort, or the same ingressURLFormat, as the Kubeflow operator
// refuses), and an ingressURLFormat the operator could not turn into an Ingress, at admission
// rather than in the operator's log once the driver runs.
func validateDriverIngressOptions(p *field.Path, s *v1beta2.SparkApplicationSpec, namespace string) field.ErrorList {
	var errs field.ErrorList
	ports := map[int32]bool{}
	urls := map[string]bool{}
	// The format is checked as it expands for an application named "app"; every application
	// name is a DNS label, which expands the same way.
	sample := &v1beta2.SparkApplication{}
	sample.Name, sample.Namespace = "app", namespace
	if sample.Namespace == "" {
		sample.Namespace = "default"
	}
	for i, o := range s.DriverIngressOptions {
		ip := p.Child("driverIngressOptions").Index(i)
		if ports[o.ServicePort] {
			errs = append(errs, field.Duplicate(ip.Child("servicePort"), o.ServicePort))
		}
		ports[o.ServicePort] = true
		if o.IngressURLFormat == "" {
			continue
		}
		if urls[o.IngressURLFormat] {
			errs = append(errs, field.Duplicate(ip.Child("ingressURLFormat"), o.IngressURLFormat))
		}
		urls[o.IngressURLFormat] = true
		if _, err := uinames.IngressURL(o.IngressURLFormat, sample, len(o.IngressTLS) > 0); err != nil {
			errs = append(errs, field.Invalid(ip.Child("ingressURLFormat"), o.IngressURLFormat, err.Error()))
		}
	}
	return errs
}
