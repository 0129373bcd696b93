/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package v1beta2

// Spark properties that, when present in spec.sparkConf, already say what a
// default would otherwise set; the defaults below then leave the field alone.
const (
	sparkConfDriverCores       = "spark.driver.cores"
	sparkConfDriverMemory      = "spark.driver.memory"
	sparkConfExecutorCores     = "spark.executor.cores"
	sparkConfExecutorMemory    = "spark.executor.memory"
	sparkConfExecutorInstances = "spark.executor.instances"
)

// SetSparkApplicationDefaults fills in the unset fields of app.Spec that have
// a default. It never changes a field the user set, and applying it twice
// gives the same result as applying it once. A nil app is ignored.
//
// The defaults are: type Scala, mode cluster, restart policy Never (with 5
// second retry intervals for OnFailure and Always), 1 core and 1g of memory
// for the driver and each executor, 1 executor unless dynamic allocation is
// enabled, and shuffle tracking on when dynamic allocation is enabled. Cores,
// memory and instances are also left unset when spec.sparkConf already
// carries the matching Spark property.
func SetSparkApplicationDefaults(app *SparkApplication) {
	if app == nil {
		return
	}
	SetSparkApplicationSpecDefaults(&app.Spec)
}

// SetScheduledSparkApplicationDefaults fills in the unset fields of a
// ScheduledSparkApplication: its template gets the SparkApplication defaults,
// the concurrency policy defaults to Allow, and both run history limits to 1.
// A nil app is ignored.
func SetScheduledSparkApplicationDefaults(app *ScheduledSparkApplication) {
	if app == nil {
		return
	}
	if app.Spec.ConcurrencyPolicy == "" {
		app.Spec.ConcurrencyPolicy = ConcurrencyAllow
	}
	if app.Spec.SuccessfulRunHistoryLimit == nil {
		app.Spec.SuccessfulRunHistoryLimit = ptrTo(DefaultRunHistoryLimit)
	}
	if app.Spec.FailedRunHistoryLimit == nil {
		app.Spec.FailedRunHistoryLimit = ptrTo(DefaultRunHistoryLimit)
	}
	SetSparkApplicationSpecDefaults(&app.Spec.Template)
}

// SetSparkApplicationSpecDefaults applies the defaults described at
// SetSparkApplicationDefaults to a bare spec. A nil spec is ignored.
func SetSparkApplicationSpecDefaults(spec *SparkApplicationSpec) {
	if spec == nil {
		return
	}
	if spec.Type == "" {
		spec.Type = SparkApplicationTypeScala
	}
	if spec.Mode == "" {
		spec.Mode = DeployModeCluster
	}
	setRestartPolicyDefaults(&spec.RestartPolicy)

	if spec.Driver.Cores == nil && !hasKey(spec.SparkConf, sparkConfDriverCores) {
		spec.Driver.Cores = ptrTo(DefaultCores)
	}
	if spec.Driver.Memory == nil && !hasKey(spec.SparkConf, sparkConfDriverMemory) {
		spec.Driver.Memory = ptrTo(DefaultMemory)
	}

	if spec.Executor.Cores == nil && !hasKey(spec.SparkConf, sparkConfExecutorCores) {
		spec.Executor.Cores = ptrTo(DefaultCores)
	}
	if spec.Executor.Memory == nil && !hasKey(spec.SparkConf, sparkConfExecutorMemory) {
		spec.Executor.Memory = ptrTo(DefaultMemory)
	}

	dynamic := spec.DynamicAllocation != nil && spec.DynamicAllocation.Enabled
	if dynamic {
		// With dynamic allocation Spark sizes the executor set itself, from
		// initialExecutors / minExecutors, so instances stays unset.
		if spec.DynamicAllocation.ShuffleTrackingEnabled == nil {
			spec.DynamicAllocation.ShuffleTrackingEnabled = ptrTo(true)
		}
	} else if spec.Executor.Instances == nil && !hasKey(spec.SparkConf, sparkConfExecutorInstances) {
		spec.Executor.Instances = ptrTo(DefaultExecutorInstances)
	}
}

func setRestartPolicyDefaults(p *RestartPolicy) {
	if p.Type == "" {
		p.Type = RestartPolicyNever
	}
	if p.Type == RestartPolicyNever {
		return
	}
	if p.OnFailureRetryInterval == nil {
		p.OnFailureRetryInterval = ptrTo(DefaultRetryIntervalSeconds)
	}
	if p.OnSubmissionFailureRetryInterval == nil {
		p.OnSubmissionFailureRetryInterval = ptrTo(DefaultRetryIntervalSeconds)
	}
}

func hasKey(m map[string]string, key string) bool {
	_, ok := m[key]
	return ok
}

func ptrTo[T any](v T) *T {
	return &v
}
