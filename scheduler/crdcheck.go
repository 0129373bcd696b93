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

// MissingCRDError says that the cluster does not serve a kind a batch scheduler integration
// needs: the CRD of the scheduler it integrates with is not installed. A workload that needs it
// is refused with this message rather than left waiting for a scheduler that is not there.
type MissingCRDError struct {
	// Scheduler is the integration's name (spec.batchScheduler).
	Scheduler string
	// Kind is the kind it needs; CRD the name of the CustomResourceDefinition that serves it.
	Kind schema.GroupVersionKind
	CRD  string
	// Install says what to install.
	Install string
}

func (e *MissingCRDError) Error() string {
	return fmt.Sprintf("batch scheduler %s needs the %s CRD (%s %s), which is not installed in this cluster: install %s, "+
		"or name another batch scheduler", e.Scheduler, e.CRD, e.Kind.GroupVersion(), e.Kind.Kind, e.Install)
}

// IsMissingCRD reports whether err is (or wraps) a MissingCRDError.
func IsMissingCRD(err error) bool {
	var m *MissingCRDError
	return errors.As(err, &m)
}

// CheckCRDInstalled is the CRD-presence check of the batch scheduler integrations: nil when the
// API server serves want.Kind, a *MissingCRDError when it does not, any other error (discovery
// failing) as it is, for the caller to retry. mapper is the operator's RESTMapper, which asks
// discovery again for a kind it has not seen, so a CRD installed after the operator started is
// found without a restart.
func CheckCRDInstalled(mapper meta.RESTMapper, want MissingCRDError) error {
	if mapper == nil {
		return fmt.Errorf("batch scheduler %s: no RESTMapper to look up %s", want.Scheduler, want.Kind)
	}
	_, err := mapper.RESTMapping(want.Kind.GroupKind(), want.Kind.Version)
	if meta.IsNoMatchError(err) {
		return &want
	}
	if err != nil {
		return fmt.Errorf("batch scheduler %s: looking up %s: %w", want.Scheduler, want.Kind, err)
	}
	return nil
}
