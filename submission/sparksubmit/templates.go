/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparksubmit

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/sparkop/spark-operator/apis/sparkoperator.k8s.io/v1beta2"
	"github.com/sparkop/spark-operator/sparkpod"
)

// PodTemplates returns the driver and executor pod templates carrying everything Spark
// properties cannot express (sparkpod.Template), owner references to the SparkApplication
// included, which Spark copies to the pods. A batch scheduler's pod settings (sched) are laid
// over both, so every pod carries them from its creation. app must carry its UID (be read from
// the API server).
func PodTemplates(app *v1beta2.SparkApplication, sched sparkpod.RoleScheduling) (driver, executor *corev1.Pod, err error) {
	if app == nil {
		return nil, nil, errors.New("no SparkApplication given")
	}
	if app.UID == "" {
		return nil, nil, fmt.Errorf("SparkApplication %s/%s has no UID: the driver cannot be given an owner reference to it (read it from the API server first)", app.Namespace, app.Name)
	}
	if driver, err = sparkpod.Template(app, sparkpod.RoleDriver); err != nil {
		return nil, nil, err
	}
	if executor, err = sparkpod.Template(app, sparkpod.RoleExecutor); err != nil {
		return nil, nil, err
	}
	sched.Driver.Apply(&driver.ObjectMeta, &driver.Spec)
	sched.Executor.Apply(&executor.ObjectMeta, &executor.Spec)
	return driver, executor, nil
}
