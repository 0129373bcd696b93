/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package scheduler

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// CRD is a custom resource an integration needs in the cluster: the kind it reads or creates,
// and the name of the CustomResourceDefinition that serves it, which users install.
type CRD struct {
	Name string
	GVK  schema.GroupVersionKind
}

// MissingCRDError says that a batch scheduler's CRD is not installed: an application naming
// that scheduler is refused with it (by the validating webhook, and by Admit, as a rejection)
// rather than started without what the scheduler needs.
type MissingCRDError struct {
	Scheduler string
	CRD       CRD
	// Install says where the CRD comes from ("scheduler-plugins' manifests", say); optional.
	Install string
}

func (e *MissingCRDError) Error() string {
	msg := fmt.Sprintf("batch scheduler %s needs the CRD %s (%s), which is not installed in the cluster",
		e.Scheduler, e.CRD.Name, e.CRD.GVK.GroupVersion().WithKind(e.CRD.GVK.Kind))
	if e.Install != "" {
		msg += ": install it from " + e.Install
	}
	return msg
}

// RequireCRDs checks through mapper (the manager's RESTMapper, which asks discovery again for a
// kind it has not seen, so a CRD installed after the operator started is found) that each of
// crds is served. A missing one is a *MissingCRDError naming it; any other error (discovery
// failing) is returned as it is, for the caller to retry rather than refuse.
func RequireCRDs(mapper meta.RESTMapper, scheduler, install string, crds ...CRD) error {
	if mapper == nil {
		return fmt.Errorf("batch scheduler %s: no REST mapper to check its CRDs with", scheduler)
	}
	for _, crd := range crds {
		_, err := mapper.RESTMapping(crd.GVK.GroupKind(), crd.GVK.Version)
		switch {
		case meta.IsNoMatchError(err):
			return &MissingCRDError{Scheduler: scheduler, CRD: crd, Install: install}
		case err != nil:
			return fmt.Errorf("batch scheduler %s: checking for the CRD %s: %w", scheduler, crd.Name, err)
		}
	}
	return nil
}

// IsMissingCRD reports whether err is (or wraps) a *MissingCRDError.
func IsMissingCRD(err error) bool {
	var missing *MissingCRDError
	return errors.As(err, &missing)
}
